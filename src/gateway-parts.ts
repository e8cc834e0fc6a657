/**
 * The parts createGateway (src/gateway.ts) builds a gateway from, each one step of it: the
 * upstream clients and the record cache, what every request's context shares, the readiness
 * check, the parse caches, the response cache, and the budget a WebSocket's frames are paid from.
 */
import type { DocumentNode } from "graphql";
import type { Plugin } from "graphql-yoga";
import { LRUCache } from "lru-cache";
import type { GatewayConfig } from "./config.ts";
import type { SharedServices } from "./execution/context.ts";
import { bucketsOfCaller, callerHeaders } from "./limits/caller-buckets.ts";
import type { RateLimitDecision, RateLimiter } from "./limits/rate-limiter.ts";
import type { BucketRef } from "./limits/token-buckets.ts";
import type { IncomingMessage } from "node:http";
import { ExportWatch } from "./live/export-watch.ts";
import { LiveFeed } from "./live/live-feed.ts";
import type { LiveBatch } from "./live/live-poller.ts";
import { LiveQuestions } from "./live/live-questions.ts";
import type { Compression } from "./plugins/compression.ts";
import { UpstreamReadiness } from "./plugins/readiness.ts";
import { KeyVerdicts } from "./plugins/refused-keys.ts";
import { useResponseCache } from "./plugins/response-cache.ts";
import { ResponseStore, type ResponseCacheOptions } from "./plugins/response-store.ts";
import { RedisPollerRelay } from "./shared-state/redis-poller-relay.ts";
import type { RedisLink } from "./shared-state/redis.ts";
import { redisRecordTier, redisResponseTier } from "./shared-state/shared-tiers.ts";
import type { Logger } from "./telemetry/logger.ts";
import type { GatewayMetrics } from "./telemetry/metrics.ts";
import { RecordCache } from "./upstream/cache.ts";
import { EvmApi } from "./upstream/evm-api.ts";
import { ExportJobsApi } from "./upstream/export-jobs-api.ts";
import { API_KEY_HEADER } from "./upstream/call-options.ts";
import { UpstreamService } from "./upstream/http.ts";
import { MetricsApi } from "./upstream/metrics-api.ts";
import { PrimaryNetworkApi } from "./upstream/primary-network-api.ts";
import { HEALTH_ROUTES } from "./upstream/routes.ts";
import type { ExportOperation } from "./upstream/types.ts";
import type { Upstreams } from "./upstream/upstreams.ts";
import { WarpApi } from "./upstream/warp-api.ts";
import { WarpVerifier } from "./warp/verifier.ts";

export interface UpstreamUrls {
  dataApiUrl: string;
  metricsApiUrl: string;
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

export const GRAPHQL_ENDPOINT = "/graphql";
/** How long one readiness check may wait for the upstreams' health routes. */
const READY_TIMEOUT_MS = 2_000;

/** What the WebSocket transport checks and charges before a socket's frames reach Yoga. */
export function socketBudget(limiter: RateLimiter, config: GatewayConfig): SocketBudget {
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

export interface ConnectedUpstreams {
  upstreams: Upstreams;
  cache: RecordCache;
  keyVerdicts: KeyVerdicts;
  dataService: UpstreamService;
  metricsService: UpstreamService;
}

/** The two services' HTTP clients, the shared record cache, and the API clients over them. */
export function connectUpstreams(
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
export function startSharedServices(
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
export function keepChainListFresh(config: GatewayConfig, upstreams: Upstreams, logger: Logger): () => void {
  if (!config.cache.preloadChains) return () => {};
  return upstreams.evm.keepChainsFresh((error) =>
    logger.warn({ err: error }, "could not refresh the chain list; serving the one held"),
  );
}

/** Ready when both services answer their health routes and neither health route's breaker is open. */
export function upstreamReadiness(config: GatewayConfig, upstream: ConnectedUpstreams): UpstreamReadiness {
  return new UpstreamReadiness(
    [
      { service: upstream.dataService, route: HEALTH_ROUTES.data },
      { service: upstream.metricsService, route: HEALTH_ROUTES.metrics },
    ],
    { maxAgeMs: config.server.readyCacheMs, timeoutMs: READY_TIMEOUT_MS },
  );
}

/** Yoga's parse caches, keyed by query text and bounded by entries and by characters of it. */
export function documentCaches(config: GatewayConfig, metrics: GatewayMetrics) {
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
export function responseCache(
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
