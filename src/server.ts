/** `npm start`: serves the gateway; without upstream URLs, on the embedded simulator. */
import { createServer } from "node:http";
import { loadConfig } from "./config.ts";
import { createLogger } from "./logger.ts";
import { GatewayMetrics } from "./metrics.ts";
import { RedisLink } from "./redis.ts";
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

// Made before the gateway so that the link counts its fallbacks on the gateway's registry.
const metrics = new GatewayMetrics();
const redis = config.redis ? new RedisLink(config.redis, logger, metrics) : undefined;
const gateway = createGateway(config, urls, logger, { plugins: tracing ? [tracing.plugin] : [], redis, metrics });
const server = createServer(gateway.listener);
server.listen(config.port, config.host, () => {
  logger.info(
    { url: `http://${config.host === "0.0.0.0" ? "localhost" : config.host}:${config.port}/graphql`, ...urls },
    "gateway listening",
  );
});

// On SIGTERM: stop accepting, let requests in flight finish (within a bound), close the
// upstream pools, stop the simulator.
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
