import type { SampleNetwork } from "../network/index.ts";
import { RouteTable } from "../http/router.ts";
import { blockRoutes } from "./data/blocks.ts";
import { chainRoutes } from "./data/chains.ts";
import { primaryNetworkRoutes } from "./data/primary-network.ts";
import { transactionRoutes } from "./data/transactions.ts";
import { dataHealthRoutes, metricsHealthRoutes } from "./health.ts";
import { metricsChainRoutes } from "./metrics/chains.ts";

export interface RouteOptions {
  /** Chains per page of the Metrics API's `GET /v2/chains`, which has no pageSize parameter. */
  metricsChainsPageSize: number;
}

export function dataApiRoutes(network: SampleNetwork): RouteTable {
  return new RouteTable("data", [...dataHealthRoutes(), ...chainRoutes(network), ...blockRoutes(network), ...transactionRoutes(network), ...primaryNetworkRoutes(network)]);
}

export function metricsApiRoutes(network: SampleNetwork, options: RouteOptions): RouteTable {
  return new RouteTable("metrics", [
    ...metricsHealthRoutes(),
    ...metricsChainRoutes(network, options.metricsChainsPageSize),
  ]);
}
