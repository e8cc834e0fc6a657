/**
 * Daily staking and L1 validator fee metrics, computed from a network's P-Chain history: staking
 * transactions (validators and delegators of the primary network, permissioned subnet
 * validators) and the L1 validator changes that P-Chain transactions record.
 */
import type { PrimaryNetwork } from "../primary-network/index.ts";
import type { PTransaction } from "../primary-network/model.ts";
import { DAY, intervalStarts, type MetricPoint } from "./time.ts";
import type { StakingMetricName, SubnetMetricName, ValidatorFeeMetricName } from "../../../src/upstream/types.ts";

/** A time span during which a validator or delegator counts, with its weight (nAVAX staked, or the L1 weight). */
interface Stake {
  /** The same key for the spans of one validator (an L1 validator changes weight in place). */
  key: string;
  subnetId: string;
  delegation: boolean;
  start: number;
  end: number;
  weight: number;
}

/** An L1 validator while it has a balance, and so pays its fee. */
interface PayingSpan {
  validationId: string;
  subnetId: string;
  start: number;
  end: number;
  weight: number;
}

export class ValidatorHistory {
  /** The days from the P-Chain's first block to its latest, oldest first. */
  readonly days: number[];
  private readonly stakes: Stake[];
  private readonly paying: PayingSpan[];
  /** nAVAX an active L1 validator pays per second. */
  private readonly feePerSecond: number;

  constructor(primary: PrimaryNetwork) {
    const genesis = primary.block("P", "0")!;
    const latest = primary.block("P", String(primary.pChainHeight))!;
    this.days = intervalStarts(genesis.blockTimestamp, latest.blockTimestamp, "day");
    const transactions = primary.transactions("P", {
      addresses: undefined,
      txTypes: undefined,
      startTimestamp: undefined,
      endTimestamp: undefined,
      l1ValidationId: undefined,
      sortOrder: "asc",
    }) as PTransaction[];
    // Fees are counted up to the latest block, as far as the P-Chain has accrued them.
    this.paying = payingSpans(transactions, latest.blockTimestamp);
    this.stakes = [
      ...stakingSpans(transactions),
      ...this.paying.map((span) => ({ ...span, key: span.validationId, delegation: false })),
    ];
    this.feePerSecond = feePerValidatorSecond(primary);
  }

  /**
   * Validators or delegators of a subnet, or of every subnet when `subnetId` is undefined, that
   * count at any time of each day, and their weight. Over every subnet, a node counts once per
   * subnet it validates (its stakes there have keys of their own), and the weights add up as they are.
   */
  staking(metric: StakingMetricName, subnetId: string | undefined): MetricPoint[] {
    const delegation = metric === "delegatorCount" || metric === "delegatorWeight";
    const stakes = this.stakes.filter(
      (stake) => (subnetId === undefined || stake.subnetId === subnetId) && stake.delegation === delegation,
    );
    const weighed = metric === "delegatorWeight" || metric === "validatorWeight";
    return this.daily((day) => {
      // The latest span of each validator within the day.
      const current = new Map<string, Stake>();
      for (const stake of stakes) {
        if (stake.start < day + DAY && stake.end > day) current.set(stake.key, stake);
      }
      return weighed ? [...current.values()].reduce((total, stake) => total + stake.weight, 0) : current.size;
    });
  }

  /** The L1 validator fees of one subnet, or of every subnet when `subnetId` is undefined. */
  fees(metric: SubnetMetricName | ValidatorFeeMetricName, subnetId: string | undefined): MetricPoint[] {
    const spans = this.paying.filter((span) => subnetId === undefined || span.subnetId === subnetId);
    if (spans.length === 0) return [];
    const paidOn = (day: number) =>
      spans.reduce((total, span) => total + Math.max(0, Math.min(span.end, day + DAY) - Math.max(span.start, day)), 0) *
      this.feePerSecond;
    switch (metric) {
      case "perSubnetDailyFeesPaid":
      case "totalValidatorFeesDaily":
        return this.daily(paidOn);
      case "perSubnetCumulativeFeesPaid":
      case "totalCumulativeFeesDaily": {
        let total = 0;
        return this.daily((day) => (total += paidOn(day)));
      }
      case "perSubnetPayingValidators":
      case "totalPayingValidatorsDaily":
        return this.daily(
          (day) =>
            new Set(spans.filter((span) => span.start < day + DAY && span.end > day).map((span) => span.validationId)).size,
        );
    }
  }

  /** One point per day, newest first; `value` is called oldest day first. */
  private daily(value: (day: number) => number): MetricPoint[] {
    return this.days.map((day) => ({ timestamp: day, value: value(day) })).reverse();
  }
}

function stakingSpans(transactions: readonly PTransaction[]): Stake[] {
  const stakes: Stake[] = [];
  const subnetValidators = new Map<string, Stake>();
  for (const tx of transactions) {
    const { nodeId, subnetId, startTimestamp, endTimestamp } = tx.fields;
    switch (tx.txType) {
      case "AddValidatorTx":
      case "AddPermissionlessValidatorTx":
      case "AddDelegatorTx":
      case "AddPermissionlessDelegatorTx":
        stakes.push({
          key: tx.txHash,
          subnetId: subnetId!,
          delegation: tx.txType.includes("Delegator"),
          start: startTimestamp!,
          end: endTimestamp!,
          weight: Number(tx.staked),
        });
        break;
      case "AddSubnetValidatorTx": {
        // A permissioned subnet validator has no stake of its own in the sample.
        const stake = {
          key: `${nodeId}:${subnetId}`,
          subnetId: subnetId!,
          delegation: false,
          start: startTimestamp!,
          end: endTimestamp!,
          weight: 0,
        };
        subnetValidators.set(stake.key, stake);
        stakes.push(stake);
        break;
      }
      case "RemoveSubnetValidatorTx": {
        const stake = subnetValidators.get(`${nodeId}:${subnetId}`);
        if (stake) stake.end = Math.min(stake.end, tx.timestamp);
        break;
      }
    }
  }
  return stakes;
}

/** Each L1 validator's spans with a balance, from the changes P-Chain transactions record, closed at `until`. */
function payingSpans(transactions: readonly PTransaction[], until: number): PayingSpan[] {
  const spans: PayingSpan[] = [];
  const open = new Map<string, PayingSpan>();
  for (const tx of transactions) {
    for (const change of tx.l1Changes) {
      const { validationId, subnetId } = change.validator;
      const current = open.get(validationId);
      if (current) {
        current.end = tx.timestamp;
        open.delete(validationId);
      }
      if (change.remainingBalance > 0) {
        const span = { validationId, subnetId, start: tx.timestamp, end: until, weight: change.weight };
        spans.push(span);
        open.set(validationId, span);
      }
    }
  }
  return spans;
}

/** The fee rate, read from the P-Chain's blocks: the fees they accrue per active L1 validator and second. */
function feePerValidatorSecond(primary: PrimaryNetwork): number {
  let previous = primary.block("P", "0")!;
  for (let height = 1; height <= primary.pChainHeight; height++) {
    const block = primary.block("P", String(height))!;
    const seconds = block.blockTimestamp - previous.blockTimestamp;
    const active = block.activeL1Validators ?? 0;
    if (active > 0 && seconds > 0) {
      return ((block.l1ValidatorsAccruedFees ?? 0) - (previous.l1ValidatorsAccruedFees ?? 0)) / (active * seconds);
    }
    previous = block;
  }
  return 0;
}
