/**
 * The chain metrics of `GET /v2/chains/{chainId}/metrics/{metric}`, computed from the sample
 * chains: block facts for counts, gas and rates; the transaction activity for addresses,
 * contracts, gas prices and fees. A network scope (`total`, `mainnet`, `testnet`) adds its chains
 * up: counts and sums add, distinct addresses are counted once across chains, average rates add
 * (throughput of the whole network), maxima take the largest, and the average gas price is the
 * mean over every transaction of the network.
 */
import type { ChainBlocks } from "../blocks.ts";
import { blockIds, type TransactionActivity } from "./chain-activity.ts";
import { intervalStart, intervalStarts, type MetricPoint } from "./time.ts";
import type { ChainMetricName, MetricsTimeInterval } from "../../../src/upstream/types.ts";

/** Metrics read from the blocks alone; every other one needs the transaction activity. */
const BLOCK_METRICS: ReadonlySet<ChainMetricName> = new Set([
  "txCount",
  "gasUsed",
  "cumulativeTxCount",
  "avgTps",
  "avgGps",
  "maxTps",
  "maxGps",
]);

export function needsActivity(metric: ChainMetricName): boolean {
  return !BLOCK_METRICS.has(metric);
}

interface BlockBucket {
  txCount: number;
  gasUsed: number;
  avgTps: number;
  avgGps: number;
  maxTps: number;
  maxGps: number;
}

interface ActivityBucket {
  fees: bigint;
  gasPriceSum: bigint;
  gasPrices: number;
  gasPriceMax: bigint;
  contracts: number;
  participants: Set<number>;
  senders: Set<number>;
  deployers: Set<number>;
}

/** A chain as the metrics see it: its blocks, and its transaction activity when the metric needs it. */
export interface MeasuredChain {
  blocks: ChainBlocks;
  activity: TransactionActivity | undefined;
}

const emptyBlockBucket = (): BlockBucket => ({ txCount: 0, gasUsed: 0, avgTps: 0, avgGps: 0, maxTps: 0, maxGps: 0 });
const emptyActivityBucket = (): ActivityBucket => ({
  fees: 0n,
  gasPriceSum: 0n,
  gasPrices: 0,
  gasPriceMax: 0n,
  contracts: 0,
  participants: new Set(),
  senders: new Set(),
  deployers: new Set(),
});

/**
 * Per interval of one chain: counts, gas, and the rates. An average divides the interval's total
 * by the time from the last block before the interval (or, for the first interval, its own first
 * block) to its last block; a maximum is the largest block total divided by the time since the
 * block before it.
 */
function blockBuckets(blocks: ChainBlocks, interval: MetricsTimeInterval): Map<number, BlockBucket> {
  const buckets = new Map<number, BlockBucket>();
  let start = Number.NaN;
  let bucket = emptyBlockBucket();
  let since = 0;
  let last = 0;
  const close = () => {
    const seconds = last - since;
    bucket.avgTps = seconds > 0 ? bucket.txCount / seconds : 0;
    bucket.avgGps = seconds > 0 ? bucket.gasUsed / seconds : 0;
    buckets.set(start, bucket);
  };
  for (let number = 0; number < blocks.count; number++) {
    const timestamp = blocks.blockTimestamp(number);
    const txCount = blocks.blockTxCount(number);
    const gas = blocks.blockGasUsed(number);
    const blockStart = intervalStart(timestamp, interval);
    if (blockStart !== start) {
      if (number > 0) close();
      start = blockStart;
      bucket = emptyBlockBucket();
      since = number > 0 ? last : timestamp;
    }
    bucket.txCount += txCount;
    bucket.gasUsed += gas;
    const elapsed = number > 0 ? timestamp - last : 0;
    if (elapsed > 0) {
      bucket.maxTps = Math.max(bucket.maxTps, txCount / elapsed);
      bucket.maxGps = Math.max(bucket.maxGps, gas / elapsed);
    }
    last = timestamp;
  }
  if (blocks.count > 0) close();
  return buckets;
}

function activityBuckets(
  blocks: ChainBlocks,
  activity: TransactionActivity,
  interval: MetricsTimeInterval,
): Map<number, ActivityBucket> {
  const buckets = new Map<number, ActivityBucket>();
  for (let number = 0; number < blocks.count; number++) {
    const start = intervalStart(blocks.blockTimestamp(number), interval);
    let bucket = buckets.get(start);
    if (bucket === undefined) buckets.set(start, (bucket = emptyActivityBucket()));
    const price = activity.gasPriceMax[number]!;
    bucket.fees += activity.fees[number]!;
    bucket.gasPriceSum += activity.gasPriceSum[number]!;
    bucket.gasPrices += blocks.blockTxCount(number);
    if (price > bucket.gasPriceMax) bucket.gasPriceMax = price;
    bucket.contracts += activity.contracts[number]!;
    for (const id of blockIds(activity.participants, number)) bucket.participants.add(id);
    for (const id of blockIds(activity.senders, number)) bucket.senders.add(id);
    for (const id of blockIds(activity.deployers, number)) bucket.deployers.add(id);
  }
  return buckets;
}

