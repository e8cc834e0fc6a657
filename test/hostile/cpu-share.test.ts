/**
 * CPU without an upstream call: the gateway as a process of its own (`node --import tsx
 * src/server.ts` on the embedded simulator, which runs in a child of its own), so that
 * `/proc/<pid>/stat` counts only its CPU (every thread of it: compression and GC too). For each
 * kind of request that calls nothing upstream, one caller sends N of them one at a time (one at a
 * time is the costliest per request: nothing is shared between requests); what it paid (read from
 * `RateLimit-Remaining`) and the CPU the gateway used for them give the CPU one unit buys. At the
 * default RATE_LIMIT_RATE (100 units a second) a caller within its budget then keeps at most that
 * many milliseconds of CPU busy per 10 ms: `MAX_CPU_MS_PER_UNIT` states the share.
 *
 * Transports: HTTP (each kind) and WebSocket (the operations: one caller's operations one at a time
 * on its one socket, its budget read from a `{ __typename }` before and after, as a socket's
 * refusal carries none). SSE answers the same operations through the same listener as HTTP, in
 * another framing; the GraphiQL page is HTTP's alone.
 */
import type { ChildProcess } from "node:child_process";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { getIntrospectionQuery } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";
import { GraphqlWsSocket, type Operation } from "../support/transports.ts";

/** The default refill: what a caller may spend each second, for ever. */
const RATE_PER_SECOND = 100;
/**
 * At most 5 ms of CPU per unit paid: at 100 units a second, half of one core. On a 2-core machine
 * loaded by 3 to 6 times its cores, the dearest kinds per unit, the cheapest query itself (1 unit)
 * and a new small document (2 units: 1, and `NEW_DOCUMENT_COST`), took 1.7 to 3.1 ms; every other
 * kind less. The rest is margin for a loaded CI machine.
 */
const MAX_CPU_MS_PER_UNIT = 5;
/**
 * And no kind buys more than twice the CPU per unit the cheapest query buys, measured in turn with
 * it: a price out of proportion shows however fast or loaded the machine is.
 */
const MAX_RATIO_TO_CHEAPEST = 2;

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
  /** How many to send, measured: enough for some 0.3 s of CPU or more, so that 10 ms ticks do not matter. */
  count: number;
  /** Over HTTP: the i-th request; `etag` is the page's, as a browser would have it from an earlier view. */
  request?(index: number, etag: string): Sent;
  /** Over a WebSocket: the i-th operation. */
  operation?(index: number): Operation;
  /** What each is answered: its HTTP status; over a socket, `next` (a result) or `error` (a refusal). */
  status: number | "next" | "error";
}

const INTROSPECTION = getIntrospectionQuery();
const TYPE_QUERY =
  '{ __type(name: "EvmBlock") { name fields { name description args { name type { name kind } } type { name kind ofType { name kind } } } } }';
/** A 2,000-token document, new for each `name`: the parse cache, shared by every caller, never holds it. */
const wide = (name: string) => `query ${name} { ${"__typename ".repeat(1_995)}}`;
/** A name for the i-th request, the warm-up's negative ones included: `-` is no name's. */
const named = (prefix: string, index: number) => `${prefix}${index < 0 ? `Before${-index}` : index}`;

// The response cache answers a repeated body: an attacker varies it (an undeclared variable is ignored).
const KINDS: Kind[] = [
  { name: "cheapest query", count: 400, request: (index) => post("{ __typename }", { n: index }), status: 200 },
  { name: "full introspection", count: 100, request: (index) => post(INTROSPECTION, { n: index }), status: 200 },
  { name: "__type", count: 200, request: (index) => post(TYPE_QUERY, { n: index }), status: 200 },
  { name: "GraphiQL page, brotli", count: 200, request: () => page({ "accept-encoding": "gzip, deflate, br" }), status: 200 },
  { name: "GraphiQL page, gzip", count: 160, request: () => page({ "accept-encoding": "gzip" }), status: 200 },
  { name: "GraphiQL page, uncompressed", count: 60, request: () => page(), status: 200 },
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
    request: (index) => post(wide(`Wide${index}`)),
    status: 400,
  },
  {
    name: "new small document",
    count: 200,
    // A new name each time: parsed and validated for each (row 25 of bench:hostile varies an alias).
    request: (index) => post(`query ${named("Small", index)} { __typename }`),
    status: 200,
  },
  {
    name: "new document over its estimate",
    count: 200,
    // Parsed, validated and estimated, then refused before anything runs or calls upstream, as
    // bench:hostile row 25's fresh aliases are refused at admission. No estimate is over the
    // burst this gateway measures with: this one is over MAX_QUERY_COST (10,101 estimated upstream
    // calls of 1,000).
    request: (index) =>
      post(
        `query ${named("Costly", index)} { latestBlocks(first: 100) { nodes { blockNumber transactions(first: 100) { nodes { txHash value input gasPrice gasLimit nonce } } } } }`,
      ),
    status: 400,
  },
  // The same operations over a WebSocket.
  {
    name: "cheapest query, WebSocket",
    count: 400,
    operation: (n) => ({ query: "{ __typename }", variables: { n } }),
    status: "next",
  },
  {
    name: "full introspection, WebSocket",
    count: 100,
    operation: (n) => ({ query: INTROSPECTION, variables: { n } }),
    status: "next",
  },
  { name: "__type, WebSocket", count: 200, operation: (n) => ({ query: TYPE_QUERY, variables: { n } }), status: "next" },
  {
    name: "2,000-token document, WebSocket",
    count: 40,
    operation: (index) => ({ query: wide(`WideOverSocket${index}`) }),
    status: "error",
  },
];

