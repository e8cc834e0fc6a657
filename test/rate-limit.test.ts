import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../src/telemetry/logger.ts";
import { GatewayMetrics } from "../src/telemetry/metrics.ts";
import { callerOf } from "../src/limits/caller-buckets.ts";
import { RedisLink } from "../src/shared-state/redis.ts";
import { LocalBuckets, secondsUntil } from "../src/limits/token-buckets.ts";
import { NEW_DOCUMENT_COST, newDocumentCost } from "../src/limits/request-costs.ts";
import { execute, startHarness, upstreamCalls, type Harness } from "./support/harness.ts";
import { redisServerAvailable, startRedisServer, type RedisServer } from "./support/redis-server.ts";

/** 1 upstream call: one page of one block. */
const COSTS_1 = `{ latestBlocks(first: 1) { nodes { blockHash } } }`;
/** 9 upstream calls. */
const COSTS_9 = `{ latestBlocks(first: 8) { nodes { blockNumber transactions(first: 1) { nodes { txHash } } } } }`;
/** 10 upstream calls, as estimated: the page, and a page of transactions per block. */
const COSTS_10 = `{ latestBlocks(first: 9) { nodes { blockNumber transactions(first: 1) { nodes { txHash } } } } }`;
/** 21 upstream calls. */
const COSTS_21 = `{ latestBlocks(first: 20) { nodes { blockNumber transactions(first: 1) { nodes { txHash } } } } }`;

/** Slow enough that a spent bucket stays spent while a test looks at it. */
const LIMITS = { RATE_LIMIT_RATE: "1", RATE_LIMIT_BURST: "10" };

function key(name: string): Record<string, string> {
  return { "x-glacier-api-key": `${name}-${Math.random().toString(36).slice(2)}` };
}

/**
 * Has the gateway parse `documents` and the simulator build the latest blocks' transactions (slow
 * the first time), each from a key of its own, so that timed tests do not wait on them and a
 * document then costs what its operation costs: the first time, a document costs
 * `NEW_DOCUMENT_COST` more (COSTS_10 then more than a burst of 10 holds, refused once parsed).
 */
async function warmUp(harness: Harness, documents: readonly string[] = [COSTS_1, COSTS_9, COSTS_10, COSTS_21]): Promise<void> {
  for (const document of documents) {
    await execute(harness, document, {}, key("warm-up"));
    // Parsed now: a fresh bucket pays for it, unless its operation is over a limit.
    expect([200, 400]).toContain((await execute(harness, document, {}, key("warm-up"))).status);
  }
  harness.simulator.resetCounters();
}

async function metric(registry: GatewayMetrics["registry"], name: string, labels: Record<string, string>): Promise<number> {
  const found = await registry.getSingleMetric(name)?.get();
  const value = found?.values.find((entry) => Object.entries(labels).every(([label, wanted]) => entry.labels[label] === wanted));
  return value?.value ?? 0;
}

describe("token bucket arithmetic", () => {
  it("spends the burst, then refills at the rate up to the burst", () => {
    const buckets = new LocalBuckets({ ratePerSecond: 20, burst: 10 }, 100);
    expect(buckets.take("a", 10, 0)).toEqual({ allowed: true, tokens: 0 });
    expect(buckets.take("a", 1, 0)).toEqual({ allowed: false, tokens: 0 });
    // 100 ms at 20 a second: 2 tokens
    expect(buckets.take("a", 3, 100)).toEqual({ allowed: false, tokens: 2 });
    expect(buckets.take("a", 2, 100)).toEqual({ allowed: true, tokens: 0 });
    // an hour later the bucket holds the burst, no more
    expect(buckets.take("a", 11, 3_600_000)).toEqual({ allowed: false, tokens: 10 });
    expect(buckets.take("b", 10, 100)).toEqual({ allowed: true, tokens: 0 });
  });

  it("tells the whole seconds until the bucket holds the cost, at least one", () => {
    expect(secondsUntil(10, 0, 20)).toBe(1);
    expect(secondsUntil(10, 0, 2)).toBe(5);
    expect(secondsUntil(10, 1, 2)).toBe(5);
    expect(secondsUntil(10, 2.5, 2)).toBe(4);
    expect(secondsUntil(1, 0.99, 1000)).toBe(1);
  });

  it("forgets the least recently seen caller beyond its bound, who starts full again", () => {
    const buckets = new LocalBuckets({ ratePerSecond: 1, burst: 5 }, 2);
    buckets.take("a", 5, 0);
    buckets.take("b", 5, 0);
    buckets.take("c", 5, 0);
    expect(buckets.take("a", 5, 0).allowed).toBe(true);
    expect(buckets.take("c", 1, 0).allowed).toBe(false);
  });
});

