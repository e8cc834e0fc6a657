import { afterEach, describe, expect, it } from "vitest";
import { setTimeout as sleep } from "node:timers/promises";
import { loadConfig } from "../src/config.ts";
import { createLogger } from "../src/telemetry/logger.ts";
import { UpstreamService } from "../src/upstream/http.ts";
import { createGateway } from "../src/gateway.ts";
import { ChainBlockDocument, ChainDocument } from "./generated/graphql.ts";
import { execute, upstreamCalls, useHarness, startHarness } from "./support/harness.ts";
import { freePort } from "./support/free-port.ts";

const BLOCK_ROUTE = "GET /v1/chains/{chainId}/blocks/{blockId}";

const harness = useHarness({
  env: {
    UPSTREAM_RETRY_BASE_MS: "5",
    REQUEST_TIMEOUT_MS: "1000",
    BREAKER_VOLUME_THRESHOLD: "1000",
  },
});
afterEach(() => {
  harness.simulator.setKnobs({
    errorRate: 0,
    errorRoutes: [],
    faultKind: "status",
    errorStatus: 500,
    latencyMs: 0,
    retryAfterSeconds: 1,
  });
});

function blockQuery(blockId: string) {
  return execute(harness, ChainBlockDocument, { chainId: "43114", blockId });
}

describe("retries of idempotent GETs", () => {
  it("retries a 503 twice, then gives UPSTREAM_UNAVAILABLE on the field while its siblings keep their data", async () => {
    harness.simulator.setKnobs({ errorRate: 1, errorStatus: 503, errorRoutes: [BLOCK_ROUTE] });
    const result = await blockQuery("100");
    expect(result.body.data!.chain!.chainName).toBeTruthy();
    expect(result.body.errors![0]).toMatchObject({ path: ["chain", "block"], extensions: { code: "UPSTREAM_UNAVAILABLE" } });
    expect(upstreamCalls(harness)[BLOCK_ROUTE]).toBe(3);
  });

  it("does not retry a 500", async () => {
    harness.simulator.setKnobs({ errorRate: 1, errorStatus: 500, errorRoutes: [BLOCK_ROUTE] });
    const result = await blockQuery("101");
    expect(result.body.errors![0]!.extensions).toMatchObject({ code: "UPSTREAM_ERROR" });
    expect(upstreamCalls(harness)[BLOCK_ROUTE]).toBe(1);
  });

  it("retries a 429 storm within the request, then gives RATE_LIMITED", async () => {
    harness.simulator.setKnobs({ errorRate: 1, errorStatus: 429, retryAfterSeconds: 0, errorRoutes: [BLOCK_ROUTE] });
    const result = await blockQuery("102");
    expect(result.body.errors![0]!.extensions).toMatchObject({ code: "RATE_LIMITED", retryAfter: 0 });
    expect(upstreamCalls(harness)[BLOCK_ROUTE]).toBe(3);
  });

  it("does not wait past the request's deadline for a retry-after", async () => {
    harness.simulator.setKnobs({ errorRate: 1, errorStatus: 429, retryAfterSeconds: 30, errorRoutes: [BLOCK_ROUTE] });
    const result = await blockQuery("103");
    expect(result.body.errors![0]!.extensions).toMatchObject({ code: "RATE_LIMITED", retryAfter: 30 });
    expect(upstreamCalls(harness)[BLOCK_ROUTE]).toBe(1);
  });

  it("retries a dropped connection", async () => {
    harness.simulator.setKnobs({ errorRate: 1, faultKind: "reset", errorRoutes: [BLOCK_ROUTE] });
    const result = await blockQuery("104");
    expect(result.body.errors![0]!.extensions).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", upstream: { status: null } });
    expect(upstreamCalls(harness)[BLOCK_ROUTE]).toBe(3);
  });

  it("under 20 % of 503s, retries save most fields and every failure stays typed on its own field", async () => {
    harness.simulator.setKnobs({ errorRate: 0.2, errorStatus: 503, errorRoutes: [BLOCK_ROUTE] });
    const ids = Array.from({ length: 30 }, (_, index) => `c${index}: block(id: "${200 + index}") { blockNumber }`);
    const result = await execute(harness, `{ chain(id: "43114") { chainName ${ids.join(" ")} } }`);
    const chain = (result.body.data as { chain: Record<string, { blockNumber: string } | null | string> }).chain;
    expect(typeof chain.chainName).toBe("string");
    const failed = (result.body.errors ?? []).map((error) => error.path?.[1]);
    for (const error of result.body.errors ?? []) {
      expect(error.extensions).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", upstream: { status: 503 } });
    }
    for (let index = 0; index < 30; index += 1) {
      const block = chain[`c${index}`] as { blockNumber: string } | null;
      if (failed.includes(`c${index}`)) expect(block).toBeNull();
      else expect(block?.blockNumber).toBe(String(200 + index));
    }
    // Three attempts each: a field fails only when all three draw a fault (0.8 % of fields).
    expect(failed.length).toBeLessThanOrEqual(3);
    expect(upstreamCalls(harness)[BLOCK_ROUTE]).toBeGreaterThan(30);
  });
});

