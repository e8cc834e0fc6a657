/**
 * `npm run bench:workers`: throughput at 32 connections of the gateway as one process (WORKERS=1)
 * against two workers sharing the port (WORKERS=2), for each reference operation, with the
 * response cache on (the default) and off. Each configuration has a Redis of its own (REDIS_URL),
 * and reports the hit rates of its response cache and of the shared tier from its /metrics.
 *
 * Every figure is the median of BENCH_RUNS runs (default 3) of BENCH_SECONDS (default 5); the two
 * configurations are loaded one after the other within each run, so that their ratio compares
 * the same moment of a machine. Knobs: BENCH_OPERATIONS (comma-separated names),
 * BENCH_RESPONSE_CACHE (comma-separated: on,off), BENCH_WARM_UP_SECONDS (default 2).
 * Writes bench/results/workers.{json,md}.
 */
import { execSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { availableParallelism, cpus, loadavg } from "node:os";
import { startRedisServer, type RedisServer } from "../test/support/redis-server.ts";
import { buildGateway } from "./build.ts";
import { gatewayBody, load, median, round, warmUp, type LoadResult, type Operation } from "./measure.ts";
import { referenceOperations } from "./operations/index.ts";
import { startGateway, startSimulator, type Running, type RunningSimulator } from "./processes.ts";
import { PlainUpstream } from "./upstream.ts";

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = 32;
const SELECTED = process.env.BENCH_OPERATIONS?.split(",");
const RESPONSE_CACHE_MODES = (process.env.BENCH_RESPONSE_CACHE ?? "on,off").split(",") as ("on" | "off")[];
/** A rate limiter must not be what is measured. */
const UNLIMITED = { RATE_LIMIT_RATE: "1000000000", RATE_LIMIT_BURST: "1000000000" };
const CONFIGURATIONS = [
  { name: "oneWorker", workers: 1 },
  { name: "twoWorkers", workers: 2 },
] as const;

function log(message: string): void {
  process.stderr.write(`[bench:workers] ${message}\n`);
}

/** The samples of one metric: each label set (as given) with its value. */
type Samples = { labels: Record<string, string>; value: number }[];

function parseMetrics(text: string): Map<string, Samples> {
  const metrics = new Map<string, Samples>();
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    const samples = metrics.get(match[1]!) ?? [];
    samples.push({ labels, value: Number(match[3]) });
    metrics.set(match[1]!, samples);
  }
  return metrics;
}

/**
 * One scrape of /metrics. With WORKERS=2 the worker that takes it answers for the whole cluster
 * (the primary sums every worker's registry, src/telemetry/cluster-metrics.ts), so one scrape is exact.
 */
async function scrape(gateway: Running): Promise<Map<string, Samples>> {
  const response = await fetch(new URL("/metrics", gateway.url));
  if (!response.ok) throw new Error(`${gateway.url} /metrics: HTTP ${response.status}`);
  return parseMetrics(await response.text());
}

/** Sum of a counter's increase between two scrapes, per value of `label`. */
function increase(
  before: Map<string, Samples>,
  after: Map<string, Samples>,
  name: string,
  filter: (labels: Record<string, string>) => boolean,
  label: string,
) {
  const byValue: Record<string, number> = {};
  const add = (samples: Samples | undefined, sign: number) => {
    for (const sample of samples ?? []) {
      if (!filter(sample.labels)) continue;
      const key = sample.labels[label] ?? "";
      byValue[key] = (byValue[key] ?? 0) + sign * sample.value;
    }
  };
  add(after.get(name), 1);
  add(before.get(name), -1);
  return byValue;
}

interface HitRate {
  counts: Record<string, number>;
  /** Hits over look-ups; null without look-ups. */
  hitRate: number | null;
}

function hitRate(counts: Record<string, number>, hits: string[]): HitRate {
  const total = Object.values(counts).reduce((sum, count) => sum + count, 0);
  const hit = hits.reduce((sum, result) => sum + (counts[result] ?? 0), 0);
  return { counts, hitRate: total > 0 ? round(hit / total, 4) : null };
}

