/** Names for the upstream records the gateway serves; every shape comes from the generated contract types. */
import type { components as DataComponents, paths as DataPaths } from "./contract/data-api.ts";
import type { components as MetricsComponents, paths as MetricsPaths } from "./contract/metrics-api.ts";

export type { DataPaths, MetricsPaths };
type DataSchemas = DataComponents["schemas"];
type MetricsSchemas = MetricsComponents["schemas"];

export type UpstreamNetwork = DataSchemas["Network"];
export type ApiFeature = DataSchemas["ApiFeature"];
export type ChainInfo = DataSchemas["ChainInfo"];
export type ChainStatus = DataSchemas["ChainStatus"];
export type VmName = DataSchemas["VmName"];
export type NetworkToken = DataSchemas["NetworkToken"];
export type UtilityAddresses = DataSchemas["UtilityAddresses"];
export type EvmBlock = DataSchemas["EvmBlock"];
export type ListEvmBlocksResponse = DataSchemas["ListEvmBlocksResponse"];

export type MetricsChain = MetricsSchemas["Chain"];
