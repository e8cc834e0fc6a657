/**
 * `npm run bench:compare -- [ref] [KEY=value ...]`: the working tree against another commit, in
 * one run. `ref` (default `HEAD`, the last commit) is built in a temporary worktree; both builds
 * are started beside each other on one simulator, and each reference operation (and FIXED_COST)
 * is loaded on them in turn, in BENCH_SLICES short slices each (default 4;
 * bench/interleaved-load.ts, ordered so that each side goes first and follows each other side
 * alike), for BENCH_ROUNDS rounds (default 4), with the response cache on and off. Each round
 * starts fresh processes: two processes of one build can differ by a quarter in CPU per
 * response for as long as they run (what their JIT and heap happened to do), which would
 * otherwise bias every round alike. Every figure is a ratio of
 * the two in the same round: its median over the rounds, with their spread. Writes
 * bench/results/compare.{json,md}.
 *
 * A third process, a second one of the tree's build (tree′), is loaded in the same rounds:
 * tree′ / tree is what the same code measures as on this machine in this run, the noise a ratio
 * must stand out of (BENCH_CONTROL=0 leaves it out).
 *
 * Knobs: BENCH_SECONDS (per side and operation in a round, default 5), BENCH_CONNECTIONS
 * (default 32), BENCH_OPERATIONS (comma-separated names), BENCH_CACHES (`cached`, `uncached` or
 * both, the default), BENCH_ROUNDS, BENCH_SLICES; `KEY=value` arguments are given to both
 * gateways, `ref:KEY=value` and `tree:KEY=value` to one of them (`npm run bench:compare -- HEAD
 * ref:LOG_LEVEL=warn tree:LOG_LEVEL=info` measures what the request log costs). Each round also
 * loads a bare `node:http` server (bench/bare-server.ts) answering each cached operation's exact
 * bytes: the physical limit a response-cache hit is measured against. The ref's build uses this
 * checkout's node_modules when its package-lock is the tree's; a ref whose lock differs gets its
 * own (npm ci in its worktree; the report says so).
 *
 * On two cores or more (with taskset), each gateway and the bare server run on CPU 0, all of
 * their threads, and this process (the load) and the simulator on the others: loaded one at a
 * time, a measured process then has a core to itself, and its CPU per response is not what it
 * lost to the load generator's cache and preemption. BENCH_PINNING=off turns it off.
 */
import { execFileSync, execSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildGateway } from "./build.ts";
import { loadInterleaved, type InterleavedResult } from "./interleaved-load.ts";
import { gatewayBody, median, round, warmUp } from "./measure.ts";
import { FIXED_COST, referenceOperations, type Compared } from "./operations/index.ts";
import {
  canPin,
  MEASURED_CORE,
  OTHER_CORES,
  pin,
  startBareServer,
  startGateway,
  startSimulator,
  type Running,
} from "./processes.ts";
import { PlainUpstream } from "./upstream.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const SELECTED = process.env.BENCH_OPERATIONS?.split(",");
const isSelected = (name: string) => !SELECTED || SELECTED.includes(name);
const CONTROL = process.env.BENCH_CONTROL !== "0";
const SLICES = Number(process.env.BENCH_SLICES ?? 4);
const PINNED = canPin("BENCH_PINNING");
const root = fileURLToPath(new URL("..", import.meta.url));
const args = process.argv.slice(2);
const ref = args.find((arg) => !arg.includes("=")) ?? "HEAD";
const settingsOf = (prefix: string): Record<string, string> =>
  Object.fromEntries(
    args
      .filter((arg) => arg.includes("=") && (prefix === "" ? !/^(ref|tree):/.test(arg) : arg.startsWith(prefix)))
      .map((arg) => arg.slice(prefix.length).split(/=(.*)/s).slice(0, 2)),
  );
const gatewayEnv = settingsOf("");
const sideEnv = { ref: settingsOf("ref:"), tree: settingsOf("tree:") };
const CACHES = Object.entries<Record<string, string>>({ cached: {}, uncached: { RESPONSE_CACHE_TTL_MS: "0" } }).filter(
  ([cache]) => !process.env.BENCH_CACHES || process.env.BENCH_CACHES.split(",").includes(cache),
);

function log(message: string): void {
  process.stderr.write(`[bench:compare] ${message}\n`);
}

