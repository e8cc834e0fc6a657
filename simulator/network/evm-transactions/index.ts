/**
 * The transactions of one chain, consistent with its blocks: each block holds `txCount` of
 * them and their gas adds up to the block's `gasUsed`. Records are derived on demand from
 * (seed, chain, block, index); what is stored is the address index (which transactions touch
 * each address, and which each account sent, for nonces), built on first use.
 */
import type { ChainBlocks, Sequence } from "../blocks.ts";
import type { ChainInfo } from "../chains.ts";
import { sha256 } from "../ids.ts";
import { chainCatalog, type ChainCatalog } from "./catalog.ts";
import { NATIVE_TRANSFER_GAS, Planner, participants, type InternalCallType, type TxPlan } from "./plans.ts";
import {
  addressTransaction,
  completeTransaction,
  gasPrice,
  logCount,
  nativeTransaction,
  type RecordContext,
  type TxPlace,
} from "./records.ts";
import type { AddressTransaction, CompleteTransaction, NativeTransaction } from "../../../src/upstream/types.ts";

export const TX_HASH_PATTERN = /^0x[0-9a-fA-F]{64}$/;
export const ADDRESS_PATTERN = /^0x[0-9a-fA-F]{40}$/;

export interface BlockRange {
  /** First block, inclusive. */
  startBlock?: number | undefined;
  /** Last block, exclusive. */
  endBlock?: number | undefined;
  sortOrder: "asc" | "desc";
}

export interface ChainTransactionsOptions {
  seed: string;
  /** The network's "now", in Unix seconds. */
  headTime: number;
  /** Blockchain ids of the other chains of the same network. */
  peers: readonly string[];
}

/**
 * The facts of a transaction the metrics read: the same as its records hold, taken from its plan
 * without building them.
 */
export interface TransactionSummary {
  from: string;
  to: string;
  gasUsed: number;
  /** Wei per unit of gas. */
  gasPrice: bigint;
  /** In log order: ERC-20, then ERC-721, then ERC-1155 transfers. */
  tokenTransfers: readonly TokenTransferSummary[];
  /** CREATE, CREATE2 and CREATE3 calls, in call order. */
  contractCreations: readonly ContractCreationSummary[];
}

export type TokenTransferSummary = { token: string; from: string; to: string } & (
  { standard: "ERC-20" | "ERC-1155"; /** Base units. */ value: string } | { standard: "ERC-721" }
);

export interface ContractCreationSummary {
  deployer: string;
  reverted: boolean;
}

const CREATE_CALLS: ReadonlySet<InternalCallType> = new Set(["CREATE", "CREATE2", "CREATE3"]);

interface BlockPlans {
  plans: TxPlan[];
  gas: number[];
  logStart: number[];
}

/**
 * Lists of transaction ordinals (position in the chain, counting from genesis) per address: the
 * generated history compressed, the blocks that came after it in plain arrays.
 */
interface AddressIndex {
  /** txStart[n] is the ordinal of block n's first transaction; txStart[indexedBlocks] is the total. */
  txStart: Float64Array;
  /** How many blocks the index covers. */
  indexedBlocks: number;
  ids: Map<string, number>;
  touched: OrdinalLists;
  sent: OrdinalLists;
}

interface OrdinalLists {
  offsets: Uint32Array;
  ordinals: Uint32Array;
  /** Ordinals after those of `ordinals`, by id, ascending. */
  later: Map<number, number[]>;
}

/** One id's ordinals, ascending: its compressed part, then its later part. */
class OrdinalList {
  readonly length: number;
  private readonly start: number;
  private readonly compressed: number;
  private readonly later: readonly number[];

  constructor(
    private readonly lists: OrdinalLists,
    id: number,
  ) {
    const inOffsets = id + 1 < lists.offsets.length;
    this.start = inOffsets ? lists.offsets[id]! : 0;
    this.compressed = inOffsets ? lists.offsets[id + 1]! - this.start : 0;
    this.later = lists.later.get(id) ?? [];
    this.length = this.compressed + this.later.length;
  }

  at(position: number): number {
    return position < this.compressed ? this.lists.ordinals[this.start + position]! : this.later[position - this.compressed]!;
  }

  /** The first position whose ordinal is >= value. */
  lowerBound(value: number): number {
    let low = 0;
    let high = this.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.at(middle) < value) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}

const PLAN_CACHE_BLOCKS = 512;

