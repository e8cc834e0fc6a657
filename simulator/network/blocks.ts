import { createHash } from "node:crypto";
import type { BlockProfile } from "./chains.ts";
import { createRandom, type Random } from "./random.ts";
import type { EvmBlock } from "../../src/upstream/types.ts";

/** Random access to an ordered list; arrays satisfy it, and so do the lazily materialized block views. */
export interface Sequence<T> {
  readonly length: number;
  at(index: number): T | undefined;
}

const HASH_BYTES = 32;
export const ZERO_HASH = `0x${"0".repeat(HASH_BYTES * 2)}`;
export const BLOCK_HASH_PATTERN = /^0x[0-9a-fA-F]{64}$/;

export interface BlockGenerationOptions {
  seed: string;
  count: number;
  /** Time of the network's head in Unix milliseconds; every chain's last block is at or before it. */
  headTimeMs: number;
  /** Mean time between blocks; each chain keeps the jitter of its profile, scaled to this mean. */
  meanIntervalMs: number;
}

/** One typed array per block field, indexed by block number; longer than the chain when it has room to grow. */
interface BlockColumns {
  timestampMs: Float64Array;
  txCount: Uint16Array;
  cumulativeTransactions: Float64Array;
  gasUsed: Uint32Array;
  baseFee: Float64Array;
  blockGasCost: Uint32Array;
  minDelayExcess: Uint32Array;
  /** 32 bytes per block. */
  hashes: Buffer;
}

type NumericColumn = Exclude<keyof BlockColumns, "hashes">;
const NUMERIC_COLUMNS: readonly NumericColumn[] = [
  "timestampMs",
  "txCount",
  "cumulativeTransactions",
  "gasUsed",
  "baseFee",
  "blockGasCost",
  "minDelayExcess",
];

/** A newest-first or oldest-first view whose length grows as the chain does; see `paginate`. */
export interface GrowingSequence<T> extends Sequence<T> {
  /** Where new items appear: at the front of a newest-first list, at the back of an oldest-first one. */
  readonly growsAt: "front" | "back";
}

/** The block generator's draws for one block; shared by the history and the blocks that come after it. */
interface DrawnBlock {
  intervalMs: number;
  txCount: number;
  gasUsed: number;
  minDelayExcessChange: number;
}

function drawBlock(random: Random, profile: BlockProfile, interval: { min: number; max: number }): DrawnBlock {
  const intervalMs = random.int(interval.min, interval.max);
  const txCount = random.chance(profile.emptyBlockRate) ? 0 : 1 + Math.floor(random.next() ** 2 * profile.maxTxPerBlock);
  let gas = 0;
  for (let tx = 0; tx < txCount; tx++) gas += random.int(profile.gasPerTx.min, profile.gasPerTx.max);
  return { intervalMs, txCount, gasUsed: Math.min(gas, profile.gasLimit), minDelayExcessChange: random.int(-2000, 2000) };
}

/**
 * The blocks of one chain, stored column by column in typed arrays so that
 * millions of blocks stay cheap; records are built only when served.
 *
 * The generated history ends at or before the head time. A chain then grows past it (`extendTo`)
 * at the profile's live rhythm, from its own random stream, one block after the other: block n is
 * the same whenever it is made, so the chain at a time depends only on the seed and that time.
 */
export class ChainBlocks {
  /** How many blocks the generated history holds; the blocks from this number on came after the head time. */
  readonly historyCount: number;
  /** Blocks from the head down to genesis, the order of the latest-blocks routes. */
  readonly latestFirst: GrowingSequence<EvmBlock>;
  private readonly gasLimit: string;
  /** Block numbers of the history ordered by the first four bytes of their hash, for lookups by hash. */
  private readonly numbersByHash: Uint32Array;
  /** Blocks after the history, by hash (lower-case hex with 0x). */
  private readonly laterNumbersByHash = new Map<string, number>();
  private length: number;
  private liveRandom: Random | undefined;
  /** The next block after the head, drawn but not yet due. */
  private pending: (DrawnBlock & { timestampMs: number }) | undefined;

  private constructor(
    readonly chainId: string,
    private readonly profile: BlockProfile,
    private columns: BlockColumns,
    private readonly live: { seed: string; headTimeMs: number; targetGas: number },
  ) {
    this.length = columns.timestampMs.length;
    this.historyCount = this.length;
    this.gasLimit = String(profile.gasLimit);
    this.numbersByHash = sortByHashPrefix(columns.hashes, this.length);
    const length = () => this.length;
    this.latestFirst = {
      growsAt: "front",
      get length() {
        return length();
      },
      at: (index) => this.block(this.length - 1 - index),
    };
  }

