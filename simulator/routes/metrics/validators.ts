import type { paths } from "../../../src/upstream/contract/metrics-api.ts";
import { routeDefiner, type RouteDefinition } from "../../http/router.ts";
import { PRIMARY_NETWORK_SUBNET_ID } from "../../network/chains.ts";
import { networkNamed } from "../../network/index.ts";
import { withinRange, type NetworkMetrics } from "../../network/metrics/index.ts";
import { contractPoints, metricsPage } from "./paging.ts";

const metricsRoute = routeDefiner<paths>();

export function validatorMetricRoutes(metrics: NetworkMetrics, tokenTtlMs: () => number): RouteDefinition[] {
  return [
    metricsRoute("GET", "/v2/networks/{network}/metrics/{metric}", ({ path, query, pageScope, sentQuery }) => {
      // The contract names the primary network's id as subnetId's default, but the route's own
      // description holds: "If not provided, then all subnets will be returned", added up.
      const subnetId = sentQuery.has("subnetId") ? String(query.subnetId ?? PRIMARY_NETWORK_SUBNET_ID) : undefined;
      const series = metrics.staking(networkNamed(path.network)!, path.metric, subnetId);
      const page = metricsPage(
        withinRange(series, query.startTimestamp, query.endTimestamp),
        { pageToken: query.pageToken, pageSize: query.pageSize, scope: pageScope },
        tokenTtlMs(),
      );
      return { nextPageToken: page.nextPageToken, results: contractPoints(page.items) };
    }),

    // These two routes have no page parameters: one answer holds the whole range.
    metricsRoute("GET", "/v2/subnet/{subnetId}/metrics/{metric}", ({ path, query }) => ({
      results: contractPoints(
        withinRange(metrics.subnetFees(path.subnetId, path.metric), query.startTimestamp, query.endTimestamp),
      ),
    })),

    metricsRoute("GET", "/v2/validators/metrics/{metric}", ({ path, query }) => ({
      results: contractPoints(withinRange(metrics.validatorFees(path.metric), query.startTimestamp, query.endTimestamp)),
    })),
  ];
}
