/** Gateway configuration, read once from the environment. Every value has a default that runs offline. */
import { availableParallelism } from "node:os";

/** A Redis the gateways share (REDIS_URL, REDIS_CACHE_URL); src/shared-state/redis.ts connects to it. */
export interface RedisConfig {
  url: string;
  /** Longest a command may take before the gateway goes on without it. */
  timeoutMs: number;
  /** Prefix of every key and channel, so that several deployments can share one Redis. */
  keyPrefix: string;
}

/**
 * What a link is for: `shared` (REDIS_URL) holds the buckets, locks and relays, and the cache
 * tiers unless `cache` (REDIS_CACHE_URL) holds them.
 */
export type RedisRole = "shared" | "cache";

/** Compression of answers (src/plugins/compression.ts). */
export interface CompressionConfig {
  /** COMPRESSION: off sends every answer as it is. */
  enabled: boolean;
  /** COMPRESSION_MIN_BYTES: answers smaller than this are sent as they are. */
  minBytes: number;
}

/** How often a live question's poller reads while something changes, and the longest it waits while nothing does. */
export interface PollInterval {
  baseMs: number;
  maxMs: number;
}

/** Live subscriptions: how their pollers read, and how far a stream may fall behind. */
export interface LiveConfig {
  /** New blocks of a chain or of a network (`GET /v1/chains/{chainId}/blocks`, `GET /v1/blocks`). */
  blocks: PollInterval;
  /** New transactions of an EVM address (`GET /v1/chains/{chainId}/addresses/{address}/transactions`). */
  addressTransactions: PollInterval;
  /** New P-, X- or C-Chain transactions (`GET /v1/networks/{network}/blockchains/{blockchainId}/transactions`). */
  primaryNetworkTransactions: PollInterval;
  /** A chain metric's latest point (`GET /v2/chains/{chainId}/metrics/{metric}`). */
  chainMetrics: PollInterval;
  /** How far back a poller pages to fill a gap, and a subscriber's `after` may reach: blocks, or transactions. */
  maxCatchUp: number;
  /** Events a subscriber may leave unread before its stream ends. */
  maxPendingEvents: number;
  /** Questions (a route and its arguments) a gateway polls at once. */
  maxPollers: number;
  /** Pollers one caller (an address, an IPv6 address's /64) may be the only subscriber of: 5 % of maxPollers by default. */
  maxPollersPerCaller: number;
  /**
   * With Redis: how long the lock of a question's reading gateway (live questions and export
   * jobs) outlives its last heartbeat, so how soon another gateway takes over when it dies.
   */
  takeoverMs: number;
  /** Upstream reads all the pollers may make per second together; beyond, their intervals stretch. */
  maxReadsPerSecond: number;
}

export interface GatewayConfig {
  /** Base URL of the Data API; undefined means "start the embedded simulator". */
  dataApiUrl: string | undefined;
  /** Base URL of the Metrics API; undefined means "start the embedded simulator". */
  metricsApiUrl: string | undefined;
  /** Key sent as `x-glacier-api-key` when the caller sends none. Never logged. */
  apiKey: string | undefined;
  /** What the gateway remembers of the upstream's verdicts on callers' keys. */
  apiKeys: ApiKeyConfig;
  host: string;
  port: number;
  graphiql: boolean;
  logLevel: string;
  /** Time a GraphQL request may take; every upstream call of the request ends by then. */
  requestTimeoutMs: number;
  /** Run operations through graphql-jit's compiled execution instead of graphql-js's interpreter. */
  compiledExecution: boolean;
  /** A document runs compiled from this run of it on (GRAPHQL_JIT_FROM_RUN); its runs before are interpreted. */
  compileFromRun: number;
  /** OpenTelemetry tracing over OTLP/HTTP (TRACING=otlp; endpoint from OTEL_EXPORTER_OTLP_ENDPOINT). */
  tracing: boolean;
  /** How long a shutdown waits for requests in flight before closing their connections. */
  shutdownGraceMs: number;
  /** How often an export operation with subscribers is read again. */
  exportPollIntervalMs: number;
  live: LiveConfig;
  upstream: UpstreamConfig;
  cache: CacheConfig;
  limits: QueryLimits;
  security: SecurityConfig;
  /** Shared by several gateways when set (REDIS_URL); everything works in one process without it. */
  redis: RedisConfig | undefined;
  /**
   * A Redis of its own for the cache tiers (REDIS_CACHE_URL), which may evict; without it they
   * use `redis`. Rate-limit buckets, poller locks and relays are always on `redis`.
   */
  redisCache: RedisConfig | undefined;
  rateLimit: RateLimitConfig;
  /** Gateway processes sharing the port (node:cluster); `WORKERS=auto` is one per core. */
  workers: number;
  /** Threads that check Warp signatures off the event loop (WARP_VERIFY_THREADS); 0 checks them on it, one at a time. */
  warpVerifyThreads: number;
  server: ServerConfig;
  /** Brotli/gzip compression of answers the client accepts compressed (COMPRESSION, COMPRESSION_MIN_BYTES). */
  compression: CompressionConfig;
}

