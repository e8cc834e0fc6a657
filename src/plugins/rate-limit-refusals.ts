/**
 * The refusals of the rate limiter (src/plugins/rate-limit.ts): a caller over its budget (429,
 * with `Retry-After`), an operation or a document that costs more than a full bucket holds (over a
 * limit, never to run), a caller holding all the streams it may.
 */
import type { FetchAPI } from "graphql-yoga";
import { GatewayError, operationOverLimit } from "../errors.ts";
import type { DocumentShape } from "../limits/document-shape.ts";
import type { RateLimitDecision } from "../limits/rate-limiter.ts";
import { describeEstimate } from "./operation-limits.ts";

/** What a decision says is left, as the `ratelimit-remaining` header and a refusal's message say it: whole tokens, never below 0. */
export function remainingOf(decision: RateLimitDecision): number {
  return Math.max(0, Math.floor(decision.remaining));
}

export function rateLimited(cost: number, what: string, decision: RateLimitDecision): GatewayError {
  const seconds = decision.retryAfterSeconds;
  return new GatewayError(
    `Rate limit exceeded: ${what} costs ${cost} and ${remainingOf(decision)} of your ${decision.burst} remain, refilling at ${decision.ratePerSecond} per second; retry after ${seconds} s`,
    "RATE_LIMITED",
    {
      cost,
      retryAfterSeconds: seconds,
      // as the upstream's RATE_LIMITED errors carry it
      retryAfter: seconds,
      http: { status: 429, headers: { "Retry-After": String(seconds) } },
    },
  );
}

export function tooCostly(upstreamCalls: number, cpuCost: number, otherOperations: number, burst: number): GatewayError {
  return operationOverLimit(
    "upstreamCalls",
    burst,
    upstreamCalls + cpuCost + otherOperations,
    `The operation would make an estimated ${describeEstimate(upstreamCalls, cpuCost, otherOperations)}, more than the ${burst} that RATE_LIMIT_BURST allows at once, so it can never run; ask for fewer items (smaller first) or fewer linked records`,
  );
}

export function documentTooCostly(cost: number, burst: number, shape: DocumentShape | undefined): GatewayError {
  const size = shape ? ` (${shape.tokens} tokens and ${shape.definitions} definitions)` : "";
  return operationOverLimit(
    "documentSize",
    burst,
    cost,
    `Reading this request${size} costs ${cost}, more than the ${burst} that RATE_LIMIT_BURST allows at once, so it can never run; send a smaller document or smaller variables, one operation at a time`,
  );
}

export function tooManyStreams(max: number): GatewayError {
  return new GatewayError(
    `Too many subscriptions: you have ${max} open, the most MAX_SUBSCRIPTIONS_PER_CALLER allows; close one before opening another`,
    "RATE_LIMITED",
    { limit: "subscriptions", max, http: { status: 429 } },
  );
}

/** The answer to a request refused before Yoga parses it: 429, with `Retry-After`. */
export function refusedResponse(fetchAPI: FetchAPI, cost: number, what: string, decision: RateLimitDecision): Response {
  const { message, extensions } = rateLimited(cost, what, decision);
  const { http: _status, ...shown } = extensions;
  return new fetchAPI.Response(JSON.stringify({ errors: [{ message, extensions: shown }] }), {
    status: 429,
    headers: { "content-type": "application/json; charset=utf-8", "retry-after": String(decision.retryAfterSeconds) },
  });
}