/** Each kind is measured in this many turns, the kinds in turn, so that a machine's load weighs on all of them alike. */
const ROUNDS = 4;

interface Measured {
  statuses: Set<Kind["status"]>;
  units: number;
  cpuMs: number;
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
const DRAIN_QUERY = `query Drain { ${"__typename ".repeat(8_500)}}`;
const DRAIN = post(DRAIN_QUERY);
const DRAINS = 8;

/** One caller: one kind of request, from an address of its own (so a bucket of its own), on one connection or socket. */
class Caller {
  readonly measured: Measured = { statuses: new Set(), units: 0, cpuMs: 0 };
  private readonly agent: Agent;
  private socket: GraphqlWsSocket | undefined;
  private etag = "";
  private ids = 0;

  constructor(
    readonly kind: Kind,
    private readonly address: string,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets: 1, localAddress: address });
  }

  private send(sent: Sent): Promise<Answer> {
    return send(gateway.url, this.agent, sent);
  }

  /** Runs an operation on the caller's socket (opened again if the gateway closed it for idling); what it was answered, and the budget a result carries. */
  private async run(operation: Operation): Promise<{ status: Kind["status"]; remaining: number | undefined }> {
    if (!this.socket || this.socket.closed) {
      this.socket = await GraphqlWsSocket.open(Number(new URL(gateway.url).port), {}, this.address);
    }
    const answer = await this.socket.run(String((this.ids += 1)), operation);
    return { status: answer.refused ? "error" : "next", remaining: answer.remaining };
  }

  /** The i-th of the kind; what it was answered, and the budget it says is left. */
  private async exchange(index: number): Promise<{ status: Kind["status"]; remaining: number | undefined }> {
    if (this.kind.operation) return this.run(this.kind.operation(index));
    const answer = await this.send(this.kind.request!(index, this.etag));
    this.etag = String(answer.headers.etag ?? this.etag);
    return { status: answer.status, remaining: remainingOf(answer) };
  }

  /** The budget left, from a `{ __typename }` on the socket, which pays 1. */
  private async probe(index: number): Promise<number> {
    const { remaining } = await this.run({ query: "{ __typename }", variables: { probe: index } });
    return remaining!;
  }

  /** The gateway's code for this kind compiled and optimized, and the caller's bucket drained. */
  async prepare(): Promise<void> {
    for (let index = 0; index < Math.max(3, this.kind.count / 4); index++) await this.exchange(-1 - index);
    for (let index = 0; index < DRAINS; index++) {
      if (this.kind.operation) await this.run({ query: DRAIN_QUERY });
      else await this.send(DRAIN);
    }
  }

  /** Sends `count` requests one at a time, adding what they paid and the gateway's CPU meanwhile. */
  async measure(count: number, first: number): Promise<void> {
    // The bucket as it is now: from one more request of the kind, not measured; over a socket, from a probe.
    const before = this.kind.operation ? await this.probe(first) : (await this.exchange(-100 - first)).remaining!;
    const at = performance.now();
    const cpuBefore = cpuMs(pid);
    let last: number | undefined;
    for (let index = first; index < first + count; index++) {
      const answer = await this.exchange(index);
      this.measured.statuses.add(answer.status);
      last = answer.remaining;
    }
    this.measured.cpuMs += cpuMs(pid) - cpuBefore;
    // Over a socket, a probe after, less its own 1.
    const after = this.kind.operation ? (await this.probe(-first - 1)) + 1 : last!;
    // What it paid: what its bucket lost, and what the bucket regained meanwhile.
    this.measured.units += before - after + ((performance.now() - at) / 1_000) * RATE_PER_SECOND;
  }

  close(): void {
    this.agent.destroy();
    this.socket?.close();
  }
}

const remainingOf = (answer: Answer) => Number(answer.headers["ratelimit-remaining"]);

describe("CPU without an upstream call", () => {
  it(
    `no kind of request buys more than ${MAX_CPU_MS_PER_UNIT} ms of CPU per unit (at ${RATE_PER_SECOND} units a second, ${(MAX_CPU_MS_PER_UNIT * RATE_PER_SECOND) / 10} % of one core), nor more than ${MAX_RATIO_TO_CHEAPEST} × the cheapest query`,
    { timeout: 600_000 },
    async () => {
      const callers = KINDS.map((kind, index) => new Caller(kind, `127.0.0.${10 + index}`));
      try {
        for (const caller of callers) await caller.prepare();
        for (let round = 0; round < ROUNDS; round++) {
          for (const caller of callers) {
            const count = caller.kind.count / ROUNDS;
            await caller.measure(count, round * count);
          }
        }
      } finally {
        for (const caller of callers) caller.close();
      }
      const rows = callers.map(({ kind, measured }) => ({
        kind: kind.name,
        requests: kind.count,
        units: Math.round(measured.units),
        cpuMs: measured.cpuMs,
        cpuMsPerRequest: Number((measured.cpuMs / kind.count).toFixed(2)),
        cpuMsPerUnit: Number((measured.cpuMs / measured.units).toFixed(3)),
      }));
      console.table(rows);
      const cheapest = rows[0]!.cpuMsPerUnit;
      for (const { kind, measured } of callers) {
        expect([...measured.statuses], kind.name).toEqual([kind.status]);
        const perUnit = measured.cpuMs / measured.units;
        expect(perUnit, kind.name).toBeLessThanOrEqual(MAX_CPU_MS_PER_UNIT);
        expect(perUnit / cheapest, kind.name).toBeLessThanOrEqual(MAX_RATIO_TO_CHEAPEST);
      }
    },
  );
});
