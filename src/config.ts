/** Gateway configuration, read once from the environment. Every value has a default that runs offline. */

export interface GatewayConfig {
  /** Base URL of the Data API; undefined means "start the embedded simulator". */
  dataApiUrl: string | undefined;
  /** Base URL of the Metrics API; undefined means "start the embedded simulator". */
  metricsApiUrl: string | undefined;
  /** Key sent as `x-glacier-api-key` when the caller sends none. Never logged. */
  apiKey: string | undefined;
  host: string;
  port: number;
  graphiql: boolean;
  logLevel: string;
  upstream: UpstreamConfig;
  cache: CacheConfig;
}

export interface UpstreamConfig {
  /** Connections kept open per upstream service. */
  connections: number;
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

export interface CacheConfig {
  /** Most records held by the shared cache. */
  maxEntries: number;
  /** Most bytes (of JSON) held by the shared cache. */
  maxBytes: number;
  /** How long chain records stay cached; they change rarely but do change. */
  chainTtlMs: number;
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min) {
    throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`);
  }
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

export function loadConfig(env: Env = process.env): GatewayConfig {
  return {
    dataApiUrl: url(env, "DATA_API_URL"),
    metricsApiUrl: url(env, "METRICS_API_URL"),
    apiKey: env.GLACIER_API_KEY?.trim() || undefined,
    host: env.HOST?.trim() || "0.0.0.0",
    port: integer(env, "PORT", 4000),
    graphiql: boolean(env, "GRAPHIQL", true),
    logLevel: env.LOG_LEVEL?.trim() || "info",
    upstream: {
      connections: integer(env, "UPSTREAM_CONNECTIONS", 64, 1),
      connectTimeoutMs: integer(env, "UPSTREAM_CONNECT_TIMEOUT_MS", 3_000, 1),
      headersTimeoutMs: integer(env, "UPSTREAM_HEADERS_TIMEOUT_MS", 10_000, 1),
      bodyTimeoutMs: integer(env, "UPSTREAM_BODY_TIMEOUT_MS", 10_000, 1),
      keepAliveTimeoutMs: integer(env, "UPSTREAM_KEEPALIVE_TIMEOUT_MS", 30_000, 1),
    },
    cache: {
      maxEntries: integer(env, "CACHE_MAX_ENTRIES", 50_000, 1),
      maxBytes: integer(env, "CACHE_MAX_BYTES", 64 * 1024 * 1024, 1024),
      chainTtlMs: integer(env, "CHAIN_CACHE_TTL_MS", 5 * 60_000, 0),
    },
  };
}
