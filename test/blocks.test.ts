import { afterEach, describe, expect, it } from "vitest";
import type { components } from "../src/upstream/contract/data-api.ts";
import {
  BlockNodeDocument,
  ChainBlockDocument,
  ChainBlocksPageDocument,
  LatestBlocksWithChainAndParentDocument,
  LatestBlocksWithParentDetailsDocument,
} from "./generated/graphql.ts";
import { execute, simulatorGet, upstreamCalls, useHarness } from "./support/harness.ts";

type ListEvmBlocksResponse = components["schemas"]["ListEvmBlocksResponse"];
type EvmBlock = components["schemas"]["EvmBlock"];

const harness = useHarness();

describe("latestBlocks", () => {
  it("makes one /v1/blocks call and one chain list call for 20 blocks with chains and parent hashes, and no chain call when warm", async () => {
    const reference = await simulatorGet<ListEvmBlocksResponse>(harness, "data", "/v1/blocks?pageSize=20");
    const chains = await simulatorGet<{ chains: { chainId: string; chainName: string }[] }>(harness, "data", "/v1/chains");
    harness.simulator.resetCounters();

    const cold = await execute(harness, LatestBlocksWithChainAndParentDocument, { first: 20 });
    expect(cold.body.errors).toBeUndefined();
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/blocks": 1, "GET /v1/chains": 1 });

    const nodes = cold.body.data!.latestBlocks!.edges.map((edge) => edge.node);
    expect(nodes.map((node) => node.blockHash)).toEqual(reference.blocks.map((block) => block.blockHash));
    const chainName = new Map(chains.chains.map((chain) => [chain.chainId, chain.chainName]));
    for (const [index, node] of nodes.entries()) {
      const block = reference.blocks[index] as EvmBlock;
      expect(node.chain?.chainName).toBe(chainName.get(block.chainId));
      expect(node.parent?.blockHash).toBe(block.parentHash);
      expect(node.blockNumber).toBe(block.blockNumber);
    }
    // Several chains interleave in the page.
    expect(new Set(nodes.map((node) => node.chainId)).size).toBeGreaterThan(1);

    harness.simulator.resetCounters();
    const warm = await execute(harness, LatestBlocksWithChainAndParentDocument, { first: 20 });
    expect(warm.body.data).toEqual(cold.body.data);
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/blocks": 1 });
  });

  it("fetches only the parents that the page does not hold, once each", async () => {
    const reference = await simulatorGet<ListEvmBlocksResponse>(harness, "data", "/v1/blocks?pageSize=30");
    const inPage = new Set(reference.blocks.map((block) => `${block.chainId}:${block.blockHash}`));
    const missingParents = new Set(
      reference.blocks.map((block) => `${block.chainId}:${block.parentHash}`).filter((key) => !inPage.has(key)),
    );
    // The gateway holds the chain list, as it does once started (the harness turns the preload
    // off): the rate limiter reads its length to estimate the parents, one per chain at most.
    await execute(harness, "{ chains { chainId } }");
    harness.simulator.resetCounters();

    const result = await execute(harness, LatestBlocksWithParentDetailsDocument, { first: 30 });
    expect(result.body.errors).toBeUndefined();
    expect(upstreamCalls(harness)).toEqual({
      "GET /v1/blocks": 1,
      "GET /v1/chains/{chainId}/blocks/{blockId}": missingParents.size,
    });
    for (const node of result.body.data!.latestBlocks!.nodes) {
      expect(node.parent?.blockHash).toBe(node.parentHash);
      expect(BigInt(node.parent!.blockNumber) >= 0n).toBe(true);
    }

    harness.simulator.resetCounters();
    await execute(harness, LatestBlocksWithParentDetailsDocument, { first: 30 });
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/blocks": 1 });
  });

  it("refuses a cursor used with another network", async () => {
    const first = await execute(harness, LatestBlocksWithChainAndParentDocument, { first: 5, network: "MAINNET" });
    const cursor = first.body.data!.latestBlocks!.pageInfo.endCursor!;
    harness.simulator.resetCounters();
    const reused = await execute(harness, LatestBlocksWithChainAndParentDocument, { first: 5, network: "FUJI", after: cursor });
    expect(reused.body.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "after" });
    expect(upstreamCalls(harness)).toEqual({});
  });
});

