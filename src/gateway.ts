/**
 * Builds a gateway: its upstream clients and caches, the shared pollers of live subscriptions,
 * the Yoga server over the schema with its plugins in order, and the Node listener in front.
 * `createGateway` reads as the list of those steps; each step below is one of them.
 */
import { useDeferStream } from "@graphql-yoga/plugin-defer-stream";
import type { DocumentNode } from "graphql";
import { createYoga, type Plugin, type YogaServerInstance } from "graphql-yoga";
import { LRUCache } from "lru-cache";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { GatewayConfig } from "./config.ts";
import {
  contextForEvent,
  createContext,
  forgetOpeningLoads,
  type GatewayContext,
  type SharedServices,
} from "./execution/context.ts";
import type { Upstreams } from "./upstream/upstreams.ts";
import { RequestDeadlines } from "./limits/deadline.ts";
import { LiveFeed } from "./live/live-feed.ts";
import type { LiveBatch } from "./live/live-poller.ts";
import { LiveQuestions } from "./live/live-questions.ts";
import { ExportWatch } from "./live/export-watch.ts";
import { useBodyLimit } from "./plugins/body-limit.ts";
import { useCompiledExecution } from "./plugins/compiled-execution.ts";
import { useEventExecution } from "./plugins/event-execution.ts";
import { useGraphiQLPage } from "./plugins/graphiql-page.ts";
import { useOperationMetrics } from "./plugins/operation-metrics.ts";
import { persistedOperationNames } from "./plugins/persisted-documents.ts";
import { useRateLimit } from "./plugins/rate-limit.ts";
import { refuseSpentCallers, scrapeCharge, unusableBodyCharge } from "./plugins/spent-callers.ts";
import { bucketsOfCaller, bucketsOfIncoming, callerHeaders } from "./limits/caller-buckets.ts";
import { RateLimiter, type RateLimitDecision } from "./limits/rate-limiter.ts";
import { RefusalHolds } from "./limits/refusal-holds.ts";
import { socketStreams, type SocketStreams } from "./plugins/socket-streams.ts";
import type { BucketRef } from "./limits/token-buckets.ts";
import { UpstreamReadiness, useReadiness } from "./plugins/readiness.ts";
import { KeyVerdicts, useRefusedKeys } from "./plugins/refused-keys.ts";
import { useRefusals, withLastResort } from "./plugins/refusals.ts";
import { RefusalNotes } from "./plugins/refusal-notes.ts";
import { requestIdOf, useRequestLog, type RequestId } from "./plugins/request-log.ts";
import { useResponseCache } from "./plugins/response-cache.ts";
import { ResponseStore, type ResponseCacheOptions } from "./plugins/response-store.ts";
import { cacheHitLane } from "./server/cache-hit-lane.ts";
import { operationLane } from "./server/operation-lane.ts";
import { validatedDocuments } from "./plugins/validated-documents.ts";
import { useSseSingleConnection, type Pipeline } from "./plugins/sse-single-connection.ts";
import { securityPlugins } from "./plugins/security.ts";
import { schema } from "./schema.ts";
import { createCompression, type Compression } from "./plugins/compression.ts";
import { jsonBodyListener } from "./server/json-body-listener.ts";
import { RedisPollerRelay } from "./shared-state/redis-poller-relay.ts";
import type { RedisLink } from "./shared-state/redis.ts";
import type { ExportOperation } from "./upstream/types.ts";
import { redisRecordTier, redisResponseTier } from "./shared-state/shared-tiers.ts";
import type { Logger } from "./telemetry/logger.ts";
import { RepeatedLines, summingRepeats } from "./telemetry/repeated-lines.ts";
import { GatewayMetrics } from "./telemetry/metrics.ts";
import { OperationNameLabels } from "./telemetry/operation-name-labels.ts";
import { OperationSeries } from "./telemetry/operation-series.ts";
import { RecordCache } from "./upstream/cache.ts";
import { EvmApi } from "./upstream/evm-api.ts";
import { ExportJobsApi } from "./upstream/export-jobs-api.ts";
import { API_KEY_HEADER, UpstreamService } from "./upstream/http.ts";
import { MetricsApi } from "./upstream/metrics-api.ts";
import { PrimaryNetworkApi } from "./upstream/primary-network-api.ts";
import { HEALTH_ROUTES } from "./upstream/routes.ts";
import { WarpApi } from "./upstream/warp-api.ts";
import { WarpVerifier } from "./warp/verifier.ts";

