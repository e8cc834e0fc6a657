import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { components } from "../src/upstream/contract/data-api.ts";
import { ChainDocument, ChainNodeDocument, ChainsDocument } from "./generated/graphql.ts";
import { execute, simulatorGet, startHarness, upstreamCalls, type Harness } from "./helpers.ts";

type ChainInfo = components["schemas"]["ChainInfo"];

let harness: Harness;
let upstreamChains: ChainInfo[];

beforeAll(async () => {
  harness = await startHarness();
  upstreamChains = (await simulatorGet<{ chains: ChainInfo[] }>(harness, "data", "/v1/chains")).chains;
});
afterAll(async () => {
  await harness.close();
});
beforeEach(() => {
  harness.gateway.cache.clear();
  harness.simulator.resetCounters();
});

function enumName(value: string): string {
  return value.replace(/([a-z0-9])([A-Z])/g, "$1_$2").replace(/[^A-Za-z0-9]+/g, "_").toUpperCase();
}

describe("chains", () => {
  it("lists every chain with every field of the record", async () => {
    const result = await execute(harness, ChainsDocument, {});
    expect(result.body.errors).toBeUndefined();
    const chains = result.body.data!.chains;
    expect(chains.map((chain) => chain.chainId)).toEqual(upstreamChains.map((chain) => chain.chainId));
    for (const [index, chain] of chains.entries()) {
      const upstream = upstreamChains[index]!;
      expect(chain).toMatchObject({
        chainId: upstream.chainId,
        chainName: upstream.chainName,
        description: upstream.description,
        status: upstream.status,
        platformChainId: upstream.platformChainId,
        subnetId: upstream.subnetId,
        vmId: upstream.vmId,
        vmName: upstream.vmName,
        explorerUrl: upstream.explorerUrl,
        rpcUrl: upstream.rpcUrl,
        wsUrl: upstream.wsUrl,
        isTestnet: upstream.isTestnet,
        network: upstream.isTestnet ? "FUJI" : "MAINNET",
        utilityAddresses: { multicall: upstream.utilityAddresses?.multicall },
        networkToken: upstream.networkToken,
        chainLogoUri: upstream.chainLogoUri,
        private: upstream.private,
        enabledFeatures: (upstream.enabledFeatures ?? []).map(enumName),
      });
    }
    // The sample network has the C-Chains under their real ids and more chains on both networks.
    expect(chains.filter((chain) => !chain.isTestnet).length).toBeGreaterThanOrEqual(3);
    expect(chains.filter((chain) => chain.isTestnet).length).toBeGreaterThanOrEqual(3);
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/chains": 1 });
  });

  it("filters by network, TESTNET being FUJI, and by feature", async () => {
    const fuji = await execute(harness, ChainsDocument, { network: "FUJI" });
    const testnet = await execute(harness, ChainsDocument, { network: "TESTNET" });
    expect(fuji.body.data!.chains.length).toBeGreaterThan(0);
    expect(fuji.body.data!.chains.every((chain) => chain.isTestnet)).toBe(true);
    expect(testnet.body.data).toEqual(fuji.body.data);

    const withNfts = await execute(harness, ChainsDocument, { feature: "NFT_INDEXING" });
    const expected = upstreamChains.filter((chain) => chain.enabledFeatures?.includes("nftIndexing")).map((chain) => chain.chainId);
    expect(withNfts.body.data!.chains.map((chain) => chain.chainId)).toEqual(expected);
  });
});

describe("chain", () => {
  it("finds the C-Chain by EVM chain id and by blockchain id, with its metrics record", async () => {
    const byEvmId = await execute(harness, ChainDocument, { id: "43114" });
    expect(byEvmId.body.errors).toBeUndefined();
    expect(byEvmId.body.data!.chain).toMatchObject({
      chainId: "43114",
      platformChainId: "2q9e4r6Mu3U68nU1fYjgbR6JvwrRx36CohpAX5UQxse55x1Q5",
      network: "MAINNET",
      metricsInfo: { evmChainId: "43114", blockchainId: "2q9e4r6Mu3U68nU1fYjgbR6JvwrRx36CohpAX5UQxse55x1Q5", network: "MAINNET" },
    });
    const byBlockchainId = await execute(harness, ChainDocument, { id: "yH8D7ThNJkxmtkuv2jgBa4P1Rn3Qpr4pPr7QYNfcdoS6k6HWp" });
    expect(byBlockchainId.body.data!.chain).toMatchObject({ chainId: "43113", network: "FUJI", metricsInfo: { network: "FUJI" } });
  });

  it("returns null for an unknown chain id", async () => {
    const result = await execute(harness, ChainDocument, { id: "999999" });
    expect(result.body.errors).toBeUndefined();
    expect(result.body.data!.chain).toBeNull();
  });

  it("refuses a chain id that is neither decimal nor cb58, before any upstream call", async () => {
    const result = await execute(harness, ChainDocument, { id: "43114/../blocks?x=1" });
    expect(result.body.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "id" });
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("refetches a chain by its node id", async () => {
    const chain = await execute(harness, ChainDocument, { id: "43114" });
    const node = await execute(harness, ChainNodeDocument, { id: chain.body.data!.chain!.id });
    expect(node.body.data!.node).toMatchObject({ __typename: "EvmChain", chainId: "43114", chainName: chain.body.data!.chain!.chainName });
  });

  it("answers many chain look-ups in one request from one chain list call", async () => {
    const ids = upstreamChains.map((chain) => chain.chainId);
    const query = `{ ${ids.map((id, index) => `c${index}: chain(id: "${id}") { chainName }`).join(" ")} }`;
    const result = await execute(harness, query);
    expect(result.body.errors).toBeUndefined();
    expect(Object.keys(result.body.data as object)).toHaveLength(ids.length);
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/chains": 1 });
  });
});
