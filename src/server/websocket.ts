/**
 * GraphQL over WebSocket (the graphql-ws protocol, `graphql-transport-ws`) on the HTTP server's
 * port and GraphQL path, beside SSE: each operation runs through Yoga's envelop, as graphql-yoga
 * documents it, so that it meets the same limits, masking, rate limits and subscription caps as
 * one sent over HTTP. The caller is who it would be over HTTP: its API key from the connection
 * params (`x-glacier-api-key` or `apiKey`), else the upgrade request's header; its address the
 * socket's, or behind a trusted proxy the upgrade request's last X-Forwarded-For hop. Every
 * operation pays as an HTTP request does (1, and the reading of a new document) before it is
 * parsed, then its estimate like any operation.
 *
 * The glue between `ws` and graphql-ws is graphql-ws's own `useServer` adapted: its errors go to
 * the gateway's log instead of the console (an oversized message is a client's doing, not an
 * internal error), and a shutdown can close every socket within its grace period.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { GraphQLError, type ExecutionArgs, type ExecutionResult, type GraphQLFormattedError } from "graphql";
import {
  CloseCode,
  handleProtocols,
  makeServer,
  type ConnectionInitMessage,
  type OperationResult,
  type SubscribePayload,
} from "graphql-ws";
import { WebSocketServer, type WebSocket } from "ws";
import type { GatewayConfig } from "../config.ts";
import { documentShapeOf } from "../limits/document-shape.ts";
import { GatewayError } from "../execution/errors.ts";
import { truncated, type Logger } from "../telemetry/logger.ts";
import { refusal, valueNestsDeeperThan } from "../plugins/refusals.ts";
import { API_KEY_HEADER } from "../upstream/http.ts";
import type { Gateway } from "../gateway.ts";

/** What the HTTP server hands an upgrade request to (src/server/http-server.ts). */
export interface UpgradeHandler {
  /** The one path upgrades are taken on; others are refused. */
  path: string;
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Closes every socket (1001, "Going away"), each after its streams completed; those still open after `graceMs` are cut. */
  close(graceMs: number): Promise<void>;
}

/** How often an idle socket is pinged; one that does not answer within as long is cut. */
const KEEP_ALIVE_MS = 12_000;

/** How long a client has to answer the close frame at shutdown before its socket is cut. */
const CLOSE_ANSWER_MS = 1_000;

/** Headers of the upgrade request an operation's Request carries: who the caller is, and its request id. */
const CARRIED_HEADERS = [API_KEY_HEADER, "x-forwarded-for", "x-request-id", "user-agent"] as const;

interface SocketExtra {
  socket: WebSocket;
  request: IncomingMessage;
  /** The API key from the connection params, when it sent one there. */
  apiKey?: string;
}

type ConnectionParams = ConnectionInitMessage["payload"];

/** The key a client passes in its connection params: `x-glacier-api-key`, else `apiKey`. */
export function apiKeyOfParams(params: ConnectionParams): string | undefined {
  if (!params) return undefined;
  for (const name of [API_KEY_HEADER, "apiKey"]) {
    const value = params[name];
    if (typeof value === "string" && value.trim()) return value.trim();
  }
  return undefined;
}

/** A Request for one operation, with the upgrade request's headers that tell who the caller is; the key of the connection params first. */
function operationRequest(upgrade: IncomingMessage, apiKey: string | undefined, path: string): Request {
  const headers = new Headers();
  for (const name of CARRIED_HEADERS) {
    const value = upgrade.headers[name];
    if (typeof value === "string") headers.set(name, value);
    else if (Array.isArray(value)) headers.set(name, value.join(","));
  }
  if (apiKey) headers.set(API_KEY_HEADER, apiKey);
  return new Request(`http://${upgrade.headers.host ?? "gateway"}${path}`, { method: "POST", headers });
}

