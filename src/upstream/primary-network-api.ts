/**
 * The primary-network routes of the Data API (P-, X- and C-Chain blocks, transactions, UTXOs,
 * X-Chain vertices, L1 validators): typed calls, with the shared cache for blocks and vertices,
 * which never change once accepted.
 *
 * Primary-network records do not say which network (or, for blocks and P-Chain transactions,
 * which chain) they belong to, and the P-Chain has the same id on both networks. So every record
 * this client returns is registered with its origin (under a symbol key), which `originOf` gives
 * back; the record is otherwise as the upstream sent it.
 */
import { blockchainIdValues } from "./contract/data-api.ts";
import { nullIfNotFound } from "../errors.ts";
import type { RecordCache } from "./cache.ts";
import { ContractClient } from "./contract-client.ts";
import { ROUTES } from "./routes.ts";
import type { CallOptions } from "./call-options.ts";
import type { UpstreamService } from "./http.ts";
import type { PageRequest } from "./request-target.ts";
import type {
  BlockchainId,
  DataPaths,
  L1Validator,
  PChainUtxo,
  PrimaryNetworkBlock,
  PrimaryNetworkChainInfo,
  PrimaryNetworkChainName,
  PrimaryNetworkTransaction,
  PrimaryNetworkTxType,
  PrimaryNetworkUtxo,
  SortOrder,
  UpstreamNetwork,
  Utxo,
  UtxosSortBy,
  XChainId,
  XChainVertex,
} from "./types.ts";

/** A network as the gateway sends it upstream: `testnet` is folded into `fuji` before. */
export type PrimaryNetworkName = Exclude<UpstreamNetwork, "testnet">;

/** One chain of one network's primary network. */
export interface PrimaryNetworkOrigin {
  network: PrimaryNetworkName;
  chain: PrimaryNetworkChainName;
  blockchainId: BlockchainId;
}

/** The real ids of the three chains; the P-Chain's is the same on both networks. */
const CHAIN_IDS: Record<PrimaryNetworkName, Record<PrimaryNetworkChainName, BlockchainId>> = {
  mainnet: {
    "p-chain": "11111111111111111111111111111111LpoYY",
    "x-chain": "2oYMBNV4eNHyqk2fjjV5nVQLDbtmNJzq5s3qs3Lo6ftnC6FByM",
    "c-chain": "2q9e4r6Mu3U68nU1fYjgbR6JvwrRx36CohpAX5UQxse55x1Q5",
  },
  fuji: {
    "p-chain": "11111111111111111111111111111111LpoYY",
    "x-chain": "2JVSBoinj9C2J33VntvzYtVJNZdN2NKiwwKjcumHUWEb5DbBrm",
    "c-chain": "yH8D7ThNJkxmtkuv2jgBa4P1Rn3Qpr4pPr7QYNfcdoS6k6HWp",
  },
};

for (const ids of Object.values(CHAIN_IDS)) {
  for (const id of Object.values(ids)) {
    if (!blockchainIdValues.includes(id)) throw new Error(`the contract does not list the blockchain id ${id}`);
  }
}

/** The chain `name` of a network. */
export function primaryChain(network: PrimaryNetworkName, chain: PrimaryNetworkChainName): PrimaryNetworkOrigin {
  return { network, chain, blockchainId: CHAIN_IDS[network][chain] };
}

/** The chain of a network that an id or an alias (`p-chain`, `x-chain`, `c-chain`) names, if any. */
export function findPrimaryChain(network: PrimaryNetworkName, idOrAlias: string): PrimaryNetworkOrigin | undefined {
  for (const chain of Object.keys(CHAIN_IDS[network]) as PrimaryNetworkChainName[]) {
    if (idOrAlias === chain || idOrAlias === CHAIN_IDS[network][chain]) return primaryChain(network, chain);
  }
  return undefined;
}

// A symbol-keyed property rather than a WeakMap: a page registers hundreds of short-lived
// records, and every WeakMap key is an ephemeron that each garbage collection has to trace.
// JSON.stringify and GraphQL never see a symbol key.
const ORIGIN = Symbol("primary-network origin");

interface Registered {
  [ORIGIN]?: PrimaryNetworkOrigin;
}

/** The chain a record of this client came from. */
export function originOf(record: object): PrimaryNetworkOrigin {
  const origin = registeredOrigin(record);
  if (origin === undefined) throw new Error("a primary-network record without its origin");
  return origin;
}