  static generate(chainId: string, profile: BlockProfile, options: BlockGenerationOptions): ChainBlocks {
    const { count } = options;
    const random = createRandom(options.seed, `blocks:${chainId}`);
    const timestampMs = new Float64Array(count);
    const txCount = new Uint16Array(count);
    const cumulativeTransactions = new Float64Array(count);
    const gasUsed = new Uint32Array(count);
    const baseFee = new Float64Array(count);
    const blockGasCost = new Uint32Array(count);
    const minDelayExcess = new Uint32Array(count);
    const targetGas = targetGasOf(profile);
    const stretch = options.meanIntervalMs / ((profile.intervalMs.min + profile.intervalMs.max) / 2);

    baseFee[0] = profile.baseFeeWei.initial;
    minDelayExcess[0] = profile.minDelayExcess;
    for (let n = 1; n < count; n++) {
      const drawn = drawBlock(random, profile, profile.intervalMs);
      timestampMs[n] = timestampMs[n - 1]! + Math.round(drawn.intervalMs * stretch);
      txCount[n] = drawn.txCount;
      gasUsed[n] = drawn.gasUsed;
      cumulativeTransactions[n] = cumulativeTransactions[n - 1]! + drawn.txCount;
      baseFee[n] = nextBaseFee(profile, baseFee[n - 1]!, gasUsed[n - 1]!, targetGas);
      // On the profile's own time scale, so that spreading blocks out does not zero the cost.
      blockGasCost[n] = profile.blockGasCostPerMs * Math.max(0, profile.targetIntervalMs - drawn.intervalMs);
      minDelayExcess[n] = Math.max(0, minDelayExcess[n - 1]! + drawn.minDelayExcessChange);
    }

    const headOffsetMs = Math.round(random.int(0, profile.intervalMs.max) * stretch);
    const shiftMs = options.headTimeMs - headOffsetMs - timestampMs[count - 1]!;
    if (shiftMs < 0) {
      throw new RangeError(`chain ${chainId}: ${count} blocks do not fit between 1970 and the head time`);
    }
    for (let n = 0; n < count; n++) timestampMs[n]! += shiftMs;

    const columns: BlockColumns = {
      timestampMs,
      txCount,
      cumulativeTransactions,
      gasUsed,
      baseFee,
      blockGasCost,
      minDelayExcess,
      hashes: Buffer.alloc(count * HASH_BYTES),
    };
    for (let n = 0; n < count; n++) hashBlock(chainId, columns, n);
    return new ChainBlocks(chainId, profile, columns, { seed: options.seed, headTimeMs: options.headTimeMs, targetGas });
  }

  /** How many blocks the chain holds now. */
  get count(): number {
    return this.length;
  }

  get headNumber(): number {
    return this.length - 1;
  }

  /**
   * Adds the blocks due by a time (Unix milliseconds), each at the profile's live interval after
   * the one before; the first comes one interval after the head time. Returns how many were added.
   */
  extendTo(timeMs: number): number {
    const before = this.length;
    for (;;) {
      const next = this.pendingBlock();
      if (next.timestampMs > timeMs) break;
      this.pending = undefined;
      this.append(next);
    }
    return this.length - before;
  }

  block(number: number): EvmBlock | undefined {
    if (!Number.isInteger(number) || number < 0 || number >= this.length) return undefined;
    const { columns } = this;
    const timestampMs = columns.timestampMs[number]!;
    const gasUsed = columns.gasUsed[number]!;
    const baseFee = columns.baseFee[number]!;
    return {
      chainId: this.chainId,
      blockNumber: String(number),
      blockTimestamp: Math.floor(timestampMs / 1000),
      blockTimestampMilliseconds: timestampMs,
      blockMinDelayExcess: columns.minDelayExcess[number]!,
      blockHash: this.hashHex(number),
      txCount: columns.txCount[number]!,
      baseFee: String(baseFee),
      gasUsed: String(gasUsed),
      gasLimit: this.gasLimit,
      gasCost: String(columns.blockGasCost[number]!),
      parentHash: number === 0 ? ZERO_HASH : this.hashHex(number - 1),
      feesSpent: String(BigInt(gasUsed) * BigInt(baseFee)),
      cumulativeTransactions: String(columns.cumulativeTransactions[number]!),
    };
  }

  /** Block timestamp in Unix seconds; the key of the all-chains ordering. */
  blockTimestamp(number: number): number {
    return Math.floor(this.columns.timestampMs[number]! / 1000);
  }

  // Single fields, for scans of the whole chain that would otherwise build every block.

  blockTxCount(number: number): number {
    return this.columns.txCount[number]!;
  }

  blockGasUsed(number: number): number {
    return this.columns.gasUsed[number]!;
  }

  /** In wei. */
  blockBaseFee(number: number): number {
    return this.columns.baseFee[number]!;
  }

