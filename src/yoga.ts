/** Builds the gateway: upstream clients, the shared cache, and the Yoga server over the schema. */
import { randomUUID } from "node:crypto";
import { createYoga, type YogaServerInstance } from "graphql-yoga";
import type { GatewayConfig } from "./config.ts";
import { createContext, type GatewayContext, type Upstreams } from "./context.ts";
import { schema } from "./graph.ts";
import type { Logger } from "./logger.ts";
import { RecordCache } from "./upstream/cache.ts";
import { EvmApi } from "./upstream/evm-api.ts";
import { API_KEY_HEADER, UpstreamService } from "./upstream/http.ts";
import { MetricsApi } from "./upstream/metrics-api.ts";

export interface UpstreamUrls {
  dataApiUrl: string;
  metricsApiUrl: string;
}

export interface Gateway {
  yoga: YogaServerInstance<Record<string, never>, GatewayContext>;
  upstreams: Upstreams;
  cache: RecordCache;
  close(): Promise<void>;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const EXAMPLE_QUERY = `# Send your Data API key as the header x-glacier-api-key (Headers tab below);
# without one, the gateway uses its own key, if it has one.
query LatestBlocks {
  latestBlocks(first: 5) {
    edges {
      cursor
      node {
        blockNumber
        blockHash
        blockTime
        txCount
        chain { chainName network }
        parent { blockHash }
      }
    }
    pageInfo { hasNextPage endCursor }
  }
}
`;

export function createGateway(config: GatewayConfig, urls: UpstreamUrls, logger: Logger): Gateway {
  const cache = new RecordCache(config.cache);
  const dataService = new UpstreamService("Data API", urls.dataApiUrl, config.upstream, config.apiKey);
  const metricsService = new UpstreamService("Metrics API", urls.metricsApiUrl, config.upstream, config.apiKey);
  const upstreams: Upstreams = {
    evm: new EvmApi(dataService, cache, config.cache),
    metrics: new MetricsApi(metricsService, cache, config.cache),
  };

  const yoga = createYoga<Record<string, never>, GatewayContext>({
    schema,
    graphqlEndpoint: "/graphql",
    landingPage: false,
    logging: logger,
    graphiql: config.graphiql ? { title: "Avalanche GraphQL gateway", defaultQuery: EXAMPLE_QUERY } : false,
    context: ({ request }) => {
      const callerKey = request.headers.get(API_KEY_HEADER)?.trim();
      const requestId = request.headers.get("x-request-id")?.trim();
      return createContext(upstreams, {
        apiKey: callerKey || undefined,
        requestId: requestId && REQUEST_ID.test(requestId) ? requestId : randomUUID(),
      });
    },
  });

  return {
    yoga,
    upstreams,
    cache,
    async close() {
      await Promise.all([dataService.close(), metricsService.close()]);
    },
  };
}
