/**
 * One gateway process: the only one (WORKERS=1), or a worker of the cluster (src/server/cluster.ts).
 * Everything a gateway holds is built here, once per process: its upstream pools, its caches,
 * its metrics.
 */
import cluster from "node:cluster";
import { withClusterMetrics } from "../telemetry/cluster-metrics.ts";
import type { GatewayConfig } from "../config.ts";
import { createGatewayServer } from "./http-server.ts";
import { createWebSocketTransport } from "./websocket.ts";
import { untilStdoutWritten } from "../telemetry/log-destination.ts";
import { createLogger } from "../telemetry/logger.ts";
import { GatewayMetrics } from "../telemetry/metrics.ts";
import { RedisLink } from "../shared-state/redis.ts";
import { upstreamsOrSimulator } from "./simulator-process.ts";
import { createGateway } from "../gateway.ts";

export async function runGatewayProcess(config: GatewayConfig): Promise<void> {
  const worker = cluster.worker;
  const logger = createLogger(config.logLevel, worker ? { worker: worker.id } : {});

  // A worker always has its URLs: the primary passes its own, or its simulator's.
  const { urls, simulator } = await upstreamsOrSimulator(config, logger);

  // Loaded only when tracing is on, so that a gateway without it never loads the SDK.
  const tracing = config.tracing
    ? await import("../telemetry/tracing.ts").then(async (t) => t.startTracing(await t.otlpExporter()))
    : undefined;
  if (tracing) logger.info("OpenTelemetry tracing on, exporting over OTLP/HTTP");

  // Made before the gateway, so that the Redis link counts its fallbacks on the gateway's registry.
  const metrics = new GatewayMetrics();
  const redis = config.redis ? new RedisLink(config.redis, logger, metrics) : undefined;
  const cacheRedis = config.redisCache ? new RedisLink(config.redisCache, logger, metrics, "cache") : undefined;
  // The chain list is loaded at start and written to Redis: give the links a moment to connect
  // first, never more (without Redis, the gateway serves alone).
  await Promise.all(
    [redis, cacheRedis].map(async (link) => {
      if (link && !(await link.whenReady(2_000)))
        logger.warn({ redis: link.redactedUrl }, "redis is not reachable yet: serving from the local caches until it is");
    }),
  );
  const gateway = createGateway(config, urls, logger, {
    plugins: tracing ? [tracing.plugin] : [],
    redis,
    cacheRedis,
    metrics,
  });
  const handler = worker
    ? withClusterMetrics(gateway.listener, gateway.metrics.registry, gateway.chargeScrape)
    : gateway.listener;

  // Its warnings and errors, which a client's frames can cause, are summed as the gateway's are.
  const webSockets = createWebSocketTransport(gateway, config, gateway.logger);
  const { server, drain } = createGatewayServer(handler, config.server, logger, gateway.metrics.registry, webSockets);
  server.listen(config.port, config.host, () => {
    logger.info(
      { url: `http://${config.host === "0.0.0.0" ? "localhost" : config.host}:${config.port}/graphql`, ...urls },
      "gateway listening",
    );
  });

  // On SIGTERM (from the primary, in a cluster): stop accepting, complete every open stream at
  // once, exit as soon as the requests in flight are answered (closing what is left at the grace
  // period), after closing the upstream pools and Redis and stopping the simulator.
  let stopping = false;
  async function shutdown(signal: string): Promise<void> {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, graceMs: config.shutdownGraceMs }, "shutting down");
    await drain({ graceMs: config.shutdownGraceMs, onClosing: () => gateway.endStreams() });
    await gateway.close();
    await Promise.all([redis?.close(), cacheRedis?.close()]);
    await tracing?.shutdown();
    await simulator?.stop();
    logger.info("stopped");
    await untilStdoutWritten();
    process.exit(0);
  }
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));
}
