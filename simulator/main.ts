import { startSimulator, type SimulatorOptions } from "./server.ts";

/**
 * The standalone simulator (`npm run simulator`). Configured by environment
 * variables; prints one JSON line when both listeners are up, which is what
 * a parent process (the gateway's `npm start`) waits for.
 */

function readOptions(env: NodeJS.ProcessEnv): Partial<SimulatorOptions> {
  const options: Partial<SimulatorOptions> = {
    dataPort: integer(env, "SIM_DATA_PORT") ?? 4010,
    metricsPort: integer(env, "SIM_METRICS_PORT") ?? 4011,
  };
  const assign = <K extends keyof SimulatorOptions>(key: K, value: SimulatorOptions[K] | undefined) => {
    if (value !== undefined) options[key] = value;
  };
  assign("host", text(env, "SIM_HOST"));
  assign("seed", text(env, "SIM_SEED"));
  assign("blocksPerChain", integer(env, "SIM_BLOCKS_PER_CHAIN"));
  assign("headTime", integer(env, "SIM_HEAD_TIME"));
  assign("blockIntervalSeconds", number(env, "SIM_BLOCK_INTERVAL_SECONDS"));
  assign("live", flag(env, "SIM_LIVE"));
  assign("latencyMs", integer(env, "SIM_LATENCY_MS"));
  assign("errorRate", number(env, "SIM_ERROR_RATE"));
  assign("errorStatus", integer(env, "SIM_ERROR_STATUS"));
  assign("errorRoutes", list(env, "SIM_ERROR_ROUTES"));
  assign("faultKind", text(env, "SIM_FAULT_KIND") as SimulatorOptions["faultKind"] | undefined);
  assign("slowBodyMs", integer(env, "SIM_SLOW_BODY_MS"));
  assign("retryAfterSeconds", integer(env, "SIM_RETRY_AFTER_SECONDS"));
  assign("apiKeys", list(env, "SIM_API_KEYS"));
  assign("metricsTokenTtlMs", integer(env, "SIM_METRICS_TOKEN_TTL_MS"));
  assign("exportJobMs", integer(env, "SIM_EXPORT_JOB_MS"));
  return options;
}

function text(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

function number(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const value = text(env, name);
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isFinite(parsed)) throw new RangeError(`${name} must be a number, got "${value}"`);
  return parsed;
}

function integer(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const value = number(env, name);
  if (value !== undefined && !Number.isInteger(value)) throw new RangeError(`${name} must be an integer`);
  return value;
}

function flag(env: NodeJS.ProcessEnv, name: string): boolean | undefined {
  const value = text(env, name)?.toLowerCase();
  if (value === undefined) return undefined;
  if (value === "true" || value === "1") return true;
  if (value === "false" || value === "0") return false;
  throw new RangeError(`${name} must be true or false, got "${value}"`);
}

/** Comma-separated; route keys contain spaces but no commas. */
function list(env: NodeJS.ProcessEnv, name: string): string[] | undefined {
  return text(env, name)
    ?.split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

async function main(): Promise<void> {
  const simulator = await startSimulator(readOptions(process.env));
  process.stdout.write(
    `${JSON.stringify({ event: "listening", dataUrl: simulator.dataUrl, metricsUrl: simulator.metricsUrl })}\n`,
  );

  let closing = false;
  const stop = (signal: NodeJS.Signals) => {
    if (closing) {
      process.exit(128 + (signal === "SIGINT" ? 2 : 15));
    }
    closing = true;
    simulator.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error("simulator: error while closing", error);
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  if (process.env.SIM_EXIT_WITH_PARENT === "1") {
    // Started by the gateway with a pipe on stdin: the pipe closes when the gateway dies,
    // however it dies, and the simulator must not outlive it.
    process.stdin.on("end", () => stop("SIGTERM"));
    process.stdin.on("close", () => stop("SIGTERM"));
    process.stdin.resume();
  }
}

main().catch((error: unknown) => {
  console.error(`simulator: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