/** Builds `ref` in a temporary worktree; returns its entry point and how to remove the worktree. */
function buildRef(): { entry: string; commit: string; sameLock: boolean; remove: () => void } {
  const commit = execFileSync("git", ["rev-parse", "--short", ref], { cwd: root, encoding: "utf8" }).trim();
  const dir = mkdtempSync(join(tmpdir(), `bench-ref-${commit}-`));
  execFileSync("git", ["worktree", "add", "--detach", dir, commit], { cwd: root, stdio: "ignore" });
  const remove = () => {
    execFileSync("git", ["worktree", "remove", "--force", dir], { cwd: root, stdio: "ignore" });
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const lock = (cwd: string) => execFileSync("git", ["hash-object", "package-lock.json"], { cwd, encoding: "utf8" }).trim();
    const sameLock = lock(dir) === lock(root);
    // The ref's own dependencies when its lock differs: a package the tree dropped or changed would
    // otherwise be missing from, or different in, the ref's build.
    if (sameLock) symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
    else {
      log(`installing ${ref}'s own dependencies (npm ci: its package-lock differs)`);
      execSync("npm ci --ignore-scripts --no-audit --no-fund", { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });
    }
    log(`building ${ref} (${commit}) in ${dir}`);
    try {
      execSync("npm run -s build", { cwd: dir, stdio: ["ignore", "pipe", "inherit"] });
    } catch {
      if (!existsSync(join(dir, "dist/src/server.js"))) throw new Error(`${ref} emitted no dist/src/server.js`);
    }
    return { entry: join(dir, "dist/src/server.js"), commit, sameLock, remove };
  } catch (error) {
    remove();
    throw error;
  }
}

interface Figure {
  /** Per round: tree / ref. */
  rps: number[];
  p99: number[];
  /** Per round, each side's main-thread CPU microseconds per response. */
  cpuPerRequest: { ref: number[]; tree: number[] };
  /** Per round: a second process of the tree's build over the tree, req/s and CPU per response. */
  control: { rps: number[]; cpu: number[] };
  ref: InterleavedResult[];
  tree: InterleavedResult[];
  /** Cached operations, per round: tree / a bare node:http server answering the same bytes. */
  ofBare: number[];
  bare: InterleavedResult[];
}

/** The exact bytes (and type) `url` answers `body` with. */
async function answerOf(url: string, body: string): Promise<{ bytes: Buffer; contentType: string }> {
  // Node's fetch asks for compression and decodes it: the bytes are the identity answer autocannon gets.
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body,
  });
  return {
    bytes: Buffer.from(await response.arrayBuffer()),
    contentType: response.headers.get("content-type") ?? "application/json",
  };
}

function emptyFigure(): Figure {
  return {
    rps: [],
    p99: [],
    cpuPerRequest: { ref: [], tree: [] },
    control: { rps: [], cpu: [] },
    ref: [],
    tree: [],
    ofBare: [],
    bare: [],
  };
}

/** Per round: the tree's main-thread CPU per response over the ref's. */
function cpuRatios(figure: Figure): number[] {
  return figure.cpuPerRequest.tree.map((tree, index) => tree / figure.cpuPerRequest.ref[index]!);
}

function spread(ratios: number[]): { median: number; min: number; max: number } {
  return { median: round(median(ratios), 3), min: round(Math.min(...ratios), 3), max: round(Math.max(...ratios), 3) };
}

/** A measured process, on the core kept for it when the bench pins. */
function measured<T extends Running>(target: T): T {
  if (PINNED) pin(target.pid, MEASURED_CORE);
  return target;
}