describe("who the caller is", () => {
  const request = (headers: Record<string, string>) => new Request("http://gateway.test/graphql", { headers });
  const socket = { socket: { remoteAddress: "10.0.0.7" } } as never;

  it("is the API key's hash, never the key", () => {
    const caller = callerOf(
      { request: request({ "x-glacier-api-key": "secret-key", "x-forwarded-for": "1.2.3.4" }), req: socket },
      true,
    );
    expect(caller).toMatch(/^key:[A-Za-z0-9_-]{43}$/);
    expect(caller).not.toContain("secret-key");
    expect(callerOf({ request: request({ "x-glacier-api-key": " secret-key " }) }, false)).toBe(caller);
  });

  it("is else the socket's address, or the last X-Forwarded-For hop (the one the trusted proxy added) only behind a trusted proxy, else local", () => {
    // The client sent "1.2.3.4" itself; the proxy appended the address it saw.
    const forwarded = request({ "x-forwarded-for": "1.2.3.4, 10.0.0.1" });
    expect(callerOf({ request: forwarded, req: socket }, false)).toBe("address:10.0.0.7");
    expect(callerOf({ request: forwarded, req: socket }, true)).toBe("address:10.0.0.1");
    expect(callerOf({ request: request({}), req: socket }, true)).toBe("address:10.0.0.7");
    expect(callerOf({ request: request({ "x-forwarded-for": "2001:db8::1" }), req: socket }, true)).toBe(
      "address:2001:db8:0:0::/64",
    );
    expect(callerOf({ request: request({ "x-forwarded-for": "1.2.3.4, unknown" }), req: socket }, true)).toBe("address:10.0.0.7");
    expect(callerOf({ request: request({}) }, false)).toBe("local");
  });
});

