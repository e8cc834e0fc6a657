/**
 * The gateway's HTTP server. A client gets a bounded time to send each request (headers, then the
 * whole body) and to stay idle between requests, and a bounded number of open connections, in
 * all and per address: slow senders and connection floods are dropped instead of held. On
 * shutdown it stops accepting, closes each connection as soon as it has nothing in flight, and
 * closes what is left at the grace period.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { Counter, Gauge, type Registry } from "prom-client";
import type { ServerConfig } from "../config.ts";
import { callerAddress } from "../limits/caller-address.ts";
import { ConnectionHoldings } from "./connection-holdings.ts";
import type { Logger } from "../telemetry/logger.ts";
import type { UpgradeHandler } from "./websocket.ts";
import { refusalAnswer } from "./refusal-answer.ts";

export type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

export interface DrainOptions {
  graceMs: number;
  /** Called once the server has stopped accepting: e.g. to end the open streams; WebSockets are closed once it settles. */
  onClosing?: () => void | Promise<void>;
}

export interface GatewayServer {
  server: Server;
  /**
   * Stops accepting connections and resolves once every connection has closed: each closes when
   * its answer is sent; those still open after `graceMs` are closed (`forced`).
   */
  drain(options: DrainOptions): Promise<{ forced: boolean }>;
}

/** Why a connection was closed before it could send a request, or a request before it was read. */
type Refusal =
  "max_connections" | "max_connections_per_address" | "request_timeout" | "headers_too_large" | "malformed" | "reclaimed";

/** How often refusals are summed up in one log line, so that a flood of them writes few lines. */
const REFUSAL_LOG_INTERVAL_MS = 10_000;
/** Timed-out connections answered and closed per turn of the event loop. */
const TIMEOUTS_PER_TURN = 16;

