/**
 * Issue 25: what a WebSocket client can do that an HTTP one cannot, and what bounds it. The
 * gateway is served as the process serves it (HTTP and graphql-ws on one loopback port); clients
 * are raw graphql-transport-ws sockets from chosen loopback addresses.
 *
 * Transports: WebSocket only, by design: upgrade admission, frames and socket bounds have no HTTP form.
 */
import { getIntrospectionQuery } from "graphql";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { newDocumentCost } from "../../src/limits/request-costs.ts";
import { MAX_INIT_BYTES, MAX_REFUSED_FRAMES } from "../../src/server/websocket-frames.ts";
import { createLogger } from "../../src/telemetry/logger.ts";
import {
  execute,
  metricsText,
  serveGateway,
  startHarness,
  until,
  upstreamCalls,
  type Harness,
  type ServedGateway,
} from "../support/harness.ts";
import { GraphqlWsSocket } from "../support/transports.ts";
import { recordingLog } from "../support/raw-answers.ts";

interface Served extends ServedGateway {
  harness: Harness;
  lines: Record<string, unknown>[];
}

const running: Served[] = [];
const opened: WebSocket[] = [];

afterEach(async () => {
  for (const socket of opened.splice(0)) socket.terminate();
  for (const served of running.splice(0)) {
    await served.close();
    await served.harness.close();
  }
});

async function serve(env: Record<string, string> = {}): Promise<Served> {
  const lines: Record<string, unknown>[] = [];
  const log = recordingLog(lines);
  const logger = createLogger("info", {}, log);
  const harness = await startHarness(env, { logger });
  const served = { harness, lines, ...(await serveGateway(harness, logger)) };
  running.push(served);
  return served;
}

interface RawSocket {
  socket: WebSocket;
  /** The HTTP status of a refused upgrade, or 101. */
  upgrade: Promise<{ status: number; body: string }>;
  closed: Promise<{ code: number; reason: string }>;
  messages: Record<string, unknown>[];
}

