/**
 * The reference operations of the benchmark. Each names its document, its variables, the
 * longest chain of dependent upstream calls it needs, the fewest upstream calls its data
 * allows (computed from the simulator's own answers), and its baseline: the same upstream
 * calls made by hand with undici.
 */
import { readFileSync } from "node:fs";
import type { components } from "../../src/upstream/contract/data-api.ts";
import type { PlainUpstream } from "../upstream.ts";

type EvmBlock = components["schemas"]["EvmBlock"];
type ChainInfo = components["schemas"]["ChainInfo"];

export interface ReferenceOperation {
  name: string;
  document: string;
  variables: Record<string, unknown>;
  /** Longest chain of upstream calls that wait on each other. */
  dependentCalls: number;
  /** The fewest upstream calls a cold gateway can make for this operation. */
  fewestCalls(upstream: PlainUpstream): Promise<number>;
  /** The same upstream calls as the gateway makes, by hand; returns the data the operation returns. */
  baseline(upstream: PlainUpstream): Promise<unknown>;
  /** Upstream GET paths the operation reads, for measuring the simulator alone. */
  upstreamPaths(upstream: PlainUpstream): Promise<{ service: "data" | "metrics"; path: string }[]>;
}

function document(file: string): string {
  return readFileSync(new URL(`./${file}`, import.meta.url), "utf8");
}

const LATEST_BLOCKS = 20;

async function latestBlocksPage(upstream: PlainUpstream) {
  return upstream.get<{ blocks: EvmBlock[]; nextPageToken?: string }>("data", `/v1/blocks?pageSize=${LATEST_BLOCKS}`);
}

function missingParents(blocks: EvmBlock[]): { chainId: string; hash: string }[] {
  const inPage = new Set(blocks.map((block) => `${block.chainId}:${block.blockHash}`));
  const missing = new Map<string, { chainId: string; hash: string }>();
  for (const block of blocks) {
    const key = `${block.chainId}:${block.parentHash}`;
    if (!inPage.has(key) && block.blockNumber !== "0") missing.set(key, { chainId: block.chainId, hash: block.parentHash });
  }
  return [...missing.values()];
}

export const referenceOperations: ReferenceOperation[] = [
  {
    name: "latest-blocks",
    document: document("latest-blocks.graphql"),
    variables: { first: LATEST_BLOCKS },
    // blocks, then (in parallel) the chain list and the parents that the page lacks
    dependentCalls: 2,
    async fewestCalls(upstream) {
      return 2 + missingParents((await latestBlocksPage(upstream)).blocks).length;
    },
    async baseline(upstream) {
      const page = await latestBlocksPage(upstream);
      const byHash = new Map(page.blocks.map((block) => [`${block.chainId}:${block.blockHash}`, block]));
      const [chains, parents] = await Promise.all([
        upstream.get<{ chains: ChainInfo[] }>("data", "/v1/chains"),
        Promise.all(
          missingParents(page.blocks).map((parent) =>
            upstream.get<EvmBlock>("data", `/v1/chains/${parent.chainId}/blocks/${parent.hash}`),
          ),
        ),
      ]);
      for (const parent of parents) byHash.set(`${parent.chainId}:${parent.blockHash}`, parent);
      const chainById = new Map(chains.chains.map((chain) => [chain.chainId, chain]));
      return {
        latestBlocks: {
          edges: page.blocks.map((block) => {
            const parent = byHash.get(`${block.chainId}:${block.parentHash}`);
            const chain = chainById.get(block.chainId);
            return {
              cursor: block.blockHash,
              node: {
                blockNumber: block.blockNumber,
                blockHash: block.blockHash,
                blockTimestamp: block.blockTimestamp,
                txCount: block.txCount,
                gasUsed: block.gasUsed,
                chain: chain ? { chainId: chain.chainId, chainName: chain.chainName } : null,
                parent: parent
                  ? { blockHash: parent.blockHash, blockTimestamp: parent.blockTimestamp, txCount: parent.txCount }
                  : null,
              },
            };
          }),
          pageInfo: { hasNextPage: Boolean(page.nextPageToken), endCursor: page.nextPageToken ?? null },
        },
      };
    },
    async upstreamPaths(upstream) {
      const page = await latestBlocksPage(upstream);
      return [
        { service: "data", path: `/v1/blocks?pageSize=${LATEST_BLOCKS}` },
        { service: "data", path: "/v1/chains" },
        ...missingParents(page.blocks).map((parent) => ({
          service: "data" as const,
          path: `/v1/chains/${parent.chainId}/blocks/${parent.hash}`,
        })),
      ];
    },
  },
];
