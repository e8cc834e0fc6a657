/** Rules of the Metrics API's metrics that both the gateway and the simulator apply. */
import { chainMetricValues } from "./contract/metrics-api.ts";
import type { ChainMetricName, MetricsTimeInterval } from "./types.ts";

/** The chain metrics served only with `timeInterval=day`: cumulative, average and maximum metrics, contracts, deployers and feesPaid. */
export const DAY_ONLY_CHAIN_METRICS: ReadonlySet<ChainMetricName> = new Set(
  chainMetricValues.filter(
    (metric) => /^(cumulative|max|avg)/.test(metric) || ["contracts", "deployers", "feesPaid"].includes(metric),
  ),
);

/** Whether the Metrics API serves a chain metric at an interval. */
export function servesChainMetricAt(metric: ChainMetricName, interval: MetricsTimeInterval): boolean {
  return interval === "day" || !DAY_ONLY_CHAIN_METRICS.has(metric);
}