/** Errors as the client reads them: the HTTP status and headers an error carries for Yoga say nothing on a socket. */
function formatted(errors: readonly (GraphQLError | GraphQLFormattedError)[]): GraphQLFormattedError[] {
  return errors.map((error) => {
    const json = error instanceof GraphQLError ? error.toJSON() : error;
    if (!json.extensions || !("http" in json.extensions)) return json;
    const { http: _http, ...extensions } = json.extensions;
    return { ...json, extensions };
  });
}

interface Enveloped {
  execute(args: ExecutionArgs): OperationResult;
  subscribe(args: ExecutionArgs): OperationResult;
}

export function createWebSocketTransport(
  gateway: Gateway,
  config: GatewayConfig,
  logger: Logger,
  path = "/graphql",
): UpgradeHandler {
  const { webSocketMaxMessageBytes: maxPayload, webSocketMaxOperations: maxOperations } = config.server;
  const maxNesting = config.security.maxNestingDepth;
  const sockets = new WebSocketServer({ noServer: true, maxPayload, handleProtocols });
  // Each open socket's operations, by graphql-ws: a shutdown waits for them to complete.
  const operations = new Map<WebSocket, () => number>();
  // Each admitted operation's log entry, by socket and operation id, until it ends.
  const started = new WeakMap<WebSocket, Map<string, { requestId: string; operation: string | null; at: number }>>();
  /** One line per operation, as the request log writes one per HTTP request. */
  const logEnd = (socket: WebSocket, id: string, outcome: "complete" | "error") => {
    const entry = started.get(socket)?.get(id);
    if (entry === undefined) return;
    started.get(socket)!.delete(id);
    logger.info(
      {
        requestId: entry.requestId,
        transport: "websocket",
        operation: entry.operation,
        outcome,
        ms: Math.round((performance.now() - entry.at) * 10) / 10,
      },
      "graphql operation",
    );
  };

  const server = makeServer<ConnectionParams, SocketExtra>({
    execute: (args) => (args.rootValue as Enveloped).execute(args),
    subscribe: (args) => (args.rootValue as Enveloped).subscribe(args),
    onConnect(ctx) {
      ctx.extra.apiKey = apiKeyOfParams(ctx.connectionParams);
      operations.set(ctx.extra.socket, () => Object.keys(ctx.subscriptions).length);
      return true;
    },
    async onSubscribe(ctx, id, payload: SubscribePayload) {
      const request = operationRequest(ctx.extra.request, ctx.extra.apiKey, path);
      const { requestId, refusal: refusedKey } = gateway.admitSocketOperation(request);
      const operation =
        typeof payload.operationName === "string" && payload.operationName ? truncated(payload.operationName, 128) : null;
      const entries = started.get(ctx.extra.socket) ?? new Map();
      started.set(ctx.extra.socket, entries);
      entries.set(id, { requestId, operation, at: performance.now() });
      // The operation being subscribed is among them already.
      if (Object.keys(ctx.subscriptions).length > maxOperations) {
        return [
          new GatewayError(
            `Too many operations on this socket: ${maxOperations} run at once, the most WS_MAX_OPERATIONS_PER_SOCKET allows; complete one first`,
            "RATE_LIMITED",
            { limit: "operationsPerSocket", max: maxOperations },
          ),
        ];
      }
      // As useRefusedKeys refuses them over HTTP: a key the upstream refused lately reaches no cache and no upstream.
      if (refusedKey) return [refusedKey];
      // As useRefusals refuses these over HTTP, before the parser (which recurses) sees them.
      if (documentShapeOf(request, payload.query).depth > maxNesting) {
        return [
          refusal(`The document nests brackets deeper than the limit of ${maxNesting}`, "GRAPHQL_PARSE_FAILED", 400, {
            limit: "nesting",
            max: maxNesting,
          }),
        ];
      }
      for (const [name, value] of [
        ["variables", payload.variables],
        ["extensions", payload.extensions],
      ] as const) {
        if (valueNestsDeeperThan(value, maxNesting)) {
          return [
            refusal(`The ${name} nest deeper than the limit of ${maxNesting}`, "BAD_REQUEST", 400, {
              argument: name,
              limit: "nesting",
              max: maxNesting,
            }),
          ];
        }
      }
      const refused = await gateway.payForSocketOperation(request, ctx.extra.request, payload);
      if (refused) return (refused.errors ?? []) as GraphQLError[];
      const { schema, execute, subscribe, contextFactory, parse, validate } = gateway.yoga.getEnveloped({
        request,
        req: ctx.extra.request,
        socket: ctx.extra.socket,
        params: payload,
      } as unknown as Parameters<typeof gateway.yoga.getEnveloped>[0]);
      let document;
      try {
        document = parse(payload.query);
      } catch (error) {
        if (error instanceof GraphQLError) return [error];
        throw error;
      }
      const errors = validate(schema, document);
      if (errors.length > 0) return errors;
      const args: ExecutionArgs = {
        schema,
        document,
        operationName: payload.operationName,
        variableValues: payload.variables,
        contextValue: await contextFactory(),
        rootValue: { execute, subscribe } satisfies Enveloped,
      };
      return args;
    },
    onNext: (_ctx, _id, _payload, _args, result: ExecutionResult) =>
      result.errors ? { ...result, errors: formatted(result.errors) } : undefined,
    onError: (ctx, id, _payload, errors) => {
      logEnd(ctx.extra.socket, id, "error");
      return formatted(errors);
    },
    onComplete: (ctx, id) => logEnd(ctx.extra.socket, id, "complete"),
  });

  sockets.on("connection", (socket: WebSocket, request: IncomingMessage) => {
    // ws closes the socket itself on a protocol error (1002) or an oversized message (1009).
    socket.on("error", (error: Error & { code?: string }) =>
      logger.debug({ code: error.code, message: error.message }, "websocket closed on a client's error"),
    );
    let pongWait: NodeJS.Timeout | undefined;
    const pings = setInterval(() => {
      if (socket.readyState !== socket.OPEN) return;
      pongWait = setTimeout(() => socket.terminate(), KEEP_ALIVE_MS);
      socket.once("pong", () => clearTimeout(pongWait));
      socket.ping();
    }, KEEP_ALIVE_MS);
    const closed = server.opened(
      {
        protocol: socket.protocol,
        send: (data) =>
          new Promise<void>((resolve, reject) => {
            if (socket.readyState !== socket.OPEN) return resolve();
            socket.send(data, (error) => (error ? reject(error) : resolve()));
          }),
        close: (code, reason) => socket.close(code, reason),
        onMessage: (handle) =>
          socket.on("message", async (data) => {
            try {
              await handle(String(data));
            } catch (error) {
              logger.error({ err: error }, "unexpected error handling a websocket message");
              socket.close(CloseCode.InternalServerError, "Internal server error");
            }
          }),
      },
      { socket, request },
    );
    socket.once("close", (code, reason) => {
      clearTimeout(pongWait);
      clearInterval(pings);
      operations.delete(socket);
      void closed(code, reason.toString());
    });
  });

  return {
    path,
    handleUpgrade(request, socket, head) {
      sockets.handleUpgrade(request, socket, head, (webSocket) => sockets.emit("connection", webSocket, request));
    },
    async close(graceMs) {
      // The streams were ended: each socket closes once it has sent their `complete` and answered
      // its queries in flight; those still busy at the grace period are closed all the same.
      const deadline = Date.now() + graceMs;
      while (Date.now() < deadline && [...operations.values()].some((count) => count() > 0)) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      for (const client of sockets.clients) client.close(1001, "Going away");
      // A client that does not answer the close frame is cut.
      const cut = setTimeout(() => {
        for (const client of sockets.clients) client.terminate();
      }, CLOSE_ANSWER_MS);
      await new Promise<void>((resolve) => sockets.close(() => resolve()));
      // ws.close resolves at once in noServer mode: wait for the sockets themselves.
      await Promise.all(
        [...sockets.clients].map((client) => new Promise<void>((resolve) => client.once("close", () => resolve()))),
      );
      clearTimeout(cut);
    },
  };
}
