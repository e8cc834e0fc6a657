/**
 * Test harness: the simulator on real loopback sockets, and the gateway built over it.
 * Tests send operations through `yoga.fetch`; the gateway reaches the simulator over HTTP.
 */
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach } from "vitest";
import { print, type ExecutionResult, type GraphQLFormattedError } from "graphql";
import { loadConfig, type GatewayConfig } from "../../src/config.ts";
import { createLogger, type Logger } from "../../src/telemetry/logger.ts";
import { GatewayMetrics } from "../../src/telemetry/metrics.ts";
import { RedisLink } from "../../src/shared-state/redis.ts";
import { createGateway, type Gateway, type GatewayOptions } from "../../src/gateway.ts";
import { createGatewayServer, type GatewayServer } from "../../src/server/http-server.ts";
import { createWebSocketTransport } from "../../src/server/websocket.ts";
import { startSimulator } from "../../simulator/server.ts";

export type RunningSimulator = Awaited<ReturnType<typeof startSimulator>>;

export interface Harness {
  simulator: RunningSimulator;
  gateway: Gateway;
  config: GatewayConfig;
  close(): Promise<void>;
}

/**
 * The tests' gateway configuration: silent, and without the response cache and the chain-list
 * preload, which would hide or add upstream calls that tests count exactly, nor the refusal holds,
 * which make a test that spends a budget wait a second per refusal (their own tests turn them on).
 */
function harnessConfig(env: Record<string, string>): GatewayConfig {
  return loadConfig({
    LOG_LEVEL: "silent",
    RESPONSE_CACHE_TTL_MS: "0",
    CHAIN_LIST_PRELOAD: "false",
    REFUSAL_HOLD_MS: "0",
    ...env,
  });
}

export interface HarnessOptions extends GatewayOptions {
  /** The gateway's logger (default: silent). */
  logger?: Logger;
}

export async function startHarness(env: Record<string, string> = {}, options: HarnessOptions = {}): Promise<Harness> {
  const simulator = await startSimulator({ dataPort: 0, metricsPort: 0 });
  const config = harnessConfig(env);
  const { logger = createLogger("silent"), ...gatewayOptions } = options;
  const gateway = createGateway(
    config,
    { dataApiUrl: simulator.dataUrl, metricsApiUrl: simulator.metricsUrl },
    logger,
    gatewayOptions,
  );
  return {
    simulator,
    gateway,
    config,
    async close() {
      await gateway.close();
      await simulator.close();
    },
  };
}

/**
 * One of several gateways over one simulator, with a RedisLink of its own when `env` sets
 * REDIS_URL, and another for its caches when it sets REDIS_CACHE_URL.
 */
export interface Instance extends Harness {
  redis: RedisLink | undefined;
  cacheRedis: RedisLink | undefined;
}

/** Starts a gateway over a running simulator; `close` leaves the simulator running. */
export async function startInstance(simulator: RunningSimulator, env: Record<string, string> = {}): Promise<Instance> {
  const config = harnessConfig(env);
  const logger = createLogger("silent");
  const metrics = new GatewayMetrics();
  const redis = config.redis && new RedisLink(config.redis, logger, metrics);
  const cacheRedis = config.redisCache && new RedisLink(config.redisCache, logger, metrics, "cache");
  const gateway = createGateway(config, { dataApiUrl: simulator.dataUrl, metricsApiUrl: simulator.metricsUrl }, logger, {
    redis,
    cacheRedis,
    metrics,
  });
  for (const link of [redis, cacheRedis]) if (link) await until(() => link.up, "the gateway's Redis links to be up");
  return {
    simulator,
    gateway,
    config,
    redis,
    cacheRedis,
    async close() {
      await gateway.close();
      await Promise.all([redis?.close(), cacheRedis?.close()]);
    },
  };
}