const RESPONSE_CACHE = "gateway_response_cache_lookups_total";
const SHARED_TIER = "gateway_shared_cache_lookups_total";

function cacheFigures(before: Map<string, Samples>, after: Map<string, Samples>) {
  const responseCache = hitRate(
    increase(before, after, RESPONSE_CACHE, () => true, "result"),
    ["local", "shared"],
  );
  // Absent from a build without the shared tier: null, never a guess.
  let sharedTier: Record<string, HitRate> | null = null;
  if (after.has(SHARED_TIER)) {
    sharedTier = {};
    const tiers = new Set((after.get(SHARED_TIER) ?? []).map((sample) => sample.labels.tier ?? ""));
    for (const tier of tiers) {
      sharedTier[tier] = hitRate(
        increase(before, after, SHARED_TIER, (labels) => (labels.tier ?? "") === tier, "result"),
        ["hit"],
      );
    }
  }
  // The in-process record cache of each worker, which the shared tier backs.
  const recordCache = hitRate(
    increase(before, after, "gateway_cache_lookups_total", () => true, "result"),
    ["hit"],
  );
  const redisUp = after.get("gateway_redis_up")?.[0]?.value ?? null;
  return { responseCache, recordCache, sharedTier, redisUp };
}

interface Started {
  name: string;
  gateway: Running;
  redis: RedisServer;
}

