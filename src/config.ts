/** Gateway configuration, read once from the environment. Every value has a default that runs offline. */
import {
  integer,
  pollInterval,
  ratio,
  boolean,
  url,
  redisUrl,
  workers,
  positiveNumber,
  tracingMode,
  type Env,
} from "./config-env.ts";
import type { RedisConfig, LiveConfig, GatewayConfig, ServerConfig } from "./config-shape.ts";

export type * from "./config-shape.ts";

function liveConfig(env: Env): LiveConfig {
  const maxPollers = integer(env, "LIVE_MAX_POLLERS", 1_000, 1);
  const takeoverMs = integer(env, "LIVE_TAKEOVER_MS", 10_000, 300);
  const redisTimeoutMs = integer(env, "REDIS_TIMEOUT_MS", 100, 1);
  // The lock is renewed every third of it: each renewal must be able to take Redis's longest wait.
  if (takeoverMs < 3 * redisTimeoutMs) {
    throw new Error(`LIVE_TAKEOVER_MS (${takeoverMs}) must be at least 3 × REDIS_TIMEOUT_MS (${redisTimeoutMs})`);
  }
  return {
    blocks: pollInterval(env, "LIVE_BLOCKS", 2_000, 8_000),
    addressTransactions: pollInterval(env, "LIVE_ADDRESS", 4_000, 30_000),
    primaryNetworkTransactions: pollInterval(env, "LIVE_PRIMARY_NETWORK", 4_000, 30_000),
    chainMetrics: pollInterval(env, "LIVE_METRICS", 30_000, 300_000),
    maxCatchUp: integer(env, "LIVE_MAX_CATCH_UP", 500, 1),
    maxPendingEvents: integer(env, "LIVE_MAX_PENDING_EVENTS", 256, 1),
    maxPollers,
    maxPollersPerCaller: integer(env, "LIVE_MAX_POLLERS_PER_CALLER", Math.max(1, Math.floor(maxPollers / 20)), 1),
    takeoverMs,
    maxReadsPerSecond: integer(env, "LIVE_MAX_READS_PER_SECOND", 100, 1),
  };
}

function serverConfig(env: Env): ServerConfig {
  const requestTimeoutMs = integer(env, "SERVER_REQUEST_TIMEOUT_MS", 10_000, 1);
  const headersTimeoutMs = integer(env, "SERVER_HEADERS_TIMEOUT_MS", Math.min(5_000, requestTimeoutMs), 1);
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new Error(
      `SERVER_HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not exceed SERVER_REQUEST_TIMEOUT_MS (${requestTimeoutMs})`,
    );
  }
  const maxConnections = integer(env, "MAX_CONNECTIONS", 1_024, 1);
  return {
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: integer(env, "SERVER_KEEPALIVE_TIMEOUT_MS", 5_000, 1),
    maxConnections,
    maxConnectionsPerAddress: integer(env, "MAX_CONNECTIONS_PER_ADDRESS", boolean(env, "TRUST_PROXY", false) ? 0 : 64, 0),
    readyCacheMs: integer(env, "READY_CACHE_MS", 1_000, 1),
    webSocketMaxMessageBytes: integer(env, "WS_MAX_MESSAGE_BYTES", integer(env, "MAX_BODY_BYTES", 100_000, 1), 1),
    webSocketMaxOperations: integer(env, "WS_MAX_OPERATIONS_PER_SOCKET", 20, 1),
    webSocketAllowedOrigins: (env.WS_ALLOWED_ORIGINS ?? "")
      .split(",")
      .map((origin) => origin.trim().replace(/\/+$/, "").toLowerCase())
      .filter(Boolean),
    webSocketMaxConnections: Math.min(
      integer(env, "WS_MAX_CONNECTIONS", Math.max(1, Math.floor(maxConnections / 2)), 1),
      maxConnections,
    ),
    webSocketMaxConnectionsPerAddress: integer(env, "WS_MAX_CONNECTIONS_PER_ADDRESS", 16, 1),
    webSocketIdleTimeoutMs: integer(env, "WS_IDLE_TIMEOUT_MS", 60_000, 1),
    webSocketMaxUnreadBytes: integer(env, "WS_MAX_UNREAD_BYTES", 1_048_576, 1),
    sseMaxStreamsPerAddress: integer(env, "SSE_MAX_STREAMS_PER_ADDRESS", 16, 1),
    sseListenWithinMs: integer(env, "SSE_LISTEN_WITHIN_MS", 10_000, 1),
    refusalHolds: {
      holdMs: integer(env, "REFUSAL_HOLD_MS", 1_000, 0, 10_000),
      maxHeld: integer(env, "REFUSAL_HOLD_MAX", maxConnections, 0),
    },
    operationLane: boolean(env, "OPERATION_LANE", true),
  };
}

