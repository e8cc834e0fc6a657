/** The explorer's home page: the latest blocks of every chain, each with its chain and parent. */
import type { components } from "../../src/upstream/contract/data-api.ts";
import { operationDocument, type ReferenceOperation } from "./types.ts";

type EvmBlock = components["schemas"]["EvmBlock"];
type ChainInfo = components["schemas"]["ChainInfo"];

const FIRST = 20;

function missingParents(blocks: EvmBlock[]): { chainId: string; hash: string }[] {
  const inPage = new Set(blocks.map((block) => `${block.chainId}:${block.blockHash}`));
  const missing = new Map<string, { chainId: string; hash: string }>();
  for (const block of blocks) {
    const key = `${block.chainId}:${block.parentHash}`;
    if (!inPage.has(key) && block.blockNumber !== "0") missing.set(key, { chainId: block.chainId, hash: block.parentHash });
  }
  return [...missing.values()];
}

export const latestBlocks: ReferenceOperation = {
  name: "latest-blocks",
  document: operationDocument("latest-blocks"),
  // the page, then the parents the page lacks side by side (the chain list is kept loaded)
  dependentCalls: 2,
  async prepare(upstream) {
    const pagePath = `/v1/blocks?pageSize=${FIRST}`;
    const reference = await upstream.get<{ blocks: EvmBlock[] }>("data", pagePath);
    const parentPath = (parent: { chainId: string; hash: string }) => `/v1/chains/${parent.chainId}/blocks/${parent.hash}`;
    return {
      variables: { first: FIRST },
      fewestCalls: 2 + missingParents(reference.blocks).length,
      upstreamPaths: [
        { service: "data", path: pagePath },
        { service: "data", path: "/v1/chains" },
        ...missingParents(reference.blocks).map((parent) => ({ service: "data" as const, path: parentPath(parent) })),
      ],
      async baseline() {
        const page = await upstream.get<{ blocks: EvmBlock[]; nextPageToken?: string }>("data", pagePath);
        const byHash = new Map(page.blocks.map((block) => [`${block.chainId}:${block.blockHash}`, block]));
        const [chains, parents] = await Promise.all([
          upstream.get<{ chains: ChainInfo[] }>("data", "/v1/chains"),
          Promise.all(missingParents(page.blocks).map((parent) => upstream.get<EvmBlock>("data", parentPath(parent)))),
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
    };
  },
};
