/**
 * CPU without an upstream call: the gateway as a process of its own (`node --import tsx
 * src/server.ts` on the embedded simulator, which runs in a child of its own), so that
 * `/proc/<pid>/stat` counts only its CPU. For each kind of request that calls nothing upstream,
 * one caller sends N of them one at a time; what it paid (read from `RateLimit-Remaining`) and the
 * CPU the gateway used for them give the CPU one unit buys. At the default RATE_LIMIT_RATE (100
 * units a second) a caller within its budget then keeps at most that many milliseconds of CPU
 * busy per 10 ms: `MAX_CPU_MS_PER_UNIT` states the share.
 */
import type { ChildProcess } from "node:child_process";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { getIntrospectionQuery } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";

/** The default refill: what a caller may spend each second, for ever. */
const RATE_PER_SECOND = 100;
/**
 * At most 2.5 ms of CPU per unit paid: at 100 units a second, a quarter of one core. Measured on a
 * quiet 2-core machine, the costliest kind takes about … ms per unit (see the README's "Running it
 * in public"); the rest is margin for a loaded CI machine.
 */
const MAX_CPU_MS_PER_UNIT = 2.5;

const CLOCK_TICKS_PER_SECOND = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/** The CPU the process has used, user and system, in milliseconds. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces): state is the 3rd, utime the 14th, stime the 15th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1_000) / CLOCK_TICKS_PER_SECOND;
}

interface Sent {
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  bytes: number;
}

function send(url: string, agent: Agent, sent: Sent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      `${url}/graphql`,
      {
        method: sent.method,
        agent,
        headers: sent.body === undefined ? sent.headers : { ...sent.headers, "content-length": Buffer.byteLength(sent.body) },
      },
      (incoming) => {
        let bytes = 0;
        incoming.on("data", (chunk: Buffer) => (bytes += chunk.byteLength));
        incoming.once("end", () => resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, bytes }));
        incoming.once("error", reject);
      },
    );
    outgoing.once("error", reject);
    outgoing.end(sent.body);
  });
}

const post = (query: string, variables: Record<string, unknown> = {}): Sent => ({
  method: "POST",
  // Compressed, as a browser asks: the costlier answer.
  headers: {
    "content-type": "application/json",
    accept: "application/graphql-response+json",
    "accept-encoding": "gzip, deflate, br",
  },
  body: JSON.stringify({ query, variables }),
});
const page = (headers: Record<string, string> = {}): Sent => ({ method: "GET", headers: { accept: "text/html", ...headers } });

interface Kind {
  name: string;
  /** How many to send, measured; each kind is first sent a few times unmeasured. */
  count: number;
  /** The i-th request; `etag` is the page's, as a browser would have it from an earlier view. */
  request(index: number, etag: string): Sent;
  status: number;
}

// The response cache answers a repeated body: an attacker varies it (an undeclared variable is ignored).
const KINDS: Kind[] = [
  { name: "cheapest query", count: 400, request: (index) => post("{ __typename }", { n: index }), status: 200 },
  { name: "full introspection", count: 200, request: (index) => post(getIntrospectionQuery(), { n: index }), status: 200 },
  {
    name: "__type",
    count: 200,
    request: (index) =>
      post(
        '{ __type(name: "Block") { name fields { name description args { name type { name kind } } type { name kind ofType { name kind } } } } }',
        {
          n: index,
        },
      ),
    status: 200,
  },
  { name: "GraphiQL page, brotli", count: 30, request: () => page({ "accept-encoding": "gzip, deflate, br" }), status: 200 },
  { name: "GraphiQL page, gzip", count: 30, request: () => page({ "accept-encoding": "gzip" }), status: 200 },
  { name: "GraphiQL page, uncompressed", count: 20, request: () => page(), status: 200 },
  {
    name: "GraphiQL page, If-None-Match",
    count: 400,
    request: (_index, etag) => page({ "accept-encoding": "gzip, deflate, br", "if-none-match": etag }),
    status: 304,
  },
  {
    name: "2,000-token document",
    count: 40,
    // New each time, so that the parse cache never holds it; refused by the breadth limit once parsed.
    request: (index) => post(`query Wide${index} { ${"__typename ".repeat(1_995)}}`),
    status: 400,
  },
];