describe("answers that are not answers", () => {
  it("a malformed body is UPSTREAM_ERROR and is not retried", async () => {
    harness.simulator.setKnobs({ errorRate: 1, faultKind: "malformed", errorRoutes: [BLOCK_ROUTE] });
    const result = await blockQuery("105");
    expect(result.body.errors![0]!.extensions).toMatchObject({ code: "UPSTREAM_ERROR", upstream: { status: 200 } });
    expect(result.body.data!.chain!.chainName).toBeTruthy();
    expect(upstreamCalls(harness)[BLOCK_ROUTE]).toBe(1);
  });

  it("a body that stalls ends at the request's deadline, not later", async () => {
    harness.simulator.setKnobs({ errorRate: 1, faultKind: "slow-body", slowBodyMs: 10_000, errorRoutes: [BLOCK_ROUTE] });
    const started = Date.now();
    const result = await blockQuery("106");
    // The deadline is 1 s; the stall is 10 s. A generous bound keeps this about hanging, not speed.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result.body.errors![0]!.extensions).toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
    expect(result.body.errors![0]!.message).toMatch(/deadline/);
    expect(result.body.data!.chain!.chainName).toBeTruthy();
  });
});

describe("a caller joining a request already under way", () => {
  it("gets its own deadline, while the request it joined goes on to its answer", async () => {
    harness.simulator.setKnobs({ latencyMs: 1_000 });
    const data = new UpstreamService("Data API", harness.simulator.dataUrl, loadConfig({}).upstream);
    try {
      const call = { route: "/v1/chains/{chainId}/blocks/{blockId}", params: { chainId: "43114", blockId: "104" } };
      const owner = data.get<{ blockNumber: string }>(call, { deadline: Date.now() + 5_000 });
      const started = performance.now();
      const joiner = data.get(call, { deadline: Date.now() + 100 });
      await expect(joiner).rejects.toMatchObject({ extensions: { code: "UPSTREAM_UNAVAILABLE" } });
      // It leaves long before the 1 s the shared request takes; the bound is about waiting, not speed.
      expect(performance.now() - started).toBeLessThan(700);
      await expect(owner).resolves.toMatchObject({ blockNumber: "104" });
      expect(upstreamCalls(harness)[BLOCK_ROUTE]).toBe(1);
    } finally {
      await data.close();
    }
  });
});

describe("stale-if-error", () => {
  it("serves an expired chain record when the chain list fails", async () => {
    const shortTtl = await startHarness({ CHAIN_CACHE_TTL_MS: "20", UPSTREAM_RETRIES: "0" });
    try {
      const fresh = await execute(shortTtl, ChainDocument, { id: "43114" });
      await sleep(50);
      shortTtl.simulator.resetCounters();
      shortTtl.simulator.setKnobs({ errorRate: 1, errorStatus: 503, errorRoutes: ["GET /v1/chains"] });
      const stale = await execute(shortTtl, `{ chain(id: "43114") { chainName chainId } }`);
      expect(stale.body.errors).toBeUndefined();
      expect(stale.body.data).toEqual({ chain: { chainName: fresh.body.data!.chain!.chainName, chainId: "43114" } });
      expect(upstreamCalls(shortTtl)).toEqual({ "GET /v1/chains": 1 });
    } finally {
      await shortTtl.close();
    }
  });
});

