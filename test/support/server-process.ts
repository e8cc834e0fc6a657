/**
 * The real entry point (`node --import tsx src/server.ts`) as a child process on a free loopback
 * port, with its JSON log lines collected as they come.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { freePort } from "./free-port.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface LogLine {
  msg: string;
  [key: string]: unknown;
}

export interface ServerProcess<L extends LogLine = LogLine> {
  child: ChildProcess;
  url: string;
  lines: L[];
  /** The first line, already written or still to come, that `accept` accepts. */
  line(accept: (line: L) => boolean, timeoutMs?: number): Promise<L>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `src/server.ts` with `env` over this process's environment, less the variables in `unset`. */
export async function startServerProcess<L extends LogLine = LogLine>(
  env: Record<string, string>,
  unset: readonly string[] = [],
): Promise<ServerProcess<L>> {
  const port = await freePort();
  const inherited: NodeJS.ProcessEnv = { ...process.env };
  for (const name of unset) delete inherited[name];
  const child = spawn(process.execPath, ["--import", "tsx", "src/server.ts"], {
    cwd: ROOT,
    env: { ...inherited, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: L[] = [];
  const waiting = new Set<() => void>();
  createInterface({ input: child.stdout! }).on("line", (text) => {
    try {
      lines.push(JSON.parse(text) as L);
    } catch {
      return;
    }
    for (const check of waiting) check();
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );

  function line(accept: (line: L) => boolean, timeoutMs = 60_000): Promise<L> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiting.delete(check);
        reject(new Error(`no such log line in ${timeoutMs} ms; stderr: ${stderr}`));
      }, timeoutMs);
      function check(): void {
        const found = lines.find(accept);
        if (!found) return;
        clearTimeout(timer);
        waiting.delete(check);
        resolve(found);
      }
      waiting.add(check);
      check();
    });
  }

  return { child, url: `http://127.0.0.1:${port}`, lines, line, exit };
}
