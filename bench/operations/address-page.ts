/**
 * An explorer's address page: a busy address's 25 latest C-Chain transactions, each with its
 * block (one call per distinct block), its chain (from the chain list) and the transfers and
 * internal calls that the address sent or received (carried by the page itself).
 */
import type { components } from "../../src/upstream/contract/data-api.ts";
import type { PlainUpstream } from "../upstream.ts";
import { operationDocument, type ReferenceOperation } from "./types.ts";

type Schemas = components["schemas"];
type ChainInfo = Schemas["ChainInfo"];
type EvmBlock = Schemas["EvmBlock"];
type NativeTransaction = Schemas["NativeTransaction"];
type TransactionDetails = Schemas["TransactionDetails"];
type AddressTransactionsPage = Schemas["ListTransactionDetailsResponse"];

const CHAIN_ID = "43114";
const FIRST = 25;
const chainsPath = "/v1/chains";
const blockPath = (blockHash: string) => `/v1/chains/${CHAIN_ID}/blocks/${blockHash}`;

/** The sender with the longest history (the highest nonce) in the busiest of the chain's latest blocks. */
async function busiestSender(upstream: PlainUpstream): Promise<string> {
  const latest = await upstream.get<Schemas["ListEvmBlocksResponse"]>("data", `/v1/chains/${CHAIN_ID}/blocks?pageSize=10`);
  const busiest = latest.blocks.reduce((most, block) => (block.txCount > most.txCount ? block : most));
  const { transactions } = await upstream.get<Schemas["ListNativeTransactionsResponse"]>(
    "data",
    `${blockPath(busiest.blockHash)}/transactions?pageSize=100`,
  );
  return transactions.reduce((oldest, tx) => (BigInt(tx.nonce) > BigInt(oldest.nonce) ? tx : oldest)).from.address;
}

/** The blocks of a page's transactions, each once: the gateway loads a block per distinct hash. */
function distinctBlocks(page: AddressTransactionsPage): string[] {
  return [...new Set(page.transactions.map((item) => item.nativeTransaction.blockHash))];
}

function transaction(tx: NativeTransaction, block: EvmBlock | undefined, chain: ChainInfo) {
  return {
    txHash: tx.txHash,
    blockNumber: tx.blockNumber,
    blockTimestamp: tx.blockTimestamp,
    from: { address: tx.from.address, name: tx.from.name ?? null },
    to: { address: tx.to.address, name: tx.to.name ?? null, symbol: tx.to.symbol ?? null },
    value: tx.value,
    gasUsed: tx.gasUsed,
    gasPrice: tx.gasPrice,
    method: tx.method ? { methodHash: tx.method.methodHash, methodName: tx.method.methodName ?? null } : null,
    block: block ? { blockHash: block.blockHash, txCount: block.txCount, gasUsed: block.gasUsed, baseFee: block.baseFee } : null,
    chain: { chainId: chain.chainId, chainName: chain.chainName },
  };
}

function transfers(item: TransactionDetails) {
  return {
    erc20Transfers: (item.erc20Transfers ?? []).map(({ logIndex, from, to, value, erc20Token: token }) => ({
      logIndex,
      from: { address: from.address },
      to: { address: to.address },
      value,
      erc20Token: {
        address: token.address,
        name: token.name,
        symbol: token.symbol,
        decimals: token.decimals,
        logoUri: token.logoUri ?? null,
        price: token.price ? { value: token.price.value } : null,
      },
    })),
    erc721Transfers: (item.erc721Transfers ?? []).map(({ logIndex, from, to, erc721Token: token }) => ({
      logIndex,
      from: { address: from.address },
      to: { address: to.address },
      erc721Token: {
        address: token.address,
        name: token.name,
        symbol: token.symbol,
        tokenId: token.tokenId,
        tokenUri: token.tokenUri,
      },
    })),
    erc1155Transfers: (item.erc1155Transfers ?? []).map(({ logIndex, from, to, value, erc1155Token: token }) => ({
      logIndex,
      from: { address: from.address },
      to: { address: to.address },
      value,
      erc1155Token: {
        address: token.address,
        tokenId: token.tokenId,
        tokenUri: token.tokenUri,
        metadata: { name: token.metadata.name ?? null, symbol: token.metadata.symbol ?? null },
      },
    })),
    internalTransactions: (item.internalTransactions ?? []).map(({ from, to, value, gasUsed, isReverted }) => ({
      from: { address: from.address },
      to: { address: to.address },
      value,
      gasUsed,
      isReverted,
    })),
  };
}

export const addressPage: ReferenceOperation = {
  name: "address-page",
  document: operationDocument("address-page"),
  // the address's page, then the blocks of its transactions side by side (the gateway keeps the
  // chain list loaded, so Query.chain waits for nothing)
  dependentCalls: 2,
  async prepare(upstream) {
    const address = await busiestSender(upstream);
    const pagePath = `/v1/chains/${CHAIN_ID}/addresses/${address}/transactions?sortOrder=desc&pageSize=${FIRST}`;
    const reference = await upstream.get<AddressTransactionsPage>("data", pagePath);
    if (reference.transactions.length < FIRST) throw new Error(`address-page: ${address} has fewer than ${FIRST} transactions`);
    return {
      variables: { chainId: CHAIN_ID, address, first: FIRST },
      // the chain list, the page, and one block per distinct block of the page
      fewestCalls: 2 + distinctBlocks(reference).length,
      upstreamPaths: [
        { service: "data", path: chainsPath },
        { service: "data", path: pagePath },
        ...distinctBlocks(reference).map((blockHash) => ({ service: "data" as const, path: blockPath(blockHash) })),
      ],
      async baseline() {
        const { chains } = await upstream.get<Schemas["ListChainsResponse"]>("data", chainsPath);
        const chain = chains.find((info) => info.chainId === CHAIN_ID);
        if (!chain) return { chain: null };
        const page = await upstream.get<AddressTransactionsPage>("data", pagePath);
        const blocks = await Promise.all(
          distinctBlocks(page).map((blockHash) => upstream.get<EvmBlock>("data", blockPath(blockHash))),
        );
        const blockByHash = new Map(blocks.map((block) => [block.blockHash, block]));
        return {
          chain: {
            chainId: chain.chainId,
            chainName: chain.chainName,
            address: {
              address,
              transactions: {
                edges: page.transactions.map((item) => ({
                  node: {
                    transaction: transaction(item.nativeTransaction, blockByHash.get(item.nativeTransaction.blockHash), chain),
                    ...transfers(item),
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
