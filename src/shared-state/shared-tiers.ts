/**
 * The Redis tiers behind the two in-process caches, so that a record or an answer one gateway
 * fetched serves every gateway on the same Redis. Values are JSON. Every command goes through
 * `RedisLink.attempt`: a Redis that fails or is slow reads as a miss and a write that is lost,
 * never as an error.
 */
import type { Redis } from "ioredis";
import type { GatewayMetrics } from "../telemetry/metrics.ts";
import type { RedisLink } from "./redis.ts";
import type { CachedResponse, SharedResponseTier } from "../plugins/response-cache.ts";
import type { SharedRecord, SharedRecordTier } from "../upstream/cache.ts";

/**
 * How long Redis keeps a record that does not change. Each process bounds its own tier; this
 * bounds Redis's share to the records read within a day, even when Redis has no eviction policy.
 */
export const FINAL_RECORD_TTL_MS = 24 * 60 * 60_000;

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

export function redisRecordTier(link: RedisLink, metrics: GatewayMetrics): SharedRecordTier {
  return {
    async get(key): Promise<SharedRecord | undefined> {
      const found = await link.attempt("record-cache-get", async (client) => {
        const stored = await read(client, link.key("record", key));
        return stored && { value: JSON.parse(stored.json) as unknown, ttlMs: stored.ttlMs };
      });
      if (found === undefined) return undefined;
      metrics.sharedCacheLookup("record", found !== null);
      return found ?? undefined;
    },
    set(key, value, ttlMs) {
      const json = JSON.stringify(value);
      void link.attempt("record-cache-set", (client) =>
        client.set(link.key("record", key), json, "PX", ttlMs ?? FINAL_RECORD_TTL_MS),
      );
    },
  };
}

export function redisResponseTier(link: RedisLink, metrics: GatewayMetrics): SharedResponseTier {
  return {
    async get(key) {
      const found = await link.attempt("response-cache-get", async (client) => {
        const stored = await read(client, link.key("response", key));
        return stored && { response: JSON.parse(stored.json) as CachedResponse, ttlMs: stored.ttlMs };
      });
      if (found === undefined) return undefined;
      metrics.sharedCacheLookup("response", found !== null);
      return found ?? undefined;
    },
    set(key, response, ttlMs) {
      const json = JSON.stringify({ body: response.body, contentType: response.contentType } satisfies CachedResponse);
      void link.attempt("response-cache-set", (client) => client.set(link.key("response", key), json, "PX", ttlMs));
    },
  };
}
