import type { paths } from "../../../src/upstream/contract/data-api.ts";
import { networkNamed, type SampleNetwork, type SimulatedChain } from "../../network/index.ts";
import { notFound } from "../../http/errors.ts";
import { routeDefiner, type RouteDefinition } from "../../http/router.ts";

const dataRoute = routeDefiner<paths>();

/** The chain a `{chainId}` path parameter names: an EVM chain id or a blockchain id. */
export function requireChain(network: SampleNetwork, chainId: string): SimulatedChain {
  const chain = network.chain(chainId);
  if (chain === undefined) throw notFound(`Chain ${chainId} not found`);
  return chain;
}

export function chainRoutes(network: SampleNetwork): RouteDefinition[] {
  return [
    dataRoute("GET", "/v1/chains", ({ query }) => {
      const chains = network
        .chainsOn(networkNamed(query.network))
        .filter((chain) => query.feature === undefined || chain.info.enabledFeatures?.includes(query.feature));
      return { chains: chains.map((chain) => chain.info) };
    }),

    dataRoute("GET", "/v1/chains/{chainId}", ({ path }) => requireChain(network, path.chainId).info),
  ];
}
