/**
 * GraphQL over WebSocket (graphql-ws) on the gateway's port and path, with the graphql-ws client
 * itself over real loopback sockets: queries, the export subscription, the caller's key from the
 * connection params, the per-caller subscription cap across SSE and WebSocket together, the
 * bounds on a socket, and shutdown.
 */
import { print, type FormattedExecutionResult, type GraphQLFormattedError } from "graphql";
import { createClient, type Client, type SubscribePayload } from "graphql-ws";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { ChainBlockDocument, WatchExportOperationDocument } from "./generated/graphql.ts";
import { startExportJob } from "./support/subscriptions.ts";
import { startHarness, until, type Harness, serveGateway, type ServedGateway } from "./support/harness.ts";
import { createLogger, type Logger } from "../src/telemetry/logger.ts";
import { NEW_DOCUMENT_COST } from "../src/limits/request-costs.ts";
import { recordingLog } from "./support/raw-answers.ts";

type ExecutionResult = FormattedExecutionResult<Record<string, unknown>, unknown>;

interface Served extends ServedGateway {
  harness: Harness;
}

const running: Served[] = [];
const clients: Client[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.dispose()));
  for (const { harness, close } of running.splice(0)) {
    await close();
    await harness.close();
  }
});

/** The gateway served as the process serves it: HTTP and WebSocket on one port. */
async function serve(env: Record<string, string> = {}, logger?: Logger): Promise<Served> {
  const harness = await startHarness(env, { logger });
  const served = { harness, ...(await serveGateway(harness, logger)) };
  running.push(served);
  return served;
}

/** A graphql-ws client that opens its socket for its first operation and closes it after its last (`keep` keeps it open as long). */
function connect(served: Served, connectionParams?: Record<string, unknown>, keepMs = 0): Client {
  const client = createClient({
    url: `ws://127.0.0.1:${served.port}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams,
    retryAttempts: 0,
    lazy: true,
    lazyCloseTimeout: keepMs,
  });
  clients.push(client);
  return client;
}

type Outcome = { results: ExecutionResult[]; errors?: GraphQLFormattedError[] };

/** Every result of an operation until it completes, or the errors of an `error` message. */
async function run(client: Client, payload: SubscribePayload): Promise<Outcome> {
  const results: ExecutionResult[] = [];
  try {
    for await (const result of client.iterate(payload)) results.push(result);
  } catch (errors) {
    return { results, errors: errors as GraphQLFormattedError[] };
  }
  return { results };
}

const WATCH = print(WatchExportOperationDocument);
const CHAIN_BLOCK = print(ChainBlockDocument);

/** A raw graphql-transport-ws socket, acknowledged; resolves with it and a promise of its close code. */
async function rawSocket(served: Served): Promise<{ socket: WebSocket; closed: Promise<number> }> {
  const socket = new WebSocket(`ws://127.0.0.1:${served.port}/graphql`, "graphql-transport-ws");
  const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => socket.send(JSON.stringify({ type: "connection_init" })));
    socket.once("message", (data) =>
      JSON.parse(String(data)).type === "connection_ack" ? resolve() : reject(new Error(String(data))),
    );
    socket.once("error", reject);
  });
  return { socket, closed };
}

