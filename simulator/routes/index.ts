import type { ExportJobs } from "../network/exports/index.ts";
import type { SampleNetwork } from "../network/index.ts";
import { RouteTable } from "../http/router.ts";
import { blockRoutes } from "./data/blocks.ts";
import { chainRoutes } from "./data/chains.ts";
import { exportRoutes } from "./data/exports.ts";
import { primaryNetworkRoutes } from "./data/primary-network.ts";
import { transactionRoutes } from "./data/transactions.ts";
import { warpRoutes } from "./data/warp.ts";
import { dataHealthRoutes, metricsHealthRoutes } from "./health.ts";
import { NetworkMetrics } from "../network/metrics/index.ts";
import { balanceRoutes } from "./metrics/balances.ts";
import { chainMetricRoutes, type ChainMetricsRouteOptions } from "./metrics/chain-metrics.ts";
import { metricsChainRoutes } from "./metrics/chains.ts";
import { validatorMetricRoutes } from "./metrics/validators.ts";

export interface RouteOptions {
  /** Chains per page of the Metrics API's `GET /v2/chains`, which has no pageSize parameter. */
  metricsChainsPageSize: number;
  /** The cursor name of `GET /v1/avg_tps/{chainId}`; `nextPageToken` unless set. */
  legacyAvgTpsCursor?: ChainMetricsRouteOptions["legacyAvgTpsCursor"];
}

export function dataApiRoutes(network: SampleNetwork, exportJobs: ExportJobs): RouteTable {
  return new RouteTable("data", [
    ...dataHealthRoutes(),
    ...chainRoutes(network),
    ...blockRoutes(network),
    ...transactionRoutes(network),
    ...primaryNetworkRoutes(network),
    ...exportRoutes(exportJobs),
    ...warpRoutes(network),
  ]);
}

/** @param tokenTtlMs The current lifetime of Metrics API page tokens (a knob). */
export function metricsApiRoutes(network: SampleNetwork, options: RouteOptions, tokenTtlMs: () => number): RouteTable {
  const metrics = new NetworkMetrics(network);
  return new RouteTable("metrics", [
    ...metricsHealthRoutes(),
    ...metricsChainRoutes(network, options.metricsChainsPageSize),
    ...chainMetricRoutes(network, metrics, { tokenTtlMs, legacyAvgTpsCursor: options.legacyAvgTpsCursor ?? "nextPageToken" }),
    ...validatorMetricRoutes(metrics, tokenTtlMs),
    ...balanceRoutes(network, metrics, tokenTtlMs),
  ]);
}
