/**
 * `npm run soak`: SOAK_SECONDS (default 600) at SOAK_CONNECTIONS (default 64) over every
 * reference operation, with SOAK_FAULT_RATE (default 0.05) of upstream requests failing.
 * The kind of fault rotates every 20 s (503, 500, dropped connection, malformed body, stalled
 * body). Passes when every error in the responses is one the faults explain and resident
 * memory stays flat after the first minute. Writes bench/results/soak.{json,md}.
 */
import { writeFile } from "node:fs/promises";
import autocannon from "autocannon";
import { referenceOperations } from "./operations/index.ts";
import { buildGateway } from "./build.ts";
import { startGateway, startSimulator } from "./processes.ts";
import { PlainUpstream } from "./upstream.ts";

const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const CONNECTIONS = Number(process.env.SOAK_CONNECTIONS ?? 64);
const FAULT_RATE = Number(process.env.SOAK_FAULT_RATE ?? 0.05);
const WARM_UP_SECONDS = Math.min(60, Math.floor(SECONDS / 5));

/** Codes that an injected upstream fault explains; anything else is a defect. */
const INJECTED_CODES = new Set(["UPSTREAM_UNAVAILABLE", "UPSTREAM_ERROR"]);

const FAULTS = [
  { faultKind: "status", errorStatus: 503 },
  { faultKind: "status", errorStatus: 500 },
  { faultKind: "reset" },
  { faultKind: "malformed" },
  { faultKind: "slow-body", slowBodyMs: 20_000 },
];

function log(message: string): void {
  process.stderr.write(`[soak] ${message}\n`);
}

async function main(): Promise<void> {
  buildGateway(log);
  const simulator = await startSimulator();
  const upstream = new PlainUpstream(simulator.dataUrl, simulator.metricsUrl);
  const operations = await Promise.all(
    referenceOperations.map(async (operation) => ({ document: operation.document, ...(await operation.prepare(upstream)) })),
  );
  const gateway = await startGateway(simulator, { REQUEST_TIMEOUT_MS: "5000" });
  const responses = { total: 0, withErrors: 0, httpErrors: 0 };
  const errorCodes: Record<string, number> = {};
  const unexpected: string[] = [];
  const rss: { second: number; mb: number }[] = [];
  const started = Date.now();

  try {
    await simulator.knobs({ errorRate: FAULT_RATE, ...FAULTS[0] });
    let fault = 0;
    const rotate = setInterval(() => {
      fault = (fault + 1) % FAULTS.length;
      void simulator.knobs({ faultKind: "status", ...FAULTS[fault] });
    }, 20_000);
    const sample = setInterval(() => {
      rss.push({ second: Math.round((Date.now() - started) / 1000), mb: Math.round(gateway.rssBytes() / 1024 / 10.24) / 100 });
    }, 5_000);

    const result = await autocannon({
      url: gateway.url,
      connections: CONNECTIONS,
      duration: SECONDS,
      timeout: 30,
      requests: operations.map((operation) => ({
        method: "POST" as const,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: operation.document, variables: operation.variables }),
        onResponse: (status: number, body: string) => {
          responses.total += 1;
          if (status !== 200) {
            responses.httpErrors += 1;
            if (unexpected.length < 20) unexpected.push(`HTTP ${status}: ${body.slice(0, 200)}`);
            return;
          }
          const parsed = JSON.parse(body) as { errors?: { message: string; extensions?: { code?: string } }[] };
          if (!parsed.errors) return;
          responses.withErrors += 1;
          for (const error of parsed.errors) {
            const code = error.extensions?.code ?? "NONE";
            errorCodes[code] = (errorCodes[code] ?? 0) + 1;
            if (!INJECTED_CODES.has(code) && unexpected.length < 20) unexpected.push(`${code}: ${error.message}`);
          }
        },
      })),
    });
    clearInterval(rotate);
    clearInterval(sample);

    const afterWarmUp = rss.filter((point) => point.second >= WARM_UP_SECONDS);
    const first = afterWarmUp[0]?.mb ?? 0;
    const last = afterWarmUp.at(-1)?.mb ?? 0;
    const peak = Math.max(...rss.map((point) => point.mb));
    const report = {
      date: new Date().toISOString(),
      seconds: SECONDS,
      connections: CONNECTIONS,
      faultRate: FAULT_RATE,
      requestsPerSecond: Math.round(result.requests.average),
      latencyP50Ms: result.latency.p50,
      latencyP99Ms: result.latency.p99,
      timeouts: result.timeouts,
      socketErrors: result.errors,
      responses,
      errorCodes,
      unexpectedErrors: unexpected,
      memory: { warmUpSeconds: WARM_UP_SECONDS, afterWarmUpFirstMb: first, lastMb: last, peakMb: peak, samples: rss },
      pass: unexpected.length === 0 && result.timeouts === 0 && result.errors === 0 && last <= first * 1.1 + 10,
    };
    await writeFile(new URL("./results/soak.json", import.meta.url), `${JSON.stringify(report, null, 2)}\n`);
    await writeFile(
      new URL("./results/soak.md", import.meta.url),
      [
        "# Soak test",
        "",
        `Written by \`npm run soak\` on ${report.date}: ${SECONDS} s at ${CONNECTIONS} connections over every reference operation, ${FAULT_RATE * 100} % of upstream requests faulted (503, 500, dropped connections, malformed and stalled bodies in turn).`,
        "",
        "| figure | value |",
        "|---|---|",
        `| requests per second | ${report.requestsPerSecond} |`,
        `| latency p50 / p99 | ${report.latencyP50Ms} ms / ${report.latencyP99Ms} ms |`,
        `| responses / with field errors / HTTP errors | ${responses.total} / ${responses.withErrors} / ${responses.httpErrors} |`,
        `| error codes | ${JSON.stringify(errorCodes)} |`,
        `| errors the faults do not explain | ${unexpected.length} |`,
        `| client timeouts / socket errors | ${report.timeouts} / ${report.socketErrors} |`,
        `| RSS after warm-up: first / last / peak | ${first} / ${last} / ${peak} MB |`,
        `| pass | ${report.pass} |`,
        "",
      ].join("\n"),
    );
    log(`done: ${report.pass ? "pass" : "FAIL"}; see bench/results/soak.md`);
    if (!report.pass) process.exitCode = 1;
  } finally {
    await gateway.stop();
    await upstream.close();
    await simulator.stop();
  }
}

await main();
