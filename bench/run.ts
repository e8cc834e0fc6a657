/**
 * `npm run bench`: the simulator, the gateway and the baseline as separate processes on
 * loopback, load from autocannon, results in bench/results/latest.{json,md}.
 *
 * Every figure is the median of BENCH_RUNS runs (default 3), and every comparison is a ratio
 * of two things measured in the same run. Knobs: BENCH_SECONDS (per measurement, default 5),
 * BENCH_MEMORY_SECONDS (default 60), BENCH_OPERATIONS (comma-separated names), BENCH_PHASES
 * (comma-separated: calls,overhead,throughput,parallelism,memory,simulator), BENCH_WARM_UP_SECONDS
 * (load before measuring, default 2), BENCH_CPU_PROFILE_DIR (gateways write V8 CPU profiles there).
 */
import { writeFile } from "node:fs/promises";
import { cpus } from "node:os";
import autocannon from "autocannon";
import { Pool } from "undici";
import { referenceOperations } from "./operations/index.ts";
import { loadConfig } from "../src/config.ts";
import { buildGateway } from "./build.ts";
import { gatewayBody, load, median, post, round, warmUp, type LoadResult, type Operation } from "./measure.ts";
import { startBaseline, startGateway, startSimulator, type Running, type RunningSimulator } from "./processes.ts";
import { PlainUpstream } from "./upstream.ts";

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const MEMORY_SECONDS = Number(process.env.BENCH_MEMORY_SECONDS ?? 60);
const PHASES = new Set((process.env.BENCH_PHASES ?? "calls,overhead,throughput,parallelism,memory,simulator").split(","));
const SELECTED = process.env.BENCH_OPERATIONS?.split(",");
const selected = referenceOperations.filter((operation) => !SELECTED || SELECTED.includes(operation.name));
let operations: Operation[] = [];
const ADDED_LATENCY_MS = 50;

function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

/** Sequential requests over one keep-alive connection, timed one by one (autocannon rounds to whole ms). */
async function sequentialLatency(url: string, body: string, seconds: number): Promise<number> {
  const client = new LatencyClient(url, body);
  const latencies: number[] = [];
  const until = performance.now() + seconds * 1000;
  try {
    while (performance.now() < until) latencies.push(await client.time());
  } finally {
    await client.close();
  }
  return median(latencies);
}

/**
 * Gateway and baseline timed in turn, request by request, each over its own keep-alive
 * connection: both meet the same moments of a shared, noisy machine, which back-to-back runs
 * of several seconds do not.
 */
async function pairedLatency(
  gateway: { url: string; body: string },
  baseline: { url: string; body: string },
  seconds: number,
): Promise<{ gateway: number; baseline: number }> {
  const clients = [new LatencyClient(gateway.url, gateway.body), new LatencyClient(baseline.url, baseline.body)] as const;
  const latencies: [number[], number[]] = [[], []];
  const until = performance.now() + seconds * 1000;
  try {
    for (let turn = 0; performance.now() < until; turn += 1) {
      // Alternate which goes first, so that neither always follows the other.
      const order = turn % 2 === 0 ? [0, 1] : [1, 0];
      for (const which of order) latencies[which]!.push(await clients[which]!.time());
    }
  } finally {
    await Promise.all(clients.map((client) => client.close()));
  }
  return { gateway: median(latencies[0]), baseline: median(latencies[1]) };
}

class LatencyClient {
  private readonly target: URL;
  private readonly pool: Pool;

  constructor(
    url: string,
    private readonly body: string,
  ) {
    this.target = new URL(url);
    this.pool = new Pool(this.target.origin, { connections: 1 });
  }