interface Measured {
  name: string;
  statuses: number[];
  units: number;
  cpuMs: number;
  perUnit: number;
}

let gateway: ServerProcess;
let pid: number;
const started: ChildProcess[] = [];

beforeAll(async () => {
  gateway = await startServerProcess(
    // As `npm start` runs it. A burst no measurement spends: nothing is refused, and the refill is the default.
    { NODE_ENV: "production", RATE_LIMIT_BURST: "100000000" },
    ["DATA_API_URL", "METRICS_API_URL", "WORKERS", "REDIS_URL", "RATE_LIMIT_RATE", "RATE_LIMIT_ADDRESS_RATE"],
  );
  started.push(gateway.child);
  pid = gateway.child.pid!;
  await gateway.line((line) => line.msg === "gateway listening");
}, 90_000);

afterAll(() => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

/**
 * A document of some 1,800 units, refused unparsed for its tokens: sent before measuring, it
 * takes a bucket far enough below its burst that the refill never meets the top, so that what
 * the bucket lost plus what it regained is what was paid.
 */
const DRAIN = post(`query Drain { ${"__typename ".repeat(8_500)}}`);
const DRAINS = 5;

/** Sends `kind` from an address of its own (its own bucket): the units it paid, the CPU it took. */
async function measure(kind: Kind, address: string): Promise<Measured> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1, localAddress: address });
  try {
    let etag = "";
    // The gateway's code for this kind is compiled and optimized before it is measured.
    for (let index = 0; index < Math.max(3, kind.count / 4); index++) {
      etag = String((await send(gateway.url, agent, kind.request(-1 - index, etag))).headers.etag ?? "");
    }
    let remaining = 0;
    for (let index = 0; index < DRAINS; index++) {
      remaining = Number((await send(gateway.url, agent, DRAIN)).headers["ratelimit-remaining"]);
    }
    const at = performance.now();
    const statuses = new Set<number>();
    const cpuBefore = cpuMs(pid);
    let answer: Answer | undefined;
    for (let index = 0; index < kind.count; index++) {
      answer = await send(gateway.url, agent, kind.request(index, etag));
      statuses.add(answer.status);
    }
    const cpu = cpuMs(pid) - cpuBefore;
    // What it paid: what its bucket lost, and what the bucket regained meanwhile.
    const lost = remaining - Number(answer!.headers["ratelimit-remaining"]);
    const units = lost + ((performance.now() - at) / 1_000) * RATE_PER_SECOND;
    return { name: kind.name, statuses: [...statuses], units, cpuMs: cpu, perUnit: cpu / units };
  } finally {
    agent.destroy();
  }
}

describe("CPU without an upstream call", () => {
  it(
    `no kind of request buys more than ${MAX_CPU_MS_PER_UNIT} ms of CPU per unit: at ${RATE_PER_SECOND} units a second, at most ${(MAX_CPU_MS_PER_UNIT * RATE_PER_SECOND) / 10} % of one core`,
    { timeout: 300_000 },
    async () => {
      const results: Measured[] = [];
      for (const [index, kind] of KINDS.entries()) results.push(await measure(kind, `127.0.0.${10 + index}`));
      console.table(results.map((row) => ({ ...row, units: Math.round(row.units), perUnit: row.perUnit.toFixed(3) })));
      for (const [index, row] of results.entries()) {
        expect(row.statuses, row.name).toEqual([KINDS[index]!.status]);
        expect(row.perUnit, row.name).toBeLessThanOrEqual(MAX_CPU_MS_PER_UNIT);
      }
    },
  );
});
