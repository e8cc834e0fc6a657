/**
 * Per-caller rate limiting. Every operation Yoga executes costs the upstream calls it is estimated
 * to make (at least 1; a subscription its first read, once), taken from the caller's token bucket
 * after validation and before any resolver runs. A caller over its budget gets HTTP 429 with
 * `Retry-After`; an operation that costs more than a full bucket holds can never run, and is
 * refused as over a limit.
 *
 * The caller is its API key (`x-glacier-api-key`, kept only as a hash), else its address: the
 * socket's, or behind a trusted proxy the first `X-Forwarded-For` hop when it is an IP address. Requests without a socket
 * (`yoga.fetch`) are one caller, `local`. With Redis, all gateways share each caller's bucket;
 * while Redis cannot answer, each gateway falls back to its own buckets.
 */
import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import type { ExecutionArgs, ExecutionResult } from "graphql";
import type { Plugin } from "graphql-yoga";
import type { RateLimitConfig } from "./config.ts";
import type { GatewayContext } from "./context.ts";
import { GatewayError, operationOverLimit } from "./errors.ts";
import type { GatewayMetrics } from "./metrics.ts";
import type { RedisLink } from "./redis.ts";
import { LocalBuckets, RedisBuckets, secondsUntil } from "./token-buckets.ts";
import { API_KEY_HEADER, apiKeyHash } from "./upstream/http.ts";
import { analyzeOperation } from "./operation-analysis.ts";

/** Callers whose buckets one process keeps; the least recently seen beyond this start full again. */
const LOCAL_CALLERS = 10_000;

export interface RateLimitDecision {
  allowed: boolean;
  /** Tokens left in the caller's bucket. */
  remaining: number;
  /** When refused: whole seconds until the bucket holds the operation's cost. */
  retryAfterSeconds: number;
}

export class RateLimiter {
  private readonly local: LocalBuckets;
  private readonly shared: RedisBuckets | undefined;

  constructor(
    private readonly config: RateLimitConfig,
    private readonly metrics: GatewayMetrics,
    redis?: RedisLink,
  ) {
    this.local = new LocalBuckets(config, LOCAL_CALLERS);
    this.shared = redis && new RedisBuckets(redis, config);
  }

  async take(caller: string, cost: number): Promise<RateLimitDecision> {
    const shared = await this.shared?.take(caller, cost);
    const { allowed, tokens } = shared ?? this.local.take(caller, cost);
    this.metrics.rateLimitDecision(allowed ? "allowed" : "limited", shared ? "redis" : "local");
    return { allowed, remaining: tokens, retryAfterSeconds: allowed ? 0 : secondsUntil(cost, tokens, this.config.ratePerSecond) };
  }
}

interface CallerContext {
  request: Request;
  /** Node's request, in Yoga's server context when served over HTTP. */
  req?: Pick<IncomingMessage, "socket">;
}

/** Who pays for a request: its API key's hash, else its address, else `local`. */
export function callerOf(context: CallerContext, trustProxy: boolean): string {
  const key = context.request.headers.get(API_KEY_HEADER)?.trim();
  if (key) return `key:${apiKeyHash(key)}`;
  if (trustProxy) {
    const forwarded = context.request.headers.get("x-forwarded-for")?.split(",")[0]?.trim();
    if (forwarded && isIP(forwarded)) return `address:${forwarded}`;
  }
  const address = context.req?.socket?.remoteAddress;
  return address ? `address:${address}` : "local";
}

function rateLimited(cost: number, decision: RateLimitDecision, config: RateLimitConfig): GatewayError {
  const seconds = decision.retryAfterSeconds;
  return new GatewayError(
    `Rate limit exceeded: this operation costs ${cost} (its estimated upstream calls) and ${Math.floor(decision.remaining)} of your ${config.burst} remain, refilling at ${config.ratePerSecond} per second; retry after ${seconds} s`,
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

function tooCostly(cost: number, burst: number): GatewayError {
  return operationOverLimit(
    "upstreamCalls",
    burst,
    cost,
    `The operation would make an estimated ${cost} upstream calls, more than the ${burst} that RATE_LIMIT_BURST allows at once, so it can never run; ask for fewer items (smaller first) or fewer linked records`,
  );
}

export function useRateLimit(config: RateLimitConfig, limiter: RateLimiter): Plugin<GatewayContext> {
  const remaining = new WeakMap<Request, number>();

  async function admit(args: ExecutionArgs, stop: (result: ExecutionResult) => void): Promise<void> {
    const cost = Math.max(1, analyzeOperation(args).upstreamCalls);
    if (cost > config.burst) return stop({ errors: [tooCostly(cost, config.burst)] });
    const context = args.contextValue as CallerContext;
    const decision = await limiter.take(callerOf(context, config.trustProxy), cost);
    if (!decision.allowed) return stop({ errors: [rateLimited(cost, decision, config)] });
    remaining.set(context.request, decision.remaining);
  }

  return {
    onExecute: ({ args, setResultAndStopExecution }) => admit(args, setResultAndStopExecution),
    onSubscribe: ({ args, setResultAndStopExecution }) => admit(args, setResultAndStopExecution),
    onResponse({ request, response }) {
      const left = remaining.get(request);
      if (left === undefined) return;
      response.headers.set("ratelimit-limit", String(config.burst));
      response.headers.set("ratelimit-remaining", String(Math.floor(left)));
    },
  };
}
