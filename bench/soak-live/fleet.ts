/**
 * The gateways of the soak: production builds as child processes, each on a port of its own that
 * it keeps when it is killed (SIGKILL, as a crash) and started again, with its RSS read from /proc.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { freePort } from "../../test/support/free-port.ts";
import { productionGatewayEnv, productionNodeFlags, type RunningSimulator } from "../processes.ts";

const root = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));

/** Resident memory in MB, from /proc; undefined once the process is gone. */
export function rssMb(pid: number): number | undefined {
  try {
    const kilobytes = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kilobytes ? Math.round(Number(kilobytes) / 10.24) / 100 : undefined;
  } catch {
    return undefined;
  }
}

async function healthy(url: string, child: ChildProcess): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt += 1) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error("the gateway exited before it was ready");
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("the gateway did not become healthy in 60 s");
}

export interface SoakGateway {
  /** "A" or "B". */
  name: string;
  port: number;
  /** http://127.0.0.1:port/graphql */
  url: string;
  /** The process now; a new one after each restart. */
  pid: number;
  /** Every process this gateway has been, oldest first, with when it was started (ms since the run began). */
  lives: { pid: number; startedAtMs: number; killedAtMs?: number }[];
  /** SIGKILL, then nothing: the port stays free until `start`. */
  kill(atMs: number): Promise<void>;
  start(atMs: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startSoakGateway(
  name: string,
  simulator: RunningSimulator,
  env: Record<string, string>,
): Promise<SoakGateway> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/graphql`;
  let child: ChildProcess | undefined;
  const exited = (signal: NodeJS.Signals) =>
    new Promise<void>((resolve) => {
      const current = child;
      if (!current || current.exitCode !== null || current.signalCode !== null) return resolve();
      current.once("exit", () => resolve());
      current.kill(signal);
    });
  const gateway: SoakGateway = {
    name,
    port,
    url,
    pid: 0,
    lives: [],
    async start(atMs) {
      child = spawn(process.execPath, [...productionNodeFlags(), root("dist/src/server.js")], {
        env: { ...productionGatewayEnv(simulator, port), ...env },
        stdio: ["ignore", "ignore", "inherit"],
      });
      gateway.pid = child.pid!;
      gateway.lives.push({ pid: child.pid!, startedAtMs: atMs });
      await healthy(`http://127.0.0.1:${port}/health`, child);
    },
    async kill(atMs) {
      const life = gateway.lives.at(-1);
      if (life) life.killedAtMs = atMs;
      await exited("SIGKILL");
    },
    stop: () => exited("SIGTERM"),
  };
  await gateway.start(0);
  return gateway;
}
