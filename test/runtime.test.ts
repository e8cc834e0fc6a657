import { availableParallelism } from "node:os";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { startSimulatorProcess } from "../src/server/simulator-process.ts";
import { ChainBlockDocument } from "./generated/graphql.ts";
import { execute, metricsText, startHarness, upstreamCalls, type Harness } from "./support/harness.ts";

describe("identical concurrent upstream GETs", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(async () => {
    await harness.close();
  });
  beforeEach(() => {
    harness.gateway.cache.clear();
    harness.simulator.resetCounters();
  });

  it("share one request across concurrent client requests", async () => {
    harness.simulator.setKnobs({ latencyMs: 100 });
    try {
      const results = await Promise.all(
        Array.from({ length: 5 }, () => execute(harness, ChainBlockDocument, { chainId: "43114", blockId: "2500" })),
      );
      for (const result of results) expect(result.body.data!.chain!.block!.blockNumber).toBe("2500");
      expect(upstreamCalls(harness)).toEqual({
        "GET /v1/chains": 1,
        "GET /v1/chains/{chainId}/blocks/{blockId}": 2,
      });
    } finally {
      harness.simulator.setKnobs({ latencyMs: 0 });
    }
  });

  it("are not shared between callers with different API keys", async () => {
    harness.simulator.setKnobs({ latencyMs: 100 });
    try {
      await Promise.all(
        ["key-a", "key-b"].map((key) =>
          execute(harness, `{ chain(id: "43114") { chainName } }`, {}, { "x-glacier-api-key": key }),
        ),
      );
      expect(upstreamCalls(harness)).toEqual({ "GET /v1/chains": 2 });
    } finally {
      harness.simulator.setKnobs({ latencyMs: 0 });
    }
  });
});

describe("compiled execution", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({ GRAPHQL_JIT: "true" });
  });
  afterAll(async () => {
    await harness.close();
  });

  it("runs the operation named, in a document that holds several (as GraphiQL sends it)", async () => {
    const document = `query OneChain { chain(id: "43114") { chainName } } query ChainIds { chains { chainId } }`;
    for (let round = 0; round < 2; round += 1) {
      const one = await execute(harness, document, {}, {}, "OneChain");
      expect(one.body).toEqual({ data: { chain: { chainName: expect.any(String) } } });
      const ids = await execute(harness, document, {}, {}, "ChainIds");
      expect(ids.body.errors).toBeUndefined();
      expect(Object.keys(ids.body.data!)).toEqual(["chains"]);
    }
  });

  it("gives the same answer as graphql-js for a sole operation, again and again", async () => {
    const interpreted = await startHarness({ GRAPHQL_JIT: "false" });
    try {
      const variables = { chainId: "43114", blockId: "2400" };
      const expected = (await execute(interpreted, ChainBlockDocument, variables)).body;
      expect(expected.errors).toBeUndefined();
      for (let round = 0; round < 3; round += 1)
        expect((await execute(harness, ChainBlockDocument, variables)).body).toEqual(expected);
    } finally {
      await interpreted.close();
    }
  });
});

describe("parsed documents", () => {
  it("are kept within DOCUMENT_CACHE_MAX_ENTRIES and DOCUMENT_CACHE_MAX_BYTES, and one forgotten is parsed again", async () => {
    const harness = await startHarness({ DOCUMENT_CACHE_MAX_ENTRIES: "3", DOCUMENT_CACHE_MAX_BYTES: "1024" });
    try {
      const documents = Array.from({ length: 5 }, (_, index) => `query Chain${index} { chain(id: "43114") { chainName } }`);
      for (const document of [...documents, documents[0]!]) {
        const result = await execute(harness, document);
        expect(result.body).toEqual({ data: { chain: { chainName: expect.any(String) } } });
      }
      let metrics = await metricsText(harness);
      expect(metrics).toMatch(/^gateway_document_cache_entries 3$/m);
      expect(metrics).toMatch(new RegExp(`^gateway_document_cache_bytes ${3 * documents[0]!.length}$`, "m"));
      // One long document pushes the others out to stay within the bytes.
      const long = `query Long { chain(id: "43114") { chainName ${"chainId ".repeat(100)}} }`;
      expect((await execute(harness, long)).body.errors).toBeUndefined();
      metrics = await metricsText(harness);
      const bytes = Number(/^gateway_document_cache_bytes (\d+)$/m.exec(metrics)?.[1]);
      expect(bytes).toBeGreaterThanOrEqual(long.length);
      expect(bytes).toBeLessThanOrEqual(1024);
    } finally {
      await harness.close();
    }
  });
});

