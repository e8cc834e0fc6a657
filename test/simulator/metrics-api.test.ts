import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { components } from "../../src/upstream/contract/metrics-api.ts";
import { startSimulator, type RunningSimulator } from "../../simulator/server.ts";
import { expectContract, getJson } from "./http.ts";

type ListChainsResponse = components["schemas"]["ListChainsResponse"];
type ErrorBody = components["schemas"]["BadRequest"];

let simulator: RunningSimulator;
let metrics: string;

beforeAll(async () => {
  simulator = await startSimulator({ dataPort: 0, metricsPort: 0 });
  metrics = simulator.metricsUrl;
});

afterAll(() => simulator.close());

describe("Metrics API: health", () => {
  it.each(["/v2/health-check", "/v2/live-check"])("GET %s answers ok", async (path) => {
    const response = await getJson(`${metrics}${path}`);
    expectContract(response, "metrics", `GET ${path}`, 200);
    expect(response.body).toMatchObject({ status: "ok" });
  });
});

describe("Metrics API: chains", () => {
  it("lists every chain with numeric EVM chain ids", async () => {
    const response = await getJson(`${metrics}/v2/chains`);
    expectContract(response, "metrics", "GET /v2/chains", 200);
    const { chains, nextPageToken } = response.body as ListChainsResponse;
    expect(nextPageToken).toBeUndefined();
    expect(chains.map((chain) => chain.evmChainId).sort()).toEqual(
      simulator.network.chains.map((chain) => Number(chain.evmChainId)).sort(),
    );
    expect(chains.find((chain) => chain.evmChainId === 43114)).toEqual({
      evmChainId: 43114,
      chainName: "Avalanche (C-Chain)",
      blockchainId: "2q9e4r6Mu3U68nU1fYjgbR6JvwrRx36CohpAX5UQxse55x1Q5",
      subnetId: "11111111111111111111111111111111LpoYY",
      network: "mainnet",
    });
  });

  it("filters by network; fuji chains are labelled testnet", async () => {
    for (const network of ["fuji", "testnet"]) {
      const response = await getJson(`${metrics}/v2/chains?network=${network}`);
      expectContract(response, "metrics", "GET /v2/chains", 200);
      const { chains } = response.body as ListChainsResponse;
      expect(chains.length).toBeGreaterThanOrEqual(3);
      expect(chains.every((chain) => chain.network === "testnet")).toBe(true);
    }
    const mainnet = (await getJson(`${metrics}/v2/chains?network=mainnet`)).body as ListChainsResponse;
    expect(mainnet.chains.every((chain) => chain.network === "mainnet")).toBe(true);
  });

  it("rejects an unknown network", async () => {
    const response = await getJson(`${metrics}/v2/chains?network=local`);
    expectContract(response, "metrics", "GET /v2/chains", 400);
    expect((response.body as ErrorBody).message).toBe("network must be one of the following values: mainnet, fuji, testnet");
  });

  it("pages when the service page size is smaller than the list", async () => {
    const paged = await startSimulator({ metricsChainsPageSize: 4 });
    try {
      const first = await getJson(`${paged.metricsUrl}/v2/chains`);
      expectContract(first, "metrics", "GET /v2/chains", 200);
      const firstPage = first.body as ListChainsResponse;
      expect(firstPage.chains).toHaveLength(4);
      const second = await getJson(`${paged.metricsUrl}/v2/chains?pageToken=${firstPage.nextPageToken}`);
      expectContract(second, "metrics", "GET /v2/chains", 200);
      const secondPage = second.body as ListChainsResponse;
      expect(secondPage.nextPageToken).toBeUndefined();
      expect([...firstPage.chains, ...secondPage.chains]).toHaveLength(paged.network.chains.length);

      const otherFilter = await getJson(`${paged.metricsUrl}/v2/chains?network=mainnet&pageToken=${firstPage.nextPageToken}`);
      expectContract(otherFilter, "metrics", "GET /v2/chains", 400);
      const malformed = await getJson(`${paged.metricsUrl}/v2/chains?pageToken=%%%`);
      expectContract(malformed, "metrics", "GET /v2/chains", 400);
    } finally {
      await paged.close();
    }
  });

  it("gets a chain by EVM chain id", async () => {
    const response = await getJson(`${metrics}/v2/chains/73311`);
    expectContract(response, "metrics", "GET /v2/chains/{chainId}", 200);
    expect(response.body).toMatchObject({ evmChainId: 73311, network: "testnet" });
  });

  it.each([
    ["an unknown chain id", "999999"],
    ["a blockchain id", "2q9e4r6Mu3U68nU1fYjgbR6JvwrRx36CohpAX5UQxse55x1Q5"],
  ])("answers 404 for %s", async (_, chainId) => {
    const response = await getJson(`${metrics}/v2/chains/${chainId}`);
    expectContract(response, "metrics", "GET /v2/chains/{chainId}", 404);
  });

  it("does not serve Data API routes", async () => {
    const response = await getJson(`${metrics}/v1/chains`);
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ message: "Cannot GET /v1/chains", error: "Not Found", statusCode: 404 });
  });
});