/** Waits until `done` holds, checking every 10 ms, for at most `timeoutMs`. */
export async function until(done: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The gateway's Prometheus text. */
export async function metricsText(harness: Harness): Promise<string> {
  return (await harness.gateway.yoga.fetch("http://gateway.test/metrics")).text();
}

export interface Response<T> {
  status: number;
  headers: Headers;
  body: ExecutionResult<T> & { errors?: GraphQLFormattedError[] };
}

export async function execute<T, V extends Record<string, unknown>>(
  harness: Harness,
  document: TypedDocumentNode<T, V> | string,
  variables?: V,
  headers: Record<string, string> = {},
  operationName?: string,
): Promise<Response<T>> {
  const query = typeof document === "string" ? document : print(document);
  const response = await harness.gateway.yoga.fetch("http://gateway.test/graphql", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/graphql-response+json", ...headers },
    body: JSON.stringify({ query, variables, operationName }),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Response<T>["body"] };
}

/** Upstream calls per route since the last reset, without the routes that saw none. */
export function upstreamCalls(harness: Harness): Record<string, number> {
  return Object.fromEntries(Object.entries(harness.simulator.counters()).filter(([, count]) => count > 0));
}

/** A GET straight to the simulator, bypassing the gateway (not reset-neutral: reset after). */
export async function simulatorGet<T>(harness: Harness, service: "data" | "metrics", path: string): Promise<T> {
  const base = service === "data" ? harness.simulator.dataUrl : harness.simulator.metricsUrl;
  const response = await fetch(base + path);
  if (!response.ok) throw new Error(`simulator ${path}: HTTP ${response.status}`);
  return (await response.json()) as T;
}

/** The hash of the simulator's first RegisterL1ValidatorTx on Fuji: a Warp message to aggregate and verify. */
export function registerL1ValidatorTx(harness: Harness): string {
  const [tx] = harness.simulator.network.primaryNetwork("fuji").transactions("P", {
    addresses: undefined,
    txTypes: new Set(["RegisterL1ValidatorTx"]),
    startTimestamp: undefined,
    endTimestamp: undefined,
    l1ValidationId: undefined,
    sortOrder: "asc",
  });
  return tx!.txHash;
}

export interface UseHarnessOptions {
  /** Environment for the gateway's config (on top of the harness's defaults). */
  env?: Record<string, string>;
  /** Empty the gateway's record cache before each test (default true), so that calls count from cold. */
  clearCache?: boolean;
}

/**
 * The usual life of a test file's harness: started before its tests, closed after them, and
 * before each test its upstream call counters reset (and its record cache emptied). The object
 * returned is filled in once the harness has started.
 */
export function useHarness({ env = {}, clearCache = true }: UseHarnessOptions = {}): Harness {
  const harness = {} as Harness;
  beforeAll(async () => {
    Object.assign(harness, await startHarness(env));
  });
  afterAll(async () => {
    await harness.close?.();
  });
  beforeEach(() => {
    if (clearCache) harness.gateway.cache.clear();
    harness.simulator.resetCounters();
  });
  return harness;
}

/** A harness's gateway served as the process serves it: HTTP and WebSocket on one loopback port. */
export interface ServedGateway {
  server: GatewayServer;
  port: number;
  /** Drains the server, ending every open stream first; `forced` when connections had to be cut. */
  close(): Promise<{ forced: boolean }>;
}

export async function serveGateway(harness: Harness, logger: Logger = createLogger("silent")): Promise<ServedGateway> {
  const server = createGatewayServer(
    harness.gateway.listener,
    harness.config.server,
    logger,
    harness.gateway.metrics.registry,
    createWebSocketTransport(harness.gateway, harness.config, harness.gateway.logger),
  );
  await new Promise<void>((resolve) => server.server.listen(0, "127.0.0.1", resolve));
  return {
    server,
    port: (server.server.address() as AddressInfo).port,
    close: () => server.drain({ graceMs: 0, onClosing: () => harness.gateway.endStreams() }),
  };
}