describe("the limiter in the gateway", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness(LIMITS);
    await warmUp(harness);
  });
  afterAll(async () => {
    await harness.close();
  });
  beforeEach(() => {
    harness.simulator.resetCounters();
  });

  it("lets a caller spend its burst, then refuses with 429, Retry-After and RATE_LIMITED before any upstream call", async () => {
    const caller = key("spender");
    const spent = await execute(harness, COSTS_10, {}, caller);
    expect(spent.status).toBe(200);
    expect(spent.body.errors).toBeUndefined();
    expect(spent.headers.get("ratelimit-limit")).toBe("10");
    expect(Number(spent.headers.get("ratelimit-remaining"))).toBe(0);

    harness.simulator.resetCounters();
    // Every request pays 1 before it is parsed: an empty bucket refuses it there.
    const refused = await execute(harness, COSTS_10, {}, caller);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(refused.body.data).toBeUndefined();
    expect(refused.body.errors).toHaveLength(1);
    const error = refused.body.errors![0]!;
    expect(error.extensions).toEqual({ code: "RATE_LIMITED", cost: 1, retryAfterSeconds: 1, retryAfter: 1 });
    expect(error.message).toMatch(/this request costs 1 and 0 of your 10 remain, refilling at 1 per second; retry after 1 s/);
    expect(upstreamCalls(harness)).toEqual({});

    // A bucket that holds the request's 1 but not the operation's calls refuses it after validation.
    const other = key("spender");
    expect((await execute(harness, COSTS_9, {}, other)).status).toBe(200);
    harness.simulator.resetCounters();
    const unaffordable = await execute(harness, COSTS_10, {}, other);
    expect(unaffordable.status).toBe(429);
    // the bucket refills 1 a second and holds less than 1 after the request's 1: 9 s until it holds the other 9
    expect(unaffordable.headers.get("retry-after")).toBe("9");
    expect(unaffordable.body.errors![0]!.extensions).toEqual({
      code: "RATE_LIMITED",
      cost: 9,
      retryAfterSeconds: 9,
      retryAfter: 9,
    });
    expect(unaffordable.body.errors![0]!.message).toMatch(
      /costs 9 and 0 of your 10 remain, refilling at 1 per second; retry after 9 s/,
    );
    expect(upstreamCalls(harness)).toEqual({});

    const metrics = await (await harness.gateway.yoga.fetch("http://gateway.test/metrics")).text();
    expect(metrics).toMatch(/gateway_rate_limit_decisions_total\{result="allowed",store="local"\} [1-9]/);
    expect(metrics).toMatch(/gateway_rate_limit_decisions_total\{result="limited",store="local"\} [1-9]/);
  });

  it("refills at the rate: 20 a second, after ~100 ms two more calls' worth", async () => {
    const fast = await startHarness({ RATE_LIMIT_RATE: "20", RATE_LIMIT_BURST: "10" });
    try {
      await warmUp(fast);
      expect((await execute(fast, COSTS_10)).status).toBe(200);
      const refused = await execute(fast, COSTS_10);
      expect(refused.status).toBe(429);
      expect(refused.headers.get("retry-after")).toBe("1");
      await sleep(120);
      expect((await execute(fast, COSTS_1)).status).toBe(200);
      expect((await execute(fast, COSTS_1)).status).toBe(200);
      expect((await execute(fast, COSTS_10)).status).toBe(429);
    } finally {
      await fast.close();
    }
  });

  it("keeps a bucket per API key", async () => {
    const first = key("first");
    const second = key("second");
    expect((await execute(harness, COSTS_10, {}, first)).status).toBe(200);
    expect((await execute(harness, COSTS_1, {}, first)).status).toBe(429);
    expect((await execute(harness, COSTS_10, {}, second)).status).toBe(200);
  });

  it("refuses an operation that costs more than the burst as over a limit, with no upstream call and only the request's 1 spent", async () => {
    const caller = key("greedy");
    const refused = await execute(harness, COSTS_21, {}, caller);
    expect(refused.status).toBe(400);
    expect(refused.headers.get("retry-after")).toBeNull();
    const error = refused.body.errors![0]!;
    expect(error.extensions).toEqual({ code: "BAD_USER_INPUT", limit: "upstreamCalls", max: 10, actual: 21 });
    expect(error.message).toMatch(/estimated 21 upstream calls, more than the 10 that RATE_LIMIT_BURST allows/);
    expect(upstreamCalls(harness)).toEqual({});
    expect((await execute(harness, COSTS_9, {}, caller)).status).toBe(200);
  });

  it("spends only the request's 1 on an operation refused for its cost, depth or breadth", async () => {
    const strict = await startHarness({ ...LIMITS, MAX_QUERY_COST: "9" });
    try {
      // Parsed before: no NEW_DOCUMENT_COST for either.
      await warmUp(strict, [COSTS_10, COSTS_9]);
      const caller = key("costly");
      const refused = await execute(strict, COSTS_10, {}, caller);
      expect(refused.status).toBe(400);
      expect(refused.body.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", limit: "cost", max: 9, actual: 10 });
      expect(refused.headers.get("ratelimit-remaining")).toBe("9");
      const admitted = await execute(strict, COSTS_9, {}, caller);
      expect(admitted.status).toBe(200);
      expect(Number(admitted.headers.get("ratelimit-remaining"))).toBe(0);
    } finally {
      await strict.close();
    }
  });

  it("charges a subscription when it starts, and refuses one over the budget the same way", async () => {
    const caller = key("watcher");
    expect((await execute(harness, COSTS_10, {}, caller)).status).toBe(200);
    harness.simulator.resetCounters();
    const response = await harness.gateway.yoga.fetch("http://gateway.test/graphql", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", ...caller },
      body: JSON.stringify({ query: `subscription { exportOperation(id: "job-1") { operationStatus } }` }),
    });
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("1");
    expect(await response.text()).toContain('"code":"RATE_LIMITED"');
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("charges a document the parse cache does not hold NEW_DOCUMENT_COST more, however small: a fresh alias makes a new document (bench:hostile row 25)", async () => {
    // Refills so slowly that no test sees a token come back.
    const slow = await startHarness({ RATE_LIMIT_RATE: "0.001", RATE_LIMIT_BURST: "10" });
    const remaining = (answer: { headers: Headers }) => Number(answer.headers.get("ratelimit-remaining"));
    try {
      /** 1 upstream call, as COSTS_1. */
      const cheap = (alias: string) => `{ ${alias}: latestBlocks(first: 1) { nodes { blockHash } } }`;
      /** 21 upstream calls, as COSTS_21: refused at admission, after parsing and validating. */
      const overBurst = (alias: string) =>
        `{ ${alias}: latestBlocks(first: 20) { nodes { blockNumber transactions(first: 1) { nodes { txHash } } } } }`;
      /** 10 upstream calls, as COSTS_10: a whole burst. */
      const wholeBurst = (alias: string) =>
        `{ ${alias}: latestBlocks(first: 9) { nodes { blockNumber transactions(first: 1) { nodes { txHash } } } } }`;
      for (const small of [cheap("a1"), overBurst("c1"), wholeBurst("w1")])
        expect(newDocumentCost(small)).toBe(NEW_DOCUMENT_COST);

      const caller = key("aliases");
      const first = await execute(slow, cheap("a1"), {}, caller);
      expect(first.status).toBe(200);
      expect(remaining(first)).toBe(10 - 1 - NEW_DOCUMENT_COST);
      // The parse cache holds it now: 1.
      const again = await execute(slow, cheap("a1"), {}, caller);
      expect(again.status).toBe(200);
      expect(remaining(again)).toBe(10 - 2 - NEW_DOCUMENT_COST);
      // The same operation under another alias is another document.
      const renamed = await execute(slow, cheap("a2"), {}, caller);
      expect(renamed.status).toBe(200);
      expect(remaining(renamed)).toBe(10 - 3 - 2 * NEW_DOCUMENT_COST);
      // Refused at admission, it was parsed and validated all the same, and paid for that.
      slow.simulator.resetCounters();
      const refused = await execute(slow, overBurst("c1"), {}, caller);
      expect(refused.status).toBe(400);
      expect(refused.body.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", limit: "upstreamCalls" });
      expect(remaining(refused)).toBe(10 - 4 - 3 * NEW_DOCUMENT_COST);
      expect(upstreamCalls(slow)).toEqual({});

      // An operation that costs the whole burst: new, it costs NEW_DOCUMENT_COST more than a full
      // bucket holds, and is refused after it is parsed; then, parsed, it costs the burst.
      const newcomer = await execute(slow, wholeBurst("w1"), {}, key("whole"));
      expect(newcomer.status).toBe(429);
      expect(newcomer.body.errors![0]!.extensions).toMatchObject({ code: "RATE_LIMITED", cost: 9 });
      expect(remaining(newcomer)).toBe(10 - 1 - NEW_DOCUMENT_COST);
      expect(upstreamCalls(slow)).toEqual({});
      const parsed = await execute(slow, wholeBurst("w1"), {}, key("whole"));
      expect(parsed.status).toBe(200);
      expect(remaining(parsed)).toBe(0);
    } finally {
      await slow.close();
    }
  });
});

describe("callers by address, over HTTP", () => {
  async function serve(
    env: Record<string, string>,
  ): Promise<{ harness: Harness; server: Server; post: (query: string, headers?: Record<string, string>) => Promise<number> }> {
    const harness = await startHarness({ ...LIMITS, ...env });
    // COSTS_10 parsed, so that it costs the burst exactly.
    await warmUp(harness, [COSTS_10]);
    const server = createServer(harness.gateway.listener);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const post = async (query: string, headers: Record<string, string> = {}) => {
      const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ query }),
      });
      await response.arrayBuffer();
      return response.status;
    };
    return { harness, server, post };
  }

  async function stop({ harness, server }: { harness: Harness; server: Server }): Promise<void> {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await harness.close();
  }

  it("takes the socket's address, ignoring X-Forwarded-For unless TRUST_PROXY", async () => {
    const served = await serve({});
    try {
      expect(await served.post(COSTS_10, { "x-forwarded-for": "198.51.100.1" })).toBe(200);
      expect(await served.post(COSTS_10, { "x-forwarded-for": "198.51.100.2" })).toBe(429);
      expect(await served.post(COSTS_1)).toBe(429);
    } finally {
      await stop(served);
    }
  });

  it("takes the last X-Forwarded-For hop behind a trusted proxy: what a client writes before it buys nothing", async () => {
    const served = await serve({ TRUST_PROXY: "true" });
    try {
      expect(await served.post(COSTS_10, { "x-forwarded-for": "203.0.113.9, 198.51.100.1" })).toBe(200);
      expect(await served.post(COSTS_1, { "x-forwarded-for": "198.51.100.1" })).toBe(429);
      // A hop of the client's own invention in front does not make a new caller.
      expect(await served.post(COSTS_1, { "x-forwarded-for": "203.0.113.77, 198.51.100.1" })).toBe(429);
      expect(await served.post(COSTS_10, { "x-forwarded-for": "198.51.100.1, 198.51.100.2" })).toBe(200);
      expect(await served.post(COSTS_10)).toBe(200);
    } finally {
      await stop(served);
    }
  });
});