/** A socket from `localAddress`, not yet initialised. */
function rawSocket(served: Served, options: { localAddress?: string; headers?: Record<string, string> } = {}): RawSocket {
  const socket = new WebSocket(`ws://127.0.0.1:${served.port}/graphql`, "graphql-transport-ws", options);
  opened.push(socket);
  const messages: Record<string, unknown>[] = [];
  socket.on("message", (data) => messages.push(JSON.parse(String(data)) as Record<string, unknown>));
  socket.on("error", () => {});
  const upgrade = new Promise<{ status: number; body: string }>((resolve) => {
    socket.once("open", () => resolve({ status: 101, body: "" }));
    socket.once("unexpected-response", (_request, response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.once("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  return { socket, upgrade, closed, messages };
}

function refusedConnections(metrics: string, reason: string): number {
  return Number(new RegExp(`^gateway_refusals_total\\{reason="${reason}"\\} (\\d+)$`, "m").exec(metrics)?.[1] ?? 0);
}

describe("connection_init", () => {
  it("a 96 kB connection_init closes its socket (4400) unparsed; 64 of them from one address hold no memory", async () => {
    const served = await serve({ WS_MAX_CONNECTIONS_PER_ADDRESS: "64" });
    const bomb = JSON.stringify({ type: "connection_init", payload: { x: Array.from({ length: 32_000 }, () => ({})) } });
    expect(bomb.length).toBeGreaterThan(90_000);
    global.gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    const sockets = Array.from({ length: 64 }, () => rawSocket(served, { localAddress: "127.0.0.21" }));
    for (const { socket, upgrade } of sockets) void upgrade.then(() => socket.readyState === socket.OPEN && socket.send(bomb));
    const closes = await Promise.all(sockets.map(({ closed }) => closed));
    expect(closes.every(({ code }) => code === 4400)).toBe(true);
    expect(closes[0]!.reason).toBe(`connection_init over ${MAX_INIT_BYTES} bytes`);
    global.gc?.();
    // 64 × 96 kB of parameters would be ~110 MB of heap kept, as graphql-ws kept them before.
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(40 * 1024 * 1024);
  });

  it("keeps only the API key of the connection params, and refuses a key over 256 characters", async () => {
    const served = await serve();
    served.harness.simulator.setKnobs({ apiKeys: ["params-key"] });
    const socket = rawSocket(served);
    await socket.upgrade;
    socket.socket.send(JSON.stringify({ type: "connection_init", payload: { apiKey: "params-key", note: "x".repeat(3_000) } }));
    await until(() => socket.messages.some((message) => message.type === "connection_ack"), "the ack");
    socket.socket.send(
      JSON.stringify({
        id: "1",
        type: "subscribe",
        payload: { query: '{ chain(id: "43114") { block(id: "30") { blockNumber } } }' },
      }),
    );
    await until(() => socket.messages.some((message) => message.type === "complete"), "the answer");
    expect(socket.messages.find((message) => message.type === "next")).toMatchObject({
      payload: { data: { chain: { block: { blockNumber: "30" } } } },
    });
    expect(new Set(served.harness.simulator.requests().map((request) => request.apiKey))).toEqual(new Set(["params-key"]));

    const long = rawSocket(served);
    await long.upgrade;
    long.socket.send(JSON.stringify({ type: "connection_init", payload: { apiKey: "k".repeat(257) } }));
    expect(await long.closed).toEqual({ code: 4400, reason: "API key over 256 characters" });
  });
});

describe("upgrades", () => {
  it("refuses an Origin outside the allow-list (403 JSON), takes the gateway's own origin and none", async () => {
    const served = await serve();
    const foreign = rawSocket(served, { headers: { origin: "https://evil.example" } });
    const refused = await foreign.upgrade;
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toMatchObject({ errors: [{ extensions: { code: "FORBIDDEN" } }] });
    for (const headers of [{ origin: `http://127.0.0.1:${served.port}` }, {} as Record<string, string>]) {
      expect((await rawSocket(served, { headers }).upgrade).status).toBe(101);
    }
    expect(refusedConnections(await metricsText(served.harness), "forbidden")).toBe(1);
  });

  it("takes the origins of WS_ALLOWED_ORIGINS", async () => {
    const served = await serve({ WS_ALLOWED_ORIGINS: "https://app.example, https://admin.example/" });
    expect((await rawSocket(served, { headers: { origin: "https://admin.example" } }).upgrade).status).toBe(101);
    expect((await rawSocket(served, { headers: { origin: "https://app.example" } }).upgrade).status).toBe(101);
    expect((await rawSocket(served, { headers: { origin: "https://other.example" } }).upgrade).status).toBe(403);
  });

  it("caps sockets per address and in all, and charges each opening 1 (a spent caller's upgrade is 429 with Retry-After)", async () => {
    const served = await serve({
      WS_MAX_CONNECTIONS_PER_ADDRESS: "2",
      WS_MAX_CONNECTIONS: "3",
      RATE_LIMIT_BURST: "4",
      RATE_LIMIT_RATE: "0.01",
    });
    const first = [rawSocket(served, { localAddress: "127.0.0.31" }), rawSocket(served, { localAddress: "127.0.0.31" })];
    for (const socket of first) expect((await socket.upgrade).status).toBe(101);
    const third = await rawSocket(served, { localAddress: "127.0.0.31" }).upgrade;
    expect(third.status).toBe(429);
    expect(JSON.parse(third.body)).toMatchObject({
      errors: [{ extensions: { code: "RATE_LIMITED", limit: "webSocketsPerAddress", max: 2 } }],
    });
    expect((await rawSocket(served, { localAddress: "127.0.0.32" }).upgrade).status).toBe(101);
    const full = await rawSocket(served, { localAddress: "127.0.0.33" }).upgrade;
    expect(full.status).toBe(503);
    expect(JSON.parse(full.body)).toMatchObject({
      errors: [{ extensions: { code: "RATE_LIMITED", limit: "webSockets", max: 3 } }],
    });

    // 127.0.0.31 paid 2 openings of its 4, and nothing for its refused third: two more spend it.
    first[1]!.socket.close();
    await first[1]!.closed;
    for (let opening = 0; opening < 2; opening += 1) {
      const spender = rawSocket(served, { localAddress: "127.0.0.31" });
      expect((await spender.upgrade).status).toBe(101);
      spender.socket.close();
      await spender.closed;
    }
    const spent = rawSocket(served, { localAddress: "127.0.0.31" });
    const answer = await spent.upgrade;
    expect(answer.status).toBe(429);
    expect(JSON.parse(answer.body)).toMatchObject({
      errors: [{ extensions: { code: "RATE_LIMITED", retryAfter: expect.any(Number) } }],
    });
  });

  it("a malformed Host header costs nothing more: operations run, and nothing is logged as unexpected", async () => {
    const served = await serve();
    const socket = rawSocket(served, { headers: { host: "::::not a host" } });
    expect((await socket.upgrade).status).toBe(101);
    socket.socket.send(JSON.stringify({ type: "connection_init" }));
    await until(() => socket.messages.some((message) => message.type === "connection_ack"), "the ack");
    for (let id = 0; id < 20; id += 1)
      socket.socket.send(JSON.stringify({ id: String(id), type: "subscribe", payload: { query: "{ __typename }" } }));
    await until(() => socket.messages.filter((message) => message.type === "complete").length === 20, "20 answers");
    expect(
      socket.messages
        .filter((message) => message.type === "next")
        .every((message) => (message.payload as { data?: unknown }).data),
    ).toBe(true);
    expect(served.lines.filter((line) => (line.level as number) >= 50)).toEqual([]);
  });
});

describe("sockets that hold without paying", () => {
  it("closes a socket that runs no operation for WS_IDLE_TIMEOUT_MS, not one that runs a subscription", async () => {
    const served = await serve({ WS_IDLE_TIMEOUT_MS: "300", EXPORT_POLL_INTERVAL_MS: "600000" });
    const idle = rawSocket(served);
    await idle.upgrade;
    idle.socket.send(JSON.stringify({ type: "connection_init" }));
    const started = Date.now();
    const { code } = await idle.closed;
    expect(code).toBe(1000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);

    // A socket whose subscription runs stays open past the bound.
    served.harness.simulator.setKnobs({ exportJobMs: 600_000 });
    const busy = rawSocket(served);
    await busy.upgrade;
    busy.socket.send(JSON.stringify({ type: "connection_init" }));
    await until(() => busy.messages.some((message) => message.type === "connection_ack"), "the ack");
    busy.socket.send(
      JSON.stringify({
        id: "s",
        type: "subscribe",
        payload: { query: 'subscription { newBlocks(chainId: "43114") { blockNumber } }' },
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(busy.socket.readyState).toBe(WebSocket.OPEN);
  });

  it("closes a socket whose client leaves more than WS_MAX_UNREAD_BYTES of results unread", async () => {
    const served = await serve({ WS_MAX_UNREAD_BYTES: "200000", RATE_LIMIT: "false" });
    const socket = await GraphqlWsSocket.open(served.port);
    // The client stops reading; it asks for 20 introspections of ~300 kB each.
    (socket.socket as unknown as { _socket: { pause(): void } })._socket.pause();
    for (let id = 0; id < 20; id += 1) {
      socket.socket.send(JSON.stringify({ id: String(id), type: "subscribe", payload: { query: getIntrospectionQuery() } }));
    }
    const open = () =>
      new Promise<number>((resolve, reject) =>
        served.server.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
      );
    await until(async () => (await open()) === 0, "the server to cut the socket", 15_000);
  });
});

describe("frames nested too deep", () => {
  it("a subscribe whose variables nest 5,000 deep is refused unparsed (BAD_REQUEST), pays its characters, and the socket serves on", async () => {
    const served = await serve({ RATE_LIMIT_BURST: "100", RATE_LIMIT_RATE: "0.01" });
    const socket = await GraphqlWsSocket.open(served.port);
    const deep = `${"[".repeat(5_000)}1${"]".repeat(5_000)}`;
    socket.socket.send(`{"id":"deep","type":"subscribe","payload":{"query":"{ __typename }","variables":{"x":${deep}}}}`);
    const refused = await socket.run("after", { query: "{ __typename }" });
    // The opening's 1, the deep frame's 1 and 10 for its characters (refused unparsed: no new
    // document's cost), and this operation's 1 and its new document's.
    expect(refused.remaining).toBe(100 - 1 - (1 + 10) - 1 - newDocumentCost("{ __typename }"));
    expect(served.lines.filter((line) => (line.level as number) >= 50)).toEqual([]);
    expect(await metricsText(served.harness)).toMatch(/gateway_refusals_total\{reason="nesting_too_deep"\} 1/);
  });
});

/**
 * Has the gateway parse `query` (in process, from a bucket of no socket's caller), so that a
 * socket's frames of it then cost 1 each, as its frame gate counts them. Frames of a document
 * the parse cache does not hold, sent together, each pay `NEW_DOCUMENT_COST` more (none of them
 * is parsed when it is charged), and those the budget then cannot pay are refused in the
 * pipeline, before they are parsed.
 */
async function parsedBefore(harness: Harness, query: string): Promise<void> {
  expect((await execute(harness, query)).status).toBe(200);
}

describe("a spent caller over a socket", () => {
  it("is refused before its frames are parsed, and its socket is closed (1013) when it keeps sending", async () => {
    const served = await serve({ RATE_LIMIT_BURST: "6", RATE_LIMIT_RATE: "0.01" });
    await parsedBefore(served.harness, "{ __typename }");
    const socket = rawSocket(served, { localAddress: "127.0.0.41" });
    await socket.upgrade;
    socket.socket.send(JSON.stringify({ type: "connection_init" }));
    await until(() => socket.messages.some((message) => message.type === "connection_ack"), "the ack");
    // The opening paid 1; 5 operations of a parsed document spend the rest.
    for (let id = 0; id < 5; id += 1)
      socket.socket.send(JSON.stringify({ id: String(id), type: "subscribe", payload: { query: "{ __typename }" } }));
    await until(() => socket.messages.filter((message) => message.type === "complete").length === 5, "5 answers");
    served.lines.length = 0;
    for (let id = 5; id < 5 + MAX_REFUSED_FRAMES + 5; id += 1) {
      socket.socket.send(JSON.stringify({ id: String(id), type: "subscribe", payload: { query: "{ __typename }" } }));
    }
    const { code, reason } = await socket.closed;
    expect(code).toBe(1013);
    expect(reason).toMatch(/^RATE_LIMITED/);
    const refusals = socket.messages.filter((message) => message.type === "error");
    expect(refusals).toHaveLength(MAX_REFUSED_FRAMES);
    expect(refusals[0]).toMatchObject({
      id: "5",
      payload: [{ extensions: { code: "RATE_LIMITED", retryAfter: expect.any(Number) } }],
    });
    // None reached the pipeline: no request was logged or refused there.
    expect(served.lines.filter((line) => line.msg === "graphql request" || line.msg === "request refused")).toEqual([]);
    expect(upstreamCalls(served.harness)).toEqual({});
  });

  it("a burst of subscribes sent at once reaches the pipeline only as far as the budget goes; the rest is refused unread (row 20)", async () => {
    const served = await serve({ RATE_LIMIT_BURST: "20", RATE_LIMIT_RATE: "0.01" });
    await parsedBefore(served.harness, "{ __typename }");
    const socket = rawSocket(served, { localAddress: "127.0.0.42" });
    await socket.upgrade;
    socket.socket.send(JSON.stringify({ type: "connection_init" }));
    await until(() => socket.messages.some((message) => message.type === "connection_ack"), "the ack");
    served.lines.length = 0;
    // Written in one go, they reach the gateway together, before the first of them is charged.
    for (let id = 0; id < 300; id += 1) {
      socket.socket.send(JSON.stringify({ id: String(id), type: "subscribe", payload: { query: "{ __typename }" } }));
    }
    const { code } = await socket.closed;
    expect(code).toBe(1013);
    // The opening paid 1: 19 operations (of a parsed document, 1 each) are what the budget held, and only they ran.
    await until(() => served.lines.filter((line) => line.msg === "graphql request").length >= 19, "the paid operations");
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(served.lines.filter((line) => line.msg === "graphql request")).toHaveLength(19);
    const refusedUnread = socket.messages.filter((message) => message.type === "error");
    expect(refusedUnread).toHaveLength(MAX_REFUSED_FRAMES);
    expect(refusedUnread.every((message) => JSON.stringify(message).includes("your budget is spent"))).toBe(true);
    // None was refused in the pipeline, after being parsed.
    expect(served.lines.filter((line) => line.msg === "request refused")).toEqual([]);
  });

  it("operations beyond WS_MAX_OPERATIONS_PER_SOCKET each cost 1", async () => {
    const served = await serve({ WS_MAX_OPERATIONS_PER_SOCKET: "1", RATE_LIMIT_BURST: "100", RATE_LIMIT_RATE: "0.01" });
    served.harness.simulator.setKnobs({ exportJobMs: 600_000 });
    const socket = await GraphqlWsSocket.open(served.port);
    const held = socket.run("held", { query: 'subscription { newBlocks(chainId: "43114") { blockNumber } }' });
    void held;
    const over = await Promise.all(
      Array.from({ length: 10 }, (_, index) => socket.run(`over-${index}`, { query: "{ __typename }" })),
    );
    expect(over.every((answer) => answer.body.errors?.[0]?.extensions?.limit === "operationsPerSocket")).toBe(true);
    const after = await fetch(`http://127.0.0.1:${served.port}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "{ __typename }" }),
    });
    // 100 − 1 (opening) − the subscription's charge − 10 refusals − 1 (this request).
    expect(Number(after.headers.get("ratelimit-remaining"))).toBeLessThanOrEqual(100 - 1 - 1 - 10 - 1);
  });
});
