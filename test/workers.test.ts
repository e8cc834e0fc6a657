/**
 * WORKERS: the real entry point (`node --import tsx src/server.ts`) as a cluster of gateway
 * processes on one port, its workers told apart by the pid on their log lines.
 */
import type { ChildProcess } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { availableParallelism } from "node:os";
import { Agent, request, type IncomingHttpHeaders } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CrashLoopGuard } from "../src/server/crash-loop.ts";
import { workerPoolSize } from "../src/server/worker-flags.ts";
import { startServerProcess, type LogLine as BaseLogLine, type ServerProcess } from "./support/server-process.ts";

const STARTED = new Set<ChildProcess>();

interface LogLine extends BaseLogLine {
  pid: number;
  worker?: number;
  role?: string;
  requestId?: string;
  workerPid?: number;
  [key: string]: unknown;
}

interface RunningCluster extends Omit<ServerProcess<LogLine>, "child"> {
  primary: ChildProcess;
}

async function startCluster(env: Record<string, string>): Promise<RunningCluster> {
  const { child, ...running } = await startServerProcess<LogLine>({ WORKERS: "2", ...env });
  STARTED.add(child);
  return { primary: child, ...running };
}

/**
 * By default, one request on a connection of its own, so that the primary hands each to the
 * next worker; or over `agent`'s connections.
 */
function send(
  url: string,
  method: "GET" | "POST",
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  agent: Agent | false = false,
) {
  return new Promise<{ status: number; text: string; headers: IncomingHttpHeaders }>((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const call = request(
      `${url}${path}`,
      {
        method,
        agent,
        headers: {
          ...(payload ? { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } : {}),
          ...headers,
        },
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (text += chunk));
        response.on("end", () => resolve({ status: response.statusCode!, text, headers: response.headers }));
        response.on("error", reject);
      },
    );
    call.on("error", reject);
    call.end(payload);
  });
}

function graphql(url: string, query: string, requestId?: string) {
  return send(url, "POST", "/graphql", { query }, requestId ? { "x-request-id": requestId } : {});
}

/** The parent of a process, from /proc; undefined once it is gone. */
function parentOf(pid: number): number | undefined {
  try {
    // pid (comm) state ppid ...: comm may hold spaces, so read after its closing parenthesis.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return state === "Z" ? undefined : Number(ppid);
  } catch {
    return undefined;
  }
}

const alive = (pid: number) => parentOf(pid) !== undefined;
const byNumber = (a: number, b: number) => a - b;

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return "";
  }
}

function childPids(parent: number): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => parentOf(pid) === parent)
    .sort(byNumber);
}

/** Children of the primary that run the gateway entry point (not the simulator, not esbuild). */
function workerPids(primaryPid: number): number[] {
  return childPids(primaryPid).filter((pid) => cmdline(pid).includes("src/server.ts"));
}