describe("RATE_LIMIT=false", () => {
  it("turns the limiter off", async () => {
    const harness = await startHarness({ RATE_LIMIT: "false", RATE_LIMIT_RATE: "1", RATE_LIMIT_BURST: "1" });
    try {
      for (let round = 0; round < 3; round += 1) {
        const result = await execute(harness, COSTS_10);
        expect(result.status).toBe(200);
        expect(result.body.errors).toBeUndefined();
        expect(result.headers.get("ratelimit-remaining")).toBeNull();
      }
    } finally {
      await harness.close();
    }
  });
});

describe.skipIf(!redisServerAvailable)("buckets shared in Redis", () => {
  const logger = createLogger("silent");
  let redis: RedisServer;
  const gateways: { harness: Harness; link: RedisLink; metrics: GatewayMetrics }[] = [];

  async function ready(link: RedisLink): Promise<void> {
    for (let attempt = 0; attempt < 100 && link.client.status !== "ready"; attempt += 1) await sleep(50);
    expect(link.client.status).toBe("ready");
  }

  beforeAll(async () => {
    redis = await startRedisServer();
    for (let index = 0; index < 2; index += 1) {
      const metrics = new GatewayMetrics();
      const link = new RedisLink({ url: redis.url, timeoutMs: 200, keyPrefix: "rate-limit-test:" }, logger, metrics);
      gateways.push({ harness: await startHarness(LIMITS, { redis: link, metrics }), link, metrics });
    }
    await Promise.all(gateways.map(({ link }) => ready(link)));
    for (const { harness } of gateways) await warmUp(harness);
  });
  afterAll(async () => {
    for (const { harness, link } of gateways) {
      await harness.close();
      await link.close();
    }
    await redis?.stop();
  });

  async function sharedBudgetHolds(): Promise<void> {
    const [one, other] = gateways;
    const caller = key("shared");
    const spent = await execute(one!.harness, COSTS_10, {}, caller);
    expect(spent.status).toBe(200);
    other!.harness.simulator.resetCounters();
    const refused = await execute(other!.harness, COSTS_1, {}, caller);
    expect(refused.status).toBe(429);
    expect(refused.body.errors![0]!.extensions).toMatchObject({ code: "RATE_LIMITED", cost: 1 });
    expect(upstreamCalls(other!.harness)).toEqual({});
  }

  it("gives two gateways one budget per caller: spent through one, refused through the other", async () => {
    await sharedBudgetHolds();
    expect(
      await metric(gateways[0]!.metrics.registry, "gateway_rate_limit_decisions_total", { result: "allowed", store: "redis" }),
    ).toBeGreaterThan(0);
    expect(
      await metric(gateways[1]!.metrics.registry, "gateway_rate_limit_decisions_total", { result: "limited", store: "redis" }),
    ).toBeGreaterThan(0);
  });

  it("shares a debt too: a document no bucket can pay, read through one gateway, leaves the caller owing on the other", async () => {
    const [one, other] = gateways;
    const caller = key("in-debt");
    // 12,500 characters: 1 for the request, NEW_DOCUMENT_COST and 12 for its reading, more than
    // the burst of 10, so it is never parsed; but it was read, so the 12 are paid all the same:
    // the bucket owes 3.
    const unaffordable = "{ __typename }".padEnd(12_500, " ");
    expect(newDocumentCost(unaffordable)).toBe(NEW_DOCUMENT_COST + 12);
    const refused = await execute(one!.harness, unaffordable, {}, caller);
    expect(refused.status).toBe(400);
    expect(refused.body.errors![0]!.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      limit: "documentSize",
      actual: 1 + newDocumentCost(unaffordable),
    });
    expect(refused.headers.get("ratelimit-remaining")).toBe("0");
    other!.harness.simulator.resetCounters();
    const owing = await execute(other!.harness, COSTS_1, {}, caller);
    expect(owing.status).toBe(429);
    // 1 s a token: from -3 to 1 takes 4 s (less what has refilled meanwhile).
    expect(Number(owing.headers.get("retry-after"))).toBeGreaterThanOrEqual(3);
    expect(upstreamCalls(other!.harness)).toEqual({});
  });

  it("keeps only a hash of the key, for about the time the burst takes to refill", async () => {
    const caller = { "x-glacier-api-key": "a-raw-key-never-stored" };
    expect((await execute(gateways[0]!.harness, COSTS_1, {}, caller)).status).toBe(200);
    const inspector = new Redis(redis.url);
    try {
      // The gateways share their record cache on the same Redis too: all keys are free of the raw key.
      expect((await inspector.keys("rate-limit-test:*")).join(" ")).not.toContain("a-raw-key");
      const keys = await inspector.keys("rate-limit-test:rate-limit:*");
      expect(keys.length).toBeGreaterThan(0);
      const ttls = await Promise.all(keys.map((bucket) => inspector.pttl(bucket)));
      // burst 10 at 1 a second
      for (const ttl of ttls) {
        expect(ttl).toBeGreaterThan(5_000);
        expect(ttl).toBeLessThanOrEqual(10_000);
      }
    } finally {
      inspector.disconnect();
    }
  });

  it("loses no request while Redis is down: local buckets answer, fallbacks are counted, and the shared budget returns with Redis", async () => {
    const [one, other] = gateways;
    const fallbacksBefore = await metric(one!.metrics.registry, "gateway_redis_fallbacks_total", { operation: "rate-limit" });
    await redis.kill();
    for (let round = 0; round < 5; round += 1) {
      const result = await execute(one!.harness, COSTS_1, {}, key("outage"));
      expect(result.status).toBe(200);
      expect(result.body.errors).toBeUndefined();
      expect((await execute(other!.harness, COSTS_1, {}, key("outage"))).status).toBe(200);
    }
    expect(
      await metric(one!.metrics.registry, "gateway_redis_fallbacks_total", { operation: "rate-limit" }),
    ).toBeGreaterThanOrEqual(fallbacksBefore + 5);
    expect(
      await metric(one!.metrics.registry, "gateway_rate_limit_decisions_total", { result: "allowed", store: "local" }),
    ).toBeGreaterThanOrEqual(5);
    // Local buckets still limit: each gateway its own.
    const caller = key("local");
    expect((await execute(one!.harness, COSTS_10, {}, caller)).status).toBe(200);
    expect((await execute(one!.harness, COSTS_1, {}, caller)).status).toBe(429);

    await redis.restart();
    await Promise.all(gateways.map(({ link }) => ready(link)));
    await sharedBudgetHolds();
  });
});
