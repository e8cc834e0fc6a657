/**
 * `npm run bench:stream-heap`: what a held subscription costs the heap. A production gateway on
 * the live simulator takes a heap snapshot (all of the heap, after a full collection) when quiet,
 * then again once STREAM_HEAP_SOCKETS graphql-ws sockets (default 100, each from its own loopback
 * address) hold 10 `newAddressTransactions` subscriptions each, of random addresses: every stream
 * has a poller of its own, as in `bench:hostile` row 27. It reports the heap's growth per
 * subscription, and what grew most by constructor (or kind, for V8's internal objects), in
 * bench/results/stream-heap.{json,md}. The heap is what decides how often the old space fills,
 * and so how often full collections pause everybody while streams are held.
 */
import { closeSync, fstatSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { buildGateway } from "./build.ts";
import { startGateway, startSimulator, type Running } from "./processes.ts";

const SOCKETS = Number(process.env.STREAM_HEAP_SOCKETS ?? 100);
const PER_SOCKET = 10;
const SETTLE_MS = 15_000;
const QUERY = `subscription($chainId: ID!, $address: EvmAddress!) { newAddressTransactions(chainId: $chainId, address: $address) { __typename } }`;

function log(message: string): void {
  process.stderr.write(`[bench:stream-heap] ${message}\n`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const randomAddress = () => `0x${Array.from({ length: 40 }, () => Math.floor(Math.random() * 16).toString(16)).join("")}`;

interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

/** Self sizes of a snapshot's objects, summed by constructor (objects, closures) or by V8's kind. */
function heapByKind(path: string): { total: number; byKind: Map<string, { count: number; bytes: number }> } {
  const snapshot = JSON.parse(readFileSync(path, "utf8")) as HeapSnapshot;
  const fields = snapshot.snapshot.meta.node_fields;
  const kinds = snapshot.snapshot.meta.node_types[0];
  const [type, name, size] = ["type", "name", "self_size"].map((field) => fields.indexOf(field)) as [number, number, number];
  const byKind = new Map<string, { count: number; bytes: number }>();
  let total = 0;
  for (let index = 0; index < snapshot.nodes.length; index += fields.length) {
    const kind = kinds[snapshot.nodes[index + type]!]!;
    const label = kind === "object" ? snapshot.strings[snapshot.nodes[index + name]!]!.slice(0, 48) : `(${kind})`;
    const bytes = snapshot.nodes[index + size]!;
    total += bytes;
    const entry = byKind.get(label) ?? { count: 0, bytes: 0 };
    entry.count += 1;
    entry.bytes += bytes;
    byKind.set(label, entry);
  }
  return { total, byKind };
}

function endsWhole(path: string): boolean {
  const file = openSync(path, "r");
  try {
    const { size } = fstatSync(file);
    const tail = Buffer.alloc(Math.min(16, size));
    readSync(file, tail, 0, tail.length, size - tail.length);
    return tail.toString("latin1").trimEnd().endsWith("]}");
  } finally {
    closeSync(file);
  }
}

/** Asks the gateway for a heap snapshot (SIGUSR2) and returns its file once written. */
async function snapshotOf(gateway: Running, directory: string): Promise<string> {
  const before = new Set(readdirSync(directory));
  process.kill(gateway.pid, "SIGUSR2");
  for (let waited = 0; waited < 120_000; waited += 500) {
    await sleep(500);
    const written = readdirSync(directory).find((file) => file.endsWith(".heapsnapshot") && !before.has(file));
    // The file appears as it is written, in pieces: it is whole once it ends its last array,
    // and stops growing.
    if (written === undefined || !endsWhole(join(directory, written))) continue;
    const size = statSync(join(directory, written)).size;
    await sleep(500);
    if (statSync(join(directory, written)).size === size) return join(directory, written);
  }
  throw new Error("the gateway wrote no heap snapshot in 2 minutes");
}

function holdSubscriptions(url: string): { sockets: WebSocket[]; sent: () => number } {
  let sent = 0;
  const sockets = Array.from({ length: SOCKETS }, (_, index) => {
    const socket = new WebSocket(url, "graphql-transport-ws", {
      localAddress: `127.28.${1 + Math.floor(index / 250)}.${1 + (index % 250)}`,
    });
    socket.on("error", () => {});
    socket.on("open", () => socket.send(JSON.stringify({ type: "connection_init" })));
    socket.on("message", (data) => {
      if ((JSON.parse(String(data)) as { type: string }).type !== "connection_ack") return;
      for (let id = 1; id <= PER_SOCKET; id += 1) {
        const variables = { chainId: "43114", address: randomAddress() };
        socket.send(JSON.stringify({ id: String(id), type: "subscribe", payload: { query: QUERY, variables } }));
        sent += 1;
      }
    });
    return socket;
  });
  return { sockets, sent: () => sent };
}

async function main(): Promise<void> {
  buildGateway(log);
  const directory = mkdtempSync(join(tmpdir(), "stream-heap-"));
  const simulator = await startSimulator({ SIM_LIVE: "true" });
  const gateway = await startGateway(simulator, {
    BENCH_GATEWAY_NODE_FLAGS: `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${directory}`,
    WS_ALLOWED_ORIGINS: "*",
  });
  try {
    for (let index = 0; index < 5; index += 1) {
      const response = await fetch(gateway.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"query":"{ __typename }"}',
      });
      await response.text();
    }
    log("quiet snapshot");
    const quiet = heapByKind(await snapshotOf(gateway, directory));
    const { sockets, sent } = holdSubscriptions(gateway.url.replace(/^http/, "ws"));
    await sleep(SETTLE_MS);
    log(`${sent()} subscriptions sent; held snapshot`);
    const held = heapByKind(await snapshotOf(gateway, directory));
    for (const socket of sockets) socket.close();
    const subscriptions = sent();
    const grown = [...held.byKind]
      .map(([kind, { count, bytes }]) => {
        const before = quiet.byKind.get(kind) ?? { count: 0, bytes: 0 };
        return {
          kind,
          perSubscription: { objects: (count - before.count) / subscriptions, bytes: (bytes - before.bytes) / subscriptions },
        };
      })
      .sort((a, b) => b.perSubscription.bytes - a.perSubscription.bytes)
      .slice(0, 16);
    const results = {
      date: new Date().toISOString(),
      subscriptions,
      heapMB: { quiet: Math.round(quiet.total / 1e5) / 10, held: Math.round(held.total / 1e5) / 10 },
      bytesPerSubscription: Math.round((held.total - quiet.total) / subscriptions),
      grown: grown.map(({ kind, perSubscription }) => ({
        kind,
        objects: Math.round(perSubscription.objects * 10) / 10,
        bytes: Math.round(perSubscription.bytes),
      })),
    };
    await writeFile(new URL("./results/stream-heap.json", import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
    await writeFile(new URL("./results/stream-heap.md", import.meta.url), markdown(results));
    log(`${results.bytesPerSubscription} B per subscription; wrote bench/results/stream-heap.{json,md}`);
  } finally {
    await gateway.stop();
    await simulator.stop();
    rmSync(directory, { recursive: true, force: true });
  }
}

function markdown(results: {
  date: string;
  subscriptions: number;
  heapMB: { quiet: number; held: number };
  bytesPerSubscription: number;
  grown: { kind: string; objects: number; bytes: number }[];
}): string {
  return [
    "# What a held subscription costs the heap",
    "",
    `Written by \`npm run bench:stream-heap\` on ${results.date}. A production gateway on the live simulator, heap snapshots (after a full collection) when quiet and once ${results.subscriptions} \`newAddressTransactions\` subscriptions of random addresses were held over ${SOCKETS} graphql-ws sockets (each stream with a poller of its own).`,
    "",
    `Heap: ${results.heapMB.quiet} MB quiet, ${results.heapMB.held} MB held: **${results.bytesPerSubscription} B per subscription**. V8's compiled code and hidden classes grow with warm-up too, and count in it.`,
    "",
    "| grew most (constructor, or V8's kind) | objects per subscription | bytes per subscription |",
    "|---|---|---|",
    ...results.grown.map(({ kind, objects, bytes }) => `| ${kind.replace(/\|/g, "\\|")} | ${objects} | ${bytes} |`),
    "",
  ].join("\n");
}

await main();
