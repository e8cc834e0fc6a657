/**
 * `npm run bench:profile -- <operation> [KEY=value ...]`: loads the production gateway with one
 * reference operation (or `typename`, FIXED_COST: what every request costs) at 32 connections while V8 profiles it, then prints where the time went
 * (self time by function, and inclusive time by package) and leaves the `.cpuprofile` (open it in
 * Chrome DevTools) in bench/profiles/. KEY=value pairs are gateway environment variables, e.g.
 * RESPONSE_CACHE_TTL_MS=0 to profile execution rather than the response cache. BENCH_CONNECTIONS
 * (default 32) sets the load; 1 profiles what the overhead phase measures. The gateway runs on
 * CPU 0 and the load and simulator on the other cores, as in bench:compare (BENCH_PINNING=off
 * turns it off).
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { buildGateway } from "./build.ts";
import { gatewayBody, load } from "./measure.ts";
import { FIXED_COST, referenceOperations } from "./operations/index.ts";
import { canPin, MEASURED_CORE, OTHER_CORES, pin, startGateway, startSimulator } from "./processes.ts";
import { PlainUpstream } from "./upstream.ts";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

const [name = "", ...settings] = process.argv.slice(2);
const operation = referenceOperations.find((candidate) => candidate.name === name);
if (!operation && name !== FIXED_COST.name) {
  const names = [...referenceOperations.map((o) => o.name), FIXED_COST.name];
  process.stderr.write(`usage: npm run bench:profile -- <${names.join("|")}> [KEY=value ...]\n`);
  process.exit(2);
}
const env = Object.fromEntries(settings.map((setting) => setting.split(/=(.*)/s).slice(0, 2) as [string, string]));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const directory = fileURLToPath(new URL(`profiles/${name}-${Date.now()}`, import.meta.url));

function where(url: string): string {
  if (url.includes("/node_modules/")) {
    const parts = url.split("/node_modules/").at(-1)!.split("/");
    return parts[0]!.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  if (url.includes("/dist/")) return url.split("/dist/").at(-1)!;
  return url ? `node:${url.split("/").at(-1)}` : "(native)";
}

function summarize(path: string): void {
  const profile = JSON.parse(readFileSync(path, "utf8")) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const selfTime = new Map<number, number>();
  profile.samples.forEach((id, index) => selfTime.set(id, (selfTime.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)));
  const total = profile.timeDeltas.reduce((sum, delta) => sum + delta, 0);
  const byFunction = new Map<string, number>();
  const byPlace = new Map<string, number>();
  for (const [id, time] of selfTime) {
    const frame = nodes.get(id)!.callFrame;
    const label = `${frame.functionName || "(anonymous)"}  ${where(frame.url)}:${frame.lineNumber}`;
    byFunction.set(label, (byFunction.get(label) ?? 0) + time);
    const seen = new Set<string>();
    for (let current: number | undefined = id; current !== undefined; current = parents.get(current)) {
      const place = where(nodes.get(current)!.callFrame.url);
      if (!seen.has(place)) byPlace.set(place, (byPlace.get(place) ?? 0) + time);
      seen.add(place);
    }
  }
  const top = (map: Map<string, number>, count: number) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([label, time]) => `${((100 * time) / total).toFixed(1).padStart(5)} %  ${label}`);
  process.stdout.write(`\nself time, by function:\n${top(byFunction, 25).join("\n")}\n`);
  process.stdout.write(`\ninclusive time, by package or gateway file:\n${top(byPlace, 25).join("\n")}\n\nprofile: ${path}\n`);
}

buildGateway((message) => process.stderr.write(`[profile] ${message}\n`));
const PINNED = canPin("BENCH_PINNING");
if (PINNED) pin(process.pid, OTHER_CORES);
const simulator = await startSimulator();
const upstream = new PlainUpstream(simulator.dataUrl, simulator.metricsUrl);
try {
  const body = gatewayBody(operation ? { ...operation, ...(await operation.prepare(upstream)) } : FIXED_COST);
  rmSync(directory, { recursive: true, force: true });
  mkdirSync(directory, { recursive: true });
  process.env.BENCH_CPU_PROFILE_DIR = directory;
  const gateway = await startGateway(simulator, env);
  delete process.env.BENCH_CPU_PROFILE_DIR;
  if (PINNED) pin(gateway.pid, MEASURED_CORE);
  const result = await load({ url: gateway.url, body, connections: CONNECTIONS, seconds: SECONDS });
  await gateway.stop();
  process.stdout.write(`${name}: ${Math.round(result.rps)} requests/s while profiled, ${result.errors} errors\n`);
  const written = readdirSync(directory).find((file) => file.endsWith(".cpuprofile"));
  if (!written) throw new Error(`the gateway wrote no profile to ${directory}`);
  summarize(`${directory}/${written}`);
} finally {
  await simulator.stop();
  await upstream.close();
}
