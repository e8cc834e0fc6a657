/**
 * A chain page's chart: the C-Chain's daily transaction count over the latest 90 days, each
 * point with its time, from one page of the Metrics API; the chain's name from the chain list.
 */
import type { components as DataComponents } from "../../src/upstream/contract/data-api.ts";
import type { components as MetricsComponents } from "../../src/upstream/contract/metrics-api.ts";
import { operationDocument, type ReferenceOperation } from "./types.ts";

type ListChainsResponse = DataComponents["schemas"]["ListChainsResponse"];
type MetricsApiResponse = MetricsComponents["schemas"]["MetricsApiResponse"];

const CHAIN_ID = "43114";
/** The document's `first`: one point a day. */
const DAYS = 90;
const DAY = 86_400;
const chainsPath = "/v1/chains";
const metricPath = (from: number, to: number) =>
  `/v2/chains/${CHAIN_ID}/metrics/txCount?startTimestamp=${from}&endTimestamp=${to}&timeInterval=day&pageSize=${DAYS}`;

export const chainMetric90Days: ReferenceOperation = {
  name: "chain-metric-90-days",
  document: operationDocument("chain-metric-90-days"),
  // the metric's page alone: the gateway keeps the chain list loaded, so Query.chain waits for nothing
  dependentCalls: 1,
  async prepare(upstream) {
    const newest = await upstream.get<MetricsApiResponse>(
      "metrics",
      `/v2/chains/${CHAIN_ID}/metrics/txCount?timeInterval=day&pageSize=1`,
    );
    const to = newest.results[0]!.timestamp;
    const from = to - (DAYS - 1) * DAY;
    const path = metricPath(from, to);
    const reference = await upstream.get<MetricsApiResponse>("metrics", path);
    if (reference.results.length !== DAYS || reference.nextPageToken !== undefined) {
      throw new Error(`chain-metric-90-days: the C-Chain has ${reference.results.length} daily points up to ${to}, not ${DAYS}`);
    }
    return {
      variables: { from, to },
      // the chain list, and the metric in one page (first is within the route's page size)
      fewestCalls: 2,
      upstreamPaths: [
        { service: "data", path: chainsPath },
        { service: "metrics", path },
      ],
      async baseline() {
        const [{ chains }, metric] = await Promise.all([
          upstream.get<ListChainsResponse>("data", chainsPath),
          upstream.get<MetricsApiResponse>("metrics", path),
        ]);
        const chain = chains.find((info) => info.chainId === CHAIN_ID);
        if (!chain) return { chain: null };
        return {
          chain: {
            chainId: chain.chainId,
            chainName: chain.chainName,
            metrics: {
              edges: metric.results.map(({ timestamp, value }) => ({
                node: { timestamp, time: new Date(timestamp * 1000).toISOString(), value },
              })),
              pageInfo: { hasNextPage: metric.nextPageToken !== undefined },
            },
          },
        };
      },
    };
  },
};
