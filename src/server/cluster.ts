/**
 * WORKERS > 1: this process is the primary of a node:cluster of gateway processes that share the
 * port. It builds no gateway itself. It starts the embedded simulator once (when no upstream URLs
 * are set) and hands its URLs to the workers through their environment; it replaces a worker that
 * dies, unless they keep dying; on SIGTERM or SIGINT it lets every worker drain (each within
 * SHUTDOWN_GRACE_MS), then stops the simulator. A worker exits by itself when the primary dies:
 * Node ends a worker whose IPC channel to its primary closes.
 */
import cluster, { type Worker } from "node:cluster";
import { answerClusterMetrics, ClusterMetrics } from "../telemetry/cluster-metrics.ts";
import type { GatewayConfig } from "../config.ts";
import { CrashLoopGuard } from "./crash-loop.ts";
import { untilStdoutWritten } from "../telemetry/log-destination.ts";
import { createLogger } from "../telemetry/logger.ts";
import { upstreamsOrSimulator } from "./simulator-process.ts";
import { workerExecArgv } from "./worker-flags.ts";

/** Deaths within CRASH_WINDOW_MS after which the primary stops replacing workers and exits. */
const CRASH_LIMIT = 5;
const CRASH_WINDOW_MS = 60_000;
/** Beyond SHUTDOWN_GRACE_MS, the time a worker may take to close its pools before it is killed. */
const CLOSE_MARGIN_MS = 5_000;

export async function superviseWorkers(config: GatewayConfig): Promise<void> {
  const logger = createLogger(config.logLevel, { role: "primary" });
  const { urls, simulator } = await upstreamsOrSimulator(config, logger);
  const workerEnv = { DATA_API_URL: urls.dataApiUrl, METRICS_API_URL: urls.metricsApiUrl };
  const crashLoop = new CrashLoopGuard(Math.max(CRASH_LIMIT, config.workers), CRASH_WINDOW_MS);
  const metrics = new ClusterMetrics();
  answerClusterMetrics(metrics, logger);

  const describe = (worker: Worker) => ({ worker: worker.id, workerPid: worker.process.pid });
  cluster.setupPrimary({ execArgv: workerExecArgv(process.execArgv, process.env.NODE_OPTIONS, config.workers) });

  function start(): Worker {
    const worker = cluster.fork(workerEnv);
    // Without a listener, a failed send to a worker that just died would end the primary.
    worker.on("error", (error: Error) => logger.warn({ ...describe(worker), err: error }, "worker channel error"));
    return worker;
  }

  let listening = 0;
  cluster.on("listening", (worker) => {
    metrics.workerListening(worker.id);
    listening += 1;
    if (listening === config.workers) {
      logger.info({ workers: config.workers, url: `http://${config.host}:${config.port}/graphql` }, "all workers listening");
    } else if (listening > config.workers) {
      logger.info(describe(worker), "replacement worker listening");
    }
  });

  let stopping = false;
  let exitCode = 0;
  cluster.on("exit", (worker, code, signal) => {
    metrics.workerExited(worker.id, !stopping);
    if (stopping) {
      // SIGTERM is ours: a worker that had not yet set its handlers simply ends.
      if (code !== 0 && signal !== "SIGTERM") {
        exitCode = 1;
        logger.error({ ...describe(worker), code, signal }, "worker did not stop cleanly");
      }
      return;
    }
    if (crashLoop.recordDeath(Date.now())) {
      logger.fatal(
        { ...describe(worker), code, signal, deaths: crashLoop.limit, windowMs: crashLoop.windowMs },
        "workers keep dying: no more replacements, stopping",
      );
      exitCode = 1;
      void stop("crash loop");
      return;
    }
    const replacement = start();
    logger.error({ ...describe(worker), code, signal, replacement: replacement.id }, "worker died: starting a replacement");
  });

  async function stop(reason: string): Promise<void> {
    if (stopping) return;
    stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter(
      (worker): worker is Worker => worker !== undefined && !worker.isDead(),
    );
    logger.info({ reason, workers: workers.map(describe), graceMs: config.shutdownGraceMs }, "stopping the workers");
    const exited = Promise.all(workers.map((worker) => new Promise((resolve) => worker.once("exit", resolve))));
    for (const worker of workers) worker.process.kill("SIGTERM");
    const deadline = setTimeout(() => {
      const stuck = workers.filter((worker) => !worker.isDead());
      logger.error({ workers: stuck.map(describe) }, "workers still running after the grace period: killing them");
      exitCode = 1;
      for (const worker of stuck) worker.process.kill("SIGKILL");
    }, config.shutdownGraceMs + CLOSE_MARGIN_MS);
    await exited;
    clearTimeout(deadline);
    await simulator?.stop();
    logger.info({ exitCode }, "stopped");
    await untilStdoutWritten();
    process.exit(exitCode);
  }

  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));

  for (let index = 0; index < config.workers; index += 1) start();
  logger.info({ workers: config.workers }, "starting the workers");
}
