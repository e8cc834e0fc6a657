import type { paths } from "../../../src/upstream/contract/metrics-api.ts";
import { servesChainMetricAt } from "../../../src/upstream/metric-rules.ts";
import { badRequest, notFound } from "../../http/errors.ts";
import { routeDefiner, type RouteDefinition } from "../../http/router.ts";
import type { NetworkName, SampleNetwork, SimulatedChain } from "../../network/index.ts";
import { withinRange, type NetworkMetrics } from "../../network/metrics/index.ts";
import { contractPoints, metricsPage } from "./paging.ts";

const metricsRoute = routeDefiner<paths>();

/** The `{chainId}` values that name a whole network instead of one chain. */
const NETWORK_SCOPES: Record<string, NetworkName | undefined> = { total: undefined, mainnet: "mainnet", testnet: "fuji" };

/** Results per page of the legacy route, which has no pageSize parameter. */
const LEGACY_PAGE_SIZE = 100;

export interface ChainMetricsRouteOptions {
  /** The current page token lifetime, in ms. */
  tokenTtlMs: () => number;
  /** The name the legacy average-TPS route gives its cursor: the documented one, or the older spec's. */
  legacyAvgTpsCursor: "nextPageToken" | "nextPageStartKey";
}

/** A chain the Metrics API knows by its EVM chain id (not by its blockchain id). */
export function metricsChain(network: SampleNetwork, chainId: string): SimulatedChain {
  const chain = network.chain(chainId);
  if (chain === undefined || chain.evmChainId !== chainId) throw notFound(`Chain ${chainId} not found`);
  return chain;
}

export function chainMetricRoutes(
  network: SampleNetwork,
  metrics: NetworkMetrics,
  options: ChainMetricsRouteOptions,
): RouteDefinition[] {
  return [
    metricsRoute("GET", "/v2/chains/{chainId}/metrics/{metric}", async ({ path, query, pageScope }) => {
      const interval = query.timeInterval ?? "day";
      if (!servesChainMetricAt(path.metric, interval)) {
        throw badRequest(`timeInterval must be day for metric ${path.metric}`);
      }
      const chains = Object.hasOwn(NETWORK_SCOPES, path.chainId)
        ? network.chainsOn(NETWORK_SCOPES[path.chainId])
        : [metricsChain(network, path.chainId)];
      const series = await metrics.chainMetric(path.chainId, chains, path.metric, interval);
      const page = metricsPage(
        withinRange(series, query.startTimestamp, query.endTimestamp),
        { pageToken: query.pageToken, pageSize: query.pageSize, scope: pageScope },
        options.tokenTtlMs(),
      );
      return { nextPageToken: page.nextPageToken, results: contractPoints(page.items) };
    }),

    // The daily average TPS, as the v2 route gives it.
    metricsRoute("GET", "/v1/avg_tps/{chainId}", async ({ path, query, pageScope }) => {
      const chain = metricsChain(network, path.chainId);
      const series = await metrics.chainMetric(chain.evmChainId, [chain], "avgTps", "day");
      const page = metricsPage(
        series,
        { pageToken: query.pageToken, pageSize: LEGACY_PAGE_SIZE, scope: pageScope },
        options.tokenTtlMs(),
      );
      const next = page.nextPageToken;
      return {
        results: contractPoints(page.items),
        status: 200,
        lastRun: chain.blocks.blockTimestamp(chain.blocks.headNumber),
        ...(next === undefined
          ? {}
          : options.legacyAvgTpsCursor === "nextPageStartKey"
            ? { nextPageStartKey: next }
            : { nextPageToken: next }),
      };
    }),
  ];
}
