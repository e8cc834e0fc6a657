import { afterEach, describe, expect, it } from "vitest";
import { ChainBlockDocument, LatestBlocksWithChainAndParentDocument } from "./generated/graphql.ts";
import { execute, upstreamCalls, useHarness } from "./support/harness.ts";

const harness = useHarness({ env: { GLACIER_API_KEY: "gateway-own-key" } });
afterEach(() => {
  harness.simulator.setKnobs({ errorRate: 0, errorRoutes: [], apiKeys: null });
});

describe("upstream errors stay on the field that needed the upstream", () => {
  it("a 500 on the block route leaves sibling fields' data in place, with UPSTREAM_ERROR on the failing path", async () => {
    harness.simulator.setKnobs({ errorRate: 1, errorStatus: 500, errorRoutes: ["GET /v1/chains/{chainId}/blocks/{blockId}"] });
    const result = await execute(harness, ChainBlockDocument, { chainId: "43114", blockId: "10" });
    expect(result.status).toBe(200);
    expect(result.body.data!.chain!.chainName).toBeTruthy();
    expect(result.body.data!.chain!.block).toBeNull();
    expect(result.body.errors).toHaveLength(1);
    expect(result.body.errors![0]).toMatchObject({
      path: ["chain", "block"],
      extensions: { code: "UPSTREAM_ERROR", upstream: { status: 500 } },
    });
    expect(result.body.errors![0]!.extensions).not.toHaveProperty("http");
  });

  it("a 429 is RATE_LIMITED with the upstream's retry-after", async () => {
    harness.simulator.setKnobs({ errorRate: 1, errorStatus: 429, errorRoutes: ["GET /v1/blocks"] });
    const result = await execute(harness, LatestBlocksWithChainAndParentDocument, { first: 3 });
    expect(result.status).toBe(200);
    const [error] = result.body.errors!;
    expect(error!.extensions).toMatchObject({ code: "RATE_LIMITED", upstream: { status: 429 } });
    expect(typeof error!.extensions!.retryAfter).toBe("number");
  });

  it("a 503 is UPSTREAM_UNAVAILABLE", async () => {
    harness.simulator.setKnobs({ errorRate: 1, errorStatus: 503, errorRoutes: ["GET /v1/blocks"] });
    const result = await execute(harness, LatestBlocksWithChainAndParentDocument, { first: 3 });
    expect(result.body.errors![0]!.extensions).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", upstream: { status: 503 } });
  });
});

describe("API keys", () => {
  it("forwards the caller's key, else the gateway's own, and never echoes either", async () => {
    harness.simulator.setKnobs({ apiKeys: ["caller-key", "gateway-own-key"] });
    const withKey = await execute(
      harness,
      ChainBlockDocument,
      { chainId: "43114", blockId: "11" },
      { "x-glacier-api-key": "caller-key" },
    );
    expect(withKey.body.errors).toBeUndefined();
    const keys = new Set(harness.simulator.requests().map((request) => request.apiKey));
    expect(keys).toEqual(new Set(["caller-key"]));

    harness.simulator.resetCounters();
    harness.gateway.cache.clear();
    const withoutKey = await execute(harness, ChainBlockDocument, { chainId: "43114", blockId: "12" });
    expect(withoutKey.body.errors).toBeUndefined();
    expect(new Set(harness.simulator.requests().map((request) => request.apiKey))).toEqual(new Set(["gateway-own-key"]));
    expect(JSON.stringify(withKey.body) + JSON.stringify(withoutKey.body)).not.toMatch(/caller-key|gateway-own-key/);
  });

  it("an unknown key is FORBIDDEN on the fields that needed the Data API", async () => {
    harness.simulator.setKnobs({ apiKeys: ["caller-key"] });
    const result = await execute(
      harness,
      ChainBlockDocument,
      { chainId: "43114", blockId: "13" },
      { "x-glacier-api-key": "wrong-key" },
    );
    expect(result.body.data!.chain).toBeNull();
    expect(result.body.errors![0]!.extensions).toMatchObject({ code: "FORBIDDEN", upstream: { status: 403 } });
    expect(JSON.stringify(result.body)).not.toContain("wrong-key");
  });

  it("sends a request id upstream", async () => {
    await execute(harness, ChainBlockDocument, { chainId: "43114", blockId: "14" }, { "x-request-id": "req-123" });
    expect(harness.simulator.requests().every((request) => request.requestId === "req-123")).toBe(true);
    // The block and its parent.
    expect(upstreamCalls(harness)["GET /v1/chains/{chainId}/blocks/{blockId}"]).toBe(2);
  });
});