  async time(): Promise<number> {
    const started = performance.now();
    const response = await this.pool.request({
      method: "POST",
      path: this.target.pathname,
      headers: { "content-type": "application/json", accept: "application/json" },
      body: this.body,
    });
    await response.body.text();
    if (response.statusCode !== 200) throw new Error(`${this.target.href}: HTTP ${response.statusCode}`);
    return performance.now() - started;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

function baselineBody(operation: Operation): string {
  return JSON.stringify({ query: `{ run(operation: "${operation.name}") }` });
}

/** Runs gateway and baseline alternately, `RUNS` times, and takes the median of each figure. */
async function compare(
  gateway: Running,
  baseline: Running,
  operation: Operation,
  connections: number,
): Promise<{ gateway: LoadResult; baseline: LoadResult }> {
  const gatewayRuns: LoadResult[] = [];
  const baselineRuns: LoadResult[] = [];
  for (let run = 0; run < RUNS; run += 1) {
    gatewayRuns.push(await load({ url: gateway.url, body: gatewayBody(operation), connections, seconds: SECONDS }));
    baselineRuns.push(await load({ url: baseline.url, body: baselineBody(operation), connections, seconds: SECONDS }));
  }
  const summarize = (runs: LoadResult[]): LoadResult => ({
    p50: median(runs.map((run) => run.p50)),
    p99: median(runs.map((run) => run.p99)),
    rps: median(runs.map((run) => run.rps)),
    requests: runs.reduce((sum, run) => sum + run.requests, 0),
    seconds: runs.reduce((sum, run) => sum + run.seconds, 0),
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
  });
  return { gateway: summarize(gatewayRuns), baseline: summarize(baselineRuns) };
}

interface CacheFill {
  recordCacheBytes: number;
  recordCacheEntries: number;
  recordCacheMaxBytes: number;
  recordCacheMaxEntries: number;
  responseCacheBodies: number;
}

async function gaugeValue(metricsUrl: string, name: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  return Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? 0);
}

/**
 * Fills the record cache to (nearly) its byte or entry bound with distinct blocks of every chain,
 * and the response cache with more distinct bodies than it holds (the reference operations, each
 * body made distinct by a comment), so that memory is measured with both caches full.
 */
async function fillCaches(gateway: Running, simulator: RunningSimulator): Promise<CacheFill> {
  const defaults = loadConfig({}).cache;
  const metricsUrl = gateway.url.replace(/\/graphql$/, "/metrics");
  const origin = new URL(gateway.url);
  const client = new Pool(origin.origin, { connections: 16 });
  const send = async (body: string) => {
    const response = await client.request({
      method: "POST",
      path: origin.pathname,
      headers: { "content-type": "application/json", accept: "application/json" },
      body,
    });
    await response.body.text();
  };
  const { chains } = (await (await fetch(`${simulator.dataUrl}/v1/chains`)).json()) as { chains: { chainId: string }[] };
  const fillBlock =
    "query FillBlock($chainId: ID!, $blockId: String!) { chain(id: $chainId) { block(id: $blockId) { blockHash } } }";
  let bytes = 0;
  let entries = 0;
  try {
    for (let height = 1; bytes < defaults.maxBytes * 0.95 && entries < defaults.maxEntries * 0.95; height += 25) {
      const bodies = chains.flatMap((chain) =>
        Array.from({ length: 25 }, (_, offset) =>
          JSON.stringify({ query: fillBlock, variables: { chainId: chain.chainId, blockId: String(height + offset) } }),
        ),
      );
      await Promise.all(bodies.map(send));
      [bytes, entries] = await Promise.all([
        gaugeValue(metricsUrl, "gateway_cache_bytes"),
        gaugeValue(metricsUrl, "gateway_cache_entries"),
      ]);
      if (height > 100_000)
        throw new Error(`the record cache holds ${bytes} bytes after every block: it cannot be filled this way`);
    }
    const bodies = Array.from({ length: Math.ceil(defaults.responseMaxEntries * 1.2) }, (_, index) => {
      const operation = operations[index % operations.length]!;
      return JSON.stringify({ query: `${operation.document}\n# fill ${index}`, variables: operation.variables });
    });
    for (let start = 0; start < bodies.length; start += 64) await Promise.all(bodies.slice(start, start + 64).map(send));
    return {
      recordCacheBytes: bytes,
      recordCacheEntries: entries,
      recordCacheMaxBytes: defaults.maxBytes,
      recordCacheMaxEntries: defaults.maxEntries,
      responseCacheBodies: bodies.length,
    };
  } finally {
    await client.close();
  }
}

async function main(): Promise<void> {
  buildGateway(log);
  const results: Record<string, unknown> = {
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model ?? "unknown", node: process.version },
    runs: RUNS,
    secondsPerMeasurement: SECONDS,
  };
  const simulator: RunningSimulator = await startSimulator();
  const upstream = new PlainUpstream(simulator.dataUrl, simulator.metricsUrl);
  operations = await Promise.all(selected.map(async (operation) => ({ ...operation, ...(await operation.prepare(upstream)) })));
  const stopAll: (() => Promise<void>)[] = [() => simulator.stop(), () => upstream.close()];
  try {
    if (PHASES.has("calls")) {
      log("upstream calls, cold and warm");
      const calls: Record<string, unknown> = {};
      for (const operation of operations) {
        // What one request needs, the chain list included: no preload here.
        const gateway = await startGateway(simulator, { RESPONSE_CACHE_TTL_MS: "0", CHAIN_LIST_PRELOAD: "false" });
        try {
          await simulator.reset();
          const cold = await post(gateway.url, gatewayBody(operation));
          if (cold.errors) throw new Error(`${operation.name}: ${JSON.stringify(cold.errors).slice(0, 500)}`);
          const coldCounts = await simulator.counters();
          await simulator.reset();
          await post(gateway.url, gatewayBody(operation));
          const warmCounts = await simulator.counters();
          const fewest = operation.fewestCalls;
          const total = (counts: Record<string, number>) => Object.values(counts).reduce((sum, count) => sum + count, 0);
          calls[operation.name] = {
            fewestCold: fewest,
            cold: total(coldCounts),
            coldByRoute: coldCounts,
            warm: total(warmCounts),
            warmByRoute: warmCounts,
          };
        } finally {
          await gateway.stop();
        }
      }
      results.calls = calls;
    }

    const gateway = await startGateway(simulator, { RESPONSE_CACHE_TTL_MS: "0" });
    const baseline = await startBaseline(simulator);
    stopAll.push(
      () => gateway.stop(),
      () => baseline.stop(),
    );
    for (const operation of operations) {
      await warmUp(gateway, gatewayBody(operation));
      await warmUp(baseline, baselineBody(operation));
    }

    if (PHASES.has("overhead")) {
      log("overhead: 1 connection, no added latency");
      await simulator.knobs({ latencyMs: 0 });
      const overhead: Record<string, unknown> = {};
      for (const operation of operations) {
        const gatewayRuns: number[] = [];
        const baselineRuns: number[] = [];
        for (let run = 0; run < RUNS; run += 1) {
          const paired = await pairedLatency(
            { url: gateway.url, body: gatewayBody(operation) },
            { url: baseline.url, body: baselineBody(operation) },
            SECONDS,
          );
          gatewayRuns.push(paired.gateway);
          baselineRuns.push(paired.baseline);
        }
        const g = median(gatewayRuns);
        const b = median(baselineRuns);
        overhead[operation.name] = {
          gatewayP50Ms: round(g, 3),
          baselineP50Ms: round(b, 3),
          ratio: round(g / b),
          target: "<= 1.2",
        };
      }
      results.overhead = overhead;
    }

    if (PHASES.has("throughput")) {
      log("throughput: 32 connections");
      await simulator.knobs({ latencyMs: 0 });
      const cached = await startGateway(simulator, {});
      stopAll.push(() => cached.stop());
      const throughput: Record<string, unknown> = {};
      for (const operation of operations) {
        await warmUp(cached, gatewayBody(operation));
        const { gateway: g, baseline: b } = await compare(gateway, baseline, operation, 32);
        const cachedRates: number[] = [];
        for (let run = 0; run < RUNS; run += 1) {
          cachedRates.push(
            (await load({ url: cached.url, body: gatewayBody(operation), connections: 32, seconds: SECONDS })).rps,
          );
        }
        const withCache = median(cachedRates);
        throughput[operation.name] = {
          gatewayRps: round(g.rps, 0),
          baselineRps: round(b.rps, 0),
          ratio: round(g.rps / b.rps),
          gatewayWithResponseCacheRps: round(withCache, 0),
          ratioWithResponseCache: round(withCache / b.rps),
          errors: g.errors + b.errors,
          target: ">= 1 (>= 3 where caching applies)",
        };
      }
      results.throughput = throughput;
    }

    if (PHASES.has("parallelism")) {
      log(`parallelism: ${ADDED_LATENCY_MS} ms added upstream latency`);
      await simulator.knobs({ latencyMs: ADDED_LATENCY_MS });
      const parallelism: Record<string, unknown> = {};
      // A gateway that keeps no record that does not change (the chain list it keeps loaded), so
      // that every request makes each upstream call its operation needs: only their dependencies
      // may add up. Warmed first, so that the figure is the steady state, not the first request.
      const uncached = await startGateway(simulator, { RESPONSE_CACHE_TTL_MS: "0", RECORD_CACHE: "false" });
      try {
        for (const operation of operations) {
          await warmUp(uncached, gatewayBody(operation));
          const runs: number[] = [];
          for (let run = 0; run < RUNS; run += 1)
            runs.push(await sequentialLatency(uncached.url, gatewayBody(operation), SECONDS));
          const limit = operation.dependentCalls * ADDED_LATENCY_MS + 15;
          const p50 = round(median(runs), 1);
          parallelism[operation.name] = {
            dependentCalls: operation.dependentCalls,
            p50Ms: p50,
            limitMs: limit,
            ok: p50 <= limit,
          };
        }
      } finally {
        await uncached.stop();
      }
      await simulator.knobs({ latencyMs: 0 });
      results.parallelism = parallelism;
    }

    if (PHASES.has("memory")) {
      log(`memory: ${MEMORY_SECONDS} s at 64 connections over every operation`);
      const loaded = await startGateway(simulator, {});
      stopAll.push(() => loaded.stop());
      const filled = await fillCaches(loaded, simulator);
      log(`caches filled: ${JSON.stringify(filled)}`);
      const rssAfterFill = loaded.rssBytes();
      let peak = rssAfterFill;
      const sampler = setInterval(() => {
        peak = Math.max(peak, loaded.rssBytes());
      }, 250);
      const perOperation = Math.max(1, Math.floor(MEMORY_SECONDS / operations.length));
      const loads = await Promise.all(
        operations.map((operation) =>
          load({
            url: loaded.url,
            body: gatewayBody(operation),
            connections: Math.max(1, Math.floor(64 / operations.length)),
            seconds: perOperation * operations.length,
          }),
        ),
      );
      clearInterval(sampler);
      results.memory = {
        seconds: perOperation * operations.length,
        connections: 64,
        rssAfterFillMb: round(rssAfterFill / 1024 / 1024, 1),
        peakRssMb: round(peak / 1024 / 1024, 1),
        limitMb: 250,
        errors: loads.reduce((sum, result) => sum + result.errors, 0),
        cachesAtStart: filled,
      };
    }

    if (PHASES.has("simulator")) {
      log("the simulator alone, on the operations' upstream routes");
      const simulatorSpeed: Record<string, unknown> = {};
      for (const operation of operations) {
        const paths = operation.upstreamPaths;
        const rates: number[] = [];
        for (let run = 0; run < RUNS; run += 1) {
          const byService = await Promise.all(
            (["data", "metrics"] as const).map(async (service) => {
              const requests = paths
                .filter((path) => path.service === service)
                .map((path) => ({
                  method: path.method ?? ("GET" as const),
                  path: path.path,
                  ...(path.body === undefined
                    ? {}
                    : { body: JSON.stringify(path.body), headers: { "content-type": "application/json" } }),
                }));
              if (requests.length === 0) return 0;
              const result = await autocannon({
                url: service === "data" ? simulator.dataUrl : simulator.metricsUrl,
                connections: 32,
                duration: SECONDS,
                requests,
              });
              return result.requests.average;
            }),
          );
          rates.push(byService.reduce((sum, rate) => sum + rate, 0));
        }
        const upstreamRps = median(rates);
        const operationsPerSecond = upstreamRps / paths.length;
        const gatewayRps = (results.throughput as Record<string, { gatewayRps: number }> | undefined)?.[operation.name]
          ?.gatewayRps;
        const warmCalls = (results.calls as Record<string, { warm: number }> | undefined)?.[operation.name]?.warm;
        // What the gateway asked of the simulator during the throughput test: its warm calls per
        // operation at its measured rate. The cold figure assumes every call of every operation.
        const demandedRps = gatewayRps !== undefined && warmCalls !== undefined ? gatewayRps * warmCalls : undefined;
        simulatorSpeed[operation.name] = {
          upstreamRequestsPerOperation: paths.length,
          upstreamRps: round(upstreamRps, 0),
          ratioToGateway: gatewayRps ? round(upstreamRps / gatewayRps) : null,
          gatewayUpstreamRps: demandedRps === undefined ? null : round(demandedRps, 0),
          headroomUnderLoad: demandedRps ? round(upstreamRps / demandedRps) : null,
          coldOperationsPerSecond: round(operationsPerSecond, 0),
          coldRatioToGateway: gatewayRps ? round(operationsPerSecond / gatewayRps) : null,
          target: ">= 5",
        };
      }
      results.simulator = simulatorSpeed;
    }
  } finally {
    for (const stop of stopAll.reverse()) await stop().catch(() => undefined);
  }