describe("EvmChain.blocks", () => {
  it("walks three pages forward in the simulator's order, without gap or duplicate", async () => {
    const reference = await simulatorGet<ListEvmBlocksResponse>(harness, "data", "/v1/chains/43114/blocks?pageSize=21");
    harness.simulator.resetCounters();

    const seen: string[] = [];
    let after: string | undefined;
    for (let page = 0; page < 3; page += 1) {
      const result = await execute(harness, ChainBlocksPageDocument, { chainId: "43114", first: 7, after });
      expect(result.body.errors).toBeUndefined();
      const blocks = result.body.data!.chain!.blocks!;
      expect(blocks.edges).toHaveLength(7);
      expect(blocks.pageInfo.hasNextPage).toBe(true);
      expect(blocks.pageInfo.hasPreviousPage).toBe(false);
      expect(blocks.nodes.map((node) => node.blockHash)).toEqual(blocks.edges.map((edge) => edge.node.blockHash));
      seen.push(...blocks.edges.map((edge) => edge.node.blockHash));
      after = blocks.pageInfo.endCursor!;
    }
    expect(seen).toEqual(reference.blocks.map((block) => block.blockHash));
    // One chain list call, then exactly one blocks call per page.
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/chains": 1, "GET /v1/chains/{chainId}/blocks": 3 });
  });

  it("resumes right after a middle edge's cursor", async () => {
    const reference = await simulatorGet<ListEvmBlocksResponse>(harness, "data", "/v1/chains/43114/blocks?pageSize=30");
    const page = await execute(harness, ChainBlocksPageDocument, { chainId: "43114", first: 10 });
    const middle = page.body.data!.chain!.blocks!.edges[3]!;

    const resumed = await execute(harness, ChainBlocksPageDocument, { chainId: "43114", first: 10, after: middle.cursor });
    expect(resumed.body.errors).toBeUndefined();
    const hashes = resumed.body.data!.chain!.blocks!.edges.map((edge) => edge.node.blockHash);
    expect(hashes).toEqual(reference.blocks.slice(4, 14).map((block) => block.blockHash));

    // The end cursor of a resumed page continues the walk as usual.
    const next = await execute(harness, ChainBlocksPageDocument, {
      chainId: "43114",
      first: 5,
      after: resumed.body.data!.chain!.blocks!.pageInfo.endCursor!,
    });
    expect(next.body.data!.chain!.blocks!.edges.map((edge) => edge.node.blockHash)).toEqual(
      reference.blocks.slice(14, 19).map((block) => block.blockHash),
    );
  });

  it("exposes every field of the block record", async () => {
    const reference = await simulatorGet<ListEvmBlocksResponse>(harness, "data", "/v1/chains/43113/blocks?pageSize=3");
    const result = await execute(harness, ChainBlocksPageDocument, { chainId: "43113", first: 3 });
    const nodes = result.body.data!.chain!.blocks!.edges.map((edge) => edge.node);
    for (const [index, node] of nodes.entries()) {
      const block = reference.blocks[index] as EvmBlock;
      const { id, blockTime, ...fields } = node;
      expect(fields).toEqual({
        chainId: block.chainId,
        blockNumber: block.blockNumber,
        blockHash: block.blockHash,
        parentHash: block.parentHash,
        blockTimestamp: block.blockTimestamp,
        blockTimestampMilliseconds: block.blockTimestampMilliseconds ?? null,
        blockMinDelayExcess: block.blockMinDelayExcess ?? null,
        txCount: block.txCount,
        baseFee: block.baseFee,
        gasUsed: block.gasUsed,
        gasLimit: block.gasLimit,
        gasCost: block.gasCost,
        feesSpent: block.feesSpent,
        cumulativeTransactions: block.cumulativeTransactions,
      });
      expect(new Date(blockTime).getTime()).toBe(block.blockTimestampMilliseconds ?? block.blockTimestamp * 1000);
      expect(typeof id).toBe("string");
    }
  });
});

