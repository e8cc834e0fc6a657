/** What a `npm run soak:live` run does and when: its knobs, the gateways' settings and its schedule of disruptions. */
import { CHAIN_DEFINITIONS } from "../../simulator/network/chains.ts";

export const C_CHAIN = "43114";

function numberFrom(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
}

export const MINUTES = numberFrom("SOAK_LIVE_MINUTES", 30);
export const SUBSCRIBERS = Math.round(numberFrom("SOAK_LIVE_SUBSCRIBERS", 1_000));
/** Busy C-Chain addresses the address subscribers are spread over. */
export const ADDRESSES = Math.round(numberFrom("SOAK_LIVE_ADDRESSES", 10));

/** The gateways' own defaults, which the run keeps; the checks read them. */
export const LIVE_MAX_CATCH_UP = numberFrom("LIVE_MAX_CATCH_UP", 500);
export const LIVE_MAX_PENDING_EVENTS = numberFrom("LIVE_MAX_PENDING_EVENTS", 256);
export const POLL_MS = {
  blocks: { base: numberFrom("LIVE_BLOCKS_POLL_MS", 2_000), max: numberFrom("LIVE_BLOCKS_MAX_POLL_MS", 8_000) },
  address: { base: numberFrom("LIVE_ADDRESS_POLL_MS", 4_000), max: numberFrom("LIVE_ADDRESS_MAX_POLL_MS", 30_000) },
  primaryNetwork: {
    base: numberFrom("LIVE_PRIMARY_NETWORK_POLL_MS", 4_000),
    max: numberFrom("LIVE_PRIMARY_NETWORK_MAX_POLL_MS", 30_000),
  },
  metrics: { base: numberFrom("LIVE_METRICS_POLL_MS", 30_000), max: numberFrom("LIVE_METRICS_MAX_POLL_MS", 300_000) },
};

/**
 * Every subscriber is a caller of its own (X-Forwarded-For behind TRUST_PROXY), so the per-caller
 * caps hold as in production; the rate limits are raised on top, so that a burst of catch-up
 * events after a clock jump measures the streams, not a caller's budget.
 */
export function gatewayEnv(redisUrl: string): Record<string, string> {
  return {
    REDIS_URL: redisUrl,
    TRUST_PROXY: "true",
    RATE_LIMIT_RATE: "1000000000",
    RATE_LIMIT_BURST: "1000000000",
    MAX_CONNECTIONS: String(SUBSCRIBERS + 256),
    WS_MAX_CONNECTIONS: String(SUBSCRIBERS),
  };
}

/** The settings the report lists beside the knobs. */
export const GATEWAY_SETTINGS_SAID = [
  "TRUST_PROXY=true, one X-Forwarded-For address per subscriber (198.18.0.0/15): per-caller stream caps as in production",
  "RATE_LIMIT_RATE and RATE_LIMIT_BURST raised to 1e9: budgets never end a stream",
  "MAX_CONNECTIONS = subscribers + 256, WS_MAX_CONNECTIONS = subscribers: every subscriber fits on one gateway",
  "LIVE_* poll intervals, LIVE_MAX_CATCH_UP, LIVE_MAX_PENDING_EVENTS and REQUEST_TIMEOUT_MS: the gateway's defaults unless set in the environment",
];

/** The simulator's mean live C-Chain block interval, from its own chain profile. */
export function cChainBlockSeconds(): number {
  const definition = CHAIN_DEFINITIONS.find((chain) => chain.info.chainId === C_CHAIN);
  if (!definition) throw new Error("the simulator has no C-Chain definition");
  const { min, max } = definition.profile.liveIntervalMs;
  return (min + max) / 2 / 1000;
}

export type Disruption =
  | { kind: "jump"; blocks: number; seconds: number; atMs: number }
  | { kind: "kill-lock-holder"; atMs: number }
  | { kind: "redis-restart"; atMs: number };

/** Two clock jumps, the kill of the poller's gateway and a restart of Redis, spread over the run, each with time to settle. */
export function schedule(totalMs: number): Disruption[] {
  const blockSeconds = cChainBlockSeconds();
  const jump = (blocks: number, fraction: number): Disruption => ({
    kind: "jump",
    blocks,
    seconds: Math.round(blocks * blockSeconds),
    atMs: Math.round(totalMs * fraction),
  });
  return [
    jump(300, 0.2),
    { kind: "kill-lock-holder", atMs: Math.round(totalMs * 0.4) },
    jump(3_000, 0.6),
    { kind: "redis-restart", atMs: Math.round(totalMs * 0.8) },
  ];
}

/** How long Redis stays down when it is restarted, and how long the killed gateway stays dead. */
export const REDIS_DOWN_MS = 5_000;
export const GATEWAY_DOWN_MS = 2_000;
/** How often the RSS of each gateway is read. */
export const RSS_SAMPLE_MS = 5_000;
