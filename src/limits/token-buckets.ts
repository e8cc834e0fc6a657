/**
 * Token buckets, one per caller: a bucket holds up to `burst` tokens and gains `ratePerSecond`
 * tokens a second; taking `cost` tokens succeeds when it holds that many. A request may pay from
 * several buckets at once (its key's and its address's): it is taken from all of them or from
 * none. The buckets live in this process (a bounded LRU), or in Redis, where every gateway sharing
 * it takes from one bucket per caller, in one atomic script on Redis's own clock.
 */
import type { Result } from "ioredis";
import { LRUCache } from "lru-cache";
import type { RedisLink } from "../shared-state/redis.ts";

export interface BucketLimits {
  ratePerSecond: number;
  burst: number;
}

export interface Take {
  allowed: boolean;
  /** Tokens the bucket holds after this take (when refused, what it holds now). */
  tokens: number;
}

/** One of the buckets a request pays from: its name and the limits of its kind. */
export interface BucketRef {
  name: string;
  limits: BucketLimits;
}

/** A take from several buckets: `tokens` has what each holds after it, in the order asked. */
export interface MultiTake {
  allowed: boolean;
  tokens: number[];
}

/** How long until a bucket holding `tokens` holds `cost`, in whole seconds, at least 1. */
export function secondsUntil(cost: number, tokens: number, ratePerSecond: number): number {
  return Math.max(1, Math.ceil((cost - tokens) / ratePerSecond));
}

/** How long an untouched bucket takes to fill up again, after which forgetting it changes nothing. */
function refillMs({ ratePerSecond, burst }: BucketLimits): number {
  return Math.max(1_000, Math.ceil((burst / ratePerSecond) * 1_000));
}

export interface Bucket {
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
    const bucket = this.refilled(caller, now);
    const allowed = bucket.tokens >= cost;
    if (allowed) bucket.tokens -= cost;
    return { allowed, tokens: bucket.tokens };
  }

  /** The caller's bucket as it holds at `now`: a new caller's is full. */
  refilled(caller: string, now: number): Bucket {
    const { ratePerSecond, burst } = this.limits;
    let bucket = this.buckets.get(caller);
    if (bucket) {
      bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1_000) * ratePerSecond);
      bucket.at = now;
    } else {
      bucket = { tokens: burst, at: now };
      this.buckets.set(caller, bucket);
    }
    return bucket;
  }
}

/**
 * Takes `cost` from every bucket named, or from none when one of them holds less; with `force`,
 * from every bucket whatever it holds (work already done is paid for: a bucket may go into debt,
 * and holds nothing to spend until it has refilled past it).
 */
export function takeFromAll(
  buckets: readonly { store: LocalBuckets; name: string }[],
  cost: number,
  now = performance.now(),
  force = false,
): MultiTake {
  const held = buckets.map(({ store, name }) => store.refilled(name, now));
  const allowed = force || held.every((bucket) => bucket.tokens >= cost);
  if (allowed) for (const bucket of held) bucket.tokens -= cost;
  return { allowed, tokens: held.map((bucket) => bucket.tokens) };
}

/**
 * KEYS: the buckets the request pays from, each a hash of `tokens` and `at` (ms of Redis's clock).
 * ARGV: the cost, whether to take it whatever the buckets hold (1 or 0), then per key its tokens
 * per ms, burst and lifetime in ms. Takes the cost from every bucket or from none (with force,
 * from every bucket, which may go into debt). Returns {allowed (1 or 0), tokens of each bucket after}.
 */
const TAKE_TOKENS = `
local cost = tonumber(ARGV[1])
local force = tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local held = {}
local allowed = 1
for index, key in ipairs(KEYS) do
  local perMs = tonumber(ARGV[index * 3])
  local burst = tonumber(ARGV[index * 3 + 1])
  local state = redis.call('HMGET', key, 'tokens', 'at')
  local tokens = tonumber(state[1])
  local at = tonumber(state[2])
  if tokens == nil or at == nil then
    tokens = burst
  else
    tokens = math.min(burst, tokens + math.max(0, now - at) * perMs)
  end
  if tokens < cost and force == 0 then allowed = 0 end
  held[index] = tokens
end
local reply = {allowed}
for index, key in ipairs(KEYS) do
  local tokens = held[index]
  if allowed == 1 then tokens = tokens - cost end
  redis.call('HSET', key, 'tokens', string.format('%.6f', tokens), 'at', string.format('%.3f', now))
  redis.call('PEXPIRE', key, ARGV[index * 3 + 2])
  reply[index + 1] = string.format('%.6f', tokens)
end
return reply
`;

const COMMAND = "gatewayTakeTokens";

declare module "ioredis" {
  interface RedisCommander<Context> {
    gatewayTakeTokens(keyCount: number, ...keysAndArgs: string[]): Result<[number, ...string[]], Context>;
  }
}

/** The buckets in Redis, shared by every gateway on it; `undefined` when Redis cannot answer now. */
export class RedisBuckets {
  constructor(private readonly redis: RedisLink) {
    // ioredis sends the script by its hash, and the script itself again when Redis has lost it (a restart).
    redis.client.defineCommand(COMMAND, { lua: TAKE_TOKENS });
  }

  async take(buckets: readonly BucketRef[], cost: number, force = false): Promise<MultiTake | undefined> {
    const keys = buckets.map(({ name }) => this.redis.key("rate-limit", name));
    const args = buckets.flatMap(({ limits }) => [
      String(limits.ratePerSecond / 1_000),
      String(limits.burst),
      String(refillMs(limits)),
    ]);
    const reply = await this.redis.attempt("rate-limit", (client) =>
      client.gatewayTakeTokens(keys.length, ...keys, String(cost), force ? "1" : "0", ...args),
    );
    return reply && { allowed: reply[0] === 1, tokens: reply.slice(1).map(Number) };
  }
}
