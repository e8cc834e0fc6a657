/**
 * A deep query: the 5 latest blocks of every chain → the first 5 transactions of each → each
 * transaction's block → that block's chain. Each transaction's block is one of the page's, which
 * the page put in the request's block loader, so the gateway fetches no block; the chain list is
 * one call for every chain.
 */
import type { components } from "../../src/upstream/contract/data-api.ts";
import { operationDocument, type ReferenceOperation } from "./types.ts";

type Schemas = components["schemas"];
type EvmBlock = Schemas["EvmBlock"];
type BlockTransactionsPage = Schemas["ListNativeTransactionsResponse"];

const BLOCKS = 5;
const TRANSACTIONS = 5;
const pagePath = `/v1/blocks?pageSize=${BLOCKS}`;
const chainsPath = "/v1/chains";
const transactionsPath = (block: EvmBlock) =>
  `/v1/chains/${block.chainId}/blocks/${block.blockHash}/transactions?pageSize=${TRANSACTIONS}`;

/** A block without transactions answers its list without an upstream call. */
function withTransactions(blocks: EvmBlock[]): EvmBlock[] {
  return blocks.filter((block) => block.txCount > 0);
}

export const deepQuery: ReferenceOperation = {
  name: "deep-query",
  document: operationDocument("deep-query"),
  // the blocks, then their transactions side by side (the blocks prime the block loader and the
  // chain list is kept loaded)
  dependentCalls: 2,
  async prepare(upstream) {
    const reference = await upstream.get<Schemas["ListEvmBlocksResponse"]>("data", pagePath);
    const blocksWithTransactions = withTransactions(reference.blocks);
    return {
      variables: { blocks: BLOCKS, transactions: TRANSACTIONS },
      // the page, a transaction page per block that has any, and the chain list once some transaction asks its block's chain
      fewestCalls: 1 + blocksWithTransactions.length + (blocksWithTransactions.length > 0 ? 1 : 0),
      upstreamPaths: [
        { service: "data", path: pagePath },
        ...blocksWithTransactions.map((block) => ({ service: "data" as const, path: transactionsPath(block) })),
        ...(blocksWithTransactions.length > 0 ? [{ service: "data" as const, path: chainsPath }] : []),
      ],
      async baseline() {
        const page = await upstream.get<Schemas["ListEvmBlocksResponse"]>("data", pagePath);
        const transactionPages = new Map(
          await Promise.all(
            withTransactions(page.blocks).map(
              async (block) => [block, await upstream.get<BlockTransactionsPage>("data", transactionsPath(block))] as const,
            ),
          ),
        );
        const { chains }: Schemas["ListChainsResponse"] =
          transactionPages.size > 0 ? await upstream.get<Schemas["ListChainsResponse"]>("data", chainsPath) : { chains: [] };
        const chainById = new Map(chains.map((chain) => [chain.chainId, chain]));
        return {
          latestBlocks: {
            edges: page.blocks.map((block) => {
              const transactionPage: BlockTransactionsPage = transactionPages.get(block) ?? { transactions: [] };
              const chain = chainById.get(block.chainId);
              return {
                node: {
                  chainId: block.chainId,
                  blockNumber: block.blockNumber,
                  blockHash: block.blockHash,
                  txCount: block.txCount,
                  transactions: {
                    // a transaction's block is the block it was listed by
                    edges: transactionPage.transactions.map((tx) => ({
                      node: {
                        txHash: tx.txHash,
                        blockIndex: tx.blockIndex,
                        block: {
                          blockNumber: block.blockNumber,
                          txCount: block.txCount,
                          gasUsed: block.gasUsed,
                          chain: chain ? { chainId: chain.chainId, chainName: chain.chainName } : null,
                        },
                      },
                    })),
                    pageInfo: { hasNextPage: Boolean(transactionPage.nextPageToken) },
                  },
                },
              };
            }),
          },
        };
      },
    };
  },
};
