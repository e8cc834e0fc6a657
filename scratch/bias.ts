import { gatewayBody, load, warmUp } from "../bench/measure.ts";
import { referenceOperations } from "../bench/operations/index.ts";
import { startGateway, startSimulator } from "../bench/processes.ts";
import { PlainUpstream } from "../bench/upstream.ts";
const simulator = await startSimulator();
const upstream = new PlainUpstream(simulator.dataUrl, simulator.metricsUrl);
const env = { RESPONSE_CACHE_TTL_MS: "0", ...(process.env.ENTRY_A ? { BENCH_GATEWAY_ENTRY: process.env.ENTRY_A } : {}) };
const a = await startGateway(simulator, env);
const b = await startGateway(simulator, { RESPONSE_CACHE_TTL_MS: "0" });
const op = referenceOperations.find((o) => o.name === (process.env.OP ?? "address-page"))!;
const body = gatewayBody({ ...op, ...(await op.prepare(upstream)) });
for (const t of [a, b]) await warmUp(t, body);
for (let round = 0; round < 4; round++) {
  const out: string[] = [];
  for (const [name, t] of (round % 2 ? [["b", b], ["a", a]] : [["a", a], ["b", b]]) as const) {
    const c0 = t.cpuMicros();
    const r = await load({ url: t.url, body, connections: 32, seconds: 4 });
    out.push(`${name}: ${r.rps.toFixed(0)} rps ${((t.cpuMicros() - c0) / r.requests).toFixed(1)} µs`);
  }
  console.log(out.join("  |  "));
}
await a.stop(); await b.stop(); await simulator.stop(); await upstream.close();
process.exit(0);
