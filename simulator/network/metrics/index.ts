/**
 * The Metrics API's data, computed from the sample network on first use and kept: chain
 * metrics per (scope, metric, interval), staking and L1 fee metrics per network, balances per
 * token. Reading a chain's transactions takes a while for a busy chain, so it happens in slices
 * that let other requests through, and once per chain and head. When the network's clock moves
 * its data on, what was worked out before is dropped and worked out again on the next read.
 */
import type { NetworkName, SampleNetwork, SimulatedChain } from "../index.ts";
import { bridged, holders, openingBalances, type HolderQuery } from "./balances.ts";
import { AddressBook, scanTransactions, type TransactionActivity } from "./chain-activity.ts";
import { chainMetricSeries, needsActivity } from "./chain-metrics.ts";
import type { MetricPoint } from "./time.ts";
import { ValidatorHistory } from "./validators.ts";
import type {
  AddressBalance,
  ChainMetricName,
  MetricsTimeInterval,
  StakingMetricName,
  SubnetMetricName,
  ValidatorFeeMetricName,
} from "../../../src/upstream/types.ts";

export { withinRange } from "./time.ts";

const BTCB_SYMBOL = "BTC.b";

export class NetworkMetrics {
  private readonly book = new AddressBook();
  /** Per chain, the activity of its blocks up to `count`. */
  private readonly activities = new Map<SimulatedChain, { count: number; activity: Promise<TransactionActivity> }>();
  private readonly series = new Map<string, Promise<MetricPoint[]>>();
  private readonly validatorHistories = new Map<NetworkName, ValidatorHistory>();
  private readonly openings = new Map<string, Promise<Map<number, bigint>>>();
  private seenVersion: number;

  constructor(private readonly network: SampleNetwork) {
    this.seenVersion = network.version;
  }

  /** Drops what was worked out from data the network has since moved on from. */
  private refresh(): void {
    if (this.network.version === this.seenVersion) return;
    this.seenVersion = this.network.version;
    this.series.clear();
    this.openings.clear();
    this.validatorHistories.clear();
  }

  /**
   * A chain metric over some chains, newest first. `scope` names them (an EVM chain id, or
   * `total`, `mainnet`, `testnet`) and keys the cache.
   */
  chainMetric(
    scope: string,
    chains: readonly SimulatedChain[],
    metric: ChainMetricName,
    interval: MetricsTimeInterval,
  ): Promise<MetricPoint[]> {
    this.refresh();
    const key = `${scope}:${metric}:${interval}`;
    let found = this.series.get(key);
    if (found === undefined) {
      const version = this.network.version;
      found = Promise.all(
        chains.map(async (chain) => ({
          blocks: chain.blocks,
          activity: needsActivity(metric) ? await this.activity(chain) : undefined,
        })),
      ).then((measured) =>
        // Chains that grew while their transactions were read would not match their activity: start again.
        this.network.version === version
          ? chainMetricSeries(measured, metric, interval)
          : this.chainMetric(scope, chains, metric, interval),
      );
      this.series.set(key, found);
    }
    return found;
  }

  /** Daily staking metrics of a subnet of a network, or of all its subnets together (`subnetId` undefined), newest first. */
  staking(network: NetworkName, metric: StakingMetricName, subnetId: string | undefined): MetricPoint[] {
    this.refresh();
    return this.validators(network).staking(metric, subnetId);
  }

  /** Daily L1 validator fee metrics of a subnet, on whichever network has it; empty for a subnet without L1 validators. */
  subnetFees(subnetId: string, metric: SubnetMetricName): MetricPoint[] {
    this.refresh();
    for (const network of ["mainnet", "fuji"] as const) {
      const points = this.validators(network).fees(metric, subnetId);
      if (points.length > 0) return points;
    }
    return [];
  }

  /** Daily fee metrics of every L1 validator of the mainnet. */
  validatorFees(metric: ValidatorFeeMetricName): MetricPoint[] {
    this.refresh();
    return this.validators("mainnet").fees(metric, undefined);
  }

  /** Holders of an ERC-20 token of a chain above a threshold within a time window; empty for a contract without transfers. */
  async tokenHolders(chain: SimulatedChain, contract: string, query: HolderQuery): Promise<AddressBalance[]> {
    this.refresh();
    const token = contract.toLowerCase();
    const moves = (await this.activity(chain)).erc20.get(token) ?? [];
    return holders(moves, await this.opening(chain, token), query, this.book);
  }

  /** Addresses that bridged more BTC.b to a chain than the threshold. */
  async bridgedBtcb(chain: SimulatedChain, threshold: bigint): Promise<AddressBalance[]> {
    this.refresh();
    const token = this.network.transactions(chain).catalog.erc20.find((candidate) => candidate.symbol === BTCB_SYMBOL)!;
    return bridged(await this.opening(chain, token.address.toLowerCase()), threshold, this.book);
  }

  private activity(chain: SimulatedChain): Promise<TransactionActivity> {
    const count = chain.blocks.count;
    let found = this.activities.get(chain);
    if (found?.count !== count) {
      found = { count, activity: scanTransactions(chain, this.network.transactions(chain), this.book, count) };
      this.activities.set(chain, found);
    }
    return found.activity;
  }

  private opening(chain: SimulatedChain, token: string): Promise<Map<number, bigint>> {
    const key = `${chain.evmChainId}:${token}`;
    let found = this.openings.get(key);
    if (found === undefined) {
      found = this.activity(chain).then((activity) => openingBalances(activity.erc20.get(token) ?? []));
      this.openings.set(key, found);
    }
    return found;
  }

  private validators(network: NetworkName): ValidatorHistory {
    let found = this.validatorHistories.get(network);
    if (found === undefined) {
      found = new ValidatorHistory(this.network.primaryNetwork(network));
      this.validatorHistories.set(network, found);
    }
    return found;
  }
}
