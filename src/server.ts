/** `npm start`: serves the gateway; without upstream URLs, on the embedded simulator. */
import { createServer } from "node:http";
import { loadConfig } from "./config.ts";
import { createLogger } from "./logger.ts";
import { GatewayMetrics } from "./metrics.ts";
import { RedisLink, redactedUrl } from "./redis.ts";
import { startSimulatorProcess, type SimulatorProcess } from "./simulator-process.ts";
import { createGateway, type UpstreamUrls } from "./yoga.ts";

const config = loadConfig();
const logger = createLogger(config.logLevel);

let simulator: SimulatorProcess | undefined;
let urls: UpstreamUrls;
if (config.dataApiUrl && config.metricsApiUrl) {
  urls = { dataApiUrl: config.dataApiUrl, metricsApiUrl: config.metricsApiUrl };
} else {
  if (config.dataApiUrl || config.metricsApiUrl) {
    throw new Error("set both DATA_API_URL and METRICS_API_URL, or neither to use the embedded simulator");
  }
  simulator = await startSimulatorProcess();
  urls = { dataApiUrl: simulator.dataApiUrl, metricsApiUrl: simulator.metricsApiUrl };
  logger.info(urls, "no DATA_API_URL/METRICS_API_URL set: serving the embedded simulator's sample network");
}

// Loaded only when tracing is on, so that a gateway without it never loads the SDK.
const tracing = config.tracing ? await import("./tracing.ts").then(async (t) => t.startTracing(await t.otlpExporter())) : undefined;
if (tracing) logger.info("OpenTelemetry tracing on, exporting over OTLP/HTTP");

const metrics = new GatewayMetrics();
let redis: RedisLink | undefined;
if (config.redis) {
  redis = new RedisLink(config.redis, logger, metrics);
  // The chain list is loaded at start and written to Redis: give the link a moment to connect
  // first, never more (without Redis, the gateway serves alone).
  if (!(await connected(redis, 2_000))) {
    logger.warn({ redis: redactedUrl(config.redis.url) }, "redis is not reachable yet: serving from the local caches until it is");
  }
}
const gateway = createGateway(config, urls, logger, { plugins: tracing ? [tracing.plugin] : [], redis, metrics });
const server = createServer(gateway.listener);
server.listen(config.port, config.host, () => {
  logger.info(
    { url: `http://${config.host === "0.0.0.0" ? "localhost" : config.host}:${config.port}/graphql`, ...urls },
    "gateway listening",
  );
});

/** Whether the link connects within the time given. */
function connected(link: RedisLink, withinMs: number): Promise<boolean> {
  if (link.client.status === "ready") return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), withinMs);
    link.client.once("ready", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

// On SIGTERM: stop accepting, let requests in flight finish (within a bound), close the
// upstream pools and Redis, stop the simulator.
let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal, graceMs: config.shutdownGraceMs }, "shutting down");
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