describe("EvmChain.block", () => {
  it("finds a block by number and by hash, with its chain and parent, and refetches it by node id", async () => {
    const byNumber = await execute(harness, ChainBlockDocument, { chainId: "43114", blockId: "1200" });
    expect(byNumber.body.errors).toBeUndefined();
    const block = byNumber.body.data!.chain!.block!;
    expect(block.blockNumber).toBe("1200");
    expect(block.chain?.chainId).toBe("43114");
    expect(block.parent?.blockNumber).toBe("1199");
    expect(block.parent?.blockHash).toBe(block.parentHash);

    const byHash = await execute(harness, ChainBlockDocument, { chainId: "43114", blockId: block.blockHash });
    expect(byHash.body.data!.chain!.block!.blockNumber).toBe("1200");

    const refetched = await execute(harness, BlockNodeDocument, { id: block.id });
    expect(refetched.body.data!.node).toMatchObject({
      __typename: "EvmBlock",
      id: block.id,
      blockHash: block.blockHash,
      blockNumber: "1200",
    });
  });

  it("accepts the chain's blockchain id in place of its EVM chain id", async () => {
    const result = await execute(harness, ChainBlockDocument, {
      chainId: "2q9e4r6Mu3U68nU1fYjgbR6JvwrRx36CohpAX5UQxse55x1Q5",
      blockId: "7",
    });
    expect(result.body.errors).toBeUndefined();
    expect(result.body.data!.chain!.block!.chainId).toBe("43114");
  });

  it("returns null for a block that does not exist, and the first block has no parent", async () => {
    const missing = await execute(harness, ChainBlockDocument, { chainId: "43114", blockId: "999999999" });
    expect(missing.body.errors).toBeUndefined();
    expect(missing.body.data!.chain!.block).toBeNull();

    const genesis = await execute(harness, ChainBlockDocument, { chainId: "43114", blockId: "0" });
    expect(genesis.body.data!.chain!.block!.parent).toBeNull();
  });

  it("loads a block asked for twice in one request once, and not again while cached", async () => {
    const query = `{ a: chain(id: "43114") { block(id: "4321") { blockHash } } b: chain(id: "43114") { block(id: "4321") { txCount } } }`;
    const cold = await execute(harness, query);
    expect(cold.body.errors).toBeUndefined();
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/chains": 1, "GET /v1/chains/{chainId}/blocks/{blockId}": 1 });
    harness.simulator.resetCounters();
    await execute(harness, query);
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("refuses a malformed block id before any upstream call", async () => {
    harness.simulator.resetCounters();
    const result = await execute(harness, ChainBlockDocument, { chainId: "43114", blockId: "../../v1/chains" });
    expect(result.body.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "id" });
    expect(result.body.errors?.[0]?.message).toContain("block number");
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/chains": 1 });
  });
});

describe("an upstream failure stays at its field", () => {
  const NO_FAULTS = { errorRate: 0, errorRoutes: [], faultKind: "status", errorStatus: 500 } as const;
  afterEach(() => {
    harness.simulator.setKnobs(NO_FAULTS);
  });

  /** Read beside every failing field: one needs the chain list, one no call at all. */
  const UNAFFECTED = `here: chain(id: "43114") { chainName } pn: primaryNetwork(network: FUJI) { network }`;

  it("a 500 on GET /v1/blocks nulls latestBlocks alone; chain and primaryNetwork keep their data", async () => {
    harness.simulator.setKnobs({ errorRate: 1, errorStatus: 500, errorRoutes: ["GET /v1/blocks"] });
    const result = await execute(harness, `{ latestBlocks(first: 3) { nodes { blockHash } } ${UNAFFECTED} }`);
    expect(result.status).toBe(200);
    expect(result.body.data).toEqual({ latestBlocks: null, here: { chainName: expect.any(String) }, pn: { network: "FUJI" } });
    expect(result.body.errors).toHaveLength(1);
    expect(result.body.errors![0]).toMatchObject({ path: ["latestBlocks"], extensions: { code: "UPSTREAM_ERROR" } });
  });

  it("a 500 on GET /v1/chains nulls chains alone; chain, looked up by id, and primaryNetwork keep their data", async () => {
    harness.simulator.setKnobs({ errorRate: 1, errorStatus: 500, errorRoutes: ["GET /v1/chains"] });
    const result = await execute(harness, `{ chains(network: FUJI) { chainId } ${UNAFFECTED} }`);
    expect(result.body.data).toEqual({
      chains: null,
      here: { chainName: expect.any(String) as string },
      pn: { network: "FUJI" },
    });
    expect(result.body.errors!.map((error) => [error.path, error.extensions?.code])).toEqual([[["chains"], "UPSTREAM_ERROR"]]);
  });

  it("a failing route under a chain nulls that field alone", async () => {
    const { blocks } = await simulatorGet<ListEvmBlocksResponse>(harness, "data", "/v1/chains/43114/blocks?pageSize=20");
    const block = blocks.find((item) => item.txCount > 0)!;
    const { transactions } = await simulatorGet<{ transactions: { txHash: string; from: { address: string } }[] }>(
      harness,
      "data",
      `/v1/chains/43114/blocks/${block.blockHash}/transactions?pageSize=1`,
    );
    const tx = transactions[0]!;
    const cases: { route: string; field: string; path: (string | number)[] }[] = [
      { route: "GET /v1/chains/{chainId}/blocks", field: "blocks(first: 2) { nodes { blockHash } }", path: ["c", "blocks"] },
      {
        route: "GET /v1/chains/{chainId}/blocks/{blockId}",
        field: `block(id: "${block.blockHash}") { blockNumber }`,
        path: ["c", "block"],
      },
      {
        route: "GET /v1/chains/{chainId}/transactions/{txHash}",
        field: `transaction(hash: "${tx.txHash}") { txHash }`,
        path: ["c", "transaction"],
      },
      {
        route: "GET /v1/chains/{chainId}/addresses/{address}/transactions",
        field: `address(address: "${tx.from.address}") { transactions(first: 1) { nodes { transaction { txHash } } } }`,
        path: ["c", "address", "transactions"],
      },
    ];
    for (const testCase of cases) {
      harness.gateway.cache.clear();
      harness.simulator.setKnobs({ errorRate: 1, errorStatus: 500, errorRoutes: [testCase.route] });
      const result = await execute(harness, `{ c: chain(id: "43114") { chainId ${testCase.field} } ${UNAFFECTED} }`);
      expect(result.body.errors, testCase.route).toHaveLength(1);
      expect(result.body.errors![0], testCase.route).toMatchObject({
        path: testCase.path,
        extensions: { code: "UPSTREAM_ERROR" },
      });
      expect(result.body.data, testCase.route).toMatchObject({
        c: { chainId: "43114" },
        here: { chainName: expect.any(String) },
        pn: { network: "FUJI" },
      });
    }

    harness.gateway.cache.clear();
    harness.simulator.setKnobs({
      errorRate: 1,
      errorStatus: 500,
      errorRoutes: ["GET /v1/chains/{chainId}/blocks/{blockId}/transactions"],
    });
    const nested = await execute(
      harness,
      `{ c: chain(id: "43114") { blocks(first: 20) { nodes { blockHash txCount transactions(first: 1) { nodes { txHash } } } } } ${UNAFFECTED} }`,
    );
    const nodes = (nested.body.data as { c: { blocks: { nodes: { txCount: number; transactions: unknown }[] } } }).c.blocks.nodes;
    expect(nodes.length).toBe(20);
    for (const node of nodes) expect(node.transactions === null).toBe(node.txCount > 0);
    expect(
      nested.body.errors!.every((error) => error.extensions?.code === "UPSTREAM_ERROR" && error.path?.at(-1) === "transactions"),
    ).toBe(true);
    expect(nested.body.data).toMatchObject({ here: { chainName: expect.any(String) }, pn: { network: "FUJI" } });
  });
});
