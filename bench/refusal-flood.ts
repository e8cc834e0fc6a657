/**
 * `npm run bench:refusals`: what a flood of refusals costs the production gateway. One caller
 * whose budget is spent sends as fast as it is answered (4 connections; small bodies, then 95 kB
 * operation names), then 48 loops upgrade to WebSocket beyond the per-address cap; for each, the
 * answers by status, their rate and the gateway's CPU (utime + stime from /proc) in all and per
 * answer. Gateway settings as KEY=value arguments, e.g. REFUSAL_HOLD_MS=0 for refusals answered
 * at once. BENCH_SECONDS (5) per flood; BENCH_REFUSAL_KINDS=small,bigname,upgrade,frames picks floods (frames: one socket's
 * `subscribe` frames as fast as it writes them, reopened when closed).
 */
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { Pool } from "undici";
import WebSocket from "ws";
import { buildGateway } from "./build.ts";
import { startGateway, startSimulator } from "./processes.ts";

const TICK_US = 10_000;
const cpuTicks = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return Number(fields[11]) + Number(fields[12]);
};

const settings = Object.fromEntries(
  process.argv.slice(2).map((setting) => setting.split(/=(.*)/s).slice(0, 2) as [string, string]),
);
buildGateway((message) => process.stderr.write(`[refusals] ${message}\n`));
const simulator = await startSimulator();
// A budget of 10 that refills 10 a second: spent within the first milliseconds of a flood.
const gateway = await startGateway(simulator, { RATE_LIMIT_RATE: "10", RATE_LIMIT_BURST: "10", ...settings });
const url = new URL(gateway.url);
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
process.stdout.write(`settings: ${JSON.stringify(settings)}\n`);

async function measure(name: string, run: (until: number) => Promise<Record<string, number>>) {
  const before = cpuTicks(gateway.pid);
  const started = performance.now();
  const counts = await run(started + seconds * 1000);
  const elapsed = (performance.now() - started) / 1000;
  const cpuUs = (cpuTicks(gateway.pid) - before) * TICK_US;
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  process.stdout.write(
    `${name}: ${JSON.stringify(counts)} ${(total / elapsed).toFixed(0)}/s, gateway CPU ${((cpuUs / 1e6 / elapsed) * 100).toFixed(0)} % of a core, ${(cpuUs / total).toFixed(0)} µs each\n`,
  );
}

async function httpFlood(address: string, body: string, connections: number, until: number) {
  const pool = new Pool(url.origin, { connections, localAddress: address });
  const counts: Record<string, number> = {};
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) {
        try {
          const response = await pool.request({
            method: "POST",
            path: url.pathname,
            headers: { "content-type": "application/json" },
            body,
          });
          await response.body.text();
          counts[response.statusCode] = (counts[response.statusCode] ?? 0) + 1;
        } catch (error) {
          const code = (error as { code?: string }).code ?? "error";
          counts[code] = (counts[code] ?? 0) + 1;
        }
      }
    }),
  );
  await pool.close();
  return counts;
}

function upgradeOnce(address: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname, port: Number(url.port), localAddress: address });
    let answer = "";
    socket.on("connect", () =>
      socket.write(
        `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n`,
      ),
    );
    socket.on("data", (chunk) => {
      answer += chunk.toString("latin1");
      if (answer.includes("\r\n")) {
        const status = answer.slice(9, 12);
        if (status !== "101") socket.destroy();
        resolve(status);
      }
    });
    socket.on("error", (error) => resolve((error as { code?: string }).code ?? "error"));
    socket.on("close", () => resolve(answer.slice(9, 12) || "closed"));
  });
}

/** One socket that subscribes `{ __typename }` with a fresh id as fast as it can write, opened again when closed. */
async function frameFlood(address: string, until: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  const add = (what: string) => (counts[what] = (counts[what] ?? 0) + 1);
  let id = 0;
  while (performance.now() < until) {
    await new Promise<void>((resolve) => {
      const socket = new WebSocket(url.href.replace("http", "ws"), "graphql-transport-ws", { localAddress: address });
      const done = setTimeout(() => socket.terminate(), Math.max(0, until - performance.now()));
      socket.on("unexpected-response", (_request, response) => {
        add(`upgrade ${response.statusCode}`);
        socket.terminate();
      });
      socket.on("error", () => {});
      socket.on("close", (code) => {
        add(`closed ${code}`);
        clearTimeout(done);
        resolve();
      });
      socket.on("open", () => socket.send(JSON.stringify({ type: "connection_init" })));
      socket.on("message", (data: Buffer) => {
        const type = (JSON.parse(data.toString()) as { type: string }).type;
        if (type !== "connection_ack") return add(type);
        const flood = () => {
          // As fast as the socket takes it, without buffering without end.
          for (let burst = 0; burst < 100 && socket.readyState === WebSocket.OPEN && socket.bufferedAmount < 65_536; burst++) {
            id += 1;
            socket.send(`{"id":"${id}","type":"subscribe","payload":{"query":"{ __typename }"}}`);
          }
          if (socket.readyState === WebSocket.OPEN) setImmediate(flood);
        };
        flood();
      });
    });
  }
  counts.framesSent = id;
  return counts;
}

const small = JSON.stringify({ query: "{ __typename }" });
const bigName = JSON.stringify({ query: "query A { __typename }", operationName: "x".repeat(95_000) });
const kinds = (process.env.BENCH_REFUSAL_KINDS ?? "small,bigname,upgrade,frames").split(",");
if (kinds.includes("small"))
  await measure("spent caller, small body, 4 conns", (until) => httpFlood("127.0.0.201", small, 4, until));
if (kinds.includes("bigname"))
  await measure("spent caller, 95 kB operationName, 4 conns", (until) => httpFlood("127.0.0.202", bigName, 4, until));
if (kinds.includes("upgrade"))
  await measure("WebSocket upgrades beyond the per-address cap, 48 loops", async (until) => {
    const counts: Record<string, number> = {};
    await Promise.all(
      Array.from({ length: 48 }, async () => {
        while (performance.now() < until) {
          const status = await upgradeOnce("127.0.0.203");
          counts[status] = (counts[status] ?? 0) + 1;
          if (status === "101") await new Promise((r) => setTimeout(r, until - performance.now()));
        }
      }),
    );
    return counts;
  });
if (kinds.includes("frames"))
  await measure("subscribe frames as fast as one socket writes", (until) => frameFlood("127.0.0.204", until));
await gateway.stop();
await simulator.stop();
process.exit(0);
