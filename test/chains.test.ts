import { isObjectType } from "graphql";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { schema } from "../src/schema.ts";
import type { components } from "../src/upstream/contract/data-api.ts";
import { ChainDocument, ChainNodeDocument, ChainsDocument } from "./generated/graphql.ts";
import { execute, simulatorGet, startHarness, upstreamCalls, type Harness } from "./support/harness.ts";

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
  return value
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/[^A-Za-z0-9]+/g, "_")
    .toUpperCase();
}

describe("chains", () => {
  it("lists every chain with every field of the record", async () => {
    const result = await execute(harness, ChainsDocument, {});
    expect(result.body.errors).toBeUndefined();
    const chains = result.body.data!.chains!;
    expect(chains.map((chain) => chain.chainId)).toEqual(upstreamChains.map((chain) => chain.chainId));
    for (const [index, chain] of chains.entries()) {
      const upstream = upstreamChains[index]!;
      expect(chain).toMatchObject({
        chainId: upstream.chainId,
        chainName: upstream.chainName,
        description: upstream.description,
        status: upstream.status,
        blockchainId: upstream.platformChainId,
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
    expect(fuji.body.data!.chains!.length).toBeGreaterThan(0);
    expect(fuji.body.data!.chains!.every((chain) => chain.isTestnet)).toBe(true);
    expect(testnet.body.data).toEqual(fuji.body.data);

    const withNfts = await execute(harness, ChainsDocument, { feature: "NFT_INDEXING" });
    const expected = upstreamChains
      .filter((chain) => chain.enabledFeatures?.includes("nftIndexing"))
      .map((chain) => chain.chainId);
    expect(withNfts.body.data!.chains!.map((chain) => chain.chainId)).toEqual(expected);
  });
});

describe("chains from the held chain list", () => {
  const networks = [undefined, "mainnet", "fuji", "testnet"] as const;
  const features = [undefined, "nftIndexing", "webhooks", "teleporter"] as const;
  const enumOf = (value: string | undefined) => (value === undefined ? undefined : enumName(value));

  it("answers every network and feature filter with the records the upstream filter gives, from one unfiltered call", async () => {
    for (const network of networks) {
      for (const feature of features) {
        const query = new URLSearchParams();
        if (network) query.set("network", network);
        if (feature) query.set("feature", feature);
        const upstream = (await simulatorGet<{ chains: ChainInfo[] }>(harness, "data", `/v1/chains?${query}`)).chains;
        harness.gateway.cache.clear();
        harness.simulator.resetCounters();
        const result = await execute(harness, ChainsDocument, {
          network: enumOf(network) as never,
          feature: enumOf(feature) as never,
        });
        expect(result.body.errors).toBeUndefined();
        const label = `network ${network ?? "-"}, feature ${feature ?? "-"}`;
        expect(
          result.body.data!.chains!.map((chain) => chain.chainId),
          label,
        ).toEqual(upstream.map((chain) => chain.chainId));
        expect(upstreamCalls(harness), label).toEqual({ "GET /v1/chains": 1 });
        const sent = harness.simulator.requests().filter((request) => request.route === "GET /v1/chains");
        expect(
          sent.map((request) => request.query),
          label,
        ).toEqual([{}]);
      }
    }
    // The filters are not empty: each network and each feature leaves some chains out.
    expect(upstreamChains.some((chain) => chain.isTestnet) && upstreamChains.some((chain) => !chain.isTestnet)).toBe(true);
    expect(upstreamChains.some((chain) => !(chain.enabledFeatures ?? []).includes("webhooks"))).toBe(true);
  });

  it("shares the one chain list call between chains, chain and every chain link of a request", async () => {
    const result = await execute(
      harness,
      `{ fuji: chains(network: FUJI) { chainId } nft: chains(feature: NFT_INDEXING) { chainId } c: chain(id: "43114") { chainName }
         latestBlocks(first: 3) { nodes { chain { chainName } } } }`,
    );
    expect(result.body.errors).toBeUndefined();
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/chains": 1, "GET /v1/blocks": 1 });
  });

  it("says FUJI wherever a network is output, TESTNET being only an argument", async () => {
    const result = await execute(
      harness,
      `{ chains(network: TESTNET) { network metricsInfo { network } }
         primaryNetwork(network: TESTNET) { network pChain { network transactions(first: 1) { chainInfo { network } } } } }`,
    );
    expect(result.body.errors).toBeUndefined();
    const data = result.body.data as {
      chains: { network: string; metricsInfo: { network: string } | null }[];
      primaryNetwork: { network: string; pChain: { network: string; transactions: { chainInfo: { network: string } } } };
    };
    expect(data.chains.length).toBeGreaterThan(0);
    for (const chain of data.chains) {
      expect(chain.network).toBe("FUJI");
      if (chain.metricsInfo) expect(chain.metricsInfo.network).toBe("FUJI");
    }
    expect(data.primaryNetwork).toEqual({
      network: "FUJI",
      pChain: { network: "FUJI", transactions: { chainInfo: { network: "FUJI" } } },
    });
  });
});

describe("chain", () => {
  it("finds the C-Chain by EVM chain id and by blockchain id, with its metrics record", async () => {
    const byEvmId = await execute(harness, ChainDocument, { id: "43114" });
    expect(byEvmId.body.errors).toBeUndefined();
    expect(byEvmId.body.data!.chain).toMatchObject({
      chainId: "43114",
      blockchainId: "2q9e4r6Mu3U68nU1fYjgbR6JvwrRx36CohpAX5UQxse55x1Q5",
      network: "MAINNET",
      metricsInfo: { evmChainId: "43114", blockchainId: "2q9e4r6Mu3U68nU1fYjgbR6JvwrRx36CohpAX5UQxse55x1Q5", network: "MAINNET" },
    });
    const byBlockchainId = await execute(harness, ChainDocument, { id: "yH8D7ThNJkxmtkuv2jgBa4P1Rn3Qpr4pPr7QYNfcdoS6k6HWp" });
    expect(byBlockchainId.body.data!.chain).toMatchObject({
      chainId: "43113",
      network: "FUJI",
      metricsInfo: { network: "FUJI" },
    });
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
    expect(node.body.data!.node).toMatchObject({
      __typename: "EvmChain",
      chainId: "43114",
      chainName: chain.body.data!.chain!.chainName,
    });
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

describe("node refetch of the EVM types", () => {
  it("refetches every EVM Node type by the id it gives, with the record's own fields", async () => {
    const evmNodeTypes = Object.values(schema.getTypeMap())
      .filter(
        (type) =>
          isObjectType(type) &&
          type.name.startsWith("Evm") &&
          type.getInterfaces().some((implemented) => implemented.name === "Node"),
      )
      .map((type) => type.name)
      .sort();
    expect(evmNodeTypes).toEqual(["EvmBlock", "EvmChain", "EvmTransaction"]);

    const found = await execute(
      harness,
      `{ chain(id: "43114") { id chainId blocks(first: 20) { nodes { id blockHash txCount transactions(first: 1) { nodes { id txHash } } } } } }`,
    );
    expect(found.body.errors).toBeUndefined();
    const chain = (
      found.body.data as {
        chain: {
          id: string;
          chainId: string;
          blocks: {
            nodes: {
              id: string;
              blockHash: string;
              txCount: number;
              transactions: { nodes: { id: string; txHash: string }[] };
            }[];
          };
        };
      }
    ).chain;
    const block = chain.blocks.nodes.find((node) => node.txCount > 0)!;
    const transaction = block.transactions.nodes[0]!;
    const refetch = await execute(
      harness,
      `query ($c: ID!, $b: ID!, $t: ID!) {
        c: node(id: $c) { __typename id ... on EvmChain { chainId } }
        b: node(id: $b) { __typename id ... on EvmBlock { blockHash } }
        t: node(id: $t) { __typename id ... on EvmTransaction { txHash } }
      }`,
      { c: chain.id, b: block.id, t: transaction.id },
    );
    expect(refetch.body.errors).toBeUndefined();
    expect(refetch.body.data).toEqual({
      c: { __typename: "EvmChain", id: chain.id, chainId: chain.chainId },
      b: { __typename: "EvmBlock", id: block.id, blockHash: block.blockHash },
      t: { __typename: "EvmTransaction", id: transaction.id, txHash: transaction.txHash },
    });
  });
});
