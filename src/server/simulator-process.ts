/**
 * Starts the embedded simulator as a child process, for `npm start` without upstream URLs.
 * The gateway never imports the simulator: it runs `simulator/main.ts` and reads the one JSON
 * line the simulator prints once it listens.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { Logger } from "../telemetry/logger.ts";
import type { UpstreamUrls } from "../gateway.ts";

// From the sources the simulator runs through tsx; from a build (dist/), as compiled JavaScript.
const COMPILED = import.meta.url.endsWith(".js");
const SIMULATOR_MAIN = fileURLToPath(new URL(`../../simulator/main.${COMPILED ? "js" : "ts"}`, import.meta.url));
const NODE_ARGUMENTS = COMPILED ? [SIMULATOR_MAIN] : ["--import", "tsx", SIMULATOR_MAIN];

export interface SimulatorProcess extends UpstreamUrls {
  stop(): Promise<void>;
}

export function startSimulatorProcess(env: Record<string, string> = {}, timeoutMs = 60_000): Promise<SimulatorProcess> {
  const child: ChildProcess = spawn(process.execPath, NODE_ARGUMENTS, {
    env: { ...process.env, SIM_DATA_PORT: "0", SIM_METRICS_PORT: "0", SIM_EXIT_WITH_PARENT: "1", ...env },
    // stdin is a pipe only so that the simulator sees it close when this process dies.
    stdio: ["pipe", "pipe", "inherit"],
  });

  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`the simulator did not start within ${timeoutMs} ms`));
    }, timeoutMs);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the simulator exited before listening (code ${code}, signal ${signal})`));
    });
    const lines = createInterface({ input: child.stdout! });
    lines.on("line", (line) => {
      let message: { event?: string; dataUrl?: string; metricsUrl?: string };
      try {
        message = JSON.parse(line) as typeof message;
      } catch {
        return;
      }
      if (message.event === "listening" && message.dataUrl && message.metricsUrl) {
        clearTimeout(timer);
        child.removeAllListeners("exit");
        resolve({ dataApiUrl: message.dataUrl, metricsApiUrl: message.metricsUrl, stop });
      }
    });
  });
}

/**
 * The upstream URLs from the configuration, or those of an embedded simulator started here when
 * neither is set (and said so in the log).
 */
export async function upstreamsOrSimulator(
  config: { dataApiUrl: string | undefined; metricsApiUrl: string | undefined },
  logger: Logger,
): Promise<{ urls: UpstreamUrls; simulator: SimulatorProcess | undefined }> {
  if (config.dataApiUrl && config.metricsApiUrl) {
    return { urls: { dataApiUrl: config.dataApiUrl, metricsApiUrl: config.metricsApiUrl }, simulator: undefined };
  }
  if (config.dataApiUrl || config.metricsApiUrl) {
    throw new Error("set both DATA_API_URL and METRICS_API_URL, or neither to use the embedded simulator");
  }
  // Live unless SIM_LIVE says otherwise: a gateway started on its own shows chains that move.
  const simulator = await startSimulatorProcess({ SIM_LIVE: process.env.SIM_LIVE ?? "true" });
  const urls = { dataApiUrl: simulator.dataApiUrl, metricsApiUrl: simulator.metricsApiUrl };
  logger.info(urls, "no DATA_API_URL/METRICS_API_URL set: serving the embedded simulator's sample network");
  return { urls, simulator };
}