function mergeBlockBuckets(into: BlockBucket, from: BlockBucket): void {
  into.txCount += from.txCount;
  into.gasUsed += from.gasUsed;
  into.avgTps += from.avgTps;
  into.avgGps += from.avgGps;
  into.maxTps = Math.max(into.maxTps, from.maxTps);
  into.maxGps = Math.max(into.maxGps, from.maxGps);
}

function mergeActivityBuckets(into: ActivityBucket, from: ActivityBucket): void {
  into.fees += from.fees;
  into.gasPriceSum += from.gasPriceSum;
  into.gasPrices += from.gasPrices;
  if (from.gasPriceMax > into.gasPriceMax) into.gasPriceMax = from.gasPriceMax;
  into.contracts += from.contracts;
  for (const id of from.participants) into.participants.add(id);
  for (const id of from.senders) into.senders.add(id);
  for (const id of from.deployers) into.deployers.add(id);
}

/**
 * The series of a metric over one chain or several, newest first: one point per interval from the
 * interval of the oldest block to the interval of the newest, with zero for intervals without blocks.
 */
export function chainMetricSeries(
  chains: readonly MeasuredChain[],
  metric: ChainMetricName,
  interval: MetricsTimeInterval,
): MetricPoint[] {
  const first = Math.min(...chains.map((chain) => chain.blocks.blockTimestamp(0)));
  const last = Math.max(...chains.map((chain) => chain.blocks.blockTimestamp(chain.blocks.headNumber)));
  const starts = intervalStarts(first, last, interval);
  const value: (number | bigint)[] = needsActivity(metric)
    ? activityValues(metric, mergedActivity(chains, interval, starts))
    : blockValues(metric, mergedBlocks(chains, interval, starts));
  return starts.map((timestamp, index) => ({ timestamp, value: value[index]! })).reverse();
}

function mergedBlocks(chains: readonly MeasuredChain[], interval: MetricsTimeInterval, starts: number[]): BlockBucket[] {
  const perChain = chains.map((chain) => blockBuckets(chain.blocks, interval));
  return starts.map((start) => {
    const merged = emptyBlockBucket();
    for (const buckets of perChain) {
      const bucket = buckets.get(start);
      if (bucket) mergeBlockBuckets(merged, bucket);
    }
    return merged;
  });
}

function mergedActivity(chains: readonly MeasuredChain[], interval: MetricsTimeInterval, starts: number[]): ActivityBucket[] {
  const perChain = chains.map((chain) => activityBuckets(chain.blocks, chain.activity!, interval));
  return starts.map((start) => {
    const merged = emptyActivityBucket();
    for (const buckets of perChain) {
      const bucket = buckets.get(start);
      if (bucket) mergeActivityBuckets(merged, bucket);
    }
    return merged;
  });
}

function blockValues(metric: ChainMetricName, buckets: BlockBucket[]): number[] {
  switch (metric) {
    case "cumulativeTxCount": {
      // From genesis to the end of the point's day.
      let total = 0;
      return buckets.map((bucket) => (total += bucket.txCount));
    }
    case "txCount":
    case "gasUsed":
    case "avgTps":
    case "avgGps":
    case "maxTps":
    case "maxGps":
      return buckets.map((bucket) => bucket[metric]);
    default:
      throw new Error(`${metric} is not a block metric`);
  }
}

/** Counts as numbers; the wei amounts FEES_PAID and MAX_GAS_PRICE as exact bigints. */
function activityValues(metric: ChainMetricName, buckets: ActivityBucket[]): (number | bigint)[] {
  const runningUnion = (pick: (bucket: ActivityBucket) => Set<number>) => {
    const seen = new Set<number>();
    return buckets.map((bucket) => {
      for (const id of pick(bucket)) seen.add(id);
      return seen.size;
    });
  };
  switch (metric) {
    case "activeAddresses":
      return buckets.map((bucket) => bucket.participants.size);
    case "activeSenders":
      return buckets.map((bucket) => bucket.senders.size);
    case "cumulativeAddresses":
      return runningUnion((bucket) => bucket.participants);
    case "contracts":
      return buckets.map((bucket) => bucket.contracts);
    case "cumulativeContracts": {
      // From genesis up to the point's timestamp: the point's own day is not in it yet.
      let total = 0;
      return buckets.map((bucket) => {
        const before = total;
        total += bucket.contracts;
        return before;
      });
    }
    case "deployers":
      return buckets.map((bucket) => bucket.deployers.size);
    case "cumulativeDeployers":
      return runningUnion((bucket) => bucket.deployers);
    case "avgGasPrice":
      return buckets.map((bucket) => (bucket.gasPrices > 0 ? Number(bucket.gasPriceSum) / bucket.gasPrices : 0));
    case "maxGasPrice":
      return buckets.map((bucket) => bucket.gasPriceMax);
    case "feesPaid":
      return buckets.map((bucket) => bucket.fees);
    default:
      throw new Error(`${metric} is not an activity metric`);
  }
}
