/**
 * One operation, sent over any of the gateway's transports, so that a rule is tested on each:
 * `http` (a JSON POST through `yoga.fetch`, as the other suites send it), `http-socket` (the same
 * POST over a real socket to the served gateway: the Node listener's admission before Yoga, its
 * response-cache lane and its operation lane, which executes a known query itself), `websocket`
 * (graphql-ws frames over a real socket) and `sse` (a POST asking for `text/event-stream` over a
 * real socket). What differs on the wire is said in the answer: HTTP
 * has a status and headers; a socket has the `error` message that refuses an operation, or `next`
 * messages, and its budget in `extensions.rateLimit`.
 *
 * A caller's headers (`x-forwarded-for` behind TRUST_PROXY, `x-glacier-api-key`) are sent as HTTP
 * headers, or as the upgrade request's headers and the connection params' key. Each distinct
 * caller gets one socket, kept open for its later operations (opening one costs its caller 1).
 *
 * A subscription is read event by event (`subscribe`) over SSE (a POST asking for
 * `text/event-stream` over a real socket) or WebSocket (graphql-ws frames on the caller's socket);
 * its events are told as SSE names them (`next`, `complete`), whatever the transport.
 */
import type { FormattedExecutionResult, GraphQLFormattedError } from "graphql";
import { afterEach, beforeEach } from "vitest";
import WebSocket from "ws";
import { serveGateway, type Harness, type ServedGateway } from "./harness.ts";
import { subscribeSseBody, type SseEvent } from "./subscriptions.ts";

export type Transport = "http" | "http-socket" | "websocket" | "sse";
/** The transports every rule of the public-traffic work is held to. */
export const TRANSPORTS: readonly Transport[] = ["http", "http-socket", "websocket", "sse"];

export interface Operation {
  query?: string;
  variables?: Record<string, unknown>;
  operationName?: string;
  extensions?: Record<string, unknown>;
  documentId?: string;
}

export interface Answer {
  transport: Transport;
  /** HTTP and SSE: the status. A socket has none; a refused upgrade has its HTTP status. */
  status: number | undefined;
  headers: Headers | undefined;
  /** The single result, or the first event's; a refusal has `errors` and no `data`. */
  body: FormattedExecutionResult & { errors?: GraphQLFormattedError[] };
  /** The body as HTTP answers it: without a socket's `extensions.rateLimit` (which is `remaining`). */
  result: FormattedExecutionResult & { errors?: GraphQLFormattedError[] };
  /** Every result the operation produced until it completed (a subscription's events, incremental parts). */
  results: FormattedExecutionResult[];
  /** Refused before it produced data: a status ≥ 400, or a socket's `error` message. */
  refused: boolean;
  /** The caller's budget after it: the RateLimit-Remaining header, or the socket's `extensions.rateLimit`. */
  remaining: number | undefined;
}

/** A subscription refused before it started: SSE's JSON answer with its status, a socket's `error` message (or refused upgrade). */
export interface Refusal {
  status: number | undefined;
  errors: GraphQLFormattedError[];
}

/** A subscription's stream, read event by event. */
export interface Stream {
  /** Its refusal, or undefined once its first event came (over a socket, it waits for the first message). */
  refusal(): Promise<Refusal | undefined>;
  /** The next event, `next` (its payload as JSON) or `complete`; undefined once it ended (or was refused). */
  next(): Promise<SseEvent | undefined>;
  /** Every event until the stream ends. */
  rest(): Promise<SseEvent[]>;
  cancel(): Promise<void>;
}

export interface TransportClient {
  readonly transport: Transport;
  /** `operation` as an object, or as the JSON text of one, sent as it is (what JSON.stringify could not write: 5,000 levels deep). */
  send(operation: Operation | string, headers?: Record<string, string>): Promise<Answer>;
  /** A subscription, over SSE or WebSocket (a plain POST has no stream); by its text, or a persisted document's id. */
  subscribe(operation: Operation, headers?: Record<string, string>): Promise<Stream>;
  close(): Promise<void>;
}

const KEY_HEADER = "x-glacier-api-key";

