/**
 * The primary network of one network (mainnet or Fuji): its P-, X- and C-Chain history, indexed
 * for the Data API's primary-network routes.
 */
import type { ChainBlocks } from "../blocks.ts";
import type { NetworkName } from "../chains.ts";
import { ADDRESS_HRP, generatePrimaryNetwork, type PrimaryNetworkHistory } from "./history/generate.ts";
import {
  CHAIN_NAMES,
  RecordRenderer,
  type ChainKey,
  type CTransaction,
  type SimBlock,
  type SimL1Validator,
  type SimTransaction,
  type SimUtxo,
  type Wallet,
} from "./model.ts";
import type {
  L1Validator,
  PChainUtxo,
  PrimaryNetworkBlock,
  PrimaryNetworkTransaction,
  Utxo,
  XChainVertex,
} from "../../../src/upstream/types.ts";

export { decodeBech32 } from "../../../src/upstream/bech32.ts";

/** The real blockchain ids of the P-, X- and C-Chain (the P-Chain's is the same on both networks). */
export const PRIMARY_CHAIN_IDS: Record<NetworkName, Record<ChainKey, string>> = {
  mainnet: {
    P: "11111111111111111111111111111111LpoYY",
    X: "2oYMBNV4eNHyqk2fjjV5nVQLDbtmNJzq5s3qs3Lo6ftnC6FByM",
    C: "2q9e4r6Mu3U68nU1fYjgbR6JvwrRx36CohpAX5UQxse55x1Q5",
  },
  fuji: {
    P: "11111111111111111111111111111111LpoYY",
    X: "2JVSBoinj9C2J33VntvzYtVJNZdN2NKiwwKjcumHUWEb5DbBrm",
    C: "yH8D7ThNJkxmtkuv2jgBa4P1Rn3Qpr4pPr7QYNfcdoS6k6HWp",
  },
};

const ALIASES: Record<string, ChainKey> = { "p-chain": "P", "x-chain": "X", "c-chain": "C" };

export interface TransactionFilter {
  /** Normalized addresses: bech32 without the chain letter, or lower-case 0x. */
  addresses: ReadonlySet<string> | undefined;
  txTypes: ReadonlySet<string> | undefined;
  startTimestamp: number | undefined;
  endTimestamp: number | undefined;
  l1ValidationId: string | undefined;
  sortOrder: "asc" | "desc";
}

export interface UtxoFilter {
  addresses: ReadonlySet<string>;
  assetId: string | undefined;
  includeSpent: boolean;
  minAmount: number | undefined;
  sortBy: "timestamp" | "amount";
  sortOrder: "asc" | "desc";
}

export interface L1ValidatorFilter {
  l1ValidationId: string | undefined;
  includeInactive: boolean;
  nodeId: string | undefined;
  subnetId: string | undefined;
}

export class PrimaryNetwork {
  readonly chainIds: Record<ChainKey, string>;
  /** Wallets that hold UTXOs on the three chains; the first has the longest history. */
  readonly wallets: readonly Wallet[];
  /** Every L1 validator, with its BLS secret key (`bls.secretKey`), which responses never show. */
  readonly l1Validators: readonly SimL1Validator[];
  private readonly history: PrimaryNetworkHistory;
  private readonly render: RecordRenderer;
  private readonly transactionsByHash: Record<ChainKey, Map<string, SimTransaction>>;
  private readonly blocksByHash: Record<"P" | "X", Map<string, SimBlock>>;
  private readonly atomicTransactionsByBlock = new Map<number, CTransaction[]>();
  private readonly verticesByHash = new Map<string, XChainVertex>();
  private readonly verticesByHeight = new Map<number, XChainVertex[]>();
  /** How many of the history's transactions, blocks and vertices the maps above hold. */
  private readonly indexed = { P: 0, X: 0, C: 0, blocksP: 0, blocksX: 0, vertices: 0 };

