/**
 * A real redis-server (Debian's package) on a free loopback port, for the tests of the shared
 * tier. Without the binary those tests are skipped, unless REQUIRE_REDIS=1 (as `.ci/run` sets
 * after installing it), which turns the absence into a failure.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { freePort } from "./free-port.ts";

export const redisServerAvailable = spawnSync("redis-server", ["--version"]).status === 0;

if (!redisServerAvailable && process.env.REQUIRE_REDIS === "1") {
  throw new Error("REQUIRE_REDIS=1 but redis-server is not on PATH (apt-get install redis-server)");
}

export interface RedisServer {
  url: string;
  port: number;
  /** Kills the server at once (SIGKILL), as a crash would. */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

function launch(port: number): Promise<ChildProcess> {
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("redis-server did not start in 10 s")), 10_000);
    let output = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("Ready to accept connections")) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${code}: ${output.slice(-500)}`));
    });
  });
}

function exited(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill(signal);
  });
}

export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  let child = await launch(port);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill: () => exited(child, "SIGKILL"),
    async restart() {
      await exited(child, "SIGKILL");
      child = await launch(port);
    },
    stop: () => exited(child, "SIGTERM"),
  };
}
