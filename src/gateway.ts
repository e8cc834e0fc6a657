/**
 * Builds a gateway: its upstream clients and caches, the shared pollers of live subscriptions,
 * the Yoga server over the schema with its plugins in order, and the Node listener in front.
 * `createGateway` reads as the list of those steps; each step is a function of src/gateway-parts.ts,
 * and the plugins stand in their order in src/gateway-plugins.ts.
 */
import { createYoga, type Plugin, type YogaServerInstance } from "graphql-yoga";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { GatewayConfig } from "./config.ts";
import { contextForEvent, createContext, type GatewayContext } from "./execution/context.ts";
import type { Upstreams } from "./upstream/upstreams.ts";
import { RequestDeadlines } from "./limits/deadline.ts";
import { useRateLimit } from "./plugins/rate-limit.ts";
import { refuseSpentCallers, scrapeCharge, unusableBodyCharge } from "./plugins/spent-callers.ts";
import { bucketsOfIncoming } from "./limits/caller-buckets.ts";
import { RateLimiter } from "./limits/rate-limiter.ts";
import { RefusalHolds } from "./limits/refusal-holds.ts";
import { socketStreams, type SocketStreams } from "./plugins/socket-streams.ts";
import { withLastResort } from "./plugins/refusals.ts";
import { RefusalNotes } from "./plugins/refusal-notes.ts";
import { requestIdOf, type RequestId } from "./plugins/request-log.ts";
import { cacheHitLane } from "./server/cache-hit-lane.ts";
import { operationLane } from "./server/operation-lane.ts";
import { validatedDocuments } from "./plugins/validated-documents.ts";
import { useSseSingleConnection, type Pipeline } from "./plugins/sse-single-connection.ts";
import { schema } from "./schema.ts";
import { createCompression } from "./plugins/compression.ts";
import { jsonBodyListener } from "./server/json-body-listener.ts";
import type { RedisLink } from "./shared-state/redis.ts";
import type { Logger } from "./telemetry/logger.ts";
import { RepeatedLines, summingRepeats } from "./telemetry/repeated-lines.ts";
import { GatewayMetrics } from "./telemetry/metrics.ts";
import type { RecordCache } from "./upstream/cache.ts";
import { API_KEY_HEADER } from "./upstream/call-options.ts";
import {
  connectUpstreams,
  documentCaches,
  GRAPHQL_ENDPOINT,
  keepChainListFresh,
  responseCache,
  socketBudget,
  startSharedServices,
  upstreamReadiness,
  type SocketBudget,
  type UpstreamUrls,
} from "./gateway-parts.ts";
import { pluginsInOrder } from "./gateway-plugins.ts";

export type { SocketBudget, UpstreamUrls } from "./gateway-parts.ts";

export interface Gateway {
  yoga: YogaServerInstance<Record<string, never>, GatewayContext>;
  /** The Node HTTP handler to serve: Yoga, with JSON bodies read and parsed ahead. */
  listener: (request: IncomingMessage, response: ServerResponse) => void;
  upstreams: Upstreams;
  cache: RecordCache;
  metrics: GatewayMetrics;
  /**
   * The logger for whatever a client's input reaches: its warnings and errors are written once per
   * message every 10 s, with a count of the others (src/telemetry/repeated-lines.ts).
   */
  logger: Logger;
  /** Ends every open subscription's stream, which completes it for its client; for shutdown. */
  endStreams(): Promise<void>;
  /** What the WebSocket transport needs beside Yoga: the callers' budgets, read before a frame is, the streams of its operations, and the holds of its refusals. */
  sockets: { budget: SocketBudget | undefined; streams: SocketStreams; refusalHolds: RefusalHolds };
  /** The live questions this gateway polls now, and their subscribers. */
  liveCounts(): { pollers: number; subscribers: number };
  /** The live pollers' reads waiting for their turn of LIVE_MAX_READS_PER_SECOND. */
  liveReadsWaiting(): number;
  /** Charges the caller of a `/metrics` scrape answered outside Yoga (a cluster's): 0 when paid, else the seconds to wait. */
  chargeScrape(request: IncomingMessage): Promise<number>;
  close(): Promise<void>;
}