/** What one client's connections may hold of the HTTP server; the caps and timeouts hold per gateway process. */
export interface ServerConfig {
  /** Time a client has to send a request's headers (SERVER_HEADERS_TIMEOUT_MS); at most the request timeout. */
  headersTimeoutMs: number;
  /** Time a client has to send a whole request, headers and body (SERVER_REQUEST_TIMEOUT_MS); answers may take longer. */
  requestTimeoutMs: number;
  /** How long a keep-alive connection may wait idle for its next request (SERVER_KEEPALIVE_TIMEOUT_MS). */
  keepAliveTimeoutMs: number;
  /** Connections open at once; the server closes any beyond (MAX_CONNECTIONS). */
  maxConnections: number;
  /**
   * Connections open at once from one address (an IPv6 /64), closed at once beyond;
   * 0 for no cap (MAX_CONNECTIONS_PER_ADDRESS). Off by default behind a proxy (TRUST_PROXY), whose one address all connections share.
   */
  maxConnectionsPerAddress: number;
  /** How long `/ready` answers from one health check of the upstreams, which it sends at most once per interval (READY_CACHE_MS). */
  readyCacheMs: number;
  /** The largest graphql-ws message a WebSocket client may send; a larger one closes its socket with 1009 (WS_MAX_MESSAGE_BYTES, default MAX_BODY_BYTES). */
  webSocketMaxMessageBytes: number;
  /** Operations one WebSocket may run at once, subscriptions and queries together (WS_MAX_OPERATIONS_PER_SOCKET). */
  webSocketMaxOperations: number;
  /**
   * Origins a browser may open a WebSocket from (WS_ALLOWED_ORIGINS, comma-separated; `*` for any).
   * Empty, the default: only the gateway's own origin (the upgrade's `Origin` names its `Host`).
   * An upgrade without `Origin` (not a browser) is not a cross-site one and is taken.
   */
  webSocketAllowedOrigins: readonly string[];
  /** WebSockets open at once, below MAX_CONNECTIONS so that HTTP callers always have room (WS_MAX_CONNECTIONS). */
  webSocketMaxConnections: number;
  /** WebSockets open at once per caller address (an IPv6 /64; the forwarded one behind a trusted proxy) (WS_MAX_CONNECTIONS_PER_ADDRESS). */
  webSocketMaxConnectionsPerAddress: number;
  /** How long a WebSocket may run no operation before the gateway closes it (WS_IDLE_TIMEOUT_MS). */
  webSocketIdleTimeoutMs: number;
  /** Bytes of results a WebSocket's client may leave unread before its socket is closed (WS_MAX_UNREAD_BYTES). */
  webSocketMaxUnreadBytes: number;
  /**
   * graphql-sse event streams (single-connection mode) one caller address may hold, reserved or
   * listened to (SSE_MAX_STREAMS_PER_ADDRESS); a listened one's client may leave WS_MAX_UNREAD_BYTES unread, as a WebSocket's.
   */
  sseMaxStreamsPerAddress: number;
  /** How long a graphql-sse stream reserved by a PUT waits for its GET before it lapses (SSE_LISTEN_WITHIN_MS). */
  sseListenWithinMs: number;
  /** Refusals for a spent budget or a socket cap, answered after a delay (src/limits/refusal-holds.ts). */
  refusalHolds: RefusalHoldsConfig;
  /**
   * A plain JSON POST of a query whose document ran before is executed by the listener, past
   * Yoga's HTTP layer (OPERATION_LANE, default on; src/server/operation-lane.ts). Off: every
   * request goes through Yoga, as a request the lane does not take does.
   */
  operationLane: boolean;
}

