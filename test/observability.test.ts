import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainBlockDocument } from "./generated/graphql.ts";
import { execute, startHarness, until, type Harness } from "./support/harness.ts";

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness();
});
afterAll(async () => {
  await harness.close();
});

function get(path: string, headers: Record<string, string> = {}) {
  return harness.gateway.yoga.fetch(`http://gateway.test${path}`, { headers });
}

describe("health and readiness", () => {
  it("/health answers while the process lives", async () => {
    expect((await get("/health")).status).toBe(200);
  });

  it("/ready answers 200 when both upstreams answer their health routes", async () => {
    harness.simulator.resetCounters();
    expect((await get("/ready")).status).toBe(200);
    expect(harness.simulator.counters()).toMatchObject({ "GET /v1/health-check": 1, "GET /v2/health-check": 1 });
  });

  it("/ready answers 503 when an upstream health route fails", async () => {
    harness.simulator.setKnobs({ errorRate: 1, errorStatus: 500, errorRoutes: ["GET /v2/health-check"] });
    try {
      // /ready answers from a check at most READY_CACHE_MS old: the next check sees the failure.
      await until(async () => (await get("/ready")).status === 503, "/ready to turn 503");
    } finally {
      harness.simulator.setKnobs({ errorRate: 0, errorRoutes: [] });
    }
  });
});

