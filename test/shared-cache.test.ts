/**
 * Two gateways on one Redis (a real redis-server on loopback) over one simulator: a record or an
 * answer one gateway fetched serves the other, and Redis failing costs no request. Records keep
 * a lifetime fit for them, and with REDIS_CACHE_URL the caches live in a Redis of their own.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startSimulator } from "../simulator/server.ts";
import { FINAL_RECORD_TTL_MS, MAX_SHARED_RECORD_CHARS, redisRecordTier } from "../src/shared-state/shared-tiers.ts";
import { execute, metricsText, startInstance, until, type Instance, type RunningSimulator } from "./support/harness.ts";
import { redisServerAvailable, startRedisServer, type RedisServer } from "./support/redis-server.ts";

const BLOCK_QUERY = `query Block($hash: String!) { chain(id: "43114") { chainName block(id: $hash) { blockNumber blockHash txCount } } }`;

describe.skipIf(!redisServerAvailable)("the shared tier on Redis", () => {
  let simulator: RunningSimulator;
  let redis: RedisServer;
  const instances: Instance[] = [];

  beforeAll(async () => {
    [simulator, redis] = await Promise.all([startSimulator({ dataPort: 0, metricsPort: 0 }), startRedisServer()]);
  });
  afterEach(async () => {
    await Promise.all(instances.splice(0).map((instance) => instance.close()));
  });
  afterAll(async () => {
    await Promise.all([simulator?.close(), redis?.stop()]);
  });

  async function instance(env: Record<string, string> = {}): Promise<Instance> {
    const started = await startInstance(simulator, { REDIS_URL: redis.url, ...env });
    instances.push(started);
    return started;
  }

  /** The hash of a C-Chain block that no other test of this file asks for. */
  let nextBlock = 1_000;
  function blockHash(): string {
    nextBlock += 7;
    return simulator.network.chain("43114")!.blocks.block(nextBlock)!.blockHash;
  }

  /** Waits until every command a gateway sent to Redis so far has been carried out. */
  async function flushed(gateway: Instance): Promise<void> {
    await gateway.redis!.client.ping();
  }

  function counter(text: string, name: string, labels: string): number {
    const line = text.split("\n").find((candidate) => candidate.startsWith(`${name}{${labels}}`));
    return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
  }

  it("serves a block that one gateway fetched to the other without an upstream call, chain list included", async () => {
    const [first, second] = await Promise.all([instance(), instance()]);
    const hash = blockHash();
    simulator.resetCounters();
    const fetched = await execute(first, BLOCK_QUERY, { hash });
    expect(fetched.body.errors).toBeUndefined();
    expect(fetched.body.data).toMatchObject({ chain: { block: { blockHash: hash } } });
    expect(simulator.counters()["GET /v1/chains/{chainId}/blocks/{blockId}"]).toBe(1);
    await flushed(first);

    simulator.resetCounters();
    const served = await execute(second, BLOCK_QUERY, { hash });
    expect(served.body).toEqual(fetched.body);
    expect(Object.values(simulator.counters()).filter((count) => count > 0)).toEqual([]);
    const text = await metricsText(second);
    // The chain list and the block.
    expect(counter(text, "gateway_shared_cache_lookups_total", 'tier="record",result="hit"')).toBe(2);
    expect(counter(text, "gateway_shared_cache_lookups_total", 'tier="record",result="miss"')).toBe(0);

    // Now held by the second gateway itself: Redis is not asked again.
    await execute(second, BLOCK_QUERY, { hash });
    expect(counter(await metricsText(second), "gateway_shared_cache_lookups_total", 'tier="record",result="hit"')).toBe(2);
  });

  it("keeps records that do not change out of both tiers with RECORD_CACHE=false, chain records not", async () => {
    const [first, uncached] = await Promise.all([instance(), instance({ RECORD_CACHE: "false" })]);
    const hash = blockHash();
    await execute(first, BLOCK_QUERY, { hash });
    await flushed(first);
    simulator.resetCounters();
    const served = await execute(uncached, BLOCK_QUERY, { hash });
    expect(served.body.data).toMatchObject({ chain: { block: { blockHash: hash } } });
    expect(Object.fromEntries(Object.entries(simulator.counters()).filter(([, count]) => count > 0))).toEqual({
      "GET /v1/chains/{chainId}/blocks/{blockId}": 1,
    });
  });

  it("gives a chain record the time it has left in Redis, not a new lifetime", async () => {
    // A prefix of their own, so that no chain list the other tests stored is found.
    const env = { CHAIN_CACHE_TTL_MS: "3000", REDIS_KEY_PREFIX: "chain-ttl:" };
    const [first, second] = await Promise.all([instance(env), instance(env)]);
    const query = `{ chain(id: "43114") { chainName } }`;
    simulator.resetCounters();
    await execute(first, query);
    const loaded = Date.now();
    expect(simulator.counters()["GET /v1/chains"]).toBe(1);
    await flushed(first);
    await sleep(1_000);
    simulator.resetCounters();
    await execute(second, query);
    expect(simulator.counters()["GET /v1/chains"] ?? 0).toBe(0);
    // Past the list's 3 s, though the second gateway took it only 1 s in: it loads the list again.
    await sleep(loaded + 3_600 - Date.now());
    simulator.resetCounters();
    await execute(second, query);
    expect(simulator.counters()["GET /v1/chains"]).toBe(1);
  });

  it("keeps a block in Redis for an hour and a chain record for its lifetime, and writes no record over the size bound", async () => {
    const env = { REDIS_KEY_PREFIX: "record-ttl:" };
    const gateway = await instance(env);
    const hash = blockHash();
    await execute(gateway, BLOCK_QUERY, { hash });
    await flushed(gateway);
    const client = new Redis(redis.url);
    try {
      // The block, by hash and by number.
      const blockKeys = await client.keys("record-ttl:record:evm-block:*");
      expect(blockKeys.some((key) => key.endsWith(hash.toLowerCase()))).toBe(true);
      expect(blockKeys.length).toBe(2);
      for (const key of blockKeys) {
        const ttl = await client.pttl(key);
        expect(ttl).toBeGreaterThan(FINAL_RECORD_TTL_MS - 60_000);
        expect(ttl).toBeLessThanOrEqual(60 * 60_000);
      }
      const chainKeys = await client.keys("record-ttl:record:evm-chain*");
      expect(chainKeys.length).toBeGreaterThan(0);
      for (const key of chainKeys) expect(await client.pttl(key)).toBeLessThanOrEqual(gateway.config.cache.chainTtlMs);

      const tier = redisRecordTier(gateway.redis!, gateway.gateway.metrics);
      tier.set("small", { text: "s".repeat(1_000) }, undefined);
      tier.set("large", { text: "l".repeat(MAX_SHARED_RECORD_CHARS) }, undefined);
      await flushed(gateway);
      expect(await client.exists("record-ttl:record:small", "record-ttl:record:large")).toBe(1);
      expect(await client.exists("record-ttl:record:small")).toBe(1);
    } finally {
      client.disconnect();
    }
  });

  it("answers a query that one gateway cached from the other without executing it", async () => {
    const env = { RESPONSE_CACHE_TTL_MS: "60000" };
    const [first, second] = await Promise.all([instance(env), instance(env)]);
    const query = `{ latestBlocks(first: 4) { nodes { blockHash chainId } } }`;
    const answered = await execute(first, query);
    expect(answered.headers.get("x-response-cache")).toBeNull();
    await flushed(first);

    simulator.resetCounters();
    const hit = await execute(second, query);
    expect(hit.headers.get("x-response-cache")).toBe("hit");
    expect(hit.body).toEqual(answered.body);
    expect(Object.values(simulator.counters()).filter((count) => count > 0)).toEqual([]);
    const text = await metricsText(second);
    expect(counter(text, "gateway_response_cache_lookups_total", 'result="shared"')).toBe(1);
    expect(counter(text, "gateway_shared_cache_lookups_total", 'tier="response",result="hit"')).toBe(1);

    // Another caller key is another answer.
    const other = await execute(second, query, {}, { "x-glacier-api-key": "another-caller" });
    expect(other.headers.get("x-response-cache")).toBeNull();
    expect(counter(await metricsText(second), "gateway_shared_cache_lookups_total", 'tier="response",result="miss"')).toBe(1);
  });

  it("with REDIS_CACHE_URL, keeps records and answers in that Redis and the rate-limit buckets in REDIS_URL's", async () => {
    const caches = await startRedisServer();
    const env = { REDIS_CACHE_URL: caches.url, REDIS_KEY_PREFIX: "apart:", RESPONSE_CACHE_TTL_MS: "60000", RATE_LIMIT: "true" };
    const [state, cache] = [new Redis(redis.url), new Redis(caches.url)];
    try {
      // The second without a response cache: what serves it is the record tier.
      const [first, second] = await Promise.all([instance(env), instance({ ...env, RESPONSE_CACHE_TTL_MS: "0" })]);
      const hash = blockHash();
      await execute(first, BLOCK_QUERY, { hash });
      await Promise.all([flushed(first), first.cacheRedis!.client.ping()]);

      const keys = async (client: Redis, kind: string) => client.keys(`apart:${kind}:*`);
      expect((await keys(cache, "record")).some((key) => key.includes(hash))).toBe(true);
      expect(await keys(cache, "response")).toHaveLength(1);
      expect(await keys(cache, "rate-limit")).toEqual([]);
      expect(await keys(state, "record")).toEqual([]);
      expect(await keys(state, "response")).toEqual([]);
      expect((await keys(state, "rate-limit")).length).toBeGreaterThan(0);

      // The other gateway is served from the cache Redis: no upstream call.
      simulator.resetCounters();
      const served = await execute(second, BLOCK_QUERY, { hash });
      expect(served.body.data).toMatchObject({ chain: { block: { blockHash: hash } } });
      expect(Object.values(simulator.counters()).filter((count) => count > 0)).toEqual([]);
      const text = await metricsText(second);
      expect(text).toMatch(/^gateway_redis_up 1$/m);
      expect(text).toMatch(/^gateway_redis_cache_up 1$/m);
    } finally {
      state.disconnect();
      cache.disconnect();
      await Promise.all(instances.splice(0).map((started) => started.close()));
      await caches.stop();
    }
  });

  it("goes on without a Redis that is slower than REDIS_TIMEOUT_MS", async () => {
    const gateway = await instance({ REDIS_TIMEOUT_MS: "100" });
    // Another client keeps the server busy for a second, as an overloaded Redis would be.
    const busy = new Redis(redis.url);
    const blocking = busy.eval(
      `local t = redis.call("TIME") repeat local n = redis.call("TIME") until (n[1] - t[1]) * 1000000 + (n[2] - t[2]) > 1000000 return 1`,
      0,
    );
    try {
      await sleep(50);
      const hash = blockHash();
      const started = Date.now();
      const result = await execute(gateway, BLOCK_QUERY, { hash });
      const took = Date.now() - started;
      expect(result.body.errors).toBeUndefined();
      expect(result.body.data).toMatchObject({ chain: { block: { blockHash: hash } } });
      // The chain list and the block each waited for Redis at most its timeout, not the second.
      expect(took).toBeLessThan(800);
      expect(
        counter(await metricsText(gateway), "gateway_redis_fallbacks_total", 'operation="record-cache-get"'),
      ).toBeGreaterThanOrEqual(1);
    } finally {
      await blocking;
      busy.disconnect();
    }
  });

  it("loses no request when Redis dies, falls back to each gateway's own caches, and shares again once Redis is back", async () => {
    const env = { RESPONSE_CACHE_TTL_MS: "60000" };
    const gateways = await Promise.all([instance(env), instance(env)]);
    const results: { errors: unknown; hash: string | undefined }[] = [];
    const hashes: string[] = [];
    for (let index = 0; index < 40; index++) {
      if (index === 12) await redis.kill();
      const hash = blockHash();
      hashes.push(hash);
      const result = await execute(gateways[index % 2]!, BLOCK_QUERY, { hash });
      results.push({
        errors: result.body.errors,
        hash: (result.body.data as { chain?: { block?: { blockHash: string } } } | undefined)?.chain?.block?.blockHash,
      });
    }
    expect(results).toEqual(hashes.map((hash) => ({ errors: undefined, hash })));
    for (const gateway of gateways) {
      const text = await metricsText(gateway);
      expect(text).toMatch(/^gateway_redis_up 0$/m);
      expect(counter(text, "gateway_redis_fallbacks_total", 'operation="record-cache-get"')).toBeGreaterThan(0);
      expect(counter(text, "gateway_redis_fallbacks_total", 'operation="response-cache-get"')).toBeGreaterThan(0);
    }

    await redis.restart();
    for (const gateway of gateways) {
      await until(async () => /^gateway_redis_up 1$/m.test(await metricsText(gateway)), "the gateway to see Redis again");
    }
    const [first, second] = gateways as [Instance, Instance];
    const hash = blockHash();
    await execute(first, BLOCK_QUERY, { hash });
    await flushed(first);
    simulator.resetCounters();
    const served = await execute(second, BLOCK_QUERY, { hash });
    expect(served.body.data).toMatchObject({ chain: { block: { blockHash: hash } } });
    expect(simulator.counters()["GET /v1/chains/{chainId}/blocks/{blockId}"] ?? 0).toBe(0);
  });
});