  constructor(
    readonly network: NetworkName,
    seed: string,
    headTime: number,
    private readonly cBlocks: ChainBlocks,
  ) {
    this.chainIds = PRIMARY_CHAIN_IDS[network];
    this.history = generatePrimaryNetwork({ seed, network, headTime, chainIds: this.chainIds, cBlocks });
    this.render = new RecordRenderer(this.chainIds, this.history.avax);
    this.wallets = this.history.wallets;
    this.l1Validators = this.history.l1Validators;
    this.transactionsByHash = { P: new Map(), X: new Map(), C: new Map() };
    this.blocksByHash = { P: new Map(), X: new Map() };
    this.indexNew();
  }

  /** Adds the P- and X-Chain steps due by a time (Unix seconds); returns whether there were any. */
  extendTo(time: number): boolean {
    if (!this.history.extendTo(time)) return false;
    this.indexNew();
    return true;
  }

  /** Indexes what the history gained since the last call. */
  private indexNew(): void {
    const { transactions, blocks, vertices } = this.history;
    const { indexed } = this;
    for (const chain of ["P", "X", "C"] as const) {
      for (const tx of transactions[chain].slice(indexed[chain])) {
        this.transactionsByHash[chain].set(tx.txHash, tx);
        if (chain === "C") {
          const cTx = tx as CTransaction;
          const inBlock = this.atomicTransactionsByBlock.get(cTx.blockNumber) ?? [];
          inBlock.push(cTx);
          this.atomicTransactionsByBlock.set(cTx.blockNumber, inBlock);
        }
      }
      indexed[chain] = transactions[chain].length;
    }
    for (const block of blocks.P.slice(indexed.blocksP)) this.blocksByHash.P.set(block.record.blockHash, block);
    for (const block of blocks.X.slice(indexed.blocksX)) this.blocksByHash.X.set(block.record.blockHash, block);
    indexed.blocksP = blocks.P.length;
    indexed.blocksX = blocks.X.length;
    for (const { record } of vertices.slice(indexed.vertices)) {
      this.verticesByHash.set(record.vertexHash, record);
      const atHeight = this.verticesByHeight.get(record.vertexHeight) ?? [];
      atHeight.push(record);
      this.verticesByHeight.set(record.vertexHeight, atHeight);
    }
    indexed.vertices = vertices.length;
  }

  /** The chain a `{blockchainId}` names on this network: its id or its alias. */
  chainKey(blockchainId: string): ChainKey | undefined {
    const alias = ALIASES[blockchainId];
    if (alias) return alias;
    return (Object.keys(this.chainIds) as ChainKey[]).find((key) => this.chainIds[key] === blockchainId);
  }

  chainInfo(chain: ChainKey): { chainName: (typeof CHAIN_NAMES)[ChainKey]; network: NetworkName } {
    return { chainName: CHAIN_NAMES[chain], network: this.network };
  }

  get hrp(): string {
    return ADDRESS_HRP[this.network];
  }

  /** The P-Chain's height: the block height the L1 validator list is as of. */
  get pChainHeight(): number {
    return this.history.blocks.P.length - 1;
  }

  transactions(chain: ChainKey, filter: TransactionFilter): SimTransaction[] {
    const matches = this.history.transactions[chain].filter((tx) => {
      if (filter.addresses && ![...filter.addresses].some((address) => tx.addresses.has(address))) return false;
      if (filter.txTypes && !filter.txTypes.has(tx.txType)) return false;
      if (filter.startTimestamp !== undefined && tx.timestamp < filter.startTimestamp) return false;
      if (filter.endTimestamp !== undefined && tx.timestamp > filter.endTimestamp) return false;
      if (filter.l1ValidationId !== undefined) {
        if (tx.chain !== "P") return false;
        const wanted = filter.l1ValidationId;
        if (
          !tx.l1Changes.some(
            ({ validator }) => validator.validationId === wanted || validator.validationIdHex === wanted.toLowerCase(),
          )
        ) {
          return false;
        }
      }
      return true;
    });
    // Oldest first as generated; the newest come first unless asked otherwise.
    return filter.sortOrder === "asc" ? matches : matches.reverse();
  }

