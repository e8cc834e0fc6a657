/** The shape of the gateway's configuration: what loadConfig (src/config.ts) reads from the environment. */
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
