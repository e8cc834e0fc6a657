/**
 * What compiled execution still gains: each bench operation run in-process through `yoga.fetch`,
 * one at a time, on a gateway with GRAPHQL_JIT=true and one with GRAPHQL_JIT=false over one
 * simulator. The gateways' record caches are warm after the first runs, so the figures are mostly
 * the gateway's own work per operation (parse and validation are cached too): execution, what
 * the limits and the budget estimate cost, serialisation.
 *
 *   npx tsx bench/compiled-execution.ts        # BENCH_SECONDS per operation and mode, default 3
 */
import { loadConfig } from "../src/config.ts";
import { createLogger } from "../src/telemetry/logger.ts";
import { createGateway, type Gateway } from "../src/gateway.ts";
import { startSimulator } from "../simulator/server.ts";
import { referenceOperations } from "./operations/index.ts";
import { PlainUpstream } from "./upstream.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const WARM_UP = 50;

const simulator = await startSimulator({ dataPort: 0, metricsPort: 0 });
const gatewayWith = (jit: boolean): Gateway =>
  createGateway(
    loadConfig({ LOG_LEVEL: "silent", RESPONSE_CACHE_TTL_MS: "0", RATE_LIMIT: "false", GRAPHQL_JIT: String(jit) }),
    { dataApiUrl: simulator.dataUrl, metricsApiUrl: simulator.metricsUrl },
    createLogger("silent"),
  );
const gateways = { compiled: gatewayWith(true), interpreted: gatewayWith(false) };

async function once(gateway: Gateway, body: string): Promise<void> {
  const response = await gateway.yoga.fetch("http://gateway.test/graphql", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  const text = await response.text();
  if (response.status !== 200 || text.includes('"errors"')) throw new Error(`unexpected answer: ${text.slice(0, 300)}`);
}

/** Operations per second, run one after another for SECONDS. */
async function rate(gateway: Gateway, body: string): Promise<number> {
  for (let index = 0; index < WARM_UP; index++) await once(gateway, body);
  const start = performance.now();
  let count = 0;
  while (performance.now() - start < SECONDS * 1_000) {
    await once(gateway, body);
    count++;
  }
  return count / ((performance.now() - start) / 1_000);
}

const upstream = new PlainUpstream(simulator.dataUrl, simulator.metricsUrl);
const rows: string[] = ["| operation | compiled (ms/op) | graphql-js (ms/op) | compiled gains |", "|---|---|---|---|"];
try {
  for (const operation of referenceOperations) {
    const { variables } = await operation.prepare(upstream);
    const body = JSON.stringify({ query: operation.document, variables });
    // Alternated, so that neither mode has the machine to itself for longer.
    const compiled = await rate(gateways.compiled, body);
    const interpreted = await rate(gateways.interpreted, body);
    const ms = (perSecond: number) => (1_000 / perSecond).toFixed(3);
    rows.push(
      `| ${operation.name} | ${ms(compiled)} | ${ms(interpreted)} | ${((compiled / interpreted - 1) * 100).toFixed(0)} % |`,
    );
  }
} finally {
  await upstream.close();
  await Promise.all([gateways.compiled.close(), gateways.interpreted.close()]);
  await simulator.close();
}
console.log(rows.join("\n"));