/**
 * A client of `harness`'s gateway over `transport`; sockets and the served port are its own, closed
 * with it. `serveOn` serves the gateway for WebSocket and SSE (default: on 127.0.0.1).
 */
export function over(
  transport: Transport,
  harness: Harness,
  serveOn: (harness: Harness) => Promise<ServedGateway> = serve,
): TransportClient {
  let served: Promise<ServedGateway> | undefined;
  const port = async () => (await (served ??= serveOn(harness))).port;
  const sockets = new Map<string, Promise<GraphqlWsSocket>>();
  let ids = 0;
  /** The caller's open socket, or the answer that refused its upgrade. */
  async function socketOf(headers: Record<string, string>): Promise<GraphqlWsSocket | Answer> {
    const caller = JSON.stringify(Object.entries(headers).sort());
    let socket = sockets.get(caller);
    // Set before anything is awaited, so that operations sent side by side share the caller's one socket.
    if (!socket) sockets.set(caller, (socket = port().then((open) => GraphqlWsSocket.open(open, headers))));
    let open: GraphqlWsSocket;
    try {
      open = await socket;
    } catch (error) {
      // A refused upgrade is the caller's answer; its next operation tries to open a socket again.
      sockets.delete(caller);
      if (error instanceof UpgradeRefused) return error.answer;
      throw error;
    }
    if (!open.closed) return open;
    sockets.delete(caller);
    return socketOf(headers);
  }
  return {
    transport,
    async send(operation, headers = {}) {
      if (transport === "http") return sendHttp(harness, operation, headers);
      if (transport === "http-socket") return sendHttp(harness, operation, headers, await port());
      if (transport === "sse") return sendSse(await port(), operation, headers);
      const open = await socketOf(headers);
      return open instanceof GraphqlWsSocket ? open.run(String((ids += 1)), operation) : open;
    },
    async subscribe(operation, headers = {}) {
      if (transport === "http" || transport === "http-socket")
        throw new Error("a subscription streams over SSE or WebSocket, not over a plain POST");
      if (transport === "sse") {
        // subscribeSse's POST, sent to the served port instead of yoga.fetch.
        const url = `http://127.0.0.1:${await port()}/graphql`;
        const listener = { gateway: { yoga: { fetch: (_url: string, init: RequestInit) => fetch(url, init) } } };
        const stream = await subscribeSseBody(listener as unknown as Harness, { variables: {}, ...operation }, headers);
        return { ...stream, refusal: async () => stream.refusal };
      }
      const open = await socketOf(headers);
      if (open instanceof GraphqlWsSocket) return open.stream(String((ids += 1)), { variables: {}, ...operation });
      const refused = { status: open.status, errors: open.body.errors ?? [] };
      return { refusal: async () => refused, next: async () => undefined, rest: async () => [], cancel: async () => {} };
    },
    async close() {
      for (const socket of sockets.values()) (await socket.catch(() => undefined))?.close();
      sockets.clear();
      if (served) await (await served).close();
      served = undefined;
    },
  };
}

/**
 * A client over `transport` of the gateway `harness()` returns (read when each test starts), made
 * before each test of the block that calls this and closed after it, with its sockets and port.
 */