export interface UpstreamUrls {
  dataApiUrl: string;
  metricsApiUrl: string;
}

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

/** A WebSocket caller's budget, for what the transport checks before Yoga sees anything (src/server/websocket-admission.ts). */
export interface SocketBudget {
  /** The buckets a socket's caller pays from: its key (the connection params', else the upgrade's header) and its address. */
  bucketsOf(upgrade: IncomingMessage, apiKey: string | undefined, remoteAddress: string | undefined): readonly BucketRef[];
  /** Whole seconds until every one of these buckets can pay 1 again, as last seen; 0 when they can now. */
  secondsUntilServed(buckets: readonly BucketRef[]): number;
  /** Takes `cost` from every bucket, or from none; with `force`, whatever they hold (for work already done). */
  take(buckets: readonly BucketRef[], cost: number, force?: boolean): Promise<RateLimitDecision>;
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

/** How long one readiness check may wait for the upstreams' health routes. */
const READY_TIMEOUT_MS = 2_000;
const GRAPHQL_ENDPOINT = "/graphql";

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

/** What the WebSocket transport checks and charges before a socket's frames reach Yoga. */
function socketBudget(limiter: RateLimiter, config: GatewayConfig): SocketBudget {
  return {
    // A socket's own: not remembered per connection, as a request's are (bucketsOfIncoming).
    bucketsOf: (upgrade, apiKey, remoteAddress) => {
      const { key, forwarded } = callerHeaders(upgrade.headers);
      return bucketsOfCaller(apiKey ?? key, forwarded, remoteAddress, config.rateLimit);
    },
    secondsUntilServed: (buckets) => limiter.secondsUntilServed(buckets),
    take: (buckets, cost, force) => limiter.take(buckets, cost, force),
  };
}

interface ConnectedUpstreams {
  upstreams: Upstreams;
  cache: RecordCache;
  keyVerdicts: KeyVerdicts;
  dataService: UpstreamService;
  metricsService: UpstreamService;
}

/** The two services' HTTP clients, the shared record cache, and the API clients over them. */
function connectUpstreams(
  config: GatewayConfig,
  urls: UpstreamUrls,
  metrics: GatewayMetrics,
  redis?: RedisLink,
): ConnectedUpstreams {
  const cache = new RecordCache(config.cache, redis && redisRecordTier(redis, metrics));
  metrics.watchCache(cache);
  const keyVerdicts = new KeyVerdicts(config.apiKeys);
  const dataService = new UpstreamService("Data API", urls.dataApiUrl, config.upstream, config.apiKey, metrics, {
    verdicts: keyVerdicts,
    checksKeys: true,
  });
  const metricsService = new UpstreamService("Metrics API", urls.metricsApiUrl, config.upstream, config.apiKey, metrics, {
    verdicts: keyVerdicts,
    checksKeys: false,
  });
  const upstreams: Upstreams = {
    evm: new EvmApi(dataService, cache, config.cache),
    metrics: new MetricsApi(metricsService, cache, config.cache),
    primaryNetwork: new PrimaryNetworkApi(dataService, cache),
    exportJobs: new ExportJobsApi(dataService),
    warp: new WarpApi(dataService),
  };
  return { upstreams, cache, keyVerdicts, dataService, metricsService };
}

/** What every request's context shares: the pollers of live subscriptions and the Warp verifier. */
function startSharedServices(
  config: GatewayConfig,
  upstreams: Upstreams,
  metrics: GatewayMetrics,
  redis?: RedisLink,
): SharedServices {
  const exportWatch = new ExportWatch(
    (id, call) => upstreams.exportJobs.getOperation(id, call),
    { intervalMs: config.exportPollIntervalMs, readTimeoutMs: config.requestTimeoutMs },
    redis && new RedisPollerRelay<ExportOperation>(redis, "export", config.live.takeoverMs),
  );
  const { live } = config;
  const feed = new LiveFeed(
    {
      maxCatchUp: live.maxCatchUp,
      maxPending: live.maxPendingEvents,
      readTimeoutMs: config.requestTimeoutMs,
      eventTimeoutMs: config.requestTimeoutMs,
      maxPollers: live.maxPollers,
      maxPollersPerCaller: live.maxPollersPerCaller,
      maxReadsPerSecond: live.maxReadsPerSecond,
    },
    redis && new RedisPollerRelay<LiveBatch>(redis, "live", live.takeoverMs),
  );
  metrics.watchLive(
    () => feed.counts(),
    () => feed.readsWaiting(),
  );
  const warpVerifier = new WarpVerifier(config.warpVerifyThreads, metrics.registry);
  const observeBatch = (loader: string, keys: number) => metrics.loaderBatch(loader, keys);
  return {
    upstreams,
    exportWatch,
    live: { feed, questions: new LiveQuestions(upstreams, live) },
    warpVerifier,
    observeBatch,
    maxEntityRepresentations: config.limits.entityRepresentations,
  };
}

/** Keeps the chain list fresh in the background (CACHE_PRELOAD_CHAINS); returns how to stop. */
function keepChainListFresh(config: GatewayConfig, upstreams: Upstreams, logger: Logger): () => void {
  if (!config.cache.preloadChains) return () => {};
  return upstreams.evm.keepChainsFresh((error) =>
    logger.warn({ err: error }, "could not refresh the chain list; serving the one held"),
  );
}

/** Ready when both services answer their health routes and neither health route's breaker is open. */
function upstreamReadiness(config: GatewayConfig, upstream: ConnectedUpstreams): UpstreamReadiness {
  return new UpstreamReadiness(
    [
      { service: upstream.dataService, route: HEALTH_ROUTES.data },
      { service: upstream.metricsService, route: HEALTH_ROUTES.metrics },
    ],
    { maxAgeMs: config.server.readyCacheMs, timeoutMs: READY_TIMEOUT_MS },
  );
}

/** Yoga's parse caches, keyed by query text and bounded by entries and by characters of it. */
function documentCaches(config: GatewayConfig, metrics: GatewayMetrics) {
  const bySource = <T extends object>() =>
    new LRUCache<string, T>({
      max: config.cache.documentMaxEntries,
      maxSize: config.cache.documentMaxBytes,
      sizeCalculation: (_value, source) => Math.max(1, source.length),
    });
  // Everything else kept per document (validation, compiled execution, the limits' analysis) is
  // held through the parsed document.
  const documentCache = bySource<DocumentNode>();
  metrics.watchSizes(
    "gateway_document_cache",
    {
      entries: "Parsed documents held, with their validation and compiled execution: entries.",
      bytes: "Parsed documents held, with their validation and compiled execution: bytes as the cache counts them.",
    },
    () => ({ entries: documentCache.size, bytes: documentCache.calculatedSize }),
  );
  // Validation is kept per document by src/plugins/validated-documents.ts.
  return { documentCache, errorCache: bySource<object>(), validationCache: false };
}

/** The short-TTL response cache (RESPONSE_CACHE_TTL_MS > 0), with its Redis tier when there is one: its store and its plugin. */
function responseCache(
  config: GatewayConfig,
  metrics: GatewayMetrics,
  compression: Compression,
  payForSending: ResponseCacheOptions["payForSending"],
  redis?: RedisLink,
) {
  if (config.cache.responseTtlMs <= 0) return undefined;
  const options: ResponseCacheOptions = {
    ttlMs: config.cache.responseTtlMs,
    maxEntries: config.cache.responseMaxEntries,
    maxBytes: config.cache.responseMaxBytes,
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    sessionHeader: API_KEY_HEADER,
    shared: redis && redisResponseTier(redis, metrics),
    onLookup: (result) => metrics.responseCacheLookup(result),
    joinWithinMs: config.requestTimeoutMs,
    compression,
    payForSending,
  };
  const store = new ResponseStore(options);
  return { store, shared: options.shared, plugin: useResponseCache(store, options) as Plugin };
}

interface PluginParts {
  config: GatewayConfig;
  refusalNotes: RefusalNotes;
  validated: Plugin;
  logger: Logger;
  metrics: GatewayMetrics;
  first: Plugin[];
  deadlines: RequestDeadlines;
  rateLimit: ReturnType<typeof useRateLimit> | undefined;
  /** Whether the parse cache holds this query text. */
  isParsed(source: string): boolean;
  keyVerdicts: KeyVerdicts;
  responseCache: Plugin[];
  requestIds: WeakMap<Request, RequestId>;
  readiness: UpstreamReadiness;
  compression: Compression;
  streams: SocketStreams;
  contextForEvent(parent: GatewayContext, deadline: number): GatewayContext;
  eventStreams: Plugin;
}

/** Every plugin, in the order that matters: each comment says why a plugin stands where it does. */
function pluginsInOrder(parts: PluginParts) {
  const { config, logger, metrics, deadlines, rateLimit, requestIds } = parts;
  return [
    // Each event of a subscription its own execution, with its own deadline and loaders. It sets
    // the subscribe function, which the plugins after it wrap (tracing's) and none replaces
    // (graphql-jit never runs a subscription).
    useEventExecution({
      timeoutMs: deadlines.timeoutMs,
      contextFor: parts.contextForEvent,
      opened: forgetOpeningLoads,
    }) as Plugin,
    ...parts.first,
    deadlines.arrival(),
    useBodyLimit(config.security.maxBodyBytes),
    // Before any plugin that can refuse a request after reading it: every request pays first.
    ...(rateLimit ? [rateLimit.beforeParsing as Plugin] : []),
    // After the 1 every request pays, and before anything that reads a GraphQL request.
    ...(config.graphiql
      ? [useGraphiQLPage({ endpoint: GRAPHQL_ENDPOINT, negotiate: parts.compression.negotiate, pay: rateLimit?.payInAll })]
      : []),
    useRefusals({
      notes: parts.refusalNotes,
      maxNestingDepth: config.security.maxNestingDepth,
      isParsed: parts.isParsed,
      requestIdOf: (request) => requestIds.get(request),
    }),
    // Before the response cache: a key the upstream refused is never served what is held.
    useRefusedKeys(parts.keyVerdicts, GRAPHQL_ENDPOINT),
    // graphql-sse's single-connection mode: before the response cache, which would answer its POSTs
    // as requests of their own; each operation they carry runs this whole pipeline.
    parts.eventStreams,
    // Before the request log: a hit is logged and carries its request id like any answer.
    ...parts.responseCache,
    useRequestLog({ logger, requestIds, graphqlEndpoint: GRAPHQL_ENDPOINT }),
    ...securityPlugins(config.security, config.limits),
    // Each document's validation, kept (after the security plugins: one of them adds the
    // introspection rule to some requests), and which documents the operation lane may take
    // (src/server/operation-lane.ts): those that validated.
    parts.validated,
    // Incremental delivery of queries: multipart/mixed or SSE over HTTP, `next` messages over WebSocket.
    useDeferStream(),
    ...(rateLimit ? [rateLimit.beforeExecution as Plugin] : []),
    // Compiled execution where it answers as graphql-js does (src/plugins/compiled-execution.ts).
    ...(config.compiledExecution
      ? useCompiledExecution({ compileFromRun: config.compileFromRun, compiling: () => metrics.documentCompiled() })
      : []),
    // After every plugin that sets the execute function, which it wraps.
    deadlines.executionBound() as Plugin,
    useReadiness("/ready", parts.readiness),
    // WebSocket operations run this pipeline too: their streams are handed to the socket, not written to an HTTP body.
    parts.streams.plugin,
    // Count and latency by operation, and errors. Operation names are a bounded set of label
    // values, whatever names clients send.
    useOperationMetrics({
      endpoint: "/metrics",
      registry: metrics.registry,
      series: new OperationSeries(
        metrics.registry,
        new OperationNameLabels({
          max: config.security.metricsOperationNames,
          windowMs: config.security.metricsOperationNamesWindowMs,
          seeds: persistedOperationNames(config.security.persistedOperationsFile),
        }),
      ),
    }),
    // Last: every plugin before it may read or replace the answer's body.
    parts.compression.plugin,
  ];
}