/** How refusals are held back: one per connection per hold, however fast a refused client sends. */
export interface RefusalHoldsConfig {
  /** How long a refusal is held (REFUSAL_HOLD_MS, at most 10,000); 0 answers at once. */
  holdMs: number;
  /** Refusals held at once, beyond which they are answered at once (REFUSAL_HOLD_MAX, default MAX_CONNECTIONS: a held refusal is a connection, which the connection caps bound already). */
  maxHeld: number;
}

/** The upstream's verdicts on callers' keys, kept by hash in bounded LRUs (src/plugins/refused-keys.ts). */
export interface ApiKeyConfig {
  /** How long a key the upstream refused (401, 403) is refused by the gateway too (REFUSED_KEY_TTL_MS). */
  refusedTtlMs: number;
  /** How long a key the Data API accepted may be served from shared caches without another upstream call (ACCEPTED_KEY_TTL_MS). */
  acceptedTtlMs: number;
  /** Keys remembered, refused and accepted each (API_KEY_VERDICT_MAX_ENTRIES). */
  verdictMaxEntries: number;
}

/** Per-caller token buckets; an operation costs the upstream calls it is estimated to make. */
export interface RateLimitConfig {
  enabled: boolean;
  /** Tokens added to a caller's bucket per second. */
  ratePerSecond: number;
  /** Most tokens a bucket holds: the largest burst a caller may spend at once. */
  burst: number;
  /** Take the caller's address from the last X-Forwarded-For hop, the one a trusted proxy appended. */
  trustProxy: boolean;
  /**
   * The bucket of an address, which every request from it pays from, with a key or without
   * (RATE_LIMIT_ADDRESS_RATE, RATE_LIMIT_ADDRESS_BURST; by default those of a key): an invented
   * key buys no budget. Raise them when many keyed clients share one address without a proxy.
   */
  address: { ratePerSecond: number; burst: number };
  /** Subscriptions one caller (key, and address) may have open at once (MAX_SUBSCRIPTIONS_PER_CALLER). */
  subscriptionsPerCaller: number;
}

/** Bounds on what one operation may ask, enforced before it runs. */
export interface QueryLimits {
  /**
   * Cost: the upstream calls the operation is estimated to make and its CPU counted in calls, what
   * the rate limiter charges for it (src/limits/upstream-calls.ts).
   */
  cost: number;
  depth: number;
  /** Fields selected in the whole operation. */
  breadth: number;
  aliases: number;
  tokens: number;
  directives: number;
  /** Representations one `_entities` field may be asked for (MAX_ENTITY_REPRESENTATIONS); more are refused before any look-up. */
  entityRepresentations: number;
}

export interface SecurityConfig {
  /** Largest accepted request body, in bytes. */
  maxBodyBytes: number;
  introspection: boolean;
  /** Path of a JSON file mapping operation hashes (sha256 hex) to documents. */
  persistedOperationsFile: string | undefined;
  /** When true, only the persisted operations run. */
  persistedOperationsOnly: boolean;
  csrfPrevention: boolean;
  /** Deepest nesting of JSON (variables, extensions) and of a document's brackets; deeper requests are refused (MAX_NESTING_DEPTH). */
  maxNestingDepth: number;
  /** Operation names that label GraphQL metrics beside the persisted ones; the others are `other` (METRICS_OPERATION_NAMES). */
  metricsOperationNames: number;
  /** At the end of each such window, the names that ran the most operations in it keep or earn the labels (METRICS_OPERATION_NAMES_WINDOW_MS). */
  metricsOperationNamesWindowMs: number;
}