/** Value of an exposition line, e.g. `graphql_envelop_request_duration_count{operationName="X",...}`. */
function sample(metrics: string, name: string, labels?: string): number | undefined {
  const line = metrics
    .split("\n")
    .find((row) => (labels === undefined ? row.startsWith(`${name} `) : row.startsWith(`${name}{`) && row.includes(labels)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

afterAll(() => {
  for (const child of STARTED) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

describe("WORKERS=2 on the embedded simulator", () => {
  let cluster: RunningCluster;
  let workers: number[];
  let simulatorUrl: string;

  beforeAll(async () => {
    // start:prod's pool flag (--v8-pool-size=0: one helper thread fewer than the cores), through NODE_OPTIONS here.
    cluster = await startCluster({ NODE_OPTIONS: "--v8-pool-size=0" });
    simulatorUrl = String(
      (await cluster.line((line) => line.role === "primary" && typeof line.dataApiUrl === "string")).dataApiUrl,
    );
    await cluster.line((line) => line.msg === "all workers listening");
    // Each worker writes its own line, which may reach the pipe after the primary's.
    for (const worker of [1, 2]) await cluster.line((line) => line.msg === "gateway listening" && line.worker === worker);
    workers = cluster.lines
      .filter((line) => line.msg === "gateway listening")
      .map((line) => line.pid)
      .sort(byNumber);
  }, 120_000);

  it("runs two gateway processes under the primary, and the simulator once", () => {
    expect(new Set(workers).size).toBe(2);
    expect(workers).toEqual(workerPids(cluster.primary.pid!));
    expect(
      cluster.lines
        .filter((line) => line.msg === "gateway listening")
        .map((line) => line.worker ?? 0)
        .sort(byNumber),
    ).toEqual([1, 2]);
    expect(cluster.lines.filter((line) => String(line.msg).startsWith("no DATA_API_URL"))).toHaveLength(1);
    // every worker was given the primary's simulator
    for (const line of cluster.lines.filter((line) => line.msg === "gateway listening"))
      expect(line.dataApiUrl).toBe(simulatorUrl);
  });

  it("gives each worker its share of V8's helper threads rather than a pool the size of the machine each", () => {
    const share = workerPoolSize(2, availableParallelism());
    for (const pid of workers) expect(cmdline(pid).split("\0")).toContain(`--v8-pool-size=${share}`);
    expect(share).toBe(Math.max(1, Math.floor((availableParallelism() - 2) / 2)));
  });

  it("answers GraphQL on the shared port from both workers", async () => {
    const ids = Array.from({ length: 24 }, (_, index) => `workers-test-${index}`);
    const answers = await Promise.all(
      ids.map((id) =>
        graphql(
          cluster.url,
          `
            {
              chains {
                chainName
              }
            }
          `,
          id,
        ),
      ),
    );
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect((JSON.parse(answer.text) as { data: { chains: unknown[] } }).data.chains.length).toBeGreaterThan(0);
    }
    const logged = await Promise.all(ids.map((id) => cluster.line((line) => line.requestId === id)));
    expect(new Set(logged.map((line) => line.pid))).toEqual(new Set(workers));
  });

  it("serves the metrics of the whole cluster from any worker", async () => {
    const probes = 10;
    // Ten different bodies (aliases), so that the response cache answers none and each is executed.
    await Promise.all(
      Array.from({ length: probes }, (_, index) =>
        graphql(cluster.url, `query WorkersProbe { c${index}: chains { chainName } }`),
      ),
    );
    for (let scrape = 0; scrape < 4; scrape += 1) {
      const { status, text } = await send(cluster.url, "GET", "/metrics");
      expect(status).toBe(200);
      expect(sample(text, "graphql_envelop_request_duration_count", 'operationName="WorkersProbe"')).toBe(probes);
      expect(sample(text, "gateway_cluster_workers_listening")).toBe(2);
      expect(sample(text, "gateway_cluster_worker_deaths_total")).toBe(0);
    }
  });

  it("replaces a worker killed with SIGKILL", async () => {
    const [victim, survivor] = workers as [number, number];
    process.kill(victim, "SIGKILL");
    const died = await cluster.line((line) => line.msg === "worker died: starting a replacement" && line.workerPid === victim);
    expect(died.signal).toBe("SIGKILL");
    // While the replacement starts, the survivor's metrics are the cluster's.
    const during = await send(cluster.url, "GET", "/metrics");
    expect(during.status).toBe(200);
    expect(sample(during.text, "gateway_cluster_worker_deaths_total")).toBe(1);
    const replacement = await cluster.line((line) => line.msg === "gateway listening" && !workers.includes(line.pid));
    expect(alive(victim)).toBe(false);
    workers = [survivor, replacement.pid].sort(byNumber);
    expect(workerPids(cluster.primary.pid!)).toEqual(workers);

    const ids = Array.from({ length: 8 }, (_, index) => `after-kill-${index}`);
    const answers = await Promise.all(
      ids.map((id) =>
        graphql(
          cluster.url,
          `
            {
              chains {
                chainName
              }
            }
          `,
          id,
        ),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(ids.map(() => 200));
    const logged = await Promise.all(ids.map((id) => cluster.line((line) => line.requestId === id)));
    expect(new Set(logged.map((line) => line.pid))).toEqual(new Set(workers));
    const { text } = await send(cluster.url, "GET", "/metrics");
    expect(sample(text, "gateway_cluster_worker_deaths_total")).toBe(1);
    expect(sample(text, "gateway_cluster_workers_listening")).toBe(2);
  }, 90_000);

  it("on SIGTERM, finishes a slow request in flight, then every process exits", async () => {
    const simulatorPid = childPids(cluster.primary.pid!).find((pid) => cmdline(pid).includes("simulator/main"));
    expect(simulatorPid).toBeDefined();
    const control = (path: string, body?: unknown) =>
      fetch(
        `${simulatorUrl}/_simulator/${path}`,
        body === undefined ? {} : { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
      );
    await control("knobs", { latencyMs: 1_500 });
    await control("reset", {});
    // Over a keep-alive connection, which the answer must close, or the worker would wait for the client to.
    const keepAlive = new Agent({ keepAlive: true });
    const slow = send(
      cluster.url,
      "POST",
      "/graphql",
      { query: `{ latestBlocks(first: 3) { nodes { blockNumber } } }` },
      {},
      keepAlive,
    );
    // In flight: the simulator counts a request when it arrives, before its latency.
    const upstreamPageCalls = async () =>
      ((await (await control("counters")).json()) as { counts: Record<string, number> }).counts["GET /v1/blocks"] ?? 0;
    await expect.poll(upstreamPageCalls, { timeout: 10_000, interval: 50 }).toBe(1);
    cluster.primary.kill("SIGTERM");

    const answer = await slow;
    expect(answer.status).toBe(200);
    expect(answer.headers.connection).toBe("close");
    const body = JSON.parse(answer.text) as { data: { latestBlocks: { nodes: unknown[] } }; errors?: unknown };
    expect(body.errors).toBeUndefined();
    expect(body.data.latestBlocks.nodes).toHaveLength(3);

    expect(await cluster.exit).toEqual({ code: 0, signal: null });
    keepAlive.destroy();
    for (const pid of [...workers, simulatorPid!]) expect(alive(pid), `process ${pid}`).toBe(false);
    const stopped = cluster.lines.filter((line) => line.msg === "stopped");
    expect(stopped.map((line) => line.pid).sort(byNumber)).toEqual([...workers, cluster.primary.pid!].sort(byNumber));
  }, 90_000);
});

describe("a cluster's /metrics", () => {
  it("is paid for like a worker's: 10 a scrape from the caller's budget, refused with JSON when it is spent", async () => {
    // Each worker keeps its own buckets (no Redis): 25 pays for two scrapes in each.
    const cluster = await startCluster({ RATE_LIMIT_BURST: "25", RATE_LIMIT_RATE: "0.01" });
    try {
      await cluster.line((line) => line.msg === "all workers listening");
      const scrapes = [];
      for (let scrape = 0; scrape < 6; scrape += 1) scrapes.push(await send(cluster.url, "GET", "/metrics"));
      const refused = scrapes.filter(({ status }) => status === 429);
      expect(scrapes.filter(({ status }) => status === 200).length).toBeLessThanOrEqual(4);
      expect(refused.length).toBeGreaterThanOrEqual(2);
      for (const { text, headers } of refused) {
        expect(headers["content-type"]).toMatch(/^application\/json/);
        expect(JSON.parse(text)).toMatchObject({ errors: [{ extensions: { code: "RATE_LIMITED" } }] });
        expect(Number(headers["retry-after"])).toBeGreaterThan(0);
      }
    } finally {
      cluster.primary.kill("SIGTERM");
      await cluster.exit;
    }
  }, 120_000);
});

describe("a cluster whose primary dies", () => {
  it("leaves no worker and no simulator behind", async () => {
    const cluster = await startCluster({});
    await cluster.line((line) => line.msg === "all workers listening");
    const children = childPids(cluster.primary.pid!).filter(
      (pid) => cmdline(pid).includes("src/server.ts") || cmdline(pid).includes("simulator/main"),
    );
    expect(children).toHaveLength(3);
    cluster.primary.kill("SIGKILL");
    await cluster.exit;
    await expect.poll(() => children.filter(alive), { timeout: 15_000, interval: 100 }).toEqual([]);
  }, 120_000);
});

describe("workers that keep dying", () => {
  it("are replaced until the crash-loop guard stops the primary with a non-zero exit", async () => {
    // Each worker fails as it builds its gateway; the primary itself reads no such file.
    const cluster = await startCluster({
      DATA_API_URL: "http://127.0.0.1:9",
      METRICS_API_URL: "http://127.0.0.1:9",
      PERSISTED_OPERATIONS_FILE: "/nonexistent/persisted-operations.json",
    });
    const { code } = await cluster.exit;
    expect(code).toBe(1);
    expect(cluster.lines.filter((line) => line.msg === "worker died: starting a replacement")).toHaveLength(4);
    const fatal = cluster.lines.find((line) => line.msg === "workers keep dying: no more replacements, stopping");
    expect(fatal).toMatchObject({ role: "primary", deaths: 5, windowMs: 60_000 });
    expect(cluster.lines.some((line) => line.msg === "gateway listening")).toBe(false);
    const stopping = cluster.lines.find((line) => line.msg === "stopping the workers") as LogLine & {
      workers: { workerPid: number }[];
    };
    const started = [
      ...cluster.lines.filter((line) => line.workerPid !== undefined).map((line) => line.workerPid!),
      ...stopping.workers.map((worker) => worker.workerPid),
    ];
    expect(new Set(started).size).toBeGreaterThanOrEqual(5);
    expect(started.filter(alive)).toEqual([]);
  }, 120_000);
});

describe("the crash-loop guard", () => {
  it("trips at the limit of deaths within the window, forgetting older ones", () => {
    const guard = new CrashLoopGuard(3, 60_000);
    expect(guard.recordDeath(0)).toBe(false);
    expect(guard.recordDeath(30_000)).toBe(false);
    // the first death has left the window
    expect(guard.recordDeath(61_000)).toBe(false);
    expect(guard.recordDeath(62_000)).toBe(true);
  });
});
