/** An explorer's block page: the busiest of the C-Chain's latest blocks, with its transactions and their chain. */
import type { components } from "../../src/upstream/contract/data-api.ts";
import { operationDocument, type ReferenceOperation } from "./types.ts";

type Schemas = components["schemas"];
type EvmBlock = Schemas["EvmBlock"];
type BlockTransactionsPage = Schemas["ListNativeTransactionsResponse"];

const CHAIN_ID = "43114";
/** `EvmBlock.transactions` without `first`: the gateway asks the route's largest page, which holds nearly every block whole. */
const DEFAULT_PAGE = 100;
const chainsPath = "/v1/chains";
const transactionsPath = (blockHash: string) =>
  `/v1/chains/${CHAIN_ID}/blocks/${blockHash}/transactions?pageSize=${DEFAULT_PAGE}`;

export const blockPage: ReferenceOperation = {
  name: "block-page",
  document: operationDocument("block-page"),
  // the block, then its transactions (the chain list is kept loaded)
  dependentCalls: 2,
  async prepare(upstream) {
    const latest = await upstream.get<Schemas["ListEvmBlocksResponse"]>("data", `/v1/chains/${CHAIN_ID}/blocks?pageSize=100`);
    const busiest = latest.blocks.reduce((most, block) => (block.txCount > most.txCount ? block : most));
    const blockPath = `/v1/chains/${CHAIN_ID}/blocks/${busiest.blockNumber}`;
    // A block without transactions answers its list without an upstream call.
    const hasTransactions = busiest.txCount > 0;
    return {
      variables: { chainId: CHAIN_ID, blockId: busiest.blockNumber },
      fewestCalls: hasTransactions ? 3 : 2,
      upstreamPaths: [
        { service: "data", path: chainsPath },
        { service: "data", path: blockPath },
        ...(hasTransactions ? [{ service: "data" as const, path: transactionsPath(busiest.blockHash) }] : []),
      ],
      async baseline() {
        const { chains } = await upstream.get<Schemas["ListChainsResponse"]>("data", chainsPath);
        const chain = chains.find((info) => info.chainId === CHAIN_ID);
        if (!chain) return { chain: null };
        const block = await upstream.get<EvmBlock>("data", blockPath);
        const page: BlockTransactionsPage =
          block.txCount > 0
            ? await upstream.get<BlockTransactionsPage>("data", transactionsPath(block.blockHash))
            : { transactions: [] };
        return {
          chain: {
            chainId: chain.chainId,
            chainName: chain.chainName,
            block: {
              blockNumber: block.blockNumber,
              blockHash: block.blockHash,
              blockTimestamp: block.blockTimestamp,
              parentHash: block.parentHash,
              txCount: block.txCount,
              gasUsed: block.gasUsed,
              gasLimit: block.gasLimit,
              baseFee: block.baseFee,
              feesSpent: block.feesSpent,
              transactions: {
                edges: page.transactions.map((tx) => ({
                  node: {
                    txHash: tx.txHash,
                    blockIndex: tx.blockIndex,
                    from: { address: tx.from.address, name: tx.from.name ?? null },
                    to: { address: tx.to.address, name: tx.to.name ?? null },
                    value: tx.value,
                    gasUsed: tx.gasUsed,
                    gasPrice: tx.gasPrice,
                    method: tx.method ? { methodHash: tx.method.methodHash, methodName: tx.method.methodName ?? null } : null,
                    chain: { chainId: chain.chainId, chainName: chain.chainName },
                  },
                })),
                pageInfo: { hasNextPage: Boolean(page.nextPageToken), endCursor: page.nextPageToken ?? null },
              },
            },
          },
        };
      },
    };
  },
};