async function startConfiguration(
  simulator: RunningSimulator,
  workers: number,
  name: string,
  responseCache: "on" | "off",
): Promise<Started> {
  const redis = await startRedisServer();
  const gateway = await startGateway(simulator, {
    ...UNLIMITED,
    WORKERS: String(workers),
    REDIS_URL: redis.url,
    ...(responseCache === "off" ? { RESPONSE_CACHE_TTL_MS: "0" } : {}),
  });
  // /health answers as soon as one worker listens: wait for all of them.
  for (let attempt = 0; workers > 1; attempt += 1) {
    const listening = (await scrape(gateway)).get("gateway_cluster_workers_listening")?.[0]?.value;
    if (listening === workers) break;
    if (attempt === 600) throw new Error(`${name}: ${listening ?? 0} of ${workers} workers listening after 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { name, gateway, redis };
}

async function measure(simulator: RunningSimulator, operations: Operation[], responseCache: "on" | "off") {
  const started: Started[] = [];
  try {
    for (const { name, workers } of CONFIGURATIONS)
      started.push(await startConfiguration(simulator, workers, name, responseCache));
    const rows: Record<string, unknown> = {};
    for (const operation of operations) {
      const body = gatewayBody(operation);
      for (const { gateway } of started) await warmUp(gateway, body);
      const before = await Promise.all(started.map(({ gateway }) => scrape(gateway)));
      const runs: LoadResult[][] = started.map(() => []);
      for (let run = 0; run < RUNS; run += 1) {
        for (const [index, { gateway }] of started.entries()) {
          runs[index]!.push(await load({ url: gateway.url, body, connections: CONNECTIONS, seconds: SECONDS }));
        }
      }
      const after = await Promise.all(started.map(({ gateway }) => scrape(gateway)));
      const [one, two] = runs.map((results) => ({
        rps: median(results.map((result) => result.rps)),
        p50: median(results.map((result) => result.p50)),
        p99: median(results.map((result) => result.p99)),
        errors: results.reduce((sum, result) => sum + result.errors, 0),
      })) as [LoadResult, LoadResult];
      rows[operation.name] = {
        oneWorkerRps: round(one.rps, 0),
        twoWorkersRps: round(two.rps, 0),
        oneWorkerRunsRps: runs[0]!.map((result) => round(result.rps, 0)),
        twoWorkersRunsRps: runs[1]!.map((result) => round(result.rps, 0)),
        ratio: round(two.rps / one.rps),
        oneWorkerP50Ms: one.p50,
        twoWorkersP50Ms: two.p50,
        oneWorkerP99Ms: one.p99,
        twoWorkersP99Ms: two.p99,
        errors: one.errors + two.errors,
        caches: Object.fromEntries(started.map(({ name }, index) => [name, cacheFigures(before[index]!, after[index]!)])),
      };
      log(
        `${responseCache === "on" ? "with" : "without"} the response cache, ${operation.name}: ${round(one.rps, 0)} vs ${round(two.rps, 0)} req/s`,
      );
    }
    return rows;
  } finally {
    for (const { gateway, redis } of started.reverse()) {
      await gateway.stop().catch(() => undefined);
      await redis.stop().catch(() => undefined);
    }
  }
}

async function main(): Promise<void> {
  buildGateway(log);
  const results: Record<string, unknown> = {
    date: new Date().toISOString(),
    commit: execSync("git rev-parse --short HEAD", { encoding: "utf8" }).trim(),
    machine: {
      cpus: cpus().length,
      availableParallelism: availableParallelism(),
      model: cpus()[0]?.model ?? "unknown",
      node: process.version,
    },
    loadAverageAtStart: loadavg().map((value) => round(value)),
    runs: RUNS,
    secondsPerMeasurement: SECONDS,
    connections: CONNECTIONS,
  };
  const simulator = await startSimulator();
  const upstream = new PlainUpstream(simulator.dataUrl, simulator.metricsUrl);
  try {
    const operations: Operation[] = await Promise.all(
      referenceOperations
        .filter((operation) => !SELECTED || SELECTED.includes(operation.name))
        .map(async (operation) => ({ ...operation, ...(await operation.prepare(upstream)) })),
    );
    for (const mode of RESPONSE_CACHE_MODES) {
      log(`response cache ${mode}: 1 worker against 2, ${RUNS} runs of ${SECONDS} s at ${CONNECTIONS} connections`);
      results[mode === "on" ? "withResponseCache" : "withoutResponseCache"] = await measure(simulator, operations, mode);
    }
  } finally {
    await upstream.close();
    await simulator.stop();
  }
  results.loadAverageAtEnd = loadavg().map((value) => round(value));
  results.notes = notes(results);
  await writeFile(new URL("./results/workers.json", import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
  await writeFile(new URL("./results/workers.md", import.meta.url), markdown(results));
  log("wrote bench/results/workers.json and bench/results/workers.md");
}

type Row = {
  oneWorkerRps: number;
  twoWorkersRps: number;
  oneWorkerRunsRps: number[];
  twoWorkersRunsRps: number[];
  ratio: number;
  oneWorkerP50Ms: number;
  twoWorkersP50Ms: number;
  errors: number;
  caches: Record<string, ReturnType<typeof cacheFigures>>;
};

function rowsOf(results: Record<string, unknown>): Row[] {
  return [results.withResponseCache, results.withoutResponseCache].flatMap((table) =>
    Object.values((table ?? {}) as Record<string, Row>),
  );
}

/** What a reader needs to weigh the figures, derived from what was measured. */
function notes(results: Record<string, unknown>): string[] {
  const rows = rowsOf(results);
  const figures = rows.flatMap((row) => Object.values(row.caches));
  const notes = [
    `Taken on a ${cpus().length}-core machine that runs the simulator, autocannon and Redis beside the gateway (load average ${JSON.stringify(results.loadAverageAtStart)} at the start, ${JSON.stringify(results.loadAverageAtEnd)} at the end): absolute figures are noisy; the ratio compares two configurations measured one after the other within each run.`,
    `On ${cpus().length} cores the gateway's workers share the CPU with the simulator, autocannon and Redis, which all run on the same machine: two workers cannot get two whole cores here, so the ratio likely understates what a second core gives a gateway on a machine of its own.`,
    "/metrics of the two-worker gateway is the whole cluster's: the worker that takes a scrape asks the primary, which gathers every worker's registry over IPC and sums them (src/telemetry/cluster-metrics.ts). Each cache figure is the increase of the counters between one scrape before and one after the measured runs (warm-up excluded).",
    "Response cache hit rate: (local + shared) / look-ups of gateway_response_cache_lookups_total; in-process record cache: hit / look-ups of gateway_cache_lookups_total; shared tier: hit / look-ups of gateway_shared_cache_lookups_total, per tier. null: no look-ups (or, for the shared tier, no such metric).",
  ];
  const beyond = rows.filter((row) => row.ratio > cpus().length).length;
  if (beyond > 0) {
    notes.push(
      `${beyond} ratio(s) exceed the ${cpus().length} cores, more than a second core alone explains: other load slowed some one-worker runs, or each worker's own heap (the heap flags are per process) relieved the garbage collector. The rps cells show the range of the runs beside their median.`,
    );
  }
  if (figures.every((figure) => figure.sharedTier === null)) {
    notes.push(
      `${SHARED_TIER} was absent from /metrics: this build has no shared tier to measure yet, so its hit rate is reported as null.`,
    );
  }
  if (figures.every((figure) => figure.redisUp !== 1)) {
    notes.push(
      "gateway_redis_up was never 1: the gateways ran without the Redis they were given, on their in-process caches alone (in the build measured here, src/config.ts parses REDIS_URL but no code creates a Redis link yet).",
    );
  }
  return notes;
}

function markdown(results: Record<string, unknown>): string {
  const lines = [
    "# One worker against two (WORKERS=1 vs 2)",
    "",
    `Written by \`npm run bench:workers\` on ${String(results.date)} at commit ${String(results.commit)}; ${JSON.stringify(results.machine)}. Throughput at ${String(results.connections)} connections, the median of ${String(results.runs)} runs of ${String(results.secondsPerMeasurement)} s per configuration; each configuration with a Redis of its own (REDIS_URL) and no rate limit.`,
    "",
    ...(results.notes as string[]).map((note) => `- ${note}`),
    "",
  ];
  const range = (values: number[]) => `${Math.min(...values)}–${Math.max(...values)}`;
  const rate = (value: number | null | undefined) =>
    value === null || value === undefined ? "null" : `${round(value * 100, 1)} %`;
  const shared = (figure: ReturnType<typeof cacheFigures> | undefined) =>
    figure?.sharedTier
      ? Object.entries(figure.sharedTier)
          .map(([tier, value]) => `${tier}: ${rate(value.hitRate)}`)
          .join(", ") || "no look-ups"
      : "null";
  const table = (title: string, data: unknown) => {
    if (!data) return;
    lines.push(
      `## ${title}`,
      "",
      "| operation | 1 worker req/s (runs' range) | 2 workers req/s (runs' range) | ratio | p50 ms (1 / 2) | errors | response cache hits (1 / 2) | in-process record cache hits (1 / 2) | shared tier hits (1 / 2) |",
      "|---|---|---|---|---|---|---|---|---|",
    );
    for (const [name, row] of Object.entries(data as Record<string, Row>)) {
      const one = row.caches.oneWorker;
      const two = row.caches.twoWorkers;
      lines.push(
        `| ${name} | ${row.oneWorkerRps} (${range(row.oneWorkerRunsRps)}) | ${row.twoWorkersRps} (${range(row.twoWorkersRunsRps)}) | ${row.ratio} | ${row.oneWorkerP50Ms} / ${row.twoWorkersP50Ms} | ${row.errors} | ${rate(one?.responseCache.hitRate)} / ${rate(two?.responseCache.hitRate)} | ${rate(one?.recordCache.hitRate)} / ${rate(two?.recordCache.hitRate)} | ${shared(one)} / ${shared(two)} |`,
      );
    }
    lines.push("");
  };
  table("Response cache on (the default, 1 s)", results.withResponseCache);
  table("Response cache off (every request executed)", results.withoutResponseCache);
  lines.push("Look-up counts by result for every cell are in [`workers.json`](workers.json).", "");
  return `${lines.join("\n")}\n`;
}

await main();