export function createGatewayServer(
  listener: RequestListener,
  config: ServerConfig,
  logger: Logger,
  registry?: Registry,
  upgrades?: UpgradeHandler,
): GatewayServer {
  const registers = registry ? [registry] : [];
  const refusals = new Counter({
    name: "gateway_connections_refused_total",
    help: "Connections closed by the server before their request was read: over a connection cap, too slow to send, or not HTTP; and idle or slow ones closed to make room for a new one when the process was full (reclaimed).",
    labelNames: ["reason"],
    registers,
  });
  new Gauge({
    name: "gateway_connections_open",
    help: "Client connections open.",
    registers,
    collect() {
      this.set(connections.size);
    },
  });

  // Counted at once, logged summed up.
  let unlogged: Partial<Record<Refusal, number>> = {};
  let logTimer: NodeJS.Timeout | undefined;
  function refuse(reason: Refusal): void {
    refusals.inc({ reason });
    unlogged[reason] = (unlogged[reason] ?? 0) + 1;
    logTimer ??= setTimeout(() => {
      logger.warn({ refused: unlogged }, "connections refused");
      unlogged = {};
      logTimer = undefined;
    }, REFUSAL_LOG_INTERVAL_MS).unref();
  }

  let stopping = false;
  // Each socket's current answer: a refusal is never written into the middle of one.
  const answering = new WeakMap<Duplex, ServerResponse>();
  // Answers still to be sent end their keep-alive connection once shutdown has begun: the
  // server closes when its last connection does, which an idle keep-alive client delays.
  const unanswered = new Set<ServerResponse>();

  const server = createServer(
    {
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      keepAliveTimeout: config.keepAliveTimeoutMs,
      // Node checks the two timeouts above only this often (30 s by default).
      connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(config.headersTimeoutMs / 2))),
    },
    (request, response) => {
      const { socket } = request;
      connections.served(socket);
      answering.set(socket, response);
      unanswered.add(response);
      response.once("close", () => {
        if (answering.get(socket) === response) answering.delete(socket);
        unanswered.delete(response);
        // Its connection is idle now, unless a request follows: close it rather than wait for the client.
        if (stopping) server.closeIdleConnections();
      });
      if (stopping) {
        response.setHeader("connection", "close");
        // A stream begun now would only hold the shutdown up until the grace period.
        if (/text\/event-stream|multipart\/mixed/i.test(request.headers.accept ?? "")) {
          response.writeHead(503, { "content-type": "application/json; charset=utf-8", "retry-after": "1" });
          response.end(
            JSON.stringify({
              errors: [{ message: "The gateway is shutting down: subscribe again", extensions: { code: "SHUTTING_DOWN" } }],
            }),
          );
          return;
        }
      }
      listener(request, response);
    },
  );
  // Every open connection by caller address: when the process is full, one that is not busy is
  // closed to make room (connection-holdings.ts says which), so that slow or idle clients cannot
  // hold every slot, nor an address that holds many take a legitimate caller's keep-alive connection.
  const connections = new ConnectionHoldings();
  const busy = (socket: Socket) => answering.has(socket) || upgrades?.busy(socket) === true;
  function makeRoom(address: string): boolean {
    const held = connections.victim(address, busy);
    if (held === undefined) return false;
    refuse("reclaimed");
    connections.delete(held);
    held.destroy();
    return true;
  }

  server.on("connection", (socket: Socket) => {
    const address = callerAddress(socket.remoteAddress ?? "");
    if (
      config.maxConnectionsPerAddress > 0 &&
      socket.remoteAddress !== undefined &&
      connections.count(address) >= config.maxConnectionsPerAddress
    ) {
      refuse("max_connections_per_address");
      socket.destroy();
      return;
    }
    if (connections.size >= config.maxConnections && !makeRoom(address)) {
      refuse("max_connections");
      socket.destroy();
      return;
    }
    connections.add(socket, address);
    socket.once("close", () => connections.delete(socket));
  });

  // WebSockets on the GraphQL path only. An upgraded connection stays counted against the
  // connection caps (it is the same socket) until it closes.
  server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => socket.destroy());
    connections.served(socket as Socket);
    const path = (request.url ?? "").split("?")[0];
    if (!upgrades || path !== upgrades.path) {
      socket.end(
        refusalAnswer(404, "Not Found", "NOT_FOUND", `WebSocket connections are taken on ${upgrades?.path ?? "no path"} only`),
      );
      return;
    }
    if (stopping) {
      socket.end(refusalAnswer(503, "Service Unavailable", "SHUTTING_DOWN", "The gateway is shutting down: connect again"));
      return;
    }
    upgrades.handleUpgrade(request, socket, head);
  });

  function answerAndClose(socket: Duplex, answer: string | undefined): void {
    if (answer !== undefined && socket.writable && !answering.get(socket)?.headersSent) socket.write(answer);
    socket.destroy();
  }

  // Node finds the connections that ran out of time once per check and reports them all at once,
  // so connections opened together (a flood of slow senders) time out together: answered in one
  // go, a thousand of them would hold the event loop for tens of milliseconds. They are answered a
  // few per turn instead, unread meanwhile, so that other callers' requests are read in between.
  const timedOut: Duplex[] = [];
  let answeringTimedOut = false;
  const timeoutAnswer = refusalAnswer(
    408,
    "Request Timeout",
    "REQUEST_TIMEOUT",
    `The request was not received in time: headers within ${config.headersTimeoutMs} ms, the whole request within ${config.requestTimeoutMs} ms`,
    { headersTimeoutMs: config.headersTimeoutMs, requestTimeoutMs: config.requestTimeoutMs },
  );
  function answerTimedOut(): void {
    for (const socket of timedOut.splice(0, TIMEOUTS_PER_TURN)) answerAndClose(socket, timeoutAnswer);
    if (timedOut.length > 0) setImmediate(answerTimedOut);
    else answeringTimedOut = false;
  }

  // Replaces Node's answers (text, or none) to requests it refuses before they reach the
  // listener with JSON ones that say which bound was passed.
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    let answer: string | undefined;
    switch (error.code) {
      case "ERR_HTTP_REQUEST_TIMEOUT":
        refuse("request_timeout");
        socket.pause();
        timedOut.push(socket);
        if (!answeringTimedOut) {
          answeringTimedOut = true;
          setImmediate(answerTimedOut);
        }
        return;
      case "HPE_HEADER_OVERFLOW":
        refuse("headers_too_large");
        answer = refusalAnswer(431, "Request Header Fields Too Large", "BAD_USER_INPUT", "The request's headers are too large", {
          limit: "headers",
        });
        break;
      case "ECONNRESET":
      case "EPIPE":
        // The client left: there is nobody to answer.
        break;
      default:
        refuse("malformed");
        answer = refusalAnswer(400, "Bad Request", "BAD_REQUEST", "The request is not valid HTTP/1.1");
    }
    answerAndClose(socket, answer);
  });

  async function drain({ graceMs, onClosing }: DrainOptions): Promise<{ forced: boolean }> {
    stopping = true;
    for (const response of unanswered) if (!response.headersSent) response.setHeader("connection", "close");
    // Closes the idle connections too.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    const closing = Promise.resolve(onClosing?.()).catch((error: unknown) =>
      logger.warn({ err: error }, "could not end the open streams"),
    );
    // After the streams completed, so that their sockets carry the `complete` first.
    const socketsClosed = upgrades ? closing.then(() => upgrades.close(graceMs)) : Promise.resolve();
    let forced = false;
    const timer = setTimeout(() => {
      forced = true;
      logger.warn("requests still in flight after the grace period: closing their connections");
      server.closeAllConnections();
    }, graceMs);
    await Promise.all([closed, socketsClosed]);
    clearTimeout(timer);
    if (logTimer) {
      clearTimeout(logTimer);
      if (Object.keys(unlogged).length > 0) logger.warn({ refused: unlogged }, "connections refused");
    }
    return { forced };
  }

  return { server, drain };
}
