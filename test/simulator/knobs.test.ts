import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type RunningSimulator } from "../../simulator/server.ts";
import { DEFAULT_KNOBS } from "../../simulator/http/knobs.ts";
import { expectContract, getJson, postJson } from "./http.ts";

const BLOCK_ROUTE = "GET /v1/chains/{chainId}/blocks/{blockId}";

let simulator: RunningSimulator;
let data: string;
let metrics: string;

beforeAll(async () => {
  simulator = await startSimulator({ dataPort: 0, metricsPort: 0, blocksPerChain: 200 });
  data = simulator.dataUrl;
  metrics = simulator.metricsUrl;
});

afterEach(() => {
  simulator.setKnobs(DEFAULT_KNOBS);
  simulator.resetCounters();
});

afterAll(() => simulator.close());

describe("injected errors", () => {
  it.each([500, 503, 502])("an error rate of 1 on one route answers %i there only", async (status) => {
    simulator.setKnobs({ errorRate: 1, errorStatus: status, errorRoutes: [BLOCK_ROUTE] });
    for (let i = 0; i < 5; i++) {
      const failed = await getJson(`${data}/v1/chains/43114/blocks/${i}`);
      expectContract(failed, "data", BLOCK_ROUTE, status);
      expect(failed.body).toMatchObject({ statusCode: status });
    }
    expect((await getJson(`${data}/v1/chains/43114/blocks`)).status).toBe(200);
    expect((await getJson(`${data}/v1/chains/43114`)).status).toBe(200);
    expect((await getJson(`${metrics}/v2/chains/43114`)).status).toBe(200);
  });

  it("a 429 carries retry-after in seconds", async () => {
    simulator.setKnobs({ errorRate: 1, errorStatus: 429, retryAfterSeconds: 7 });
    const response = await getJson(`${metrics}/v2/chains`);
    expectContract(response, "metrics", "GET /v2/chains", 429);
    expect(response.headers.get("retry-after")).toBe("7");
    expect(response.body).toMatchObject({ error: "Too Many Requests", statusCode: 429 });
  });

  it("an error rate of 0 never fails and a rate of one half fails some", async () => {
    simulator.setKnobs({ errorRate: 0, errorStatus: 500 });
    const clean = await Promise.all(Array.from({ length: 20 }, () => getJson(`${data}/v1/live-check`)));
    expect(clean.every((response) => response.status === 200)).toBe(true);

    simulator.setKnobs({ errorRate: 0.5 });
    const mixed = await Promise.all(Array.from({ length: 60 }, () => getJson(`${data}/v1/live-check`)));
    const failures = mixed.filter((response) => response.status === 500).length;
    expect(failures).toBeGreaterThan(10);
    expect(failures).toBeLessThan(50);
  });
});