export interface UpstreamConfig {
  /** Connections kept open per upstream service. */
  connections: number;
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  keepAliveTimeoutMs: number;
  /** Retries of an idempotent GET after a connection error, 429, 502 or 503. */
  retries: number;
  retryBaseMs: number;
  /** Each request adds this much to the retry budget; each retry takes 1. */
  retryBudgetRatio: number;
  retryBudgetCap: number;
  /** The breaker opens when this share (percent) of recent calls failed... */
  breakerErrorPercentage: number;
  /** ...out of at least this many calls in the last 10 s. */
  breakerVolumeThreshold: number;
  /** How long the breaker stays open before one probe call may pass. */
  breakerResetMs: number;
}

export interface CacheConfig {
  /** Most records held by the shared cache. */
  maxEntries: number;
  /** Most bytes (of JSON) held by the shared cache. */
  maxBytes: number;
  /** How long chain records stay cached; they change rarely but do change. */
  chainTtlMs: number;
  /** Keep records that do not change (blocks, finalized transactions, vertices) across requests. */
  finalRecords: boolean;
  /** Load the chain list at start and refresh it before it expires, so that no request waits for it. */
  preloadChains: boolean;
  /** How long a whole query response is reused for the same caller (0: never): "latest" lists that clients poll. */
  responseTtlMs: number;
  responseMaxEntries: number;
  /** Most bytes of answers the response cache holds. */
  responseMaxBytes: number;
  /**
   * Parsed documents kept (with what hangs on them: validation, compiled execution, the limits'
   * analysis), and the most characters of query text among them. A parsed document with its
   * tokens and compiled code takes some 70 times its text in memory.
   */
  documentMaxEntries: number;
  documentMaxBytes: number;
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    const bound = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw new Error(`${name} must be an integer ${bound}, got "${raw}"`);
  }
  return value;
}

/** `<prefix>_POLL_MS` and `<prefix>_MAX_POLL_MS`; the longest is never shorter than the base. */
function pollInterval(env: Env, prefix: string, baseMs: number, maxMs: number): PollInterval {
  const base = integer(env, `${prefix}_POLL_MS`, baseMs, 100);
  return { baseMs: base, maxMs: Math.max(base, integer(env, `${prefix}_MAX_POLL_MS`, maxMs, 100)) };
}

function ratio(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || value > 1) throw new Error(`${name} must be a number from 0 to 1, got "${raw}"`);
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === "") return fallback;
  if (["1", "true", "yes", "on"].includes(raw)) return true;
  if (["0", "false", "no", "off"].includes(raw)) return false;
  throw new Error(`${name} must be true or false, got "${env[name]}"`);
}

function url(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new Error(`${name} must be an absolute http(s) URL, got "${raw}"`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new Error(`${name} must be an http(s) URL, got "${raw}"`);
  }
  if (parsed.username || parsed.password) throw new Error(`${name} must not carry credentials`);
  return parsed.toString().replace(/\/+$/, "");
}

function redisUrl(env: Env, name: "REDIS_URL" | "REDIS_CACHE_URL"): string | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new Error(`${name} must be a redis:// or rediss:// URL`);
  }
  // The URL may carry a password: never echo it.
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:")
    throw new Error(`${name} must be a redis:// or rediss:// URL`);
  return raw;
}

function workers(env: Env): number {
  const raw = env.WORKERS?.trim().toLowerCase();
  if (raw === undefined || raw === "") return 1;
  if (raw === "auto") return availableParallelism();
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < 1) {
    throw new Error(
      `WORKERS must be a whole number of gateway processes (1 or more) or "auto" (one per core), got "${env.WORKERS}"`,
    );
  }
  return value;
}

function positiveNumber(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
}

function tracingMode(env: Env): boolean {
  const raw = env.TRACING?.trim().toLowerCase();
  if (!raw || raw === "off" || raw === "none") return false;
  if (raw === "otlp") return true;
  throw new Error(`TRACING must be otlp or off, got "${env.TRACING}"`);
}

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