async function main(): Promise<void> {
  const built = buildRef();
  buildGateway(log);
  // Children started from here on (the simulator) inherit these cores; measured ones are moved.
  if (PINNED) pin(process.pid, OTHER_CORES);
  const simulator = await startSimulator();
  const upstream = new PlainUpstream(simulator.dataUrl, simulator.metricsUrl);
  const running: Running[] = [];
  const figures: Record<string, Figure> = {};
  const loadAtStart = loadavg();
  try {
    const selected = referenceOperations.filter((operation) => isSelected(operation.name));
    const operations: Compared[] = [
      ...(await Promise.all(selected.map(async (operation) => ({ ...operation, ...(await operation.prepare(upstream)) })))),
      ...(isSelected(FIXED_COST.name) ? [FIXED_COST] : []),
    ];
    for (const [cache, cacheEnv] of CACHES) {
      const env = { ...cacheEnv, ...gatewayEnv };
      const figuresOf = new Map(operations.map((operation) => [operation, emptyFigure()]));
      for (let roundIndex = 0; roundIndex < ROUNDS; roundIndex += 1) {
        // Fresh processes each round: what one process's JIT or heap happened to do then shows as
        // spread across the rounds, not as a bias of every round.
        const ref = measured(await startGateway(simulator, { ...env, ...sideEnv.ref, BENCH_GATEWAY_ENTRY: built.entry }));
        const tree = measured(await startGateway(simulator, { ...env, ...sideEnv.tree }));
        const control = CONTROL ? measured(await startGateway(simulator, { ...env, ...sideEnv.tree })) : undefined;
        const sides = control ? [ref, tree, control] : [ref, tree];
        running.push(...sides);
        for (const operation of operations) {
          const body = gatewayBody(operation);
          const figure = figuresOf.get(operation)!;
          for (const target of sides) await warmUp(target, body);
          // The physical limit of a hit, loaded in the same turns as the gateways.
          const answer = cache === "cached" ? await answerOf(tree.url, body) : undefined;
          const bare = answer ? measured(await startBareServer(answer.bytes, answer.contentType)) : undefined;
          if (bare) {
            running.push(bare);
            await warmUp(bare, body);
          }
          const results = await loadInterleaved(bare ? [...sides, bare] : sides, {
            body,
            connections: CONNECTIONS,
            seconds: SECONDS,
            slices: SLICES,
            firstTurn: roundIndex,
          });
          const [a, b] = [results.get(ref)!, results.get(tree)!];
          if (a.errors > 0 || b.errors > 0) log(`${operation.name} (${cache}): errors ref ${a.errors}, tree ${b.errors}`);
          figure.ref.push(a);
          figure.tree.push(b);
          figure.rps.push(b.rps / a.rps);
          figure.p99.push(b.p99 / Math.max(a.p99, 0.5));
          figure.cpuPerRequest.ref.push(a.cpuPerRequest);
          figure.cpuPerRequest.tree.push(b.cpuPerRequest);
          if (control) {
            const c = results.get(control)!;
            figure.control.rps.push(c.rps / b.rps);
            figure.control.cpu.push(c.cpuPerRequest / b.cpuPerRequest);
          }
          if (bare) {
            const limit = results.get(bare)!;
            figure.bare.push(limit);
            figure.ofBare.push(b.rps / limit.rps);
            await bare.stop();
            running.splice(running.indexOf(bare), 1);
          }
        }
        await Promise.all(running.splice(0).map((process) => process.stop()));
        log(`${cache}: round ${roundIndex + 1} of ${ROUNDS} done`);
      }
      for (const [operation, figure] of figuresOf) {
        figures[`${operation.name} (${cache})`] = figure;
        log(
          `${operation.name} (${cache}): rps × ${round(median(figure.rps), 3)}, p99 × ${round(median(figure.p99), 3)}, CPU per response × ${round(median(cpuRatios(figure)), 3)}`,
        );
      }
    }
  } finally {
    await Promise.all(running.map((process) => process.stop()));
    await simulator.stop();
    await upstream.close();
    built.remove();
  }
  const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
  const dirty =
    execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], { cwd: root, encoding: "utf8" }).trim() !== "";
  const results = {
    date: new Date().toISOString(),
    ref: { name: ref, commit: built.commit, sameDependencies: built.sameLock },
    tree: { commit: head, uncommittedChanges: dirty },
    machine: { cpus: cpus().length, model: cpus()[0]?.model ?? "unknown", node: process.version },
    loadAverage: { start: loadAtStart, end: loadavg() },
    settings: {
      seconds: SECONDS,
      slices: SLICES,
      rounds: ROUNDS,
      connections: CONNECTIONS,
      control: CONTROL,
      pinned: PINNED,
      gatewayEnv,
      sideEnv,
    },
    figures: Object.fromEntries(
      Object.entries(figures).map(([name, figure]) => [
        name,
        {
          rpsRatio: spread(figure.rps),
          p99Ratio: spread(figure.p99),
          cpuPerRequestRatio: spread(cpuRatios(figure)),
          cpuMicrosPerRequest: {
            ref: round(median(figure.cpuPerRequest.ref), 1),
            tree: round(median(figure.cpuPerRequest.tree), 1),
          },
          ...(figure.control.rps.length > 0
            ? { control: { rpsRatio: spread(figure.control.rps), cpuPerRequestRatio: spread(figure.control.cpu) } }
            : {}),
          ref: { rps: round(median(figure.ref.map((r) => r.rps)), 0), p99: median(figure.ref.map((r) => r.p99)) },
          tree: { rps: round(median(figure.tree.map((r) => r.rps)), 0), p99: median(figure.tree.map((r) => r.p99)) },
          ...(figure.bare.length > 0
            ? {
                bare: {
                  rps: round(median(figure.bare.map((r) => r.rps)), 0),
                  cpuMicrosPerRequest: round(median(figure.bare.map((r) => r.cpuPerRequest)), 1),
                },
                treeOfBare: spread(figure.ofBare),
              }
            : {}),
        },
      ]),
    ),
  };
  await writeFile(new URL("results/compare.json", import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
  const rows = Object.entries(results.figures).map(([name, figure]) => {
    const noise = figure.control
      ? `${figure.control.rpsRatio.median} (${figure.control.rpsRatio.min}–${figure.control.rpsRatio.max}), CPU ${figure.control.cpuPerRequestRatio.median} (${figure.control.cpuPerRequestRatio.min}–${figure.control.cpuPerRequestRatio.max})`
      : "–";
    const ofBare = figure.treeOfBare
      ? `${figure.bare!.rps} (${figure.bare!.cpuMicrosPerRequest} µs) | ${figure.treeOfBare.median} (${figure.treeOfBare.min}–${figure.treeOfBare.max})`
      : "– | –";
    return `| ${name} | ${figure.ref.rps} | ${figure.tree.rps} | ${figure.rpsRatio.median} (${figure.rpsRatio.min}–${figure.rpsRatio.max}) | ${figure.ref.p99} | ${figure.tree.p99} | ${figure.p99Ratio.median} (${figure.p99Ratio.min}–${figure.p99Ratio.max}) | ${figure.cpuMicrosPerRequest.ref} | ${figure.cpuMicrosPerRequest.tree} | ${figure.cpuPerRequestRatio.median} (${figure.cpuPerRequestRatio.min}–${figure.cpuPerRequestRatio.max}) | ${noise} | ${ofBare} |`;
  });
  const markdown = [
    "# The working tree against a commit, in one run",
    "",
    `Written by \`npm run bench:compare\` on ${results.date}: the tree at ${head}${dirty ? " with uncommitted changes" : ""} against ${ref} (${built.commit})${built.sameLock ? "" : ", built with its own dependencies (npm ci: its package-lock differs)"}; ${JSON.stringify(results.machine)}; load average ${loadAtStart.map((value) => round(value, 2)).join(", ")} at the start.`,
    "",
    `Both production builds ran side by side on one simulator; each operation was loaded with ${CONNECTIONS} connections for ${SECONDS} s on each side, in ${SLICES} slices taken in turn (so that a slow spell of the machine falls on every side alike), each slice's order a row of a Williams design (so that each side goes first, and follows each other side, equally often), ${ROUNDS} rounds, each on freshly started processes. Ratios are tree / ref per round: the median, and the lowest and highest round in brackets. Gateway settings beyond the bench's: ${JSON.stringify(gatewayEnv)}${Object.keys(sideEnv.ref).length > 0 ? `; the ref's alone: ${JSON.stringify(sideEnv.ref)}` : ""}${Object.keys(sideEnv.tree).length > 0 ? `; the tree's alone: ${JSON.stringify(sideEnv.tree)}` : ""}.`,
    "",
    "For cached operations each round also loads a bare `node:http` server (bench/bare-server.ts) answering the tree's exact bytes for the operation, in the same turns as the gateways: the physical limit of a response-cache hit on this machine. `tree / bare` is the tree's req/s over it, per round; the bare server's main-thread CPU per response is in brackets beside its req/s.",
    "",
    PINNED
      ? "Each gateway and the bare server ran on CPU 0 (taskset, all their threads), the load and the simulator on the other cores: the process measured had a core to itself."
      : "Nothing was pinned to a core (BENCH_PINNING=off, one core, or no taskset): the load generator shared the cores with the process measured.",
    "",
    "CPU µs/response is the CPU time of the gateway's main thread (its event loop, user and system, from /proc) over each load, per response: the work that bounds a process's throughput, whatever else the machine runs. V8's helper threads are left out; they vary by a fifth of it between loads of the same build. A ratio below 1 is less CPU per response.",
    "",
    CONTROL
      ? "The noise column loads a second process of the tree's build (tree′) in the same rounds: tree′ / tree, req/s and CPU per response, is what identical code measures as here. A ratio of tree / ref within that spread is not a difference this run can show."
      : "No second process of the tree's build ran (BENCH_CONTROL=0): this run does not show its own noise.",
    "",
    "| operation (response cache) | ref req/s | tree req/s | req/s ratio | ref p99 ms | tree p99 ms | p99 ratio | ref CPU µs/response | tree CPU µs/response | CPU ratio | noise: tree′ / tree | bare node req/s (CPU µs/response) | tree / bare |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ...rows,
    "",
  ].join("\n");
  await writeFile(new URL("results/compare.md", import.meta.url), markdown);
  process.stdout.write(markdown);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