function redisConfig(env: Env, name: "REDIS_URL" | "REDIS_CACHE_URL"): RedisConfig | undefined {
  const url = redisUrl(env, name);
  if (!url) return undefined;
  return {
    url,
    timeoutMs: integer(env, "REDIS_TIMEOUT_MS", 100, 1),
    keyPrefix: env.REDIS_KEY_PREFIX?.trim() || "avalanche-gateway:",
  };
}

export function loadConfig(env: Env = process.env): GatewayConfig {
  return {
    dataApiUrl: url(env, "DATA_API_URL"),
    metricsApiUrl: url(env, "METRICS_API_URL"),
    apiKey: env.GLACIER_API_KEY?.trim() || undefined,
    apiKeys: {
      refusedTtlMs: integer(env, "REFUSED_KEY_TTL_MS", 60_000, 1),
      acceptedTtlMs: integer(env, "ACCEPTED_KEY_TTL_MS", 60_000, 1),
      verdictMaxEntries: integer(env, "API_KEY_VERDICT_MAX_ENTRIES", 10_000, 1),
    },
    host: env.HOST?.trim() || "0.0.0.0",
    port: integer(env, "PORT", 4000),
    graphiql: boolean(env, "GRAPHIQL", true),
    logLevel: env.LOG_LEVEL?.trim() || "info",
    requestTimeoutMs: integer(env, "REQUEST_TIMEOUT_MS", 15_000, 1),
    shutdownGraceMs: integer(env, "SHUTDOWN_GRACE_MS", 10_000, 0),
    exportPollIntervalMs: integer(env, "EXPORT_POLL_INTERVAL_MS", 2_000, 20),
    live: liveConfig(env),
    tracing: tracingMode(env),
    compiledExecution: boolean(env, "GRAPHQL_JIT", true),
    compileFromRun: integer(env, "GRAPHQL_JIT_FROM_RUN", 2, 1),
    upstream: {
      connections: integer(env, "UPSTREAM_CONNECTIONS", 64, 1),
      connectTimeoutMs: integer(env, "UPSTREAM_CONNECT_TIMEOUT_MS", 3_000, 1),
      headersTimeoutMs: integer(env, "UPSTREAM_HEADERS_TIMEOUT_MS", 10_000, 1),
      bodyTimeoutMs: integer(env, "UPSTREAM_BODY_TIMEOUT_MS", 10_000, 1),
      keepAliveTimeoutMs: integer(env, "UPSTREAM_KEEPALIVE_TIMEOUT_MS", 30_000, 1),
      retries: integer(env, "UPSTREAM_RETRIES", 2),
      retryBaseMs: integer(env, "UPSTREAM_RETRY_BASE_MS", 100, 1),
      retryBudgetRatio: ratio(env, "UPSTREAM_RETRY_BUDGET_RATIO", 0.2),
      retryBudgetCap: integer(env, "UPSTREAM_RETRY_BUDGET_CAP", 50, 1),
      breakerErrorPercentage: integer(env, "BREAKER_ERROR_PERCENTAGE", 50, 1),
      breakerVolumeThreshold: integer(env, "BREAKER_VOLUME_THRESHOLD", 20, 1),
      breakerResetMs: integer(env, "BREAKER_RESET_MS", 10_000, 1),
    },
    limits: {
      // RATE_LIMIT_BURST's default: by default an operation within the limit fits a full bucket.
      // The limit stays when the burst is raised (or rate limiting is off): it bounds what one
      // operation makes the upstream do, where the burst bounds what a caller spends at once.
      cost: integer(env, "MAX_QUERY_COST", 1_000, 1),
      depth: integer(env, "MAX_QUERY_DEPTH", 15, 1),
      breadth: integer(env, "MAX_QUERY_BREADTH", 500, 1),
      aliases: integer(env, "MAX_QUERY_ALIASES", 50, 1),
      // Six times the largest document the example operations send (320 tokens); parsing and
      // validating 2,000 tokens holds the event loop some 10 ms.
      tokens: integer(env, "MAX_QUERY_TOKENS", 2_000, 1),
      directives: integer(env, "MAX_QUERY_DIRECTIVES", 50, 1),
      entityRepresentations: integer(env, "MAX_ENTITY_REPRESENTATIONS", 100, 1),
    },
    security: {
      maxBodyBytes: integer(env, "MAX_BODY_BYTES", 100_000, 1),
      introspection: boolean(env, "INTROSPECTION", true),
      persistedOperationsFile: env.PERSISTED_OPERATIONS_FILE?.trim() || undefined,
      persistedOperationsOnly: boolean(env, "PERSISTED_OPERATIONS_ONLY", false),
      csrfPrevention: boolean(env, "CSRF_PREVENTION", true),
      maxNestingDepth: integer(env, "MAX_NESTING_DEPTH", 64, 1),
      metricsOperationNames: integer(env, "METRICS_OPERATION_NAMES", 100, 0),
      metricsOperationNamesWindowMs: integer(env, "METRICS_OPERATION_NAMES_WINDOW_MS", 10 * 60_000, 1),
    },
    cache: {
      maxEntries: integer(env, "CACHE_MAX_ENTRIES", 10_000, 1),
      maxBytes: integer(env, "CACHE_MAX_BYTES", 8 * 1024 * 1024, 1024),
      chainTtlMs: integer(env, "CHAIN_CACHE_TTL_MS", 5 * 60_000, 0),
      preloadChains: boolean(env, "CHAIN_LIST_PRELOAD", true),
      finalRecords: boolean(env, "RECORD_CACHE", true),
      responseTtlMs: integer(env, "RESPONSE_CACHE_TTL_MS", 1_000, 0),
      responseMaxEntries: integer(env, "RESPONSE_CACHE_MAX_ENTRIES", 1_000, 1),
      responseMaxBytes: integer(env, "RESPONSE_CACHE_MAX_BYTES", 8 * 1024 * 1024, 1024),
      documentMaxEntries: integer(env, "DOCUMENT_CACHE_MAX_ENTRIES", 250, 1),
      documentMaxBytes: integer(env, "DOCUMENT_CACHE_MAX_BYTES", 256 * 1024, 1024),
    },
    redis: redisConfig(env, "REDIS_URL"),
    redisCache: redisConfig(env, "REDIS_CACHE_URL"),
    rateLimit: {
      enabled: boolean(env, "RATE_LIMIT", true),
      ratePerSecond: positiveNumber(env, "RATE_LIMIT_RATE", 100),
      burst: positiveNumber(env, "RATE_LIMIT_BURST", 1_000),
      trustProxy: boolean(env, "TRUST_PROXY", false),
      address: {
        ratePerSecond: positiveNumber(env, "RATE_LIMIT_ADDRESS_RATE", positiveNumber(env, "RATE_LIMIT_RATE", 100)),
        burst: positiveNumber(env, "RATE_LIMIT_ADDRESS_BURST", positiveNumber(env, "RATE_LIMIT_BURST", 1_000)),
      },
      subscriptionsPerCaller: integer(env, "MAX_SUBSCRIPTIONS_PER_CALLER", 10, 1),
    },
    workers: workers(env),
    warpVerifyThreads: integer(env, "WARP_VERIFY_THREADS", 1, 0),
    server: serverConfig(env),
    compression: {
      enabled: boolean(env, "COMPRESSION", true),
      minBytes: integer(env, "COMPRESSION_MIN_BYTES", 1_024, 0),
    },
  };
}