describe("configuration", () => {
  it("runs offline by default", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ dataApiUrl: undefined, metricsApiUrl: undefined, port: 4000, graphiql: true });
  });

  it("names the variable that is wrong", () => {
    expect(() => loadConfig({ PORT: "http" })).toThrow(/PORT must be an integer/);
    expect(() => loadConfig({ DATA_API_URL: "glacier" })).toThrow(/DATA_API_URL must be an absolute http\(s\) URL/);
    expect(() => loadConfig({ METRICS_API_URL: "ftp://metrics" })).toThrow(/METRICS_API_URL must be an http\(s\) URL/);
    expect(() => loadConfig({ DATA_API_URL: "https://user:pw@glacier" })).toThrow(/must not carry credentials/);
    // Nor does an upstream URL's refusal echo a value that may carry credentials.
    for (const DATA_API_URL of ["ftp://user:hunter2@glacier", "user:hunter2@[glacier", "https://user:hunter2@glacier"]) {
      expect(() => loadConfig({ DATA_API_URL })).toThrow(
        /^DATA_API_URL must (be an (absolute )?http\(s\) URL|not carry credentials)$/,
      );
    }
    expect(() => loadConfig({ GRAPHIQL: "maybe" })).toThrow(/GRAPHIQL must be true or false/);
    // A Redis URL may carry a password: its refusal never echoes the value, parsed or not.
    for (const REDIS_URL of ["redis://:hunter2@[cache", "https://:hunter2@cache"]) {
      expect(() => loadConfig({ REDIS_URL })).toThrow(/^REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL$/);
    }
  });

  it("keeps a reading gateway's lock LIVE_TAKEOVER_MS, which outlasts three Redis waits", () => {
    expect(loadConfig({}).live.takeoverMs).toBe(10_000);
    expect(loadConfig({ LIVE_TAKEOVER_MS: "1000" }).live.takeoverMs).toBe(1_000);
    expect(() => loadConfig({ LIVE_TAKEOVER_MS: "299" })).toThrow(/LIVE_TAKEOVER_MS must be an integer >= 300/);
    expect(() => loadConfig({ LIVE_TAKEOVER_MS: "1000", REDIS_TIMEOUT_MS: "400" })).toThrow(
      "LIVE_TAKEOVER_MS (1000) must be at least 3 × REDIS_TIMEOUT_MS (400)",
    );
  });

  it("runs one gateway process unless WORKERS says how many, or auto for one per core", () => {
    expect(loadConfig({}).workers).toBe(1);
    expect(loadConfig({ WORKERS: " " }).workers).toBe(1);
    expect(loadConfig({ WORKERS: "3" }).workers).toBe(3);
    expect(loadConfig({ WORKERS: "auto" }).workers).toBe(availableParallelism());
    expect(loadConfig({ WORKERS: "AUTO" }).workers).toBe(availableParallelism());
    for (const wrong of ["0", "-1", "1.5", "two", "2x", "1e3", "0x2"]) {
      expect(() => loadConfig({ WORKERS: wrong })).toThrow(
        `WORKERS must be a whole number of gateway processes (1 or more) or "auto" (one per core), got "${wrong}"`,
      );
    }
  });
});

describe("the simulator as a child process (npm start without upstream URLs)", () => {
  it("starts, answers on both services, and stops", async () => {
    const simulator = await startSimulatorProcess();
    try {
      const chains = (await (await fetch(`${simulator.dataApiUrl}/v1/chains`)).json()) as { chains: unknown[] };
      expect(chains.chains.length).toBeGreaterThan(0);
      const health = await fetch(`${simulator.metricsApiUrl}/v2/health-check`);
      expect(health.status).toBe(200);
    } finally {
      await simulator.stop();
    }
    await expect(fetch(`${simulator.dataApiUrl}/v1/chains`)).rejects.toThrow();
  });
});

describe("the chain list preload", () => {
  it("loads the chain list at start, so that the first request's chain look-ups wait for nothing", async () => {
    const preloaded = await startHarness({ CHAIN_LIST_PRELOAD: "true" });
    try {
      await expect.poll(() => preloaded.simulator.counters()["GET /v1/chains"] ?? 0).toBe(1);
      preloaded.simulator.resetCounters();
      const result = await execute(preloaded, `{ chain(id: "43114") { chainName } c: chain(id: "43113") { chainName } }`);
      expect(result.body.errors).toBeUndefined();
      expect(upstreamCalls(preloaded)).toEqual({});
    } finally {
      await preloaded.close();
    }
  });
});
