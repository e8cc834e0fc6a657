/**
 * The rate limiter: token buckets per caller (src/limits/token-buckets.ts), shared through Redis
 * when there is one and local otherwise, and the buckets seen empty, so that a caller whose budget
 * is spent can be refused before anything it sends is read.
 */
import { LRUCache } from "lru-cache";
import type { RateLimitConfig } from "../config.ts";
import type { RedisLink } from "../shared-state/redis.ts";
import {
  LocalBuckets,
  RedisBuckets,
  secondsUntil,
  takeFromAll,
  type BucketLimits,
  type BucketRef,
  type MultiTake,
} from "./token-buckets.ts";

/** Told of each decision, for the metrics. */
export interface RateLimitObserver {
  rateLimitDecision(outcome: "allowed" | "limited", store: "redis" | "local"): void;
}

/** Callers whose buckets one process keeps, per kind (keys, addresses); the least recently seen beyond this start full again. */
const LOCAL_CALLERS = 10_000;

export interface RateLimitDecision {
  allowed: boolean;
  /** Tokens left in the caller's fullest-spent bucket. */
  remaining: number;
  /** The burst of that bucket. */
  burst: number;
  /** Its refill rate. */
  ratePerSecond: number;
  /** When refused: whole seconds until every bucket holds the cost. */
  retryAfterSeconds: number;
}

export class RateLimiter {
  private readonly stores = new Map<BucketLimits, LocalBuckets>();
  private readonly shared: RedisBuckets | undefined;
  /**
   * Buckets that held less than 1 token when last seen, with the time (Date.now()) they hold 1
   * again: until then every request that pays from one is refused before it is read
   * (`secondsUntilServed`), which makes a flood's refusals cost next to nothing.
   */
  private readonly exhausted = new LRUCache<string, number>({ max: LOCAL_CALLERS });

  constructor(
    config: RateLimitConfig,
    private readonly metrics: RateLimitObserver,
    redis?: RedisLink,
  ) {
    for (const limits of [config, config.address]) this.stores.set(limits, new LocalBuckets(limits, LOCAL_CALLERS));
    this.shared = redis && new RedisBuckets(redis);
  }

  /**
   * Takes `cost` from every bucket, or from none when one of them holds less; with `force`, from
   * every bucket whatever it holds, for work already done (a bucket may go into debt).
   */
  async take(buckets: readonly BucketRef[], cost: number, force = false): Promise<RateLimitDecision> {
    const shared = await this.shared?.take(buckets, cost, force);
    return shared ? this.decided(buckets, cost, shared, "redis") : this.takeHere(buckets, cost, force);
  }

  /**
   * `take` without waiting, when the buckets are this process's (no Redis to ask): the decision;
   * else undefined, and `take` asks Redis. A cache hit answered by the listener pays this way.
   */
  takeNow(buckets: readonly BucketRef[], cost: number, force = false): RateLimitDecision | undefined {
    return this.shared ? undefined : this.takeHere(buckets, cost, force);
  }

  /**
   * `take`, decided at once when the buckets are this process's: a request that pays on its way
   * through the plugins waits for no promise then (each one a turn of the microtask queue for
   * every hook after it).
   */
  takeSoon(buckets: readonly BucketRef[], cost: number, force = false): RateLimitDecision | Promise<RateLimitDecision> {
    return this.takeNow(buckets, cost, force) ?? this.take(buckets, cost, force);
  }

  private takeHere(buckets: readonly BucketRef[], cost: number, force: boolean): RateLimitDecision {
    const stores = buckets.map(({ name, limits }) => ({ store: this.store(limits), name }));
    return this.decided(buckets, cost, takeFromAll(stores, cost, performance.now(), force), "local");
  }

  private decided(
    buckets: readonly BucketRef[],
    cost: number,
    { allowed, tokens }: MultiTake,
    store: "redis" | "local",
  ): RateLimitDecision {
    this.metrics.rateLimitDecision(allowed ? "allowed" : "limited", store);
    // The bucket that tells the caller most: the one that keeps it waiting longest, else the emptiest.
    let binding = 0;
    let retryAfterSeconds = 0;
    for (let index = 0; index < tokens.length; index += 1) {
      const held = tokens[index]!;
      const { name, limits } = buckets[index]!;
      const wait = held < cost ? secondsUntil(cost, held, limits.ratePerSecond) : 0;
      if (wait > retryAfterSeconds || (retryAfterSeconds === 0 && held < tokens[binding]!)) binding = index;
      retryAfterSeconds = Math.max(retryAfterSeconds, wait);
      if (held < 1) this.exhausted.set(name, Date.now() + Math.ceil(((1 - held) / limits.ratePerSecond) * 1_000));
    }
    const { burst, ratePerSecond } = buckets[binding]!.limits;
    return { allowed, remaining: tokens[binding]!, burst, ratePerSecond, retryAfterSeconds: allowed ? 0 : retryAfterSeconds };
  }

  /** Whole seconds until every one of these buckets can pay 1 again, as last seen; 0 when they can now. */
  secondsUntilServed(buckets: readonly BucketRef[]): number {
    // Asked of every request before it is read: while no bucket is known to be empty, at once.
    if (this.exhausted.size === 0) return 0;
    const now = Date.now();
    let waitMs = 0;
    for (const { name } of buckets) {
      const until = this.exhausted.get(name);
      if (until === undefined) continue;
      if (until <= now) this.exhausted.delete(name);
      else waitMs = Math.max(waitMs, until - now);
    }
    return Math.ceil(waitMs / 1_000);
  }

  private store(limits: BucketLimits): LocalBuckets {
    let store = this.stores.get(limits);
    if (!store) this.stores.set(limits, (store = new LocalBuckets(limits, LOCAL_CALLERS)));
    return store;
  }
}