/**
 * The chain a value came from when it is a record of this client, else undefined: for a
 * predicate asked of any value (a type's `isTypeOf`), where a value of another kind is an answer, not a fault.
 */
export function registeredOrigin(value: unknown): PrimaryNetworkOrigin | undefined {
  return typeof value === "object" && value !== null ? (value as Registered)[ORIGIN] : undefined;
}

/** Gives a record the chain it belongs to, for `originOf`: every record of this client has it, and so must a record the gateway builds. */
export function register<T extends object>(record: T, origin: PrimaryNetworkOrigin): T {
  (record as Registered)[ORIGIN] = origin;
  return record;
}

/** A transaction, and what in it links to other records: its UTXOs, L1 validators and vertices. */
export function registerTransaction(tx: PrimaryNetworkTransaction, origin: PrimaryNetworkOrigin): PrimaryNetworkTransaction {
  const nested: (readonly object[] | null | undefined)[] = [
    "consumedUtxos" in tx ? tx.consumedUtxos : undefined,
    "emittedUtxos" in tx ? tx.emittedUtxos : undefined,
    "l1ValidatorDetails" in tx ? tx.l1ValidatorDetails : undefined,
    "vertices" in tx ? tx.vertices : undefined,
  ];
  for (const records of nested) for (const record of records ?? []) register(record, origin);
  return register(tx, origin);
}

export interface TransactionFilters {
  /** Comma-separated addresses. */
  addresses?: string;
  txTypes?: PrimaryNetworkTxType[];
  l1ValidationId?: string;
  startTimestamp?: number;
  endTimestamp?: number;
  sortOrder?: SortOrder;
}

export interface UtxoFilters {
  assetId?: string;
  includeSpent?: boolean;
  sortBy?: UtxosSortBy;
  sortOrder?: SortOrder;
}

export interface L1ValidatorFilters {
  l1ValidationId?: string;
  includeInactiveL1Validators?: boolean;
  nodeId?: string;
  subnetId?: string;
}

export interface PrimaryNetworkPage<T> {
  items: T[];
  nextPageToken: string | undefined;
  chainInfo: PrimaryNetworkChainInfo;
}

function blockCacheKey(origin: PrimaryNetworkOrigin, blockId: string): string {
  return `pn-block:${origin.network}:${origin.blockchainId}:${blockId.startsWith("0x") ? blockId.toLowerCase() : blockId}`;
}

export class PrimaryNetworkApi {
  readonly client: ContractClient<DataPaths>;

  constructor(
    service: UpstreamService,
    private readonly cache: RecordCache,
  ) {
    this.client = new ContractClient<DataPaths>(service);
  }

  /**
   * `GET .../blocks/{blockId}` by height or hash; null when unknown. Kept by height and hash,
   * since an accepted block never changes.
   */
  async getBlock(origin: PrimaryNetworkOrigin, blockId: string, options?: CallOptions): Promise<PrimaryNetworkBlock | null> {
    const cached = this.client.service.vouchesFor(options)
      ? await this.cache.find<PrimaryNetworkBlock>(blockCacheKey(origin, blockId))
      : undefined;
    if (cached) return register(cached, origin);
    const block = await nullIfNotFound(
      this.client.get(
        ROUTES.primaryNetworkBlock.path,
        { params: { network: origin.network, blockchainId: origin.blockchainId, blockId } },
        options,
      ),
    );
    if (block === null) return null;
    this.cache.set(blockCacheKey(origin, block.blockHash), block);
    this.cache.set(blockCacheKey(origin, block.blockNumber), block);
    return register(block, origin);
  }

  /** `GET .../transactions`: the chain's latest transactions, newest first unless asked otherwise. */
  async listTransactions(
    origin: PrimaryNetworkOrigin,
    filters: TransactionFilters,
    page: PageRequest,
    options?: CallOptions,
  ): Promise<PrimaryNetworkPage<PrimaryNetworkTransaction>> {
    const response = await this.client.get(
      ROUTES.primaryNetworkTransactions.path,
      {
        params: { network: origin.network, blockchainId: origin.blockchainId },
        query: { ...filters, pageSize: page.pageSize, pageToken: page.pageToken },
      },
      options,
    );
    const items: PrimaryNetworkTransaction[] = response.transactions;
    return {
      items: items.map((tx) => registerTransaction(tx, origin)),
      nextPageToken: response.nextPageToken,
      chainInfo: response.chainInfo,
    };
  }

