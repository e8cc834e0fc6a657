/**
 * One gateway process: the only one (WORKERS=1), or a worker of the cluster (src/cluster.ts).
 * Everything a gateway holds is built here, once per process: its upstream pools, its caches,
 * its metrics.
 */
import cluster from "node:cluster";
import { createServer, type ServerResponse } from "node:http";
import { withClusterMetrics } from "./cluster-metrics.ts";
import type { GatewayConfig } from "./config.ts";
import { createLogger } from "./logger.ts";
import { GatewayMetrics } from "./metrics.ts";
import { RedisLink, redactedUrl } from "./redis.ts";
import { upstreamsOrSimulator } from "./simulator-process.ts";
import { createGateway } from "./yoga.ts";

export async function runGatewayProcess(config: GatewayConfig): Promise<void> {
  const worker = cluster.worker;
  const logger = createLogger(config.logLevel, worker ? { worker: worker.id } : {});

  // A worker always has its URLs: the primary passes its own, or its simulator's.
  const { urls, simulator } = await upstreamsOrSimulator(config, logger);

  // Loaded only when tracing is on, so that a gateway without it never loads the SDK.
  const tracing = config.tracing ? await import("./tracing.ts").then(async (t) => t.startTracing(await t.otlpExporter())) : undefined;
  if (tracing) logger.info("OpenTelemetry tracing on, exporting over OTLP/HTTP");

  // Made before the gateway, so that the Redis link counts its fallbacks on the gateway's registry.
  const metrics = new GatewayMetrics();
  const redis = config.redis ? new RedisLink(config.redis, logger, metrics) : undefined;
  // The chain list is loaded at start and written to Redis: give the link a moment to connect
  // first, never more (without Redis, the gateway serves alone).
  if (redis && config.redis && !(await redis.whenReady(2_000))) {
    logger.warn({ redis: redactedUrl(config.redis.url) }, "redis is not reachable yet: serving from the local caches until it is");
  }
  const gateway = createGateway(config, urls, logger, { plugins: tracing ? [tracing.plugin] : [], redis, metrics });
  const handler = worker ? withClusterMetrics(gateway.listener, gateway.metrics.registry) : gateway.listener;

  let stopping = false;
  // Answers still to be sent end their keep-alive connection once shutdown has begun: the
  // server closes when its last connection does, which an idle keep-alive client delays.
  const unanswered = new Set<ServerResponse>();
  const server = createServer((request, response) => {
    if (stopping) response.setHeader("connection", "close");
    unanswered.add(response);
    response.once("close", () => unanswered.delete(response));
    handler(request, response);
  });
  server.listen(config.port, config.host, () => {
    logger.info(
      { url: `http://${config.host === "0.0.0.0" ? "localhost" : config.host}:${config.port}/graphql`, ...urls },
      "gateway listening",
    );
  });

  // On SIGTERM (from the primary, in a cluster): stop accepting, let requests in flight finish
  // (within a bound), close the upstream pools and Redis, stop the simulator.
  async function shutdown(signal: string): Promise<void> {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, graceMs: config.shutdownGraceMs, inFlight: unanswered.size }, "shutting down");
    for (const response of unanswered) if (!response.headersSent) response.setHeader("connection", "close");
    const drained = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const timer = setTimeout(() => {
      logger.warn("requests still in flight after the grace period: closing their connections");
      server.closeAllConnections();
    }, config.shutdownGraceMs);
    await drained;
    clearTimeout(timer);
    await gateway.close();
    await redis?.close();
    await tracing?.shutdown();
    await simulator?.stop();
    logger.info("stopped");
    process.exit(0);
  }
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));
}
