/**
 * What the Node listener charges outside Yoga: a caller whose budget is spent is refused before
 * its request is read, a body read but not usable pays its characters, and a cluster's `/metrics`
 * scrape pays as one answered by Yoga would.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RateLimitConfig } from "../config.ts";
import { bucketsOfIncoming } from "../limits/caller-buckets.ts";
import type { RateLimiter } from "../limits/rate-limiter.ts";
import type { RefusalHolds } from "../limits/refusal-holds.ts";
import type { Logger } from "../telemetry/logger.ts";
import type { GatewayMetrics } from "../telemetry/metrics.ts";
import { CHARACTERS_PER_TOKEN, ENDPOINT_COSTS, bodyCharged } from "../limits/request-costs.ts";

/**
 * Charges the caller of a body the gateway read but cannot use (not JSON, or nested deeper than
 * MAX_NESTING_DEPTH) 1 per `CHARACTERS_PER_TOKEN` characters, whatever its buckets hold: it is
 * refused, but reading and measuring it was work, like a document that is never parsed.
 */
export function unusableBodyCharge(
  limiter: RateLimiter,
  config: RateLimitConfig,
): (request: IncomingMessage, characters: number) => void {
  return (request, characters) => {
    const cost = Math.floor(characters / CHARACTERS_PER_TOKEN);
    bodyCharged(request);
    if (cost > 0) void limiter.take(bucketsOfIncoming(request, config), cost, true);
  };
}

/**
 * Charges a scrape of `/metrics` answered outside Yoga (a cluster's, which the primary gathers
 * from every worker) like one answered by it: `ENDPOINT_COSTS["/metrics"]` from the caller's
 * buckets. Resolves with 0 when paid, else the whole seconds to wait.
 */
export function scrapeCharge(limiter: RateLimiter, config: RateLimitConfig): (request: IncomingMessage) => Promise<number> {
  return async (request) => {
    const decision = await limiter.take(bucketsOfIncoming(request, config), ENDPOINT_COSTS["/metrics"]!);
    return decision.allowed ? 0 : decision.retryAfterSeconds;
  };
}

/** How often the refusals of requests that were not read are summed up in one log line. */
const UNREAD_REFUSALS_LOG_MS = 10_000;

/**
 * Answers, before its body is read, a request whose caller could not pay even 1 when last seen:
 * HTTP 429 with `Retry-After`, and the connection closed. A flood of requests from a caller over
 * its budget then costs the gateway a few header look-ups each, not a body to read and a JSON
 * document to parse; and, the answer held until the budget refills (at most REFUSAL_HOLD_MS,
 * the connection unread meanwhile), one answer per connection per hold. Counted in
 * `gateway_refusals_total{reason="rate_limited"}`; logged as one line per 10 s with the count,
 * so that a flood does not flood the log too.
 * @returns whether it took the request (answered, or to be answered after its hold).
 */
export function refuseSpentCallers(
  limiter: RateLimiter,
  config: RateLimitConfig,
  metrics: GatewayMetrics,
  logger: Logger,
  holds: RefusalHolds,
) {
  let unlogged = 0;
  let loggedAt = 0;
  return (request: IncomingMessage, response: ServerResponse): boolean => {
    const buckets = bucketsOfIncoming(request, config);
    const seconds = limiter.secondsUntilServed(buckets);
    if (seconds === 0) return false;
    metrics.refusal("rate_limited");
    unlogged += 1;
    const now = Date.now();
    if (now - loggedAt >= UNREAD_REFUSALS_LOG_MS) {
      logger.warn(
        { refused: unlogged, retryAfterSeconds: seconds },
        "requests refused unread: their callers are over their rate limit",
      );
      unlogged = 0;
      loggedAt = now;
    }
    holds.hold(request.socket, seconds * 1_000, () => {
      // What is left to wait once held; still refused, as its request was not read.
      const left = Math.max(1, limiter.secondsUntilServed(buckets));
      const body = JSON.stringify({
        errors: [
          {
            message: `Rate limit exceeded: your budget is spent until it refills at ${config.ratePerSecond} per second; retry after ${left} s`,
            extensions: { code: "RATE_LIMITED", retryAfter: left, retryAfterSeconds: left },
          },
        ],
      });
      response.writeHead(429, {
        "content-type": "application/json; charset=utf-8",
        "content-length": Buffer.byteLength(body),
        "retry-after": String(left),
        connection: "close",
      });
      response.end(body);
    });
    return true;
  };
}