  /**
   * `GET .../transactions/{txHash}`; null when the chain has no such transaction. Not cached
   * across requests: the record shows whether its UTXOs are spent yet, and a staking
   * transaction gains its reward transaction later.
   */
  async getTransaction(
    origin: PrimaryNetworkOrigin,
    txHash: string,
    options?: CallOptions,
  ): Promise<PrimaryNetworkTransaction | null> {
    const tx = await nullIfNotFound(
      this.client.get(
        ROUTES.primaryNetworkTransaction.path,
        { params: { network: origin.network, blockchainId: origin.blockchainId, txHash } },
        options,
      ),
    );
    return tx === null ? null : registerTransaction(tx, origin);
  }

  /** `POST .../utxos`: the UTXOs of some addresses (comma-separated), unspent ones unless asked otherwise. */
  async listUtxos(
    origin: PrimaryNetworkOrigin,
    addresses: string,
    filters: UtxoFilters,
    page: PageRequest,
    options?: CallOptions,
  ): Promise<PrimaryNetworkPage<PrimaryNetworkUtxo>> {
    const response = await this.client.post(
      ROUTES.utxos.path,
      {
        params: { network: origin.network, blockchainId: origin.blockchainId },
        query: { ...filters, pageSize: page.pageSize, pageToken: page.pageToken },
        body: { addresses },
      },
      options,
    );
    const items: (PChainUtxo | Utxo)[] = response.utxos;
    return {
      items: items.map((utxo) => register(utxo, origin)),
      nextPageToken: response.nextPageToken,
      chainInfo: response.chainInfo,
    };
  }

  /** `GET .../vertices/{vertexHash}` of the network's X-Chain; null when unknown. Kept, as a vertex never changes. */
  async getVertex(network: PrimaryNetworkName, vertexHash: string, options?: CallOptions): Promise<XChainVertex | null> {
    const origin = primaryChain(network, "x-chain");
    const key = `pn-vertex:${network}:${vertexHash}`;
    const cached = this.client.service.vouchesFor(options) ? await this.cache.find<XChainVertex>(key) : undefined;
    if (cached) return register(cached, origin);
    const vertex = await nullIfNotFound(
      this.client.get(
        ROUTES.vertex.path,
        { params: { network, blockchainId: origin.blockchainId as XChainId, vertexHash } },
        options,
      ),
    );
    if (vertex === null) return null;
    this.cache.set(key, vertex);
    return register(vertex, origin);
  }

  /** `GET .../vertices:listByHeight`: the X-Chain vertices at one height of the DAG. */
  async listVerticesAtHeight(
    network: PrimaryNetworkName,
    vertexHeight: number,
    sortOrder: SortOrder | undefined,
    page: PageRequest,
    options?: CallOptions,
  ): Promise<PrimaryNetworkPage<XChainVertex>> {
    const origin = primaryChain(network, "x-chain");
    const response = await this.client.get(
      ROUTES.verticesAtHeight.path,
      {
        params: { network, blockchainId: origin.blockchainId as XChainId },
        query: { vertexHeight, sortOrder, pageSize: page.pageSize, pageToken: page.pageToken },
      },
      options,
    );
    for (const vertex of response.vertices) this.cache.set(`pn-vertex:${network}:${vertex.vertexHash}`, vertex);
    return {
      items: response.vertices.map((vertex) => register(vertex, origin)),
      nextPageToken: response.nextPageToken,
      chainInfo: response.chainInfo,
    };
  }

  /** `GET /v1/networks/{network}/l1Validators`, with the P-Chain height the list is as of. */
  async listL1Validators(
    network: PrimaryNetworkName,
    filters: L1ValidatorFilters,
    page: PageRequest,
    options?: CallOptions,
  ): Promise<{ items: L1Validator[]; nextPageToken: string | undefined; blockHeight: string }> {
    const origin = primaryChain(network, "p-chain");
    const response = await this.client.get(
      ROUTES.l1Validators.path,
      { params: { network }, query: { ...filters, pageSize: page.pageSize, pageToken: page.pageToken } },
      options,
    );
    return {
      items: response.validators.map((validator) => register(validator, origin)),
      nextPageToken: response.nextPageToken,
      blockHeight: response.blockHeight,
    };
  }
}