describe("the chain list is no single point of failure", () => {
  it("resolves each chain by id (GET /v1/chains/{chainId}) when the list cannot be read, and an unknown one as null", async () => {
    const listless = await startHarness({ CHAIN_CACHE_TTL_MS: "0", UPSTREAM_RETRIES: "0" });
    try {
      listless.simulator.setKnobs({ errorRate: 1, errorStatus: 500, errorRoutes: ["GET /v1/chains"] });
      listless.simulator.resetCounters();
      const result = await execute(
        listless,
        `{ c: chain(id: "43114") { chainId chainName } fuji: chain(id: "43113") { chainId } none: chain(id: "999999999") { chainId } }`,
      );
      expect(result.body.errors).toBeUndefined();
      expect(result.body.data).toEqual({
        c: { chainId: "43114", chainName: expect.any(String) as string },
        fuji: { chainId: "43113" },
        none: null,
      });
      expect(upstreamCalls(listless)).toEqual({ "GET /v1/chains": 1, "GET /v1/chains/{chainId}": 3 });
    } finally {
      await listless.close();
    }
  });
});

describe("circuit breaker", () => {
  it("opens after repeated failures, fails fast without calling upstream, and closes after a successful probe", async () => {
    const fragile = await startHarness({
      UPSTREAM_RETRIES: "0",
      BREAKER_VOLUME_THRESHOLD: "4",
      BREAKER_ERROR_PERCENTAGE: "50",
      BREAKER_RESET_MS: "300",
    });
    try {
      await execute(fragile, ChainDocument, { id: "43114" });
      fragile.simulator.resetCounters();
      fragile.simulator.setKnobs({ errorRate: 1, errorStatus: 500, errorRoutes: [BLOCK_ROUTE] });
      const messages: string[] = [];
      for (let block = 0; block < 10; block += 1) {
        const result = await execute(fragile, ChainBlockDocument, { chainId: "43114", blockId: String(300 + block) });
        messages.push(result.body.errors![0]!.message);
      }
      const reachedUpstream = upstreamCalls(fragile)[BLOCK_ROUTE]!;
      expect(reachedUpstream).toBeLessThan(10);
      expect(messages.at(-1)).toMatch(/circuit open/);

      const metrics = await (await fragile.gateway.yoga.fetch("http://gateway.test/metrics")).text();
      expect(metrics).toMatch(
        /gateway_upstream_breaker_state\{service="Data API",method="GET",route="\/v1\/chains\/\{chainId\}\/blocks\/\{blockId\}"\} 2/,
      );

      fragile.simulator.setKnobs({ errorRate: 0 });
      await sleep(350);
      const healed = await execute(fragile, ChainBlockDocument, { chainId: "43114", blockId: "400" });
      expect(healed.body.errors).toBeUndefined();
      expect(healed.body.data!.chain!.block!.blockNumber).toBe("400");
    } finally {
      await fragile.close();
    }
  });
});

describe("a dead upstream", () => {
  it("gives UPSTREAM_UNAVAILABLE at once", async () => {
    const closedPort = await freePort();
    const url = `http://127.0.0.1:${closedPort}`;
    const gateway = createGateway(
      loadConfig({ UPSTREAM_RETRY_BASE_MS: "5" }),
      { dataApiUrl: url, metricsApiUrl: url },
      createLogger("silent"),
    );
    try {
      const response = await gateway.yoga.fetch("http://gateway.test/graphql", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: `{ chain(id: "43114") { chainName } }` }),
      });
      const body = (await response.json()) as { data: unknown; errors: { extensions: Record<string, unknown> }[] };
      expect(body.data).toEqual({ chain: null });
      expect(body.errors[0]!.extensions).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", upstream: { status: null } });
      const ready = await gateway.yoga.fetch("http://gateway.test/ready");
      expect(ready.status).toBe(503);
    } finally {
      await gateway.close();
    }
  });
});