export interface GatewayOptions {
  /** Plugins that run first, e.g. tracing. */
  plugins?: Plugin[];
  /**
   * Redis shared with other gateways: the second tier of both caches (unless `cacheRedis`), the
   * rate-limit buckets, one poller per question across gateways. The caller owns it and closes
   * it after the gateway.
   */
  redis?: RedisLink;
  /**
   * A Redis of its own for the second tier of both caches (REDIS_CACHE_URL), one that may evict:
   * the buckets and locks on `redis` then never share its memory. Owned and closed as `redis`.
   */
  cacheRedis?: RedisLink;
  /** The metrics to count on; pass the ones the RedisLink reports to, so that /metrics shows them. */
  metrics?: GatewayMetrics;
}

export function createGateway(config: GatewayConfig, urls: UpstreamUrls, logger: Logger, options: GatewayOptions = {}): Gateway {
  const repeatedLines = new RepeatedLines(logger);
  const clientLogger = summingRepeats(logger, repeatedLines);
  const metrics = options.metrics ?? new GatewayMetrics();
  const cacheRedis = options.cacheRedis ?? options.redis;
  const upstream = connectUpstreams(config, urls, metrics, cacheRedis);
  const shared = startSharedServices(config, upstream.upstreams, metrics, options.redis);
  const stopChainRefresh = keepChainListFresh(config, upstream.upstreams, logger);
  const readiness = upstreamReadiness(config, upstream);
  const documents = documentCaches(config, metrics);
  const rateLimiter = config.rateLimit.enabled ? new RateLimiter(config.rateLimit, metrics, options.redis) : undefined;
  const refusalHolds = new RefusalHolds(config.server.refusalHolds, (outcome) => metrics.refusalHeld(outcome));
  metrics.watchRefusalHolds(() => refusalHolds.held);
  const isParsed = (source: string) => documents.documentCache.has(source);
  const rateLimit =
    rateLimiter &&
    useRateLimit(config.rateLimit, rateLimiter, {
      graphqlEndpoint: GRAPHQL_ENDPOINT,
      isParsed,
      refusalHolds,
    });
  const compression = createCompression(config.compression);
  const cached = responseCache(config, metrics, compression, rateLimit?.payInAll, cacheRedis);
  const requestIds = new WeakMap<Request, RequestId>();
  const refusalNotes = new RefusalNotes({ logger, metrics, hideSuggestions: !config.security.introspection });
  const validated = validatedDocuments();
  const deadlines = new RequestDeadlines(config.requestTimeoutMs);
  const streams = socketStreams();
  const chargeUnusableBody = rateLimiter ? unusableBodyCharge(rateLimiter, config.rateLimit) : () => {};
  const eventStreams = useSseSingleConnection({
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    limits: {
      perCaller: config.server.sseMaxStreamsPerAddress,
      unlistened: config.server.maxConnections,
      listenWithinMs: config.server.sseListenWithinMs,
      maxUnreadBytes: config.server.webSocketMaxUnreadBytes,
    },
    maxNestingDepth: config.security.maxNestingDepth,
    streams,
    callers: config.rateLimit,
    carryPayment: rateLimit?.carryPayment,
    chargeUnusableBody,
    // The Yoga made below: graphql-sse's operations run through all of it.
    pipeline: (): Pipeline => yoga,
  });

  const yoga = createYoga<Record<string, never>, GatewayContext>({
    schema,
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    healthCheckEndpoint: "/health",
    landingPage: false,
    logging: clientLogger,
    // Served by useGraphiQLPage, which its caller pays for.
    graphiql: false,
    // Bodies beyond MAX_BODY_BYTES never reach the parser: useBodyLimit refuses a POST without
    // a declared length or over the limit, and Node's HTTP parser holds a body to its declared
    // length. Yoga's own limit would pipe every body through one more stream.
    maxRequestBodySize: false,
    batching: false,
    // A persisted document's id, as the GraphQL-over-HTTP persisted-documents convention sends it.
    extraParamNames: ["documentId"],
    parserAndValidationCache: documents,
    // An error thrown by a plugin's HTTP hook is answered as JSON, never as a stack trace.
    plugins: withLastResort(
      pluginsInOrder({
        config,
        logger,
        metrics,
        refusalNotes,
        validated: validated.plugin,
        first: options.plugins ?? [],
        deadlines,
        rateLimit,
        isParsed,
        keyVerdicts: upstream.keyVerdicts,
        responseCache: cached ? [cached.plugin] : [],
        requestIds,
        readiness,
        compression,
        streams,
        contextForEvent: (parent, deadline) => contextForEvent(shared, parent, deadline),
        eventStreams: eventStreams.plugin,
      }),
      clientLogger,
    ),
    context: ({ request }) => {
      const callerKey = request.headers.get(API_KEY_HEADER)?.trim();
      return createContext(shared, {
        apiKey: callerKey || undefined,
        requestId: requestIds.get(request) ?? requestIdOf(request),
        deadline: deadlines.of(request),
      });
    },
  });

  // With plugins of its own first (tracing), every request goes through Yoga, where they see it.
  const lanes = (options.plugins ?? []).length === 0;
  const payFirst =
    rateLimiter && ((request: IncomingMessage) => rateLimiter.takeSoon(bucketsOfIncoming(request, config.rateLimit), 1));
  const isRefusedKey = (apiKey: string) => upstream.keyVerdicts.refusal(apiKey) !== undefined;
  const listener = jsonBodyListener(yoga, {
    maxBodyBytes: config.security.maxBodyBytes,
    maxNestingDepth: config.security.maxNestingDepth,
    refusesSpentCaller: rateLimiter
      ? refuseSpentCallers(rateLimiter, config.rateLimit, metrics, logger, refusalHolds)
      : () => false,
    chargeUnusableBody,
    logger: clientLogger,
    answerFromCache:
      cached && lanes
        ? cacheHitLane({
            store: cached.store,
            graphqlEndpoint: GRAPHQL_ENDPOINT,
            sessionHeader: API_KEY_HEADER,
            compressionEnabled: config.compression.enabled,
            pay: payFirst,
            isRefusedKey,
            onHit: () => metrics.responseCacheLookup("local"),
            logger: clientLogger,
          })
        : undefined,
    // Not with persisted documents only (their rule is Yoga's), nor with a shared response tier (looked up inside Yoga).
    answerKnownOperation:
      lanes && config.server.operationLane && !config.security.persistedOperationsOnly && !cached?.shared
        ? operationLane({
            yoga,
            graphqlEndpoint: GRAPHQL_ENDPOINT,
            sessionHeader: API_KEY_HEADER,
            parsed: (query) => documents.documentCache.get(query),
            validated: (document) => validated.has(document),
            isRefusedKey,
            payment: payFirst && rateLimit && { ...rateLimit.lane, pay: payFirst },
            responseCache: cached && {
              store: cached.store,
              joinWithinMs: config.requestTimeoutMs,
              onMiss: () => metrics.responseCacheLookup("miss"),
            },
            compression: config.compression,
            refusalNotes,
            requestIds,
            deadlines,
            onTaken: (outcome) => metrics.operationLaneRequest(outcome),
            logger: clientLogger,
          })
        : undefined,
  });

  return {
    yoga,
    listener,
    upstreams: upstream.upstreams,
    cache: upstream.cache,
    metrics,
    logger: clientLogger,
    liveCounts: () => shared.live.feed.counts(),
    liveReadsWaiting: () => shared.live.feed.readsWaiting(),
    endStreams: async () => {
      eventStreams.endListeners();
      await Promise.all([shared.live.feed.close(), shared.exportWatch.close()]);
    },
    sockets: {
      budget: rateLimiter && socketBudget(rateLimiter, config),
      streams,
      refusalHolds,
    },
    chargeScrape: rateLimiter ? scrapeCharge(rateLimiter, config.rateLimit) : async () => 0,
    async close() {
      stopChainRefresh();
      repeatedLines.flush();
      await Promise.all([
        shared.live.feed.close(),
        shared.exportWatch.close(),
        upstream.dataService.close(),
        upstream.metricsService.close(),
        shared.warpVerifier.close(),
      ]);
    },
  };
}
