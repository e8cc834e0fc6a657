import type { paths } from "../../../src/upstream/contract/metrics-api.ts";
import { networkNamed, type SampleNetwork } from "../../network/index.ts";
import { notFound } from "../../http/errors.ts";
import { paginate } from "../../http/pagination.ts";
import { routeDefiner, type RouteDefinition } from "../../http/router.ts";

const metricsRoute = routeDefiner<paths>();

/**
 * @param pageSize The contract gives `GET /v2/chains` no pageSize parameter;
 *   the service decides how many chains a page holds.
 */
export function metricsChainRoutes(network: SampleNetwork, pageSize: number): RouteDefinition[] {
  return [
    metricsRoute("GET", "/v2/chains", ({ query, pageScope }) => {
      const chains = network.chainsOn(networkNamed(query.network)).map((chain) => chain.metrics);
      const page = paginate(chains, { pageToken: query.pageToken, pageSize, scope: pageScope });
      return { nextPageToken: page.nextPageToken, chains: page.items };
    }),

    // Only EVM chain ids name a chain here, not blockchain ids.
    metricsRoute("GET", "/v2/chains/{chainId}", ({ path }) => {
      const chain = network.chain(path.chainId);
      if (chain === undefined || chain.evmChainId !== path.chainId) {
        throw notFound(`Chain ${path.chainId} not found`);
      }
      return chain.metrics;
    }),
  ];
}