export class ChainTransactions {
  readonly catalog: ChainCatalog;
  private readonly planner: Planner;
  private readonly context: RecordContext;
  private readonly hashSalt: string;
  private index: AddressIndex | undefined;
  private readonly planCache = new Map<number, BlockPlans>();

  constructor(
    info: ChainInfo,
    private readonly blocks: ChainBlocks,
    options: ChainTransactionsOptions,
  ) {
    this.catalog = chainCatalog(options.seed, info);
    this.hashSalt = `transactions:${options.seed}:${info.chainId}`;
    this.planner = new Planner(sha256(this.hashSalt).readUInt32BE(0), {
      catalog: this.catalog,
      interchain: info.enabledFeatures?.includes("teleporter") ?? false,
      peerCount: options.peers.length,
    });
    this.context = { info, catalog: this.catalog, peers: options.peers, headTime: options.headTime };
  }

  /** How many transactions the chain holds. */
  get count(): number {
    const { txStart, indexedBlocks } = this.addressIndex();
    return txStart[indexedBlocks]!;
  }

  /** The transactions of a block in block order, or undefined for a block the chain does not have. */
  blockTransactions(number: number): Sequence<NativeTransaction> | undefined {
    const block = this.blocks.block(number);
    if (block === undefined) return undefined;
    return {
      length: block.txCount,
      at: (index) => {
        if (!Number.isInteger(index) || index < 0 || index >= block.txCount) return undefined;
        const { plan, place } = this.placed(number, index);
        return nativeTransaction(plan, place, this.context);
      },
    };
  }

  /** The summaries of a block's transactions in block order, or undefined for a block the chain does not have. */
  blockSummaries(number: number): TransactionSummary[] | undefined {
    const { blocks } = this;
    if (!Number.isInteger(number) || number < 0 || number >= blocks.count) return undefined;
    // Not kept in the plan cache: a scan of the whole chain would only push out the blocks being served.
    const { plans, gas } =
      this.planCache.get(number) ?? this.planBlock(number, blocks.blockTxCount(number), blocks.blockGasUsed(number));
    const baseFee = BigInt(blocks.blockBaseFee(number));
    return plans.map((plan, index) => ({
      from: plan.from,
      to: plan.to,
      gasUsed: gas[index]!,
      gasPrice: gasPrice(baseFee, plan),
      tokenTransfers: tokenTransfers(plan),
      contractCreations: contractCreations(plan),
    }));
  }

  /** The complete view of a transaction by hash (any letter case); undefined when the chain has none. */
  transaction(hash: string): CompleteTransaction | undefined {
    const found = this.locate(hash);
    if (found === undefined) return undefined;
    const { plan, place } = this.placed(found.block, found.index);
    return completeTransaction(plan, place, this.context);
  }

  /**
   * The transactions that touch an address within a block range, oldest first for `asc` and
   * newest first for `desc`, each with only the transfers and calls the address sends or receives.
   */
  addressTransactions(address: string, range: BlockRange): Sequence<AddressTransaction> & { growsAt: "front" | "back" } {
    const wanted = address.toLowerCase();
    const index = this.addressIndex();
    const ascending = range.sortOrder === "asc";
    const growsAt = ascending ? "back" : "front";
    const id = index.ids.get(wanted);
    if (id === undefined) return { growsAt, length: 0, at: () => undefined };
    const blockCount = index.indexedBlocks;
    const first = Math.min(range.startBlock ?? 0, blockCount);
    const end = Math.min(range.endBlock ?? blockCount, blockCount);
    const list = new OrdinalList(index.touched, id);
    const from = first >= end ? 0 : list.lowerBound(index.txStart[first]!);
    const to = first >= end ? 0 : list.lowerBound(index.txStart[end]!);
    return {
      growsAt,
      length: to - from,
      at: (position) => {
        if (!Number.isInteger(position) || position < 0 || position >= to - from) return undefined;
        const ordinal = list.at(ascending ? from + position : to - 1 - position);
        const { block, index: blockIndex } = this.locateOrdinal(ordinal);
        const { plan, place } = this.placed(block, blockIndex);
        return addressTransaction(plan, place, this.context, wanted);
      },
    };
  }

  /** The hash of the transaction at (block, index): random-looking, yet it tells where the transaction is. */
  txHash(block: number, index: number): string {
    const place = Buffer.alloc(6);
    place.writeUInt32BE(block, 0);
    place.writeUInt16BE(index, 4);
    const prefix = sha256(this.hashSalt, place).subarray(0, 24);
    const suffix = Buffer.alloc(8);
    suffix.writeUIntBE(block * 0x10000 + index, 2, 6);
    const mask = sha256(prefix);
    for (let i = 0; i < 8; i++) suffix[i]! ^= mask[i]!;
    return `0x${prefix.toString("hex")}${suffix.toString("hex")}`;
  }

