/** Per-request loaders for EVM chains, blocks and transactions. */
import DataLoader from "dataloader";
import type { Upstreams } from "../../upstream/upstreams.ts";
import type { AddressTransactionsFilter } from "../../upstream/evm-api.ts";
import type { CallOptions } from "../../upstream/call-options.ts";
import type { PageRequest } from "../../upstream/request-target.ts";
import { countsAgainstService } from "../../upstream/outcomes.ts";
import type {
  ChainInfo,
  CompleteTransaction,
  EvmBlock,
  EvmTransactionRecord,
  ListAddressTransactionsResponse,
  ListEvmBlocksResponse,
  ListNativeTransactionsResponse,
  MetricsChain,
  UpstreamNetwork,
} from "../../upstream/types.ts";
import { observed, type BatchObserver } from "./observed.ts";
import { PagePrimedLoader } from "./page-primed.ts";
import { settle } from "./settle.ts";

export interface BlockKey {
  /** EVM chain id or blockchain id, as the upstream accepts either. */
  chainId: string;
  /** Block number (decimal) or block hash. */
  blockId: string;
}

export interface TransactionKey {
  /** EVM chain id or blockchain id, as the upstream accepts either. */
  chainId: string;
  txHash: string;
}

export interface EvmLoaders {
  /**
   * Every chain the Data API indexes (`GET /v1/chains` without filters), read once per request
   * (and kept for the chain TTL by the shared cache): the chain loader and `chains` answer from it.
   */
  chainList: () => Promise<ChainInfo[]>;
  /** Chain records by EVM chain id or blockchain id; null when unknown. */
  chain: DataLoader<string, ChainInfo | null>;
  /** Blocks by chain and number or hash; null when unknown. */
  block: PagePrimedLoader<BlockKey, EvmBlock | null, string>;
  /** How the Metrics API knows a chain, by EVM chain id; null when it does not. */
  metricsChain: DataLoader<string, MetricsChain | null>;
  /** Native transactions by chain and hash, as a list page gave them or from the complete view; null when unknown. */
  transaction: PagePrimedLoader<TransactionKey, EvmTransactionRecord | null, string>;
  /** The complete view of a transaction (all transfers and calls); null when unknown. */
  completeTransaction: DataLoader<TransactionKey, CompleteTransaction | null, string>;
  /** List pages, each read once by the route it names; their records prime the loaders above. */
  evmPages: EvmPages;
}

export interface EvmPages {
  latestBlocks(network: UpstreamNetwork | undefined, page: PageRequest): Promise<ListEvmBlocksResponse>;
  chainBlocks(chainId: string, page: PageRequest): Promise<ListEvmBlocksResponse>;
  addressTransactions(
    chainId: string,
    address: string,
    filter: AddressTransactionsFilter,
    page: PageRequest,
  ): Promise<ListAddressTransactionsResponse>;
  blockTransactions(chainId: string, blockHash: string, page: PageRequest): Promise<ListNativeTransactionsResponse>;
}

function blockKey({ chainId, blockId }: BlockKey): string {
  return `${chainId}:${blockId.startsWith("0x") ? blockId.toLowerCase() : blockId}`;
}

export function createEvmLoaders({ evm, metrics }: Upstreams, call: CallOptions, observe: BatchObserver): EvmLoaders {
  let heldChainList: Promise<ChainInfo[]> | undefined;
  // Read once per request: the chain loader answers every id from it, so it needs no priming.
  const chainList = () => (heldChainList ??= evm.listChains(call));

  const chain = new DataLoader<string, ChainInfo | null>(
    observed("chain", observe, async (ids) => {
      // One `GET /v1/chains` answers every supported chain, by either of its ids; an id not in
      // the list may still be a chain the list leaves out, so it gets its own look-up. When the
      // list's route fails (the outcome table's "counts against the service"), each chain is looked
      // up by id: the list is no single point of failure. A refusal of the caller (its key, its
      // rate) would refuse those look-ups too: it stands.
      const all = await chainList().catch((error: unknown) => {
        if (countsAgainstService(error)) return undefined;
        throw error;
      });
      if (all === undefined) return Promise.all(ids.map((id) => settle(evm.getChain(id, call))));
      const byId = new Map<string, ChainInfo>();
      for (const info of all) {
        byId.set(info.chainId, info);
        if (info.platformChainId) byId.set(info.platformChainId, info);
      }
      return Promise.all(ids.map((id) => byId.get(id) ?? settle(evm.getChain(id, call))));
    }),
  );

  const block = new PagePrimedLoader<BlockKey, EvmBlock | null, string>(
    observed("block", observe, (keys) => Promise.all(keys.map((key) => settle(evm.getBlock(key.chainId, key.blockId, call))))),
    blockKey,
  );

  const metricsChain = new DataLoader<string, MetricsChain | null>(
    observed("metricsChain", observe, (ids) => Promise.all(ids.map((id) => settle(metrics.getChain(id, call))))),
  );

  const completeTransaction = new DataLoader<TransactionKey, CompleteTransaction | null, string>(
    observed("completeTransaction", observe, (keys) =>
      Promise.all(keys.map((key) => settle(evm.getTransaction(key.chainId, key.txHash, call)))),
    ),
    { cacheKeyFn: transactionKey },
  );

  // Keys that no list page primed are answered by the complete view (one call per key, shared
  // with `completeTransaction`), which holds the native record.
  const transaction = new PagePrimedLoader<TransactionKey, EvmTransactionRecord | null, string>(
    observed("transaction", observe, (keys) =>
      Promise.all(keys.map((key) => settle(completeTransaction.load(key).then((found) => found?.nativeTransaction ?? null)))),
    ),
    transactionKey,
  );

  const evmPages: EvmPages = {
    async latestBlocks(network, page) {
      const response = await evm.listLatestBlocksAllChains(network, page, call);
      primeBlocks({ block }, response.blocks);
      return response;
    },
    async chainBlocks(chainId, page) {
      const response = await evm.listLatestBlocks(chainId, page, call);
      primeBlocks({ block }, response.blocks);
      return response;
    },
    async addressTransactions(chainId, address, filter, page) {
      const response = await evm.listAddressTransactions(chainId, address, filter, page, call);
      primeTransactions(
        { transaction },
        response.transactions.map((item) => item.nativeTransaction),
      );
      return response;
    },
    async blockTransactions(chainId, blockHash, page) {
      const response = await evm.listBlockTransactions(chainId, blockHash, page, call);
      primeTransactions({ transaction }, response.transactions);
      return response;
    },
  };

  return { chainList, chain, block, metricsChain, transaction, completeTransaction, evmPages };
}

function transactionKey({ chainId, txHash }: TransactionKey): string {
  return `${chainId}:${txHash.toLowerCase()}`;
}

/** Puts a page's blocks into the block loader under their hash and number. */
function primeBlocks(loaders: Pick<EvmLoaders, "block">, blocks: readonly EvmBlock[]): void {
  loaders.block.primePage((add) => {
    for (const item of blocks) {
      add({ chainId: item.chainId, blockId: item.blockHash }, item);
      add({ chainId: item.chainId, blockId: item.blockNumber }, item);
    }
  });
}

/** Puts a page's native transactions into the transaction loader under their chain and hash. */
export function primeTransactions(loaders: Pick<EvmLoaders, "transaction">, transactions: readonly EvmTransactionRecord[]): void {
  loaders.transaction.primePage((add) => {
    for (const item of transactions) add({ chainId: item.chainId, txHash: item.txHash }, item);
  });
}
