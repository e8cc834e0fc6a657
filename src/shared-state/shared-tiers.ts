/**
 * The Redis tiers behind the two in-process caches, so that a record or an answer one gateway
 * fetched serves every gateway on the same Redis. Values are JSON. Every command goes through
 * `RedisLink.attempt`: a Redis that fails or is slow reads as a miss and a write that is lost,
 * never as an error.
 */
import type { Redis } from "ioredis";
import type { GatewayMetrics } from "../telemetry/metrics.ts";
import type { RedisLink } from "./redis.ts";
import type { SharedRecord, SharedRecordTier } from "../upstream/cache.ts";

/**
 * An answer as the response cache (src/plugins/response-cache.ts) keeps it, and the tier it reads
 * and writes: declared here, below the cache, which imports them.
 */
export interface CachedResponse {
  body: string;
  contentType: string;
  /** The operation name the request that stored it sent, for the log line of a hit answered before Yoga. */
  operation?: string | null;
}

/** A second tier of answers shared by several gateways; it never throws. */
export interface SharedResponseTier {
  /** The answer, with the time it has left there (undefined: no expiry). */
  get(key: string): Promise<{ response: CachedResponse; ttlMs: number | undefined } | undefined>;
  set(key: string, response: CachedResponse, ttlMs: number): void;
}

/**
 * How long Redis keeps a record that does not change (a block, a finalized transaction, a
 * vertex). What is read again within the hour is shared; what stays hot longer each process
 * holds in its own tier. This bounds Redis's share to the records read within the hour, even
 * when Redis has no eviction policy.
 */
export const FINAL_RECORD_TTL_MS = 60 * 60_000;

/**
 * The largest record (as JSON, in characters) written to Redis. A larger one (a transaction with
 * hundreds of transfers) costs Redis more memory and every reader more bytes than its upstream
 * call costs: each process keeps it in its own tier only.
 */
export const MAX_SHARED_RECORD_CHARS = 32 * 1024;

interface Stored {
  json: string;
  /** Milliseconds left; undefined when the key has no expiry. */
  ttlMs: number | undefined;
}

/** GET and PTTL of one key in one round trip; undefined when the key is absent. */
async function read(client: Redis, key: string): Promise<Stored | null> {
  const results = await client.multi().get(key).pttl(key).exec();
  if (results === null) throw new Error("the transaction was aborted");
  const [[getError, json], [pttlError, ttl]] = results as [[Error | null, string | null], [Error | null, number]];
  if (getError ?? pttlError) throw getError ?? pttlError;
  if (json === null) return null;
  return { json, ttlMs: ttl >= 0 ? ttl : undefined };
}

/**
 * One cache's tier in Redis: its keys under `kind`, its values as JSON; a lookup is counted as a
 * hit or a miss, a failed one (undefined from `attempt`) as neither.
 */
function redisTier<T>(link: RedisLink, metrics: GatewayMetrics, kind: "record" | "response") {
  return {
    async get(key: string): Promise<{ value: T; ttlMs: number | undefined } | undefined> {
      const found = await link.attempt(`${kind}-cache-get`, async (client) => {
        const stored = await read(client, link.key(kind, key));
        return stored && { value: JSON.parse(stored.json) as T, ttlMs: stored.ttlMs };
      });
      if (found === undefined) return undefined;
      metrics.sharedCacheLookup(kind, found !== null);
      return found ?? undefined;
    },
    set(key: string, json: string, ttlMs: number): void {
      void link.attempt(`${kind}-cache-set`, (client) => client.set(link.key(kind, key), json, "PX", ttlMs));
    },
  };
}

export function redisRecordTier(link: RedisLink, metrics: GatewayMetrics): SharedRecordTier {
  const tier = redisTier<unknown>(link, metrics, "record");
  return {
    get: (key): Promise<SharedRecord | undefined> => tier.get(key),
    set: (key, value, ttlMs) => {
      const json = JSON.stringify(value);
      if (json.length <= MAX_SHARED_RECORD_CHARS) tier.set(key, json, ttlMs ?? FINAL_RECORD_TTL_MS);
    },
  };
}

export function redisResponseTier(link: RedisLink, metrics: GatewayMetrics): SharedResponseTier {
  const tier = redisTier<CachedResponse>(link, metrics, "response");
  return {
    async get(key) {
      const found = await tier.get(key);
      return found && { response: found.value, ttlMs: found.ttlMs };
    },
    set: (key, response, ttlMs) =>
      tier.set(
        key,
        JSON.stringify({
          body: response.body,
          contentType: response.contentType,
          operation: response.operation ?? null,
        } satisfies CachedResponse),
        ttlMs,
      ),
  };
}
