/** Builds the gateway: upstream clients, the shared cache, and the Yoga server over the schema. */
import { BlockFeed } from "./live/block-feed.ts";
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { useDeferStream } from "@graphql-yoga/plugin-defer-stream";
import { usePrometheus } from "@graphql-yoga/plugin-prometheus";
import type { DocumentNode, ExecutionResult } from "graphql";
import { LRUCache } from "lru-cache";
import { createYoga, type Plugin, type YogaServerInstance } from "graphql-yoga";
import type { GatewayConfig } from "./config.ts";
import { createContext, type GatewayContext, type Upstreams } from "./execution/context.ts";
import { RequestDeadlines } from "./limits/deadline.ts";
import { RedisExportRelay } from "./shared-state/export-relay.ts";
import { ExportWatch } from "./live/export-watch.ts";
import { schema } from "./schema.ts";
import { truncated, type Logger } from "./telemetry/logger.ts";
import { GRAPHIQL_EXAMPLES } from "./plugins/graphiql-examples.ts";
import { GatewayMetrics, OperationNameLabels } from "./telemetry/metrics.ts";
import { useCompiledExecution } from "./plugins/compiled-execution.ts";
import { createCompression } from "./server/compression.ts";
import { RateLimiter, refuseSpentCallers, scrapeCharge, unusableBodyCharge, useRateLimit } from "./plugins/rate-limit.ts";
import { UpstreamReadiness, useReadiness } from "./plugins/readiness.ts";
import type { RedisLink } from "./shared-state/redis.ts";
import { KeyVerdicts, useRefusedKeys } from "./plugins/refused-keys.ts";
import { nestsDeeperThan } from "./limits/document-shape.ts";
import { refusalBody, useRefusals, withLastResort } from "./plugins/refusals.ts";
import { useResponseCache } from "./plugins/response-cache.ts";
import { useBodyLimit } from "./plugins/body-limit.ts";
import { persistedOperationNames } from "./plugins/persisted-documents.ts";
import { securityPlugins } from "./plugins/security.ts";
import { redisRecordTier, redisResponseTier } from "./shared-state/shared-tiers.ts";
import { RecordCache } from "./upstream/cache.ts";
import { EvmApi } from "./upstream/evm-api.ts";
import { API_KEY_HEADER, UpstreamService } from "./upstream/http.ts";
import { MetricsApi } from "./upstream/metrics-api.ts";
import { ExportJobsApi } from "./upstream/export-jobs-api.ts";
import { PrimaryNetworkApi } from "./upstream/primary-network-api.ts";
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
  /** Ends every open subscription's stream, which completes it for its client; for shutdown. */
  endStreams(): Promise<void>;
  /**
   * Charges an operation that came over a WebSocket what an HTTP request pays before it is parsed
   * (src/plugins/rate-limit.ts); the result that refuses it, or undefined.
   */
  payForSocketOperation(
    request: Request,
    req: IncomingMessage,
    params: { query?: unknown; operationName?: unknown },
  ): Promise<ExecutionResult | undefined>;
  /** Charges the caller of a `/metrics` scrape answered outside Yoga (a cluster's): 0 when paid, else the seconds to wait. */
  chargeScrape(request: IncomingMessage): Promise<number>;
  close(): Promise<void>;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** How long one readiness check may wait for the upstreams' health routes. */
const READY_TIMEOUT_MS = 2_000;
const GRAPHQL_ENDPOINT = "/graphql";