  await writeFile(new URL("./results/latest.json", import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
  await writeFile(new URL("./results/latest.md", import.meta.url), markdown(results));
  log("wrote bench/results/latest.json and bench/results/latest.md");
}

function markdown(results: Record<string, unknown>): string {
  const lines = [
    "# Benchmark results",
    "",
    `Written by \`npm run bench\` on ${String(results.date)}; ${JSON.stringify(results.machine)}. Every figure is the median of ${String(results.runs)} runs of ${String(results.secondsPerMeasurement)} s; every ratio compares two things measured in the same run.`,
    "",
  ];
  const table = (title: string, data: unknown, columns: string[]) => {
    if (!data) return;
    lines.push(`## ${title}`, "", `| operation | ${columns.join(" | ")} |`, `|---|${columns.map(() => "---").join("|")}|`);
    for (const [name, row] of Object.entries(data as Record<string, Record<string, unknown>>)) {
      lines.push(`| ${name} | ${columns.map((column) => JSON.stringify(row[column] ?? "")).join(" | ")} |`);
    }
    lines.push("");
  };
  table("Upstream calls", results.calls, ["fewestCold", "cold", "warm", "warmByRoute"]);
  table("Overhead (1 connection, no added latency)", results.overhead, ["gatewayP50Ms", "baselineP50Ms", "ratio", "target"]);
  table("Throughput (32 connections)", results.throughput, [
    "gatewayRps",
    "baselineRps",
    "ratio",
    "gatewayWithResponseCacheRps",
    "ratioWithResponseCache",
    "errors",
  ]);
  table("Parallelism (50 ms upstream latency, no record cache: every call is made)", results.parallelism, [
    "dependentCalls",
    "p50Ms",
    "limitMs",
    "ok",
  ]);
  if (results.memory) lines.push("## Memory", "", "```json", JSON.stringify(results.memory, null, 2), "```", "");
  table("The simulator alone (32 connections)", results.simulator, [
    "upstreamRequestsPerOperation",
    "upstreamRps",
    "ratioToGateway",
    "gatewayUpstreamRps",
    "headroomUnderLoad",
    "coldOperationsPerSecond",
    "coldRatioToGateway",
  ]);
  if (results.simulator) {
    lines.push(
      "`ratioToGateway`: the requests per second the simulator serves on the operation's upstream routes, over the operations per second the gateway serves (throughput without response cache); target >= 5. `headroomUnderLoad`: the simulator's rate over what the gateway asked of it in that throughput test (its warm calls per operation times its rate); empty when the gateway made no upstream call. `coldRatioToGateway` (for information): the operations per second the simulator could feed if every operation made all its cold calls, over the gateway's throughput; the throughput test runs warm, so this is not what the gateway meets there.",
      "",
    );
  }
  return `${lines.join("\n")}\n`;
}

await main();