  /** The number of the block with this 0x-prefixed hash (any letter case), if the chain has it. */
  numberOfHash(hash: string): number | undefined {
    if (!BLOCK_HASH_PATTERN.test(hash)) return undefined;
    const later = this.laterNumbersByHash.get(hash.toLowerCase());
    if (later !== undefined) return later;
    const { hashes } = this.columns;
    const wanted = Buffer.from(hash.slice(2), "hex");
    const prefix = wanted.readUInt32BE(0);
    const indexed = this.historyCount;
    let low = 0;
    let high = indexed;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (hashes.readUInt32BE(this.numbersByHash[middle]! * HASH_BYTES) < prefix) low = middle + 1;
      else high = middle;
    }
    for (let i = low; i < indexed; i++) {
      const number = this.numbersByHash[i]!;
      const offset = number * HASH_BYTES;
      if (hashes.readUInt32BE(offset) !== prefix) break;
      if (hashes.subarray(offset, offset + HASH_BYTES).equals(wanted)) return number;
    }
    return undefined;
  }

  private hashHex(number: number): string {
    return `0x${this.columns.hashes.toString("hex", number * HASH_BYTES, (number + 1) * HASH_BYTES)}`;
  }

  private pendingBlock(): DrawnBlock & { timestampMs: number } {
    if (this.pending === undefined) {
      this.liveRandom ??= createRandom(this.live.seed, `live-blocks:${this.chainId}`);
      const drawn = drawBlock(this.liveRandom, this.profile, this.profile.liveIntervalMs);
      const after = this.length > this.historyCount ? this.columns.timestampMs[this.length - 1]! : this.live.headTimeMs;
      this.pending = { ...drawn, timestampMs: after + drawn.intervalMs };
    }
    return this.pending;
  }

  private append(drawn: DrawnBlock & { timestampMs: number }): void {
    const n = this.length;
    if (n === this.columns.timestampMs.length) this.grow();
    const { columns, profile } = this;
    columns.timestampMs[n] = drawn.timestampMs;
    columns.txCount[n] = drawn.txCount;
    columns.gasUsed[n] = drawn.gasUsed;
    columns.cumulativeTransactions[n] = columns.cumulativeTransactions[n - 1]! + drawn.txCount;
    columns.baseFee[n] = nextBaseFee(profile, columns.baseFee[n - 1]!, columns.gasUsed[n - 1]!, this.live.targetGas);
    columns.blockGasCost[n] = profile.blockGasCostPerMs * Math.max(0, profile.targetIntervalMs - drawn.intervalMs);
    columns.minDelayExcess[n] = Math.max(0, columns.minDelayExcess[n - 1]! + drawn.minDelayExcessChange);
    hashBlock(this.chainId, columns, n);
    this.length = n + 1;
    this.laterNumbersByHash.set(this.hashHex(n), n);
  }

  /** Doubles the room of every column; earlier columns stay as they were for whoever still reads them. */
  private grow(): void {
    const room = Math.max(1024, this.columns.timestampMs.length * 2);
    const grown = { hashes: Buffer.alloc(room * HASH_BYTES) } as BlockColumns;
    this.columns.hashes.copy(grown.hashes);
    for (const name of NUMERIC_COLUMNS) {
      const column = this.columns[name];
      const larger = new (column.constructor as new (length: number) => typeof column)(room);
      larger.set(column as never);
      (grown as unknown as Record<NumericColumn, typeof column>)[name] = larger;
    }
    this.columns = grown;
  }
}

/** The expected gas of a block: the base fee drifts up above it and down below it. */
function targetGasOf(profile: BlockProfile): number {
  const meanGasPerTx = (profile.gasPerTx.min + profile.gasPerTx.max) / 2;
  return (1 - profile.emptyBlockRate) * (profile.maxTxPerBlock / 3 + 0.5) * meanGasPerTx;
}

function nextBaseFee(profile: BlockProfile, parentFee: number, parentGas: number, targetGas: number): number {
  const adjusted = Math.round(parentFee * (1 + (parentGas - targetGas) / targetGas / 8));
  return Math.min(profile.baseFeeWei.max, Math.max(profile.baseFeeWei.min, adjusted));
}

/**
 * Each block's hash is the sha256 of its chain id and a header holding its
 * number, timestamp, transaction count, gas used, base fee and parent hash,
 * so hashes chain up and change with any of those facts (and so with the seed).
 */
function hashBlock(chainId: string, columns: BlockColumns, n: number): void {
  const header = Buffer.alloc(8 + 8 + 2 + 4 + 8 + HASH_BYTES);
  header.writeUInt32BE(n, 4);
  header.writeDoubleBE(columns.timestampMs[n]!, 8);
  header.writeUInt16BE(columns.txCount[n]!, 16);
  header.writeUInt32BE(columns.gasUsed[n]!, 18);
  header.writeDoubleBE(columns.baseFee[n]!, 22);
  if (n > 0) columns.hashes.copy(header, 30, (n - 1) * HASH_BYTES, n * HASH_BYTES);
  createHash("sha256")
    .update(chainId)
    .update(header)
    .digest()
    .copy(columns.hashes, n * HASH_BYTES);
}

function sortByHashPrefix(hashes: Buffer, count: number): Uint32Array {
  const prefixes = new Uint32Array(count);
  for (let n = 0; n < count; n++) prefixes[n] = hashes.readUInt32BE(n * HASH_BYTES);
  const numbers = new Uint32Array(count);
  for (let n = 0; n < count; n++) numbers[n] = n;
  return numbers.sort((a, b) => prefixes[a]! - prefixes[b]!);
}