/** The caller's request id when it is a sane token, else a new one; sent upstream and returned. */
function requestIdOf(request: Request): string {
  const given = request.headers.get("x-request-id")?.trim();
  return given && REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * Returns the request id to the client and logs one line per GraphQL request, without secrets;
 * the operation name as the client sent it, truncated.
 */
function useRequestLog(logger: Logger, requestIds: WeakMap<Request, string>): Plugin<GatewayContext> {
  const started = new WeakMap<Request, number>();
  const operations = new WeakMap<Request, string>();
  return {
    onRequest({ request, url }) {
      requestIds.set(request, requestIdOf(request));
      if (url.pathname.startsWith(GRAPHQL_ENDPOINT)) started.set(request, performance.now());
    },
    onParams({ params, request }) {
      if (typeof params.operationName === "string" && params.operationName)
        operations.set(request, truncated(params.operationName, 128));
    },
    onResponse({ request, response }) {
      const requestId = requestIds.get(request);
      if (requestId) response.headers.set("x-request-id", requestId);
      const start = started.get(request);
      if (start === undefined) return;
      logger.info(
        {
          requestId,
          method: truncated(request.method, 16),
          operation: operations.get(request) ?? null,
          status: response.status,
          ms: Math.round((performance.now() - start) * 10) / 10,
        },
        "graphql request",
      );
    },
  };
}

export interface GatewayOptions {
  /** Plugins that run first, e.g. tracing. */
  plugins?: Plugin[];
  /**
   * Redis shared with other gateways: the second tier of both caches, the rate-limit buckets,
   * one export poller across gateways. The caller owns it and closes it after the gateway.
   */
  redis?: RedisLink;
  /** The metrics to count on; pass the ones the RedisLink reports to, so that /metrics shows them. */
  metrics?: GatewayMetrics;
}

export function createGateway(config: GatewayConfig, urls: UpstreamUrls, logger: Logger, options: GatewayOptions = {}): Gateway {
  const { redis } = options;
  const metrics = options.metrics ?? new GatewayMetrics();
  const cache = new RecordCache(config.cache, redis && redisRecordTier(redis, metrics));
  metrics.watchCache(cache);
  const keyVerdicts = new KeyVerdicts(config.apiKeys);
  const deadlines = new RequestDeadlines(config.requestTimeoutMs);
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
  const exportWatch = new ExportWatch(
    (id, call) => upstreams.exportJobs.getOperation(id, call),
    { intervalMs: config.exportPollIntervalMs, readTimeoutMs: config.requestTimeoutMs },
    redis && new RedisExportRelay(redis, config.exportPollIntervalMs),
  );
  const blockFeed = new BlockFeed(
    (chainId, pageSize, pageToken, call) => upstreams.evm.listLatestBlocks(chainId, { pageSize, pageToken }, call),
    (network, pageSize, pageToken, call) => upstreams.evm.listLatestBlocksAllChains(network, { pageSize, pageToken }, call),
    {
      intervalMs: config.live.blocksPollMs,
      maxIntervalMs: Math.max(config.live.blocksPollMs, config.live.blocksMaxPollMs),
      maxCatchUpBlocks: config.live.maxCatchUpBlocks,
      maxPending: config.live.maxPendingEvents,
      readTimeoutMs: config.requestTimeoutMs,
    },
  );
  const warpVerifier = new WarpVerifier(config.warpVerifyThreads, metrics.registry);
  const requestIds = new WeakMap<Request, string>();
  const observeBatch = (loader: string, keys: number) => metrics.loaderBatch(loader, keys);
  const stopChainRefresh = config.cache.preloadChains
    ? upstreams.evm.keepChainsFresh((error) =>
        logger.warn({ err: error }, "could not refresh the chain list; serving the one held"),
      )
    : () => {};

  /** Ready when both services answer their health routes and no breaker is open. */
  const readiness = new UpstreamReadiness(
    [
      { service: dataService, route: "/v1/health-check" },
      { service: metricsService, route: "/v2/health-check" },
    ],
    { maxAgeMs: config.server.readyCacheMs, timeoutMs: READY_TIMEOUT_MS },
  );

  // Keyed by query text, and bounded by entries and by characters of it.
  const bySource = <T extends object>() =>
    new LRUCache<string, T>({
      max: config.cache.documentMaxEntries,
      maxSize: config.cache.documentMaxBytes,
      sizeCalculation: (_value, source) => Math.max(1, source.length),
    });
  const documentCache = bySource<DocumentNode>();
  metrics.watchSizes(
    "gateway_document_cache",
    {
      entries: "Parsed documents held, with their validation and compiled execution: entries.",
      bytes: "Parsed documents held, with their validation and compiled execution: bytes as the cache counts them.",
    },
    () => ({ entries: documentCache.size, bytes: documentCache.calculatedSize }),
  );

  const rateLimiter = config.rateLimit.enabled ? new RateLimiter(config.rateLimit, metrics, options.redis) : undefined;
  const refusesSpentCaller = rateLimiter ? refuseSpentCallers(rateLimiter, config.rateLimit, metrics, logger) : () => false;
  const chargeUnusableBody = rateLimiter ? unusableBodyCharge(rateLimiter, config.rateLimit) : () => {};
  const rateLimit =
    rateLimiter &&
    useRateLimit(config.rateLimit, rateLimiter, {
      graphqlEndpoint: GRAPHQL_ENDPOINT,
      isParsed: (source) => documentCache.has(source),
    });

  const compression = createCompression(config.compression);
  // Rendered once: its options are the same for every view, and its compressed bytes are kept.
  let graphiqlPage: Promise<string> | undefined;

  const responseCache: Plugin[] =
    config.cache.responseTtlMs > 0
      ? [
          useResponseCache({
            ttlMs: config.cache.responseTtlMs,
            maxEntries: config.cache.responseMaxEntries,
            maxBytes: config.cache.responseMaxBytes,
            graphqlEndpoint: GRAPHQL_ENDPOINT,
            sessionHeader: API_KEY_HEADER,
            shared: redis && redisResponseTier(redis, metrics),
            onLookup: (result) => metrics.responseCacheLookup(result),
            compression,
          }) as Plugin,
        ]
      : [];

  const yoga = createYoga<Record<string, never>, GatewayContext>({
    schema,
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    healthCheckEndpoint: "/health",
    landingPage: false,
    logging: logger,
    graphiql: config.graphiql
      ? {
          title: "Avalanche GraphQL gateway",
          defaultQuery: GRAPHIQL_EXAMPLES[0]?.query,
          defaultTabs: GRAPHIQL_EXAMPLES.map((example) => ({
            query: example.query,
            variables: example.variables ? JSON.stringify(example.variables, null, 2) : undefined,
          })),
          headers: JSON.stringify({ "x-glacier-api-key": "" }),
        }
      : false,
    // GraphiQL with its assets inlined, so that it works offline; loaded on the first page view only.
    renderGraphiQL: (options) =>
      (graphiqlPage ??= import("@graphql-yoga/render-graphiql").then(
        ({ renderGraphiQL }) => compression.staticBody(renderGraphiQL(options)),
        (error: unknown) => {
          graphiqlPage = undefined;
          throw error;
        },
      )),
    // Bodies beyond MAX_BODY_BYTES never reach the parser: useBodyLimit refuses a POST without
    // a declared length or over the limit, and Node's HTTP parser holds a body to its declared
    // length. Yoga's own limit would pipe every body through one more stream.
    maxRequestBodySize: false,
    batching: false,
    // A persisted document's id, as the GraphQL-over-HTTP persisted-documents convention sends it.
    extraParamNames: ["documentId"],
    // Bounded by entries and by query text: everything else kept per document (validation,
    // compiled execution, the limits' analysis) is held through the parsed document.
    parserAndValidationCache: {
      documentCache,
      errorCache: bySource<object>(),
    },
    // An error thrown by a plugin's HTTP hook is answered as JSON, never as a stack trace.
    plugins: withLastResort(
      [
        ...(options.plugins ?? []),
        deadlines.arrival(),
        useBodyLimit(config.security.maxBodyBytes),
        // Before any plugin that can refuse a request after reading it: every request pays first.
        ...(rateLimit ? [rateLimit.beforeParsing as Plugin] : []),
        useRefusals({
          logger,
          metrics,
          maxNestingDepth: config.security.maxNestingDepth,
          hideSuggestions: !config.security.introspection,
          requestIdOf: (request) => requestIds.get(request),
        }),
        // Before the response cache: a key the upstream refused is never served what is held.
        useRefusedKeys(keyVerdicts, GRAPHQL_ENDPOINT),
        // Before the request log: a hit is logged and carries its request id like any answer.
        ...responseCache,
        useRequestLog(logger, requestIds),
        ...securityPlugins(config.security, config.limits),
        // Incremental delivery of queries: multipart/mixed or SSE over HTTP, `next` messages over WebSocket.
        useDeferStream(),
        ...(rateLimit ? [rateLimit.beforeExecution as Plugin] : []),
        // Compiled execution where it answers as graphql-js does (src/plugins/compiled-execution.ts).
        ...(config.compiledExecution ? useCompiledExecution() : []),
        // After every plugin that sets the execute function, which it wraps.
        deadlines.executionBound() as Plugin,
        useReadiness("/ready", readiness),
        usePrometheus({
          endpoint: "/metrics",
          registry: metrics.registry,
          // Count and latency by operation, and errors; per-phase timings cost more than they tell.
          // Operation names are a bounded set of label values, whatever names clients send.
          metrics: {
            ...metrics.graphqlMetrics(
              new OperationNameLabels(
                config.security.metricsOperationNames,
                persistedOperationNames(config.security.persistedOperationsFile),
              ),
            ),
            graphql_envelop_deprecated_field: false,
            graphql_envelop_request: false,
            graphql_envelop_request_time_summary: false,
            graphql_envelop_phase_parse: false,
            graphql_envelop_phase_validate: false,
            graphql_envelop_phase_context: false,
            graphql_envelop_phase_execute: false,
            graphql_envelop_phase_subscribe: false,
            graphql_envelop_schema_change: false,
            graphql_yoga_http_duration: false,
          },
        }),
        // Last: every plugin before it may read or replace the answer's body.
        compression.plugin,
      ],
      logger,
    ),
    context: ({ request }) => {
      const callerKey = request.headers.get(API_KEY_HEADER)?.trim();
      return createContext(
        upstreams,
        {
          apiKey: callerKey || undefined,
          requestId: requestIds.get(request) ?? requestIdOf(request),
          deadline: deadlines.of(request),
        },
        config.limits,
        exportWatch,
        observeBatch,
        warpVerifier,
        blockFeed,
      );
    },
  });

  /**
   * Reads a JSON POST body within the limit and parses it before Yoga sees the request, as a
   * body-parser middleware would: Yoga then takes the parsed body as it is, instead of piping
   * the stream through its own reader for every request. Other bodies, and bodies without a
   * declared length or over the limit, go to Yoga unread; it answers or refuses them itself.
   * A body nested deeper than MAX_NESTING_DEPTH goes to Yoga as text too, and is refused there
   * like any other (src/plugins/refusals.ts): parsed, it would be stringified again by the server
   * adapter, which overflows the stack on such nesting.
   */
  function listener(request: IncomingMessage & { body?: unknown }, response: ServerResponse): void {
    if (refusesSpentCaller(request, response)) return;
    const declared = Number(request.headers["content-length"]);
    const json = request.headers["content-type"]?.startsWith("application/json") ?? false;
    if (request.method !== "POST" || !json || !(declared > 0 && declared <= config.security.maxBodyBytes)) {
      void yoga(request, response);
      return;
    }
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.once("end", () => {
      try {
        const text = Buffer.concat(chunks).toString("utf8");
        let parsed: unknown;
        try {
          parsed = nestsDeeperThan(text, config.security.maxNestingDepth) ? undefined : JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        // Yoga takes a non-empty object as the parsed body; anything else as text, which it
        // parses and refuses with its own message.
        const usable = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) && Object.keys(parsed).length > 0;
        if (!usable) chargeUnusableBody(request, text.length);
        request.body = usable ? parsed : text;
        void yoga(request, response);
      } catch (error) {
        // The last resort: whatever failed, the client gets JSON, never a stack trace.
        logger.error({ err: error }, "unexpected error reading a request");
        if (response.headersSent) response.destroy();
        else
          response
            .writeHead(500, { "content-type": "application/json; charset=utf-8" })
            .end(refusalBody("Unexpected error.", "INTERNAL_SERVER_ERROR"));
      }
    });
    request.once("error", () => response.destroy());
  }

  return {
    yoga,
    listener,
    upstreams,
    cache,
    metrics,
    endStreams: () => {
      blockFeed.close();
      return exportWatch.close();
    },
    payForSocketOperation: rateLimit ? rateLimit.payForReading : async () => undefined,
    chargeScrape: rateLimiter ? scrapeCharge(rateLimiter, config.rateLimit) : async () => 0,
    async close() {
      stopChainRefresh();
      blockFeed.close();
      await Promise.all([exportWatch.close(), dataService.close(), metricsService.close(), warpVerifier.close()]);
    },
  };
}
