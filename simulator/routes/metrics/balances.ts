import type { paths } from "../../../src/upstream/contract/metrics-api.ts";
import { badRequest } from "../../http/errors.ts";
import { routeDefiner, type RouteDefinition } from "../../http/router.ts";
import type { SampleNetwork } from "../../network/index.ts";
import type { NetworkMetrics } from "../../network/metrics/index.ts";
import { metricsChain } from "./chain-metrics.ts";
import { metricsPage } from "./paging.ts";

const metricsRoute = routeDefiner<paths>();

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
/** The chain the BTC.b route is fixed to: the mainnet C-Chain. */
const BTCB_CHAIN_ID = "43114";

/** A threshold: an amount in the token's smallest unit, as a string of decimal digits. */
function threshold(value: string): bigint {
  if (!/^\d+$/.test(value)) throw badRequest("threshold must be a non-negative integer string");
  return BigInt(value);
}

export function balanceRoutes(network: SampleNetwork, metrics: NetworkMetrics, tokenTtlMs: () => number): RouteDefinition[] {
  return [
    metricsRoute("GET", "/v2/chains/{chainId}/contracts/{address}/balances", async ({ path, query, pageScope }) => {
      const minimum = threshold(query.threshold);
      if (!EVM_ADDRESS.test(path.address)) throw badRequest("address must be an EVM address");
      const chain = metricsChain(network, path.chainId);
      const found = await metrics.tokenHolders(chain, path.address, {
        threshold: minimum,
        start: query.startTimestamp,
        end: query.endTimestamp,
      });
      const page = metricsPage(found, { pageToken: query.pageToken, pageSize: query.pageSize, scope: pageScope }, tokenTtlMs());
      return { nextPageToken: page.nextPageToken, addresses: page.items };
    }),

    metricsRoute("GET", "/v2/chains/43114/btcb/bridged:getAddresses", async ({ query, pageScope }) => {
      const found = await metrics.bridgedBtcb(metricsChain(network, BTCB_CHAIN_ID), threshold(query.threshold));
      const page = metricsPage(found, { pageToken: query.pageToken, pageSize: query.pageSize, scope: pageScope }, tokenTtlMs());
      return { nextPageToken: page.nextPageToken, addresses: page.items };
    }),
  ];
}