  private locate(hash: string): { block: number; index: number } | undefined {
    if (!TX_HASH_PATTERN.test(hash)) return undefined;
    const bytes = Buffer.from(hash.slice(2), "hex");
    const mask = sha256(bytes.subarray(0, 24));
    for (let i = 0; i < 8; i++) bytes[24 + i]! ^= mask[i]!;
    if (bytes[24] !== 0 || bytes[25] !== 0) return undefined;
    const where = bytes.readUIntBE(26, 6);
    const block = Math.floor(where / 0x10000);
    const index = where % 0x10000;
    const found = this.blocks.block(block);
    if (found === undefined || index >= found.txCount) return undefined;
    return this.txHash(block, index) === hash.toLowerCase() ? { block, index } : undefined;
  }

  private placed(number: number, index: number): { plan: TxPlan; place: TxPlace } {
    const block = this.blocks.block(number)!;
    const plans = this.blockPlans(number);
    const plan = plans.plans[index]!;
    const addressIndex = this.addressIndex();
    const ordinal = addressIndex.txStart[number]! + index;
    const nonce = new OrdinalList(addressIndex.sent, addressIndex.ids.get(plan.from)!).lowerBound(ordinal);
    return {
      plan,
      place: {
        block,
        index,
        hash: this.txHash(number, index),
        nonce,
        gasUsed: plans.gas[index]!,
        logStart: plans.logStart[index]!,
      },
    };
  }

  /** A block's plans, kept for the blocks being served. */
  private blockPlans(number: number): BlockPlans {
    const cached = this.planCache.get(number);
    if (cached) return cached;
    const block = this.blocks.block(number)!;
    const result = this.planBlock(number, block.txCount, Number(block.gasUsed));
    if (this.planCache.size >= PLAN_CACHE_BLOCKS) this.planCache.delete(this.planCache.keys().next().value!);
    this.planCache.set(number, result);
    return result;
  }

  /** A block's plans, with each transaction's gas (adding up to the block's) and first log index. */
  private planBlock(number: number, txCount: number, gasUsed: number): BlockPlans {
    const plans = this.planner.block(number, txCount, gasUsed);
    const spare = gasUsed - NATIVE_TRANSFER_GAS * plans.length;
    const totalWeight = plans.reduce((total, plan) => total + plan.gasWeight, 0);
    const lastWeighted = plans.findLastIndex((plan) => plan.gasWeight > 0);
    const gas: number[] = [];
    const logStart: number[] = [];
    let shared = 0;
    let logs = 0;
    plans.forEach((plan, index) => {
      let extra = totalWeight > 0 ? Math.floor((spare * plan.gasWeight) / totalWeight) : 0;
      if (index === lastWeighted) extra = spare - shared;
      shared += extra;
      gas.push(NATIVE_TRANSFER_GAS + extra);
      logStart.push(logs);
      logs += logCount(plan);
    });
    return { plans, gas, logStart };
  }

  private locateOrdinal(ordinal: number): { block: number; index: number } {
    const { txStart, indexedBlocks } = this.addressIndex();
    // The last block whose first ordinal is <= ordinal (empty blocks share their start).
    let low = 0;
    let high = indexedBlocks;
    while (low < high) {
      const middle = (low + high + 1) >>> 1;
      if (txStart[middle]! <= ordinal) low = middle;
      else high = middle - 1;
    }
    return { block: low, index: ordinal - txStart[low]! };
  }

  /** The address index, brought up to the chain's newest block. */
  private addressIndex(): AddressIndex {
    this.index ??= this.buildIndex();
    if (this.index.indexedBlocks < this.blocks.count) this.indexLaterBlocks(this.index);
    return this.index;
  }

  private buildIndex(): AddressIndex {
    const count = this.blocks.count;
    const txStart = new Float64Array(count + 1);
    const ids = new Map<string, number>();
    for (const address of this.catalog.allAddresses()) ids.set(address, ids.size);
    const touched = new PairList();
    const sent = new PairList();
    for (let number = 0; number < count; number++) {
      txStart[number + 1] = txStart[number]! + this.blocks.blockTxCount(number);
      this.indexBlock(
        number,
        txStart[number]!,
        ids,
        (id, ordinal) => touched.push(id, ordinal),
        (id, ordinal) => sent.push(id, ordinal),
      );
    }
    if (txStart[count]! > 0xffff_ffff) throw new RangeError(`chain ${this.context.info.chainId}: too many transactions to index`);
    return { txStart, indexedBlocks: count, ids, touched: touched.group(ids.size), sent: sent.group(ids.size) };
  }

