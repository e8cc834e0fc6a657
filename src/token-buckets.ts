/**
 * Token buckets, one per caller: a bucket holds up to `burst` tokens and gains `ratePerSecond`
 * tokens a second; taking `cost` tokens succeeds when it holds that many. The buckets live in this
 * process (a bounded LRU), or in Redis, where every gateway sharing it takes from one bucket per
 * caller, in one atomic script on Redis's own clock.
 */
import type { Result } from "ioredis";
import { LRUCache } from "lru-cache";
import type { RedisLink } from "./redis.ts";

export interface BucketLimits {
  ratePerSecond: number;
  burst: number;
}

export interface Take {
  allowed: boolean;
  /** Tokens the bucket holds after this take (when refused, what it holds now). */
  tokens: number;
}

/** How long until a bucket holding `tokens` holds `cost`, in whole seconds, at least 1. */
export function secondsUntil(cost: number, tokens: number, ratePerSecond: number): number {
  return Math.max(1, Math.ceil((cost - tokens) / ratePerSecond));
}

/** How long an untouched bucket takes to fill up again, after which forgetting it changes nothing. */
function refillMs({ ratePerSecond, burst }: BucketLimits): number {
  return Math.max(1_000, Math.ceil((burst / ratePerSecond) * 1_000));
}

interface Bucket {
  tokens: number;
  /** performance.now() of the last take. */
  at: number;
}

/** The buckets of this process. A caller forgotten (least recently seen, or full again) starts full. */
export class LocalBuckets {
  private readonly buckets: LRUCache<string, Bucket>;

  constructor(
    private readonly limits: BucketLimits,
    maxCallers: number,
  ) {
    // A bucket is updated in place; reading it renews its time to live. The TTL is a second or
    // more, so the clock it is checked against may be 100 ms old.
    this.buckets = new LRUCache({ max: maxCallers, ttl: refillMs(limits), updateAgeOnGet: true, ttlResolution: 100 });
  }

  take(caller: string, cost: number, now = performance.now()): Take {
    const { ratePerSecond, burst } = this.limits;
    let bucket = this.buckets.get(caller);
    if (bucket) {
      bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1_000) * ratePerSecond);
      bucket.at = now;
    } else {
      bucket = { tokens: burst, at: now };
      this.buckets.set(caller, bucket);
    }
    const allowed = bucket.tokens >= cost;
    if (allowed) bucket.tokens -= cost;
    return { allowed, tokens: bucket.tokens };
  }
}

/**
 * KEYS[1]: the caller's bucket, a hash of `tokens` and `at` (ms of Redis's clock).
 * ARGV: tokens per ms, burst, cost, the key's lifetime in ms. Returns {allowed (1 or 0), tokens}.
 */
const TAKE_TOKENS = `
local perMs = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local held = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(held[1])
local at = tonumber(held[2])
if tokens == nil or at == nil then
  tokens = burst
else
  tokens = math.min(burst, tokens + math.max(0, now - at) * perMs)
end
local allowed = 0
if tokens >= cost then
  tokens = tokens - cost
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.6f', tokens), 'at', string.format('%.3f', now))
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {allowed, string.format('%.6f', tokens)}
`;

const COMMAND = "gatewayTakeTokens";

declare module "ioredis" {
  interface RedisCommander<Context> {
    gatewayTakeTokens(key: string, perMs: string, burst: string, cost: string, ttlMs: string): Result<[number, string], Context>;
  }
}

/** The buckets in Redis, shared by every gateway on it; `undefined` when Redis cannot answer now. */
export class RedisBuckets {
  private readonly ttlMs: string;

  constructor(
    private readonly redis: RedisLink,
    private readonly limits: BucketLimits,
  ) {
    // ioredis sends the script by its hash, and the script itself again when Redis has lost it (a restart).
    redis.client.defineCommand(COMMAND, { numberOfKeys: 1, lua: TAKE_TOKENS });
    this.ttlMs = String(refillMs(limits));
  }

  async take(caller: string, cost: number): Promise<Take | undefined> {
    const { ratePerSecond, burst } = this.limits;
    const reply = await this.redis.attempt("rate-limit", (client) =>
      client.gatewayTakeTokens(this.redis.key("rate-limit", caller), String(ratePerSecond / 1_000), String(burst), String(cost), this.ttlMs),
    );
    return reply && { allowed: reply[0] === 1, tokens: Number(reply[1]) };
  }
}
