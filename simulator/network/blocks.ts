import { createHash } from "node:crypto";
import type { components } from "../../src/upstream/contract/data-api.ts";
import type { BlockProfile } from "./chains.ts";
import { createRandom } from "./random.ts";

export type EvmBlock = components["schemas"]["EvmBlock"];

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

/** One typed array per block field, indexed by block number. */
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

/**
 * The blocks of one chain, stored column by column in typed arrays so that
 * millions of blocks stay cheap; records are built only when served.
 */
export class ChainBlocks {
  readonly count: number;
  /** Blocks from the head down to genesis, the order of the latest-blocks routes. */
  readonly latestFirst: Sequence<EvmBlock>;
  private readonly gasLimit: string;
  /** Block numbers ordered by the first four bytes of their hash, for lookups by hash. */
  private readonly numbersByHash: Uint32Array;

  private constructor(
    readonly chainId: string,
    profile: BlockProfile,
    private readonly columns: BlockColumns,
  ) {
    this.count = columns.timestampMs.length;
    this.gasLimit = String(profile.gasLimit);
    this.numbersByHash = sortByHashPrefix(columns.hashes, this.count);
    this.latestFirst = { length: this.count, at: (index) => this.block(this.count - 1 - index) };
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
    const meanGasPerTx = (profile.gasPerTx.min + profile.gasPerTx.max) / 2;
    // The expected gas of a block: the base fee drifts up above it and down below it.
    const targetGas = (1 - profile.emptyBlockRate) * (profile.maxTxPerBlock / 3 + 0.5) * meanGasPerTx;
    const stretch = options.meanIntervalMs / ((profile.intervalMs.min + profile.intervalMs.max) / 2);

    baseFee[0] = profile.baseFeeWei.initial;
    minDelayExcess[0] = profile.minDelayExcess;
    for (let n = 1; n < count; n++) {
      const intervalMs = random.int(profile.intervalMs.min, profile.intervalMs.max);
      timestampMs[n] = timestampMs[n - 1]! + Math.round(intervalMs * stretch);

      const transactions = random.chance(profile.emptyBlockRate)
        ? 0
        : 1 + Math.floor(random.next() ** 2 * profile.maxTxPerBlock);
      let gas = 0;
      for (let tx = 0; tx < transactions; tx++) gas += random.int(profile.gasPerTx.min, profile.gasPerTx.max);
      txCount[n] = transactions;
      gasUsed[n] = Math.min(gas, profile.gasLimit);
      cumulativeTransactions[n] = cumulativeTransactions[n - 1]! + transactions;

      const parentFee = baseFee[n - 1]!;
      const adjusted = Math.round(parentFee * (1 + (gasUsed[n - 1]! - targetGas) / targetGas / 8));
      baseFee[n] = Math.min(profile.baseFeeWei.max, Math.max(profile.baseFeeWei.min, adjusted));
      // On the profile's own time scale, so that spreading blocks out does not zero the cost.
      blockGasCost[n] = profile.blockGasCostPerMs * Math.max(0, profile.targetIntervalMs - intervalMs);
      minDelayExcess[n] = Math.max(0, minDelayExcess[n - 1]! + random.int(-2000, 2000));
    }

    const headOffsetMs = Math.round(random.int(0, profile.intervalMs.max) * stretch);
    const shiftMs = options.headTimeMs - headOffsetMs - timestampMs[count - 1]!;
    if (shiftMs < 0) {
      throw new RangeError(`chain ${chainId}: ${count} blocks do not fit between 1970 and the head time`);
    }
    for (let n = 0; n < count; n++) timestampMs[n]! += shiftMs;

    const hashes = hashBlocks(chainId, { timestampMs, txCount, gasUsed, baseFee });
    return new ChainBlocks(chainId, profile, {
      timestampMs, txCount, cumulativeTransactions, gasUsed, baseFee, blockGasCost, minDelayExcess, hashes,
    });
  }

  get headNumber(): number {
    return this.count - 1;
  }

  block(number: number): EvmBlock | undefined {
    if (!Number.isInteger(number) || number < 0 || number >= this.count) return undefined;
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
    const { hashes } = this.columns;
    const wanted = Buffer.from(hash.slice(2), "hex");
    const prefix = wanted.readUInt32BE(0);
    let low = 0;
    let high = this.count;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (hashes.readUInt32BE(this.numbersByHash[middle]! * HASH_BYTES) < prefix) low = middle + 1;
      else high = middle;
    }
    for (let i = low; i < this.count; i++) {
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
}

/**
 * Each block's hash is the sha256 of its chain id and a header holding its
 * number, timestamp, transaction count, gas used, base fee and parent hash,
 * so hashes chain up and change with any of those facts (and so with the seed).
 */
function hashBlocks(
  chainId: string,
  columns: Pick<BlockColumns, "timestampMs" | "txCount" | "gasUsed" | "baseFee">,
): Buffer {
  const count = columns.timestampMs.length;
  const hashes = Buffer.alloc(count * HASH_BYTES);
  const header = Buffer.alloc(8 + 8 + 2 + 4 + 8 + HASH_BYTES);
  for (let n = 0; n < count; n++) {
    header.writeUInt32BE(n, 4);
    header.writeDoubleBE(columns.timestampMs[n]!, 8);
    header.writeUInt16BE(columns.txCount[n]!, 16);
    header.writeUInt32BE(columns.gasUsed[n]!, 18);
    header.writeDoubleBE(columns.baseFee[n]!, 22);
    if (n > 0) hashes.copy(header, 30, (n - 1) * HASH_BYTES, n * HASH_BYTES);
    createHash("sha256").update(chainId).update(header).digest().copy(hashes, n * HASH_BYTES);
  }
  return hashes;
}

function sortByHashPrefix(hashes: Buffer, count: number): Uint32Array {
  const prefixes = new Uint32Array(count);
  for (let n = 0; n < count; n++) prefixes[n] = hashes.readUInt32BE(n * HASH_BYTES);
  const numbers = new Uint32Array(count);
  for (let n = 0; n < count; n++) numbers[n] = n;
  return numbers.sort((a, b) => prefixes[a]! - prefixes[b]!);
}