describe("latency", () => {
  it("delays every answer by latencyMs", async () => {
    simulator.setKnobs({ latencyMs: 150 });
    const started = performance.now();
    const [chains, unknownRoute] = await Promise.all([getJson(`${data}/v1/chains`), getJson(`${metrics}/v2/nowhere`)]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(145);
    expect(chains.status).toBe(200);
    expect(unknownRoute.status).toBe(404);

    simulator.setKnobs({ latencyMs: 0 });
    const fast = performance.now();
    await getJson(`${data}/v1/chains`);
    expect(performance.now() - fast).toBeLessThan(100);
  });
});

describe("API keys", () => {
  it("answers 401 without a key and 403 with an unknown key on the Data API only", async () => {
    simulator.setKnobs({ apiKeys: ["key-1", "key-2"] });
    const missing = await getJson(`${data}/v1/chains`);
    expectContract(missing, "data", "GET /v1/chains", 401);
    expect(missing.body).toMatchObject({ error: "Unauthorized", statusCode: 401 });

    const unknown = await getJson(`${data}/v1/chains`, { "x-glacier-api-key": "key-3" });
    expectContract(unknown, "data", "GET /v1/chains", 403);
    expect(JSON.stringify(unknown.body)).not.toContain("key-3");

    const accepted = await getJson(`${data}/v1/chains`, { "x-glacier-api-key": "key-2" });
    expectContract(accepted, "data", "GET /v1/chains", 200);

    expect((await getJson(`${metrics}/v2/chains`)).status).toBe(200);
  });
});

describe("counters and the request log", () => {
  it("counts requests per route template, across both services, and resets", async () => {
    await getJson(`${data}/v1/chains/43114/blocks/1`);
    await getJson(`${data}/v1/chains/43113/blocks/0x${"00".repeat(32)}`);
    await getJson(`${data}/v1/chains/43114/blocks?pageSize=1000`);
    await getJson(`${metrics}/v2/chains/43114`);
    await getJson(`${metrics}/v2/unknown`);
    await getJson(`${data}/_simulator/counters`);

    const expected = {
      [BLOCK_ROUTE]: 2,
      "GET /v1/chains/{chainId}/blocks": 1,
      "GET /v2/chains/{chainId}": 1,
    };
    expect(simulator.counters()).toEqual(expected);
    expect((await getJson(`${metrics}/_simulator/counters`)).body).toEqual({ counts: expected });

    expect((await postJson(`${data}/_simulator/reset`, {})).status).toBe(200);
    expect(simulator.counters()).toEqual({});
    expect(simulator.requests()).toEqual([]);
  });

  it("logs method, route, path, query (each last value, and as sent), API key and request id", async () => {
    await getJson(`${data}/v1/blocks?network=fuji&pageSize=5`, {
      "x-glacier-api-key": "caller-key",
      "x-request-id": "req-42",
    });
    await getJson(`${metrics}/v2/chains`);
    const expected = [
      {
        method: "GET",
        route: "GET /v1/blocks",
        path: "/v1/blocks",
        query: { network: "fuji", pageSize: "5" },
        rawQuery: "network=fuji&pageSize=5",
        apiKey: "caller-key",
        requestId: "req-42",
      },
      { method: "GET", route: "GET /v2/chains", path: "/v2/chains", query: {}, rawQuery: "", apiKey: null, requestId: null },
    ];
    expect(simulator.requests()).toEqual(expected);
    expect((await getJson(`${data}/_simulator/requests`)).body).toEqual({ requests: expected });
  });

  it("keeps only the latest 200 requests", async () => {
    for (let batch = 0; batch < 5; batch++) {
      await Promise.all(Array.from({ length: 50 }, (_, i) => getJson(`${data}/v1/chains/43114/blocks/${batch * 50 + i}`)));
    }
    const log = simulator.requests();
    expect(log).toHaveLength(200);
    expect(simulator.counters()).toEqual({ [BLOCK_ROUTE]: 250 });
  });
});

describe("control routes", () => {
  it("sets and reads knobs on either listener, and they apply to both", async () => {
    const set = await postJson(`${metrics}/_simulator/knobs`, {
      errorRate: 1,
      errorStatus: 503,
      errorRoutes: ["GET /v1/chains"],
    });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({
      knobs: { ...DEFAULT_KNOBS, errorRate: 1, errorStatus: 503, errorRoutes: ["GET /v1/chains"] },
    });
    expect((await getJson(`${data}/v1/chains`)).status).toBe(503);
    expect((await getJson(`${data}/_simulator/knobs`)).body).toEqual(set.body);
    expect(simulator.knobs().errorStatus).toBe(503);
  });

  it.each([
    [{ errorRate: 2 }, "errorRate must be a number from 0 to 1"],
    [{ errorStatus: 200 }, "errorStatus must be an HTTP error status from 400 to 599"],
    [{ errorRoutes: ["GET /v1/nope"] }, "errorRoutes has an unknown route key: GET /v1/nope"],
    [{ latencyMs: -1 }, "latencyMs must be a non-negative integer"],
    [{ apiKeys: "key" }, "apiKeys must be null or an array of strings"],
    [{ colour: "blue" }, "unknown knob colour"],
  ])("refuses %j", async (update, message) => {
    const response = await postJson(`${data}/_simulator/knobs`, update);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ message, error: "Bad Request", statusCode: 400 });
    expect(() => simulator.setKnobs(update as never)).toThrow(message);
    expect(simulator.knobs()).toEqual(DEFAULT_KNOBS);
  });

  it("are never counted, delayed or failed", async () => {
    simulator.setKnobs({ errorRate: 1, errorStatus: 500, latencyMs: 300 });
    const started = performance.now();
    expect((await getJson(`${data}/_simulator/counters`)).status).toBe(200);
    expect((await getJson(`${metrics}/_simulator/requests`)).status).toBe(200);
    expect(performance.now() - started).toBeLessThan(250);
    expect(simulator.counters()).toEqual({});
  });

  it("answers 404 for unknown control routes", async () => {
    const response = await getJson(`${data}/_simulator/nothing`);
    expect(response.status).toBe(404);
  });

  it("accepts knobs as start options", async () => {
    const configured = await startSimulator({ blocksPerChain: 10, errorRate: 1, errorStatus: 502 });
    try {
      expect((await getJson(`${configured.dataUrl}/v1/chains`)).status).toBe(502);
    } finally {
      await configured.close();
    }
    await expect(startSimulator({ errorRate: 5 })).rejects.toThrow("errorRate must be a number from 0 to 1");
  });
});
