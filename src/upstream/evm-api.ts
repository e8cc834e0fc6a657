/** The EVM routes of the Data API: typed calls, with the shared cache for records that do not change. */
import type { CacheConfig } from "../config.ts";
import { nullIfNotFound } from "../errors.ts";
import type { RecordCache } from "./cache.ts";
import { ContractClient } from "./contract-client.ts";
import { ROUTES } from "./routes.ts";
import type { CallOptions } from "./call-options.ts";
import type { UpstreamService } from "./http.ts";
import type { PageRequest } from "./request-target.ts";
import type {
  ChainInfo,
  CompleteTransaction,
  DataPaths,
  EvmBlock,
  ListAddressTransactionsResponse,
  ListEvmBlocksResponse,
  ListNativeTransactionsResponse,
  SortOrder,
  UpstreamNetwork,
} from "./types.ts";
import { HEX_32 } from "./identifiers.ts";

/** The whole chain list; `chains(network:, feature:)` filters it in the gateway. */
const CHAIN_LIST_KEY = "evm-chains:*:*";

function blockCacheKey(chainId: string, blockId: string): string {
  return HEX_32.test(blockId) ? `evm-block:${chainId}:${blockId.toLowerCase()}` : `evm-block:${chainId}:#${blockId}`;
}

function transactionCacheKey(chainId: string, txHash: string): string {
  return `evm-tx:${chainId}:${txHash.toLowerCase()}`;
}

/** The filters of an address's transaction list; block numbers as the route takes them. */
export interface AddressTransactionsFilter {
  /** First block, inclusive. */
  startBlock?: number | undefined;
  /** Last block, exclusive. */
  endBlock?: number | undefined;
  sortOrder?: SortOrder | undefined;
}

export class EvmApi {
  readonly client: ContractClient<DataPaths>;

  constructor(
    service: UpstreamService,
    private readonly cache: RecordCache,
    private readonly cacheConfig: Pick<CacheConfig, "chainTtlMs">,
  ) {
    this.client = new ContractClient<DataPaths>(service);
  }

  /** `GET /v1/chains` without filters: every chain the Data API indexes, cached for the chain TTL. */
  listChains(options?: CallOptions): Promise<ChainInfo[]> {
    return this.cache.getOrLoad(
      CHAIN_LIST_KEY,
      () => this.fetchChains(options),
      this.cacheConfig.chainTtlMs,
      this.readable(options),
    );
  }

  /** The chain list this process holds now, if it does; never a call. */
  heldChains(): ChainInfo[] | undefined {
    return this.cache.peek<ChainInfo[]>(CHAIN_LIST_KEY);
  }

  /**
   * Loads the full chain list now and again before it expires, so that no request waits for
   * it: nearly every query resolves a chain. Returns the function that stops the refreshing.
   */
  keepChainsFresh(onError: (error: unknown) => void): () => void {
    const refresh = () =>
      this.cache.refresh(CHAIN_LIST_KEY, () => this.fetchChains(), this.cacheConfig.chainTtlMs).catch(onError);
    void refresh();
    if (this.cacheConfig.chainTtlMs === 0) return () => {};
    const timer = setInterval(refresh, Math.max(1_000, Math.floor(this.cacheConfig.chainTtlMs * 0.8)));
    timer.unref();
    return () => clearInterval(timer);
  }

  private async fetchChains(options?: CallOptions): Promise<ChainInfo[]> {
    return (await this.client.get(ROUTES.chains.path, {}, options)).chains;
  }

  /** `GET /v1/chains/{chainId}` by EVM chain id or blockchain id; null when the chain is unknown. */
  getChain(chainId: string, options?: CallOptions): Promise<ChainInfo | null> {
    return this.cache.getOrLoad(
      `evm-chain:${chainId}`,
      () => nullIfNotFound(this.client.get(ROUTES.chain.path, { params: { chainId } }, options)),
      this.cacheConfig.chainTtlMs,
      this.readable(options),
    );
  }

  /** `GET /v1/chains/{chainId}/blocks`: the latest blocks of one chain, newest first. */
  async listLatestBlocks(chainId: string, page: PageRequest, options?: CallOptions): Promise<ListEvmBlocksResponse> {
    const response = await this.client.get(
      ROUTES.chainBlocks.path,
      { params: { chainId }, query: { pageSize: page.pageSize, pageToken: page.pageToken } },
      options,
    );
    this.rememberListed(response.blocks);
    return response;
  }