export function useClient(transport: Transport, harness: () => Harness): TransportClient {
  let current: TransportClient | undefined;
  beforeEach(() => {
    current = over(transport, harness());
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return {
    transport,
    send: (operation, headers) => current!.send(operation, headers),
    subscribe: (operation, headers) => current!.subscribe(operation, headers),
    close: async () => current?.close(),
  };
}

/**
 * The harness's gateway served on a port of its own. The listener registers its connection
 * metrics on the gateway's registry; they are taken off when it closes, so that the same harness
 * can be served again by the next test's client.
 */
async function serve(harness: Harness): Promise<ServedGateway> {
  const registry = harness.gateway.metrics.registry;
  const before = new Set(registry.getMetricsAsArray().map((metric) => metric.name));
  const served = await serveGateway(harness);
  const added = registry
    .getMetricsAsArray()
    .map((metric) => metric.name)
    .filter((name) => !before.has(name));
  return {
    ...served,
    async close() {
      const closed = await served.close();
      for (const name of added) registry.removeSingleMetric(name);
      return closed;
    },
  };
}

/** The body of a POST, or the payload of a `subscribe` frame. */
const jsonOf = (operation: Operation | string) => (typeof operation === "string" ? operation : JSON.stringify(operation));

/** A JSON POST through `yoga.fetch`, or to the served gateway on `port` over a real socket. */
async function sendHttp(
  harness: Harness,
  operation: Operation | string,
  headers: Record<string, string>,
  port?: number,
): Promise<Answer> {
  const init = {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/graphql-response+json", ...headers },
    body: jsonOf(operation),
  };
  const response = await (port === undefined
    ? harness.gateway.yoga.fetch("http://gateway.test/graphql", init)
    : fetch(`http://127.0.0.1:${port}/graphql`, init));
  const body = (await response.json()) as Answer["body"];
  return {
    transport: port === undefined ? "http" : "http-socket",
    status: response.status,
    headers: response.headers,
    body,
    result: body,
    results: [body],
    refused: response.status >= 400 && body.data === undefined,
    remaining: remainingOf(response.headers),
  };
}

async function sendSse(port: number, operation: Operation | string, headers: Record<string, string>): Promise<Answer> {
  const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream", ...headers },
    body: jsonOf(operation),
  });
  const text = await response.text();
  const results = text
    .split("\n\n")
    .map((block) =>
      Object.fromEntries(
        block.split("\n").map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 1).trim()]),
      ),
    )
    .filter((fields) => fields.event === "next" && fields.data)
    .map((fields) => JSON.parse(fields.data!) as FormattedExecutionResult);
  const body = (results[0] ??
    (response.headers.get("content-type")?.includes("json") ? JSON.parse(text) : { errors: [] })) as Answer["body"];
  return {
    transport: "sse",
    status: response.status,
    headers: response.headers,
    body,
    result: body,
    results,
    refused: response.status >= 400 || body.data === undefined,
    remaining: remainingOf(response.headers),
  };
}

function remainingOf(headers: Headers): number | undefined {
  const remaining = headers.get("ratelimit-remaining");
  return remaining === null ? undefined : Number(remaining);
}

interface WsMessage {
  id?: string;
  type: string;
  payload?: unknown;
}

/** An upgrade the gateway answered with an HTTP refusal instead of a socket: the status and its JSON body. */
class UpgradeRefused extends Error {
  readonly answer: Answer;
  constructor(status: number, text: string) {
    super(`upgrade refused: HTTP ${status}`);
    let body: Answer["body"];
    try {
      body = JSON.parse(text) as Answer["body"];
    } catch {
      body = { errors: [{ message: text }] };
    }
    this.answer = {
      transport: "websocket",
      status,
      headers: undefined,
      body,
      result: body,
      results: [],
      refused: true,
      remaining: undefined,
    };
  }
}

/** One acknowledged graphql-transport-ws socket that runs operations one after another or side by side. */
export class GraphqlWsSocket {
  private readonly pending = new Map<string, (message: WsMessage) => void>();
  /** The close code, once closed. */
  closeCode: number | undefined;

  private constructor(readonly socket: WebSocket) {
    socket.on("message", (data) => {
      const message = JSON.parse(String(data)) as WsMessage;
      if (message.id !== undefined) this.pending.get(message.id)?.(message);
    });
    socket.once("close", (code) => {
      this.closeCode = code;
      for (const deliver of this.pending.values()) deliver({ type: "closed", payload: code });
    });
  }

  get closed(): boolean {
    return this.closeCode !== undefined;
  }

