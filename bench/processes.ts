/** The benchmark's processes: the simulator, the gateway and the baseline, each a child on loopback. */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { freePort } from "../test/support/free-port.ts";

const root = (path: string) => fileURLToPath(new URL(`../${path}`, import.meta.url));

/**
 * Whether this machine can give a gateway a core of its own: two cores or more and taskset.
 * `switchName` (e.g. BENCH_PINNING) set to `off` says no.
 */
export function canPin(switchName: string): boolean {
  if (process.env[switchName] === "off" || cpus().length < 2) return false;
  try {
    execFileSync("taskset", ["-p", String(process.pid)], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Binds a process and all its threads to `cpuList` (as taskset reads it, e.g. "0" or "1-3"). */
export function pin(pid: number, cpuList: string): void {
  execFileSync("taskset", ["-a", "-p", "-c", cpuList, String(pid)], { stdio: "ignore" });
}

/** The core a pinned bench keeps for the process it measures, as taskset reads it. */
export const MEASURED_CORE = "0";

/** Every core but the first, as taskset reads it: where a pinned bench puts all but the gateway. */
export const OTHER_CORES = `1-${Math.max(1, cpus().length - 1)}`;

export interface Running {
  name: string;
  url: string;
  pid: number;
  /** Resident memory of the process now, from /proc. */
  rssBytes(): number;
  /**
   * The CPU time the process's main thread (its event loop) has used so far, user and system, in
   * microseconds, from /proc: what bounds one process's throughput. V8's helper threads (GC,
   * compiler) run beside it and vary by a fifth of it from one load to the next.
   */
  cpuMicros(): number;
  stop(): Promise<void>;
}

export interface RunningSimulator {
  pid: number;
  dataUrl: string;
  metricsUrl: string;
  knobs(knobs: Record<string, unknown>): Promise<void>;
  reset(): Promise<void>;
  counters(): Promise<Record<string, number>>;
  stop(): Promise<void>;
}

async function waitForHealth(url: string, child: ChildProcess): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt += 1) {
    if (child.exitCode !== null) throw new Error("the gateway exited before it was ready");
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("the gateway did not become healthy in 60 s");
}

/** Spawns a TypeScript entry point and waits for the JSON line that `ready` accepts. */
function start(
  name: string,
  entry: string,
  env: Record<string, string>,
  ready: (message: Record<string, unknown>) => string | undefined,
  nodeFlags: string[] = [],
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [...nodeFlags, "--import", "tsx", root(entry)], {
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start in 60 s`)), 60_000);
    child.once("exit", (code) => reject(new Error(`${name} exited with code ${code} before it was ready`)));
    const lines = createInterface({ input: child.stdout! });
    lines.on("line", (line) => {
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      const url = ready(message);
      if (url) {
        clearTimeout(timer);
        child.removeAllListeners("exit");
        // From here its lines are drained unread, as a log collector takes them: parsed here,
        // they would cost the load generator (on the same core) a few µs per request logged.
        lines.close();
        child.stdout!.on("data", () => undefined).resume();
        resolve({ child, url });
      }
    });
  });
}

function stopper(child: ChildProcess): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
}

/**
 * The V8 flags `npm run start:prod` gives the gateway: this tree's, or those of the build whose
 * entry point is `entry` (`<checkout>/dist/src/server.js`: bench:compare's ref runs with its own).
 */
export function productionNodeFlags(entry?: string): string[] {
  const manifestPath = entry ? fileURLToPath(new URL("../../package.json", pathToFileURL(entry))) : root("package.json");
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as { config?: { nodeFlags?: string } };
  return manifest.config?.nodeFlags?.split(/\s+/).filter(Boolean) ?? [];
}

const CLOCK_TICKS_PER_SECOND = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/** User and system CPU time from a /proc `stat` file, µs. */
function statMicros(path: string): number {
  // The command name (field 2) is in brackets and may hold spaces: count fields after it.
  const stat = readFileSync(path, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1_000_000) / CLOCK_TICKS_PER_SECOND;
}

/** The CPU time of a process's main thread so far, µs. */
function cpuMicros(pid: number): number {
  return statMicros(`/proc/${pid}/task/${pid}/stat`);
}

/** The CPU time of a whole process so far (every thread), µs. */
export function processCpuMicros(pid: number): number {
  return statMicros(`/proc/${pid}/stat`);
}

/** The machine's busy and idle time so far, summed over its cores, µs. */
export function machineCpuMicros(): { busy: number; idle: number } {
  const times = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = times[3]! + times[4]!;
  const total = times.reduce((sum, time) => sum + time, 0);
  return { busy: ((total - idle) * 1_000_000) / CLOCK_TICKS_PER_SECOND, idle: (idle * 1_000_000) / CLOCK_TICKS_PER_SECOND };
}

function running(name: string, url: string, child: ChildProcess): Running {
  const pid = child.pid!;
  return { name, url, pid, rssBytes: () => rss(pid), cpuMicros: () => cpuMicros(pid), stop: stopper(child) };
}

function rss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kilobytes = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  return kilobytes ? Number(kilobytes) * 1024 : 0;
}

export async function startSimulator(env: Record<string, string> = {}): Promise<RunningSimulator> {
  let metricsUrl = "";
  const { child, url } = await start(
    "simulator",
    "simulator/main.ts",
    { SIM_DATA_PORT: "0", SIM_METRICS_PORT: "0", SIM_EXIT_WITH_PARENT: "1", ...env },
    (message) => {
      if (message.event !== "listening") return undefined;
      metricsUrl = String(message.metricsUrl);
      return String(message.dataUrl);
    },
  );
  const control = async (path: string, body?: unknown) => {
    const response = await fetch(`${url}/_simulator/${path}`, {
      method: body === undefined && path === "counters" ? "GET" : "POST",
      headers: { "content-type": "application/json" },
      body: body === undefined ? (path === "counters" ? undefined : "{}") : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`simulator ${path}: HTTP ${response.status}`);
    return response.json() as Promise<Record<string, unknown>>;
  };
  return {
    pid: child.pid!,
    dataUrl: url,
    metricsUrl,
    knobs: async (knobs) => void (await control("knobs", knobs)),
    reset: async () => void (await control("reset")),
    counters: async () => (await control("counters")).counts as Record<string, number>,
    stop: stopper(child),
  };
}

/** The environment of a production gateway on `port` over the simulator: quiet logs, no GraphiQL. */
export function productionGatewayEnv(
  simulator: Pick<RunningSimulator, "dataUrl" | "metricsUrl">,
  port: number,
): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATA_API_URL: simulator.dataUrl,
    METRICS_API_URL: simulator.metricsUrl,
    HOST: "127.0.0.1",
    PORT: String(port),
    LOG_LEVEL: "warn",
    GRAPHIQL: "false",
    NODE_ENV: "production",
  };
}

export async function startGateway(simulator: RunningSimulator, env: Record<string, string>): Promise<Running> {
  const port = await freePort();
  // The production build (npm run build), with the V8 flags `npm run start:prod` gives it.
  // BENCH_CPU_PROFILE_DIR=dir: each gateway writes a V8 CPU profile there when it stops.
  // BENCH_GATEWAY_NODE_FLAGS: V8 flags to add or override, such as --trace-gc or a heap size
  // (in `env`, for this gateway only: bench:compare's `ref:`/`tree:` settings).
  const profile = process.env.BENCH_CPU_PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROFILE_DIR}`] : [];
  const extra = (env.BENCH_GATEWAY_NODE_FLAGS ?? process.env.BENCH_GATEWAY_NODE_FLAGS)?.split(/\s+/).filter(Boolean) ?? [];
  // BENCH_GATEWAY_ENTRY: another build of the gateway to start (to compare two builds in one run).
  const entry = env.BENCH_GATEWAY_ENTRY ?? root("dist/src/server.js");
  const child = spawn(process.execPath, [...productionNodeFlags(env.BENCH_GATEWAY_ENTRY), ...extra, ...profile, entry], {
    env: {
      ...productionGatewayEnv(simulator, port),
      // One caller (127.0.0.1) drives every connection: a budget it never reaches, with the
      // limiter on so that its cost is measured.
      RATE_LIMIT_RATE: "1000000000",
      RATE_LIMIT_BURST: "1000000000",
      ...env,
    },
    stdio: ["ignore", extra.length ? "inherit" : "ignore", "inherit"],
  });
  await waitForHealth(`http://127.0.0.1:${port}/health`, child);
  return running("gateway", `http://127.0.0.1:${port}/graphql`, child);
}

export async function startBaseline(simulator: RunningSimulator): Promise<Running> {
  const { child, url } = await start(
    "baseline",
    "bench/baseline.ts",
    { DATA_API_URL: simulator.dataUrl, METRICS_API_URL: simulator.metricsUrl, PORT: "0" },
    (message) => (message.event === "listening" ? String(message.url) : undefined),
  );
  return running("baseline", url, child);
}

/** A bare `node:http` server answering every request with `body` (bench/bare-server.ts), with the gateway's V8 flags. */
export async function startBareServer(body: Buffer, contentType: string): Promise<Running> {
  const { child, url } = await start(
    "bare server",
    "bench/bare-server.ts",
    { BARE_BODY: body.toString("base64"), BARE_CONTENT_TYPE: contentType },
    (message) => (message.event === "listening" ? String(message.url) : undefined),
    productionNodeFlags(),
  );
  return running("bare", url, child);
}
