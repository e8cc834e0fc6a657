/** Builds the gateway for the benchmarks; type errors are reported, but a build that emitted is used. */
import { execSync } from "node:child_process";
import { existsSync } from "node:fs";

export function buildGateway(log: (message: string) => void): void {
  const root = new URL("..", import.meta.url);
  log("building the gateway (npm run build)");
  try {
    execSync("npm run -s build", { stdio: ["ignore", "pipe", "inherit"], cwd: root });
  } catch {
    if (!existsSync(new URL("dist/src/server.js", root))) throw new Error("npm run build emitted no dist/src/server.js");
    log("npm run build reported type errors; measuring what it emitted");
  }
}