  /** `GET /v1/blocks`: the latest blocks of every supported chain, newest first. */
  async listLatestBlocksAllChains(
    network: UpstreamNetwork | undefined,
    page: PageRequest,
    options?: CallOptions,
  ): Promise<ListEvmBlocksResponse> {
    const response = await this.client.get(
      ROUTES.latestBlocks.path,
      { query: { network, pageSize: page.pageSize, pageToken: page.pageToken } },
      options,
    );
    this.rememberListed(response.blocks);
    return response;
  }

  /**
   * `GET /v1/chains/{chainId}/blocks/{blockId}` by number or hash; null when unknown.
   * Accepted blocks are final on Avalanche, so a block found once is kept by hash and number.
   */
  async getBlock(chainId: string, blockId: string, options?: CallOptions): Promise<EvmBlock | null> {
    const cached = this.readable(options) ? await this.cache.find<EvmBlock>(blockCacheKey(chainId, blockId)) : undefined;
    if (cached) return cached;
    const block = await nullIfNotFound(this.client.get(ROUTES.block.path, { params: { chainId, blockId } }, options));
    if (block) this.rememberFetched(block, chainId);
    return block;
  }

  /**
   * `GET /v1/chains/{chainId}/addresses/{address}/transactions`: the transactions that touch an
   * address, each with only the transfers it sends or receives. Not cached: the list grows.
   */
  listAddressTransactions(
    chainId: string,
    address: string,
    filter: AddressTransactionsFilter,
    page: PageRequest,
    options?: CallOptions,
  ): Promise<ListAddressTransactionsResponse> {
    return this.client.get(
      ROUTES.addressTransactions.path,
      {
        params: { chainId, address },
        query: { ...filter, pageSize: page.pageSize, pageToken: page.pageToken },
      },
      options,
    );
  }

  /**
   * `GET /v1/chains/{chainId}/blocks/{blockId}/transactions`. A block's transactions are final,
   * so each page is kept, by the block id and page it was asked by.
   */
  listBlockTransactions(
    chainId: string,
    blockId: string,
    page: PageRequest,
    options?: CallOptions,
  ): Promise<ListNativeTransactionsResponse> {
    const key = `evm-block-txs:${blockCacheKey(chainId, blockId)}:${page.pageSize}:${page.pageToken ?? ""}`;
    return this.cache.getOrLoad(
      key,
      () =>
        this.client.get(
          ROUTES.blockTransactions.path,
          { params: { chainId, blockId }, query: { pageSize: page.pageSize, pageToken: page.pageToken } },
          options,
        ),
      undefined,
      this.readable(options),
    );
  }

  /**
   * `GET /v1/chains/{chainId}/transactions/{txHash}`: the complete view of a transaction; null
   * when unknown. Transactions in accepted blocks are final, so one found is kept.
   */
  async getTransaction(chainId: string, txHash: string, options?: CallOptions): Promise<CompleteTransaction | null> {
    const cached = this.readable(options)
      ? await this.cache.find<CompleteTransaction>(transactionCacheKey(chainId, txHash))
      : undefined;
    if (cached) return cached;
    const transaction = await nullIfNotFound(this.client.get(ROUTES.transaction.path, { params: { chainId, txHash } }, options));
    if (transaction) {
      for (const id of new Set([chainId, transaction.nativeTransaction.chainId])) {
        this.cache.set(transactionCacheKey(id, txHash), transaction);
      }
    }
    return transaction;
  }

  /** Whether the shared cache may answer for the call's key (see UpstreamService.vouchesFor). */
  private readable(options: CallOptions | undefined): boolean {
    return this.client.service.vouchesFor(options);
  }

  /**
   * Keeps a page's blocks in the shared cache by hash, and by number when it did not hold them by
   * hash yet (a block is stored under both at once): a page that lists held blocks again looks
   * each up once, not twice.
   */
  private rememberListed(blocks: readonly EvmBlock[]): void {
    for (const block of blocks) {
      if (this.cache.remember(blockCacheKey(block.chainId, block.blockHash), block)) {
        this.cache.remember(blockCacheKey(block.chainId, block.blockNumber), block);
      }
    }
  }

  /**
   * Keeps a block fetched by id under its chain id and the id it was asked by, by hash and by
   * number each: a fetch by number follows a miss by number, whatever is held by hash.
   */
  private rememberFetched(block: EvmBlock, requestedChainId: string): void {
    for (const chainId of requestedChainId === block.chainId ? [block.chainId] : [block.chainId, requestedChainId]) {
      this.cache.remember(blockCacheKey(chainId, block.blockHash), block);
      this.cache.remember(blockCacheKey(chainId, block.blockNumber), block);
    }
  }
}