describe("request ids", () => {
  it("returns the caller's request id and sends it upstream", async () => {
    harness.simulator.resetCounters();
    const result = await execute(
      harness,
      ChainBlockDocument,
      { chainId: "43114", blockId: "77" },
      { "x-request-id": "trace-abc" },
    );
    expect(result.headers.get("x-request-id")).toBe("trace-abc");
    expect(harness.simulator.requests().map((request) => request.requestId)).toContain("trace-abc");
  });

  it("makes one up when the caller sends none or an unsafe one", async () => {
    const result = await execute(harness, `{ __typename }`, {}, { "x-request-id": "bad id\twith spaces" });
    expect(result.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("Prometheus metrics", () => {
  it("count GraphQL operations, upstream calls by route and status, and cache look-ups, without API keys", async () => {
    await execute(harness, ChainBlockDocument, { chainId: "43114", blockId: "78" }, { "x-glacier-api-key": "secret-key-123" });
    const text = await (await get("/metrics")).text();
    expect(text).toMatch(/graphql_envelop_request_duration_bucket\{[^}]*operationName="ChainBlock"/);
    expect(text).toMatch(
      /gateway_upstream_requests_total\{service="Data API",method="GET",route="\/v1\/chains\/\{chainId\}\/blocks\/\{blockId\}",outcome="200"\} \d+/,
    );
    expect(text).toMatch(/gateway_cache_lookups_total\{result="(hit|miss)"\} \d+/);
    expect(text).toMatch(
      /gateway_upstream_breaker_state\{service="Data API",method="GET",route="\/v1\/chains\/\{chainId\}\/blocks\/\{blockId\}"\} 0/,
    );
    expect(text).toMatch(/gateway_loader_batch_size_count\{loader="block"\} [1-9]/);
    expect(text).not.toContain("secret-key-123");
  });

  it("count each operation that ran by its name and type, and its errors by phase: parse, validate, execute", async () => {
    // The value of the series `name` whose labels include every one of `labels`.
    const sample = async (name: string, labels: Record<string, string>) => {
      const text = await (await get("/metrics")).text();
      const wanted = Object.entries(labels).map(([label, value]) => `${label}="${value}"`);
      const line = text.split("\n").find((row) => row.startsWith(`${name}{`) && wanted.every((pair) => row.includes(pair)));
      return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
    };
    const ran = (operationName: string) =>
      sample("graphql_envelop_request_duration_count", { operationName, operationType: "query" });
    const failed = (operationName: string, operationType: string, phase: string) =>
      sample("graphql_envelop_error_result", { operationName, operationType, phase });
    const before = {
      probe: await ran("MetricsProbe"),
      parse: await failed("Anonymous", "unknown", "parse"),
      validate: await failed("MetricsInvalid", "query", "validate"),
      execute: await failed("MetricsBadBlock", "query", "execute"),
      badBlockRan: await ran("MetricsBadBlock"),
    };
    await execute(harness, `query MetricsProbe { __typename }`);
    await execute(harness, `query MetricsProbe { __typename }`);
    expect((await execute(harness, `{ latestBlocks(`)).body.errors).toHaveLength(1);
    expect((await execute(harness, `query MetricsInvalid { noSuchField }`)).body.errors).toHaveLength(1);
    const bad = await execute(
      harness,
      `query MetricsBadBlock { a: chain(id: "43114") { block(id: "not a block") { blockHash } } b: chain(id: "43114") { block(id: "also not") { blockHash } } }`,
    );
    expect(bad.body.errors).toHaveLength(2);
    expect(await ran("MetricsProbe")).toBe(before.probe + 2);
    expect(await failed("Anonymous", "unknown", "parse")).toBe(before.parse + 1);
    expect(await failed("MetricsInvalid", "query", "validate")).toBe(before.validate + 1);
    // An operation that ran with errors ran: its time is counted, and each of its errors.
    expect(await failed("MetricsBadBlock", "query", "execute")).toBe(before.execute + 2);
    expect(await ran("MetricsBadBlock")).toBe(before.badBlockRan + 1);
    // What did not run has no time.
    expect(await ran("MetricsInvalid")).toBe(0);
  });

  it("count an incrementally delivered operation once, when its last part is sent", async () => {
    const query = `query MetricsDeferred { latestBlocks(first: 2) { edges { node { blockNumber ... @defer { chain { chainName } } } } } }`;
    const count = async () => {
      const text = await (await get("/metrics")).text();
      const line = text
        .split("\n")
        .find(
          (row) => row.startsWith("graphql_envelop_request_duration_count{") && row.includes('operationName="MetricsDeferred"'),
        );
      return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
    };
    const before = await count();
    const response = await harness.gateway.yoga.fetch("http://gateway.test/graphql", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "multipart/mixed" },
      body: JSON.stringify({ query }),
    });
    expect(response.headers.get("content-type")).toMatch(/^multipart\/mixed/);
    const body = await response.text();
    expect(body).toContain('"hasNext":false');
    expect(await count()).toBe(before + 1);
  });
});

describe("the response cache", () => {
  it("answers a repeated query from the cache within its TTL, per caller key, and never caches errors", async () => {
    const cached = await startHarness({ RESPONSE_CACHE_TTL_MS: "60000" });
    try {
      const query = `{ latestBlocks(first: 3) { nodes { blockHash } } }`;
      const first = await execute(cached, query, {}, { "x-request-id": "first-request" });
      expect(first.headers.get("x-response-cache")).toBeNull();
      cached.simulator.resetCounters();
      const second = await execute(cached, query, {}, { "x-request-id": "second-request" });
      expect(second.body.data).toEqual(first.body.data);
      expect(second.headers.get("x-response-cache")).toBe("hit");
      expect(second.headers.get("content-type")).toBe(first.headers.get("content-type"));
      // A hit still carries its own request id.
      expect(second.headers.get("x-request-id")).toBe("second-request");
      expect(cached.simulator.counters()["GET /v1/blocks"] ?? 0).toBe(0);

      await execute(cached, query, {}, { "x-glacier-api-key": "another-caller" });
      expect(cached.simulator.counters()["GET /v1/blocks"]).toBe(1);

      cached.simulator.setKnobs({ errorRate: 1, errorStatus: 500, errorRoutes: ["GET /v1/chains/{chainId}/blocks/{blockId}"] });
      const failing = `{ chain(id: "43114") { block(id: "5") { blockHash } } }`;
      await execute(cached, failing);
      cached.simulator.setKnobs({ errorRate: 0 });
      const healed = await execute(cached, failing);
      expect(healed.body.errors).toBeUndefined();
      expect(healed.headers.get("x-response-cache")).toBeNull();

      const metrics = await (await cached.gateway.yoga.fetch("http://gateway.test/metrics")).text();
      expect(metrics).toMatch(/gateway_response_cache_lookups_total\{result="local"\} 1\n/);
      expect(metrics).toMatch(/gateway_response_cache_lookups_total\{result="miss"\} 4\n/);
    } finally {
      await cached.close();
    }
  });

  it("keeps an answer that depends on the schema alone past the TTL, and nothing that reads upstream", async () => {
    const ttlMs = 50;
    const cached = await startHarness({ RESPONSE_CACHE_TTL_MS: String(ttlMs) });
    try {
      const introspection = `query Shape { __schema { queryType { name } } ...Named } fragment Named on Query { __type(name: "EvmBlock") { name } __typename }`;
      const mixed = `{ __typename latestBlocks(first: 1) { nodes { blockHash } } }`;
      const first = await execute(cached, introspection);
      expect(first.body.errors).toBeUndefined();
      expect(first.body.data).toEqual({
        __schema: { queryType: { name: "Query" } },
        __type: { name: "EvmBlock" },
        __typename: "Query",
      });
      await execute(cached, mixed);
      await new Promise((resolve) => setTimeout(resolve, ttlMs * 3));
      cached.simulator.resetCounters();

      const again = await execute(cached, introspection);
      expect(again.headers.get("x-response-cache")).toBe("hit");
      expect(again.body.data).toEqual(first.body.data);
      const mixedAgain = await execute(cached, mixed);
      expect(mixedAgain.headers.get("x-response-cache")).toBeNull();
      expect(cached.simulator.counters()["GET /v1/blocks"]).toBe(1);
      // Per caller key, as every answer is.
      const otherKey = await execute(cached, introspection, {}, { "x-glacier-api-key": "another-caller" });
      expect(otherKey.headers.get("x-response-cache")).toBeNull();
    } finally {
      await cached.close();
    }
  });

  it("never answers a mutation from the cache", async () => {
    const cached = await startHarness({ RESPONSE_CACHE_TTL_MS: "60000" });
    try {
      const mutation = `mutation { exportTransactions(input: { evm: { addresses: ["0x0000000000000000000000000000000000000001"], includeChains: ["43114"] }, firstDate: "2024-01-01", lastDate: "2024-01-02" }) { operationId } }`;
      const first = await execute(cached, mutation);
      const second = await execute(cached, mutation);
      expect(second.headers.get("x-response-cache")).toBeNull();
      expect(
        Object.entries(cached.simulator.counters())
          .filter(([route]) => route.startsWith("POST"))
          .map(([, count]) => count),
      ).toEqual([2]);
      expect(first.body.errors ?? second.body.errors).toBeUndefined();
    } finally {
      await cached.close();
    }
  });
});