describe("graphql-ws over WebSocket", () => {
  it("answers a query, with the caller's key from the connection params sent upstream (401/403 without it)", async () => {
    const served = await serve();
    served.harness.simulator.setKnobs({ apiKeys: ["ws-key"] });
    const variables = { chainId: "43114", blockId: "21" };

    const withoutKey = await run(connect(served), { query: CHAIN_BLOCK, variables });
    expect(withoutKey.errors).toBeUndefined();
    expect(withoutKey.results).toHaveLength(1);
    expect(withoutKey.results[0]!.data).toEqual({ chain: null });
    expect(withoutKey.results[0]!.errors![0]!.extensions).toMatchObject({ upstream: { status: 401 } });
    expect(served.harness.simulator.requests().every((request) => request.apiKey === undefined || request.apiKey === null)).toBe(
      true,
    );

    served.harness.simulator.resetCounters();
    served.harness.gateway.cache.clear();
    for (const params of [{ "x-glacier-api-key": "ws-key" }, { apiKey: "ws-key" }]) {
      const withKey = await run(connect(served, params), { query: CHAIN_BLOCK, variables });
      expect(withKey.results).toHaveLength(1);
      expect(withKey.results[0]!.errors).toBeUndefined();
      expect(withKey.results[0]!.data).toMatchObject({ chain: { block: { blockNumber: "21" } } });
      served.harness.gateway.cache.clear();
    }
    expect(new Set(served.harness.simulator.requests().map((request) => request.apiKey))).toEqual(new Set(["ws-key"]));
  });

  it("refuses a key the upstream refused lately without a call, and logs each operation with its request id", async () => {
    const lines: Record<string, unknown>[] = [];
    const log = recordingLog(lines);
    const served = await serve({}, createLogger("info", {}, log));
    served.harness.simulator.setKnobs({ apiKeys: ["good-key"] });
    const variables = { chainId: "43114", blockId: "23" };
    const client = connect(served, { apiKey: "bad-key" });
    // The upstream refuses the key once; the gateway remembers it.
    const first = await run(client, { query: CHAIN_BLOCK, variables, operationName: "ChainBlock" });
    expect(first.results[0]!.errors![0]!.extensions).toMatchObject({ code: "FORBIDDEN", upstream: { status: 403 } });
    served.harness.simulator.resetCounters();
    const second = await run(client, { query: CHAIN_BLOCK, variables, operationName: "ChainBlock" });
    expect(second.errors![0]).toMatchObject({
      message: expect.stringContaining("refused the key"),
      extensions: { code: "FORBIDDEN", upstream: { status: 403 } },
    });
    expect(served.harness.simulator.counters()).toEqual(
      Object.fromEntries(Object.keys(served.harness.simulator.counters()).map((route) => [route, 0])),
    );
    // One line per operation, as per HTTP request: the status HTTP would have answered; a refusal as a refusal.
    await until(() => lines.some((line) => line.msg === "request refused"), "the refusal's log line");
    const logged = lines.filter((line) => line.msg === "graphql request" || line.msg === "request refused");
    expect(logged.map((line) => [line.msg, line.transport, line.operation ?? null, line.status])).toEqual([
      ["graphql request", "websocket", "ChainBlock", 200],
      ["request refused", "websocket", null, 403],
    ]);
    expect(typeof logged[0]!.requestId === "string" && typeof logged[0]!.ms === "number").toBe(true);
    expect(JSON.stringify(lines)).not.toContain("bad-key");
  });

  it("takes the key from the upgrade request's header when the connection params carry none", async () => {
    const served = await serve();
    served.harness.simulator.setKnobs({ apiKeys: ["header-key"] });
    const client = createClient({
      url: `ws://127.0.0.1:${served.port}/graphql`,
      retryAttempts: 0,
      webSocketImpl: class extends WebSocket {
        constructor(address: string, protocols?: string | string[]) {
          super(address, protocols, { headers: { "x-glacier-api-key": "header-key" } });
        }
      },
    });
    clients.push(client);
    const outcome = await run(client, { query: CHAIN_BLOCK, variables: { chainId: "43114", blockId: "22" } });
    expect(outcome.results[0]!.errors).toBeUndefined();
    expect(new Set(served.harness.simulator.requests().map((request) => request.apiKey))).toEqual(new Set(["header-key"]));
  });

  it("delivers the export job's events over the socket until it completes", async () => {
    const served = await serve({ EXPORT_POLL_INTERVAL_MS: "20" });
    served.harness.simulator.setKnobs({ exportJobMs: 400 });
    const id = await startExportJob(served.harness);
    const outcome = await run(connect(served), { query: WATCH, variables: { id } });
    expect(outcome.errors).toBeUndefined();
    const statuses = outcome.results.map(
      (result) => (result.data as { exportOperation: { operationStatus: string } }).exportOperation.operationStatus,
    );
    expect(statuses[0]).toBe("RUNNING");
    expect(statuses.at(-1)).toBe("COMPLETED");
    expect(statuses.filter((status) => status !== "RUNNING")).toEqual(["COMPLETED"]);
  });

  it("rate-limits queries over the socket as over HTTP", async () => {
    const served = await serve({ RATE_LIMIT_BURST: "5", RATE_LIMIT_RATE: "0.001" });
    const client = connect(served, undefined, 60_000);
    // Opening the socket paid 1 of the 5; the first query pays for its new document too.
    // Each answer says what the caller has left, as RateLimit-Remaining says it over HTTP.
    for (let i = 0; i < 4 - NEW_DOCUMENT_COST; i += 1)
      expect(await run(client, { query: "{ __typename }" })).toEqual({
        results: [
          { data: { __typename: "Query" }, extensions: { rateLimit: { limit: 5, remaining: 3 - NEW_DOCUMENT_COST - i } } },
        ],
      });
    const refused = await run(client, { query: "{ __typename }" });
    expect(refused.errors).toHaveLength(1);
    expect(refused.errors![0]!.extensions).toMatchObject({ code: "RATE_LIMITED", retryAfterSeconds: expect.any(Number) });
    expect(refused.errors![0]!.extensions).not.toHaveProperty("http");
    // The same caller over HTTP, from the same address: its budget is spent there too.
    const overHttp = await fetch(`http://127.0.0.1:${served.port}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "{ __typename }" }),
    });
    expect(overHttp.status).toBe(429);
  });

  it("caps a caller's subscriptions over SSE and WebSocket together, and the operations of one socket", async () => {
    const served = await serve({
      EXPORT_POLL_INTERVAL_MS: "600000",
      MAX_SUBSCRIPTIONS_PER_CALLER: "10",
      WS_MAX_OPERATIONS_PER_SOCKET: "3",
    });
    served.harness.simulator.setKnobs({ exportJobMs: 600_000 });
    const id = await startExportJob(served.harness);
    const payload = { query: WATCH, variables: { id } };

    // 4 over SSE, from the same address.
    const sse = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const response = await fetch(`http://127.0.0.1:${served.port}/graphql`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "text/event-stream" },
          body: JSON.stringify(payload),
        });
        const reader = response.body!.getReader();
        let received = "";
        while (!received.includes("RUNNING")) received += new TextDecoder().decode((await reader.read()).value);
        return reader;
      }),
    );

    // 6 over two sockets, 3 each: their first event says they are open.
    const sockets = [connect(served), connect(served)];
    const open = sockets.flatMap((client) =>
      Array.from({ length: 3 }, () => {
        let first: ExecutionResult | undefined;
        const dispose = client.subscribe(payload, { next: (result) => (first ??= result), error: () => {}, complete: () => {} });
        return { dispose, first: () => first };
      }),
    );
    await until(
      () => open.every((subscription) => subscription.first() !== undefined),
      "6 subscriptions over WebSocket to start",
    );
    expect(open.every((subscription) => subscription.first()!.errors === undefined)).toBe(true);

    // A 4th on a full socket.
    const overSocket = await run(sockets[0]!, payload);
    expect(overSocket.errors![0]!.extensions).toMatchObject({ code: "RATE_LIMITED", limit: "operationsPerSocket", max: 3 });

    // The 11th of the caller, on a socket of its own: refused before it produced anything, an `error` message.
    const third = connect(served);
    const eleventh = await run(third, payload);
    expect(eleventh.results).toHaveLength(0);
    expect(eleventh.errors![0]!).toMatchObject({
      message: expect.stringContaining("MAX_SUBSCRIPTIONS_PER_CALLER"),
      extensions: { code: "RATE_LIMITED", limit: "subscriptions", max: 10 },
    });

    // A slot freed over SSE is taken over WebSocket.
    await sse[0]!.cancel();
    await until(async () => {
      let first: ExecutionResult | undefined;
      let refused = false;
      const dispose = third.subscribe(payload, {
        next: (result) => (first ??= result),
        error: () => (refused = true),
        complete: () => {},
      });
      await until(() => first !== undefined || refused, "an answer");
      if (!refused) return true;
      dispose();
      return false;
    }, "a freed slot to be taken over WebSocket");
    for (const reader of sse.slice(1)) await reader.cancel();
  });

  it("closes a socket that sends a message over WS_MAX_MESSAGE_BYTES with 1009", async () => {
    const served = await serve({ WS_MAX_MESSAGE_BYTES: "10000" });
    const { socket, closed } = await rawSocket(served);
    socket.send(JSON.stringify({ id: "1", type: "subscribe", payload: { query: `{ __typename ${" ".repeat(20_000)}}` } }));
    expect(await closed).toBe(1009);
    // A message within the bound is answered.
    const { socket: small } = await rawSocket(served);
    const answer = new Promise<string>((resolve) => small.once("message", (data) => resolve(String(data))));
    small.send(JSON.stringify({ id: "1", type: "subscribe", payload: { query: "{ __typename }" } }));
    expect(JSON.parse(await answer)).toMatchObject({ id: "1", type: "next", payload: { data: { __typename: "Query" } } });
    small.close();
  });

  it("refuses upgrades on other paths, and connections over MAX_CONNECTIONS_PER_ADDRESS", async () => {
    const served = await serve({ MAX_CONNECTIONS_PER_ADDRESS: "2" });
    const status = await new Promise<number>((resolve) => {
      const socket = new WebSocket(`ws://127.0.0.1:${served.port}/other`, "graphql-transport-ws");
      socket.once("unexpected-response", (_request, response) => resolve(response.statusCode ?? 0));
      socket.once("error", () => {});
    });
    expect(status).toBe(404);

    const kept = [await rawSocket(served), await rawSocket(served)];
    const third = new WebSocket(`ws://127.0.0.1:${served.port}/graphql`, "graphql-transport-ws");
    const outcome = await new Promise<string>((resolve) => {
      third.once("open", () => resolve("open"));
      third.once("error", () => resolve("refused"));
    });
    expect(outcome).toBe("refused");
    for (const { socket } of kept) socket.close();
  });

  it("on shutdown, completes the socket's streams and closes it with 1001", async () => {
    const served = await serve({ EXPORT_POLL_INTERVAL_MS: "600000" });
    served.harness.simulator.setKnobs({ exportJobMs: 600_000 });
    const id = await startExportJob(served.harness);
    const { socket, closed } = await rawSocket(served);
    const messages: { type: string; id?: string }[] = [];
    socket.on("message", (data) => messages.push(JSON.parse(String(data)) as { type: string }));
    socket.send(JSON.stringify({ id: "w", type: "subscribe", payload: { query: WATCH, variables: { id } } }));
    await until(() => messages.some((message) => message.type === "next"), "the first event");
    running.splice(running.indexOf(served), 1);
    const { forced } = await served.server.drain({ graceMs: 5_000, onClosing: () => served.harness.gateway.endStreams() });
    expect(forced).toBe(false);
    expect(await closed).toBe(1001);
    expect(messages.at(-1)).toEqual({ id: "w", type: "complete" });
    await served.harness.close();
  });
});