  transaction(chain: ChainKey, txHash: string): SimTransaction | undefined {
    return this.transactionsByHash[chain].get(txHash);
  }

  renderTransaction(tx: SimTransaction): PrimaryNetworkTransaction {
    return this.render.transaction(tx);
  }

  /** A block by height (decimal) or hash; C-Chain blocks are those of the simulated C-Chain. */
  block(chain: ChainKey, blockId: string): PrimaryNetworkBlock | undefined {
    if (chain === "C") {
      const number = /^\d+$/.test(blockId) ? Number(blockId) : this.cBlocks.numberOfHash(blockId);
      return number === undefined ? undefined : this.cChainBlock(number);
    }
    const blocks = this.history.blocks[chain];
    if (/^\d+$/.test(blockId)) return blocks[Number(blockId)]?.record;
    return this.blocksByHash[chain].get(blockId)?.record;
  }

  utxos(chain: ChainKey, filter: UtxoFilter): SimUtxo[] {
    const matches = this.history.utxos.filter(
      (utxo) =>
        utxo.consumedOn === chain &&
        filter.addresses.has(utxo.addresses[0]!) &&
        (filter.includeSpent || utxo.spent === undefined) &&
        (filter.assetId === undefined || utxo.asset.assetId === filter.assetId) &&
        (filter.minAmount === undefined || utxo.amount >= BigInt(Math.ceil(filter.minAmount))),
    );
    const direction = filter.sortOrder === "asc" ? 1 : -1;
    return matches.sort((a, b) => {
      const primary =
        filter.sortBy === "amount" ? (a.amount < b.amount ? -1 : a.amount > b.amount ? 1 : 0) : a.timestamp - b.timestamp;
      return direction * (primary !== 0 ? primary : a.utxoId < b.utxoId ? -1 : a.utxoId > b.utxoId ? 1 : 0);
    });
  }

  renderUtxo(chain: ChainKey, utxo: SimUtxo): PChainUtxo | Utxo {
    return chain === "P" ? this.render.pChainUtxo(utxo) : this.render.utxo(utxo);
  }

  vertex(hash: string): XChainVertex | undefined {
    return this.verticesByHash.get(hash);
  }

  verticesAtHeight(height: number, sortOrder: "asc" | "desc"): XChainVertex[] {
    const found = this.verticesByHeight.get(height) ?? [];
    return sortOrder === "asc" ? [...found] : [...found].reverse();
  }

  /** The network's L1 validators, newest first; only those with a balance unless inactive ones are asked for. */
  l1ValidatorList(filter: L1ValidatorFilter): L1Validator[] {
    return this.l1Validators
      .filter(
        (validator) =>
          (filter.includeInactive || validator.remainingBalance > 0) &&
          (filter.l1ValidationId === undefined ||
            validator.validationId === filter.l1ValidationId ||
            validator.validationIdHex === filter.l1ValidationId.toLowerCase()) &&
          (filter.nodeId === undefined || validator.nodeId === filter.nodeId) &&
          (filter.subnetId === undefined || validator.subnetId === filter.subnetId),
      )
      .reverse()
      .map((validator) => this.render.l1Validator(validator));
  }

  private cChainBlock(number: number): PrimaryNetworkBlock | undefined {
    const block = this.cBlocks.block(number);
    if (block === undefined) return undefined;
    const atomic = this.atomicTransactionsByBlock.get(number) ?? [];
    return {
      blockNumber: block.blockNumber,
      blockHash: block.blockHash,
      parentHash: block.parentHash,
      blockTimestamp: block.blockTimestamp,
      blockType: "CChainBlock",
      txCount: atomic.length,
      transactions: atomic.map((tx) => tx.txHash),
      blockSizeBytes: 600 + 150 * block.txCount + 300 * atomic.length,
    };
  }
}

/** An address as the routes compare it: without its chain letter, bech32 and 0x in lower case. */
export function normalizeAddress(address: string): string {
  return address.replace(/^[PXC]-/, "").toLowerCase();
}