  /**
   * Opens a socket with the caller's headers on the upgrade and its key in the connection params,
   * from `localAddress` if given; resolves once acknowledged.
   */
  static open(port: number, headers: Record<string, string> = {}, localAddress?: string): Promise<GraphqlWsSocket> {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/graphql`, "graphql-transport-ws", { headers, localAddress });
    return new Promise((resolve, reject) => {
      socket.once("unexpected-response", (request, response) => {
        let text = "";
        response.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
        response.on("end", () => {
          reject(new UpgradeRefused(response.statusCode ?? 0, text));
          request.destroy();
        });
      });
      socket.once("error", reject);
      socket.once("open", () => {
        const key = headers[KEY_HEADER];
        socket.send(JSON.stringify({ type: "connection_init", payload: key ? { [KEY_HEADER]: key } : {} }));
      });
      socket.once("message", (data) => {
        const message = JSON.parse(String(data)) as WsMessage;
        if (message.type === "connection_ack") resolve(new GraphqlWsSocket(socket));
        else reject(new Error(`expected connection_ack, got ${String(data)}`));
      });
    });
  }

  /** Runs one operation to its end: its `next` payloads, or the errors of its `error` message. */
  run(id: string, operation: Operation | string): Promise<Answer> {
    const results: FormattedExecutionResult[] = [];
    return new Promise((resolve) => {
      const answer = (refusal?: GraphQLFormattedError[]): Answer => {
        this.pending.delete(id);
        const body = (refusal ? { errors: refusal } : (results[0] ?? { errors: [] })) as Answer["body"];
        const rateLimit = (results.at(-1)?.extensions as { rateLimit?: { remaining: number } } | undefined)?.rateLimit;
        const { rateLimit: _rateLimit, ...extensions } = body.extensions ?? {};
        const { extensions: _extensions, ...rest } = body;
        const result = Object.keys(extensions).length > 0 ? { ...rest, extensions } : rest;
        return {
          transport: "websocket",
          status: undefined,
          headers: undefined,
          body,
          result,
          results,
          refused: refusal !== undefined,
          remaining: rateLimit?.remaining,
        };
      };
      this.pending.set(id, (message) => {
        if (message.type === "next") results.push(message.payload as FormattedExecutionResult);
        else if (message.type === "error") resolve(answer(message.payload as GraphQLFormattedError[]));
        else if (message.type === "complete") resolve(answer());
        else if (message.type === "closed")
          resolve(
            answer([
              {
                message: `socket closed (${String(message.payload)})`,
                extensions: { code: "SOCKET_CLOSED", closeCode: message.payload },
              },
            ]),
          );
      });
      if (this.closed) return this.pending.get(id)!({ type: "closed", payload: this.closeCode });
      // As a client sends it: one that names a persisted document sends no query.
      const payload = typeof operation === "string" ? operation : JSON.stringify(operation);
      this.socket.send(`{"id":${JSON.stringify(id)},"type":"subscribe","payload":${payload}}`);
    });
  }

  /** Subscribes, and reads the operation's messages as a stream's events: `next` and `complete`; an `error` message is its refusal. */
  stream(id: string, operation: Operation): Stream {
    const messages: WsMessage[] = [];
    let wake = () => {};
    let read = 0;
    this.pending.set(id, (message) => {
      messages.push(message);
      wake();
    });
    const message = async (index: number): Promise<WsMessage> => {
      while (messages.length <= index) await new Promise<void>((resolve) => (wake = resolve));
      return messages[index]!;
    };
    const ended = () => read > 0 && messages[read - 1]!.type !== "next";
    const stream: Stream = {
      refusal: async () => {
        const first = await message(0);
        return first.type === "error" ? { status: undefined, errors: first.payload as GraphQLFormattedError[] } : undefined;
      },
      next: async () => {
        if (ended()) return undefined;
        const { type, payload } = await message(read++);
        if (type === "next") return { event: "next", data: JSON.stringify(payload) };
        this.pending.delete(id);
        return type === "complete" ? { event: "complete", data: "" } : undefined;
      },
      rest: async () => {
        const events: SseEvent[] = [];
        for (let event = await stream.next(); event; event = await stream.next()) events.push(event);
        return events;
      },
      cancel: async () => {
        if (!this.pending.delete(id) || this.closed) return;
        this.socket.send(JSON.stringify({ id, type: "complete" }));
      },
    };
    if (this.closed) messages.push({ type: "closed", payload: this.closeCode });
    else this.socket.send(JSON.stringify({ id, type: "subscribe", payload: operation }));
    return stream;
  }

  close(): void {
    this.socket.close();
  }
}
