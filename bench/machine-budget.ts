/**
 * `npm run bench:budget`: where the machine's CPU goes while one gateway is loaded, per response:
 * the gateway's main thread (its event loop), the gateway in all (V8's helper threads too), the
 * simulator, this process (autocannon, the load generator), the machine in all, and the share of
 * the machine left idle. It says what bounds a bench's req/s on this machine: when the gateway's
 * main thread is near a whole core while the machine has time to spare, req/s follows the
 * gateway's CPU per response alone, and a ratio of req/s is one of its CPU.
 *
 * Each reference operation and FIXED_COST's `{ __typename }`, with the response cache off
 * (every request executed; the record cache warm) and on, BENCH_ROUNDS rounds (default 3) of
 * BENCH_SECONDS (default 5) at BENCH_CONNECTIONS (default 32) after a warm-up, on one production
 * gateway; medians over the rounds. Writes bench/results/machine-budget.{json,md}.
 */
import { writeFile } from "node:fs/promises";
import { cpus, loadavg } from "node:os";
import { buildGateway } from "./build.ts";
import { gatewayBody, load, median, round, warmUp } from "./measure.ts";
import { FIXED_COST, referenceOperations } from "./operations/index.ts";
import { machineCpuMicros, processCpuMicros, startGateway, startSimulator } from "./processes.ts";
import { PlainUpstream } from "./upstream.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const CACHES = { uncached: { RESPONSE_CACHE_TTL_MS: "0" }, cached: {} } as const;

interface Budget {
  rps: number;
  gatewayMain: number;
  gatewayAll: number;
  simulator: number;
  loadGenerator: number;
  machineBusy: number;
  /** The gateway's main thread's time over the load's, as a share of one core. */
  gatewayMainCoreShare: number;
  /** Idle time over all the machine's time in the load. */
  machineIdleShare: number;
}

function log(message: string): void {
  process.stderr.write(`[bench:budget] ${message}\n`);
}

buildGateway(log);
const simulator = await startSimulator();
const upstream = new PlainUpstream(simulator.dataUrl, simulator.metricsUrl);
const operations = [
  ...(await Promise.all(
    referenceOperations.map(async (operation) => ({ ...operation, ...(await operation.prepare(upstream)) })),
  )),
  FIXED_COST,
];
const loadAverageAtStart = loadavg().map((value) => round(value));
const budgets: Record<string, Budget> = {};
try {
  for (const [cache, env] of Object.entries(CACHES)) {
    const gateway = await startGateway(simulator, env);
    try {
      for (const operation of operations) {
        const body = gatewayBody(operation);
        await warmUp(gateway, body);
        const rounds: Budget[] = [];
        for (let index = 0; index < ROUNDS; index += 1) {
          const before = {
            main: gateway.cpuMicros(),
            gateway: processCpuMicros(gateway.pid),
            simulator: processCpuMicros(simulator.pid),
            self: processCpuMicros(process.pid),
            machine: machineCpuMicros(),
          };
          const result = await load({ url: gateway.url, body, connections: CONNECTIONS, seconds: SECONDS });
          const machine = machineCpuMicros();
          const per = (micros: number) => round(micros / Math.max(1, result.requests), 1);
          const busy = machine.busy - before.machine.busy;
          const idle = machine.idle - before.machine.idle;
          rounds.push({
            rps: Math.round(result.requests / result.seconds),
            gatewayMain: per(gateway.cpuMicros() - before.main),
            gatewayAll: per(processCpuMicros(gateway.pid) - before.gateway),
            simulator: per(processCpuMicros(simulator.pid) - before.simulator),
            loadGenerator: per(processCpuMicros(process.pid) - before.self),
            machineBusy: per(busy),
            gatewayMainCoreShare: round((gateway.cpuMicros() - before.main) / (result.seconds * 1_000_000), 3),
            machineIdleShare: round(idle / Math.max(1, busy + idle), 3),
          });
        }
        const name = `${operation.name} (${cache})`;
        budgets[name] = Object.fromEntries(
          Object.keys(rounds[0]!).map((key) => [key, median(rounds.map((budget) => budget[key as keyof Budget]))]),
        ) as unknown as Budget;
        log(`${name}: ${JSON.stringify(budgets[name])}`);
      }
    } finally {
      await gateway.stop();
    }
  }
} finally {
  await simulator.stop();
}

const machine = { cpus: cpus().length, model: cpus()[0]?.model ?? "unknown", node: process.version };
const date = new Date().toISOString();
await writeFile(
  new URL("./results/machine-budget.json", import.meta.url),
  `${JSON.stringify({ date, machine, loadAverage: { start: loadAverageAtStart, end: loadavg().map((value) => round(value)) }, settings: { seconds: SECONDS, rounds: ROUNDS, connections: CONNECTIONS }, budgets }, null, 2)}\n`,
);
const rows = Object.entries(budgets).map(
  ([name, b]) =>
    `| ${name} | ${b.rps} | ${b.gatewayMain} | ${b.gatewayAll} | ${b.simulator} | ${b.loadGenerator} | ${b.machineBusy} | ${b.gatewayMainCoreShare} | ${b.machineIdleShare} |`,
);
await writeFile(
  new URL("./results/machine-budget.md", import.meta.url),
  [
    "# Where the machine's CPU goes, per response",
    "",
    `Written by \`npm run bench:budget\` on ${date}; ${JSON.stringify(machine)}; load average ${loadAverageAtStart.join(", ")} at the start. One production gateway (the bench's settings: LOG_LEVEL=warn) on the simulator, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s per operation after a warm-up; medians over the rounds.`,
    "",
    "Columns are CPU µs per response (user and system, from /proc): the gateway's main thread (its event loop), the gateway process in all (V8's helper threads too), the simulator, the load generator (autocannon, in the bench's own process) and the whole machine. `main thread / core` is the gateway's main-thread time over the load's time: near 1, that thread is what bounds req/s. `idle` is the machine's idle share over the load.",
    "",
    "| operation (response cache) | req/s | gateway main thread | gateway in all | simulator | load generator | machine | main thread / core | idle |",
    "|---|---|---|---|---|---|---|---|---|",
    ...rows,
    "",
  ].join("\n"),
);
log("wrote bench/results/machine-budget.md");
