import { gatewayBody } from "../bench/measure.ts";
import { referenceOperations } from "../bench/operations/index.ts";
import { startGateway, startSimulator } from "../bench/processes.ts";
import { PlainUpstream } from "../bench/upstream.ts";
const simulator = await startSimulator();
const upstream = new PlainUpstream(simulator.dataUrl, simulator.metricsUrl);
const gw = await startGateway(simulator, { RESPONSE_CACHE_TTL_MS: "0" });
for (const op of referenceOperations) {
  const body = gatewayBody({ ...op, ...(await op.prepare(upstream)) });
  const r = await fetch(`${gw.url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body });
  const text = await r.text();
  const value = JSON.parse(text);
  let t = performance.now(); for (let i = 0; i < 2000; i++) JSON.stringify(value); const plain = (performance.now() - t) / 2;
  const nonAscii = /[^\x00-\x7f]/.test(text);
  console.log(op.name, text.length, "chars; non-ascii", nonAscii, "; stringify of parsed copy µs", plain.toFixed(1));
}
await gw.stop?.(); await simulator.stop?.();
process.exit(0);