  /** Adds the blocks that came after the index was built, in order, to the later lists. */
  private indexLaterBlocks(index: AddressIndex): void {
    const count = this.blocks.count;
    if (index.txStart.length < count + 1) {
      const grown = new Float64Array(Math.max(count + 1, index.txStart.length * 2));
      grown.set(index.txStart);
      index.txStart = grown;
    }
    const append = (lists: OrdinalLists) => (id: number, ordinal: number) => {
      const list = lists.later.get(id);
      if (list === undefined) lists.later.set(id, [ordinal]);
      else list.push(ordinal);
    };
    for (let number = index.indexedBlocks; number < count; number++) {
      index.txStart[number + 1] = index.txStart[number]! + this.blocks.blockTxCount(number);
      this.indexBlock(number, index.txStart[number]!, index.ids, append(index.touched), append(index.sent));
    }
    index.indexedBlocks = count;
  }

  private indexBlock(
    number: number,
    firstOrdinal: number,
    ids: Map<string, number>,
    touch: (id: number, ordinal: number) => void,
    send: (id: number, ordinal: number) => void,
  ): void {
    const txCount = this.blocks.blockTxCount(number);
    if (txCount === 0) return;
    const plans = this.planner.block(number, txCount, this.blocks.blockGasUsed(number));
    plans.forEach((plan, index) => {
      const ordinal = firstOrdinal + index;
      for (const address of participants(plan)) {
        let id = ids.get(address);
        if (id === undefined) {
          id = ids.size;
          ids.set(address, id);
        }
        touch(id, ordinal);
      }
      send(ids.get(plan.from)!, ordinal);
    });
  }
}

const NO_TRANSFERS: readonly TokenTransferSummary[] = [];
const NO_CREATIONS: readonly ContractCreationSummary[] = [];

function tokenTransfers(plan: TxPlan): readonly TokenTransferSummary[] {
  if (logCount(plan) === 0) return NO_TRANSFERS;
  const found: TokenTransferSummary[] = [];
  for (const { token, from, to, value } of plan.erc20) found.push({ standard: "ERC-20", token: token.address, from, to, value });
  for (const { collection, from, to } of plan.erc721) found.push({ standard: "ERC-721", token: collection.address, from, to });
  for (const { collection, from, to, value } of plan.erc1155)
    found.push({ standard: "ERC-1155", token: collection.address, from, to, value });
  return found;
}

function contractCreations(plan: TxPlan): readonly ContractCreationSummary[] {
  let found: ContractCreationSummary[] | undefined;
  for (const call of plan.internal) {
    if (CREATE_CALLS.has(call.type)) (found ??= []).push({ deployer: call.from, reverted: call.reverted });
  }
  return found ?? NO_CREATIONS;
}

/** (id, ordinal) pairs in typed arrays that grow; grouped by id into ascending ordinal lists. */
class PairList {
  private ids = new Uint32Array(1 << 16);
  private ordinals = new Uint32Array(1 << 16);
  private size = 0;

  push(id: number, ordinal: number): void {
    if (this.size === this.ids.length) {
      const ids = new Uint32Array(this.size * 2);
      ids.set(this.ids);
      this.ids = ids;
      const ordinals = new Uint32Array(this.size * 2);
      ordinals.set(this.ordinals);
      this.ordinals = ordinals;
    }
    this.ids[this.size] = id;
    this.ordinals[this.size] = ordinal;
    this.size++;
  }

  /** Pairs were pushed in ordinal order, so each id's list comes out ascending. */
  group(idCount: number): OrdinalLists {
    const offsets = new Uint32Array(idCount + 1);
    for (let i = 0; i < this.size; i++) offsets[this.ids[i]! + 1]!++;
    for (let id = 0; id < idCount; id++) offsets[id + 1]! += offsets[id]!;
    const next = offsets.slice(0, idCount);
    const ordinals = new Uint32Array(this.size);
    for (let i = 0; i < this.size; i++) ordinals[next[this.ids[i]!]!++] = this.ordinals[i]!;
    return { offsets, ordinals, later: new Map() };
  }
}
