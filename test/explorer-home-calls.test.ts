/**
 * The fewest calls the data allows (issue 17, item 4): a cold explorer-home query makes exactly
 * the upstream calls its data needs, route by route, and no more. The minimum is reasoned out
 * below, term by term, from the simulator's own records of the page the query reads.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { components } from "../src/upstream/contract/data-api.ts";
import { ExplorerHomeColdDocument } from "./generated/graphql.ts";
import { execute, simulatorGet, startHarness, upstreamCalls, type Harness } from "./support/harness.ts";

type EvmBlock = components["schemas"]["EvmBlock"];

const VARIABLES = { blocks: 10, transactionsPerBlock: 3, metricPoints: 7, pChainTransactions: 5, validators: 10 };

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness();
});

afterAll(async () => {
  await harness.close();
});

/** Blocks whose parent is not in the page itself, one per distinct parent. */
function parentsOutsideThePage(blocks: readonly EvmBlock[]): Set<string> {
  const inPage = new Set(blocks.map((block) => `${block.chainId}:${block.blockHash}`));
  const missing = new Set<string>();
  for (const block of blocks) {
    const parent = `${block.chainId}:${block.parentHash}`;
    if (block.blockNumber !== "0" && !inPage.has(parent)) missing.add(parent);
  }
  return missing;
}

describe("a cold explorer home", () => {
  it("makes exactly the fewest upstream calls its data allows", async () => {
    // The page the query will read, straight from the simulator (then its counters are reset).
    const { blocks } = await simulatorGet<{ blocks: EvmBlock[] }>(harness, "data", `/v1/blocks?pageSize=${VARIABLES.blocks}`);
    expect(blocks).toHaveLength(VARIABLES.blocks);
    const parentCalls = parentsOutsideThePage(blocks).size;
    const blocksWithTransactions = blocks.filter((block) => block.txCount > 0).length;
    harness.gateway.cache.clear();
    harness.simulator.resetCounters();

    const fewest: Record<string, number> = {
      // The page of latest blocks: one call; it holds each block's hash, number, parentHash and txCount.
      "GET /v1/blocks": 1,
      // The chain list answers every block's `chain` and `chain(id: "43114")`: one call for all.
      "GET /v1/chains": 1,
      // A parent in the page is that page's block (kept by hash); each other parent, once per
      // distinct parent, by hash: its txCount and gasUsed are only in its own record.
      "GET /v1/chains/{chainId}/blocks/{blockId}": parentCalls,
      // A block's first transactions: one call per block that has any (txCount 0 answers empty
      // without a call). No route gives the first transactions of several blocks at once.
      "GET /v1/chains/{chainId}/blocks/{blockId}/transactions": blocksWithTransactions,
      // The chain metric: one page of points.
      "GET /v2/chains/{chainId}/metrics/{metric}": 1,
      // The latest P-Chain transactions: one page. Their `block { blockHash }` is the
      // transaction's own `blockHash`: no block call.
      "GET /v1/networks/{network}/blockchains/{blockchainId}/transactions": 1,
      // The L1 validators: one page.
      "GET /v1/networks/{network}/l1Validators": 1,
    };

    const result = await execute(harness, ExplorerHomeColdDocument, VARIABLES);
    expect(result.body.errors).toBeUndefined();

    // The answer holds what was asked, so that no term is met by leaving data out.
    const data = result.body.data!;
    const nodes = data.latestBlocks!.nodes;
    expect(nodes.map((node) => node.blockHash)).toEqual(blocks.map((block) => block.blockHash));
    for (const node of nodes) {
      expect(node.chain?.chainId).toBe(node.chainId);
      if (node.blockNumber !== "0") expect(node.parent?.blockHash).toBe(node.parentHash);
      expect(node.transactions!.nodes).toHaveLength(Math.min(node.txCount, VARIABLES.transactionsPerBlock));
    }
    expect(data.chain!.metrics!.nodes).toHaveLength(VARIABLES.metricPoints);
    const pChainTransactions = data.primaryNetwork.pChain.transactions!.nodes;
    expect(pChainTransactions).toHaveLength(VARIABLES.pChainTransactions);
    for (const transaction of pChainTransactions) expect(transaction.block?.blockHash).toBe(transaction.blockHash);
    expect(data.primaryNetwork.l1Validators!.nodes.length).toBeGreaterThan(0);

    expect(upstreamCalls(harness)).toEqual(Object.fromEntries(Object.entries(fewest).filter(([, count]) => count > 0)));
  });
});
