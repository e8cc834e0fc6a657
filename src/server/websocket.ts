/**
 * GraphQL over WebSocket (the graphql-ws protocol, `graphql-transport-ws`) on the HTTP server's
 * port and GraphQL path, beside SSE. A WebSocket has no door of its own past admission: each
 * `subscribe` becomes a Request (a JSON POST to the GraphQL path, with the upgrade's caller
 * headers and the key of the connection params) that runs through Yoga's whole pipeline, as one
 * sent over HTTP: budgets, refused keys, persisted-only mode, the introspection rule, suggestion
 * masking, the error normaliser, operation limits, the response cache, the log, the metrics.
 * A single result is the JSON body HTTP would answer; a stream is taken from the pipeline
 * (src/plugins/socket-streams.ts). An operation refused before it produced data is an `error`
 * message with its coded errors; otherwise `next` messages, then `complete`.
 *
 * Around that, what a socket may hold: the upgrade is admitted first (origin, caps, budget:
 * src/server/websocket-admission.ts); frames are looked at before graphql-ws parses them
 * (src/server/websocket-frames.ts); a socket that runs no operation for WS_IDLE_TIMEOUT_MS is
 * closed, and so is one whose client leaves more than WS_MAX_UNREAD_BYTES of results unread.
 *
 * The glue between `ws` and graphql-ws is graphql-ws's own `useServer` adapted: its errors go to
 * the gateway's log instead of the console, and a shutdown can close every socket within its
 * grace period.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { GraphQLError, type GraphQLFormattedError } from "graphql";
import { CloseCode, handleProtocols, makeServer } from "graphql-ws";
import { WebSocketServer, type WebSocket } from "ws";
import type { GatewayConfig } from "../config.ts";
import type { BucketRef } from "../limits/token-buckets.ts";
import type { Gateway } from "../gateway.ts";
import { API_KEY_HEADER } from "../upstream/call-options.ts";
import type { Logger } from "../telemetry/logger.ts";
import { CHARACTERS_PER_TOKEN } from "../limits/request-costs.ts";
import { deepFrame, documentWithoutQuery, initFrame, spentCallerFrame, type FrameVerdict } from "./websocket-frames.ts";
import { UpgradeAdmission, type SocketCaller } from "./websocket-admission.ts";
import { SocketOperations } from "./websocket-operations.ts";
import { refusalAnswer } from "./refusal-answer.ts";

/** What the HTTP server hands an upgrade request to (src/server/http-server.ts). */
export interface UpgradeHandler {
  /** The one path upgrades are taken on; others are refused. */
  path: string;
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** For a socket upgraded here: whether it runs an operation now; undefined for any other socket. */
  busy(socket: Duplex): boolean | undefined;
  /** Closes every socket (1001, "Going away"), each after its streams completed; those still open after `graceMs` are cut. */
  close(graceMs: number): Promise<void>;
}

/** How often a socket is pinged; one that does not answer within as long is cut. */
const KEEP_ALIVE_MS = 12_000;
/** How long a client has to answer a close frame before its socket is cut. */
const CLOSE_ANSWER_MS = 1_000;
/** How often the unread bytes of all sockets are summed up. */
const UNREAD_SWEEP_MS = 1_000;
/** The unread bytes all sockets together may hold, in sockets' worth of WS_MAX_UNREAD_BYTES. */
const UNREAD_SOCKETS_IN_ALL = 32;
interface SocketState {
  caller: SocketCaller;
  upgrade: IncomingMessage;
  /** The key of the connection params, else of the upgrade's header. */
  apiKey: string | undefined;
  buckets: readonly BucketRef[];
  initReceived: boolean;
  refusedInARow: number;
  /** `subscribe` frames handed to graphql-ws whose operation has not been charged yet. */
  admitting: number;
  /** What the caller's budget held when its last operation (or the upgrade) was charged. */
  remaining: number | undefined;
  /** Operations running on the socket now (graphql-ws's own count, once the socket is acknowledged). */
  running: () => number;
  idle: NodeJS.Timeout | undefined;
}

interface SocketExtra {
  socket: WebSocket;
  state: SocketState;
}

export function createWebSocketTransport(
  gateway: Gateway,
  config: GatewayConfig,
  logger: Logger,
  path = "/graphql",
): UpgradeHandler {
  const {
    webSocketMaxMessageBytes: maxPayload,
    webSocketMaxOperations: maxOperations,
    webSocketIdleTimeoutMs: idleTimeoutMs,
    webSocketMaxUnreadBytes: maxUnread,
  } = config.server;
  const maxNesting = config.security.maxNestingDepth;
  const { budget } = gateway.sockets;
  const admission = new UpgradeAdmission(config, budget);
  const sockets = new WebSocketServer({ noServer: true, maxPayload, handleProtocols });
  const states = new Map<WebSocket, SocketState>();
  const upgraded = new WeakMap<Duplex, WebSocket>();
  const operations = new SocketOperations(gateway, path);

  function closeSocket(socket: WebSocket, code: number, reason: string): void {
    if (socket.readyState !== socket.OPEN) return;
    socket.close(code, reason);
    // Nothing it sends after is read: a client that floods on does not make the gateway decode
    // frames it will drop (nor its close frame: the socket ends at CLOSE_ANSWER_MS).
    socket.pause();
    setTimeout(() => socket.terminate(), CLOSE_ANSWER_MS).unref();
  }

  /** Closes the socket once it has run no operation for WS_IDLE_TIMEOUT_MS: counted again from each operation's start and end. */
  function restartIdle(socket: WebSocket, state: SocketState): void {
    clearTimeout(state.idle);
    state.idle = setTimeout(() => {
      if (state.running() > 0) restartIdle(socket, state);
      else closeSocket(socket, 1000, `Idle: no operation for ${idleTimeoutMs} ms`);
    }, idleTimeoutMs);
    state.idle.unref();
  }

  const server = makeServer<Record<string, unknown> | undefined, SocketExtra>({
    execute: operations.result,
    subscribe: operations.result,
    onConnect(ctx) {
      ctx.extra.state.running = () => Object.keys(ctx.subscriptions).length;
      return true;
    },
    async onSubscribe(ctx, _id, payload) {
      const { state } = ctx.extra;
      // Counted before the first await: graphql-ws calls this as it reads the frame, before the next frame is gated.
      state.admitting += 1;
      try {
        restartIdle(ctx.extra.socket, state);
        // The operation being subscribed is among them already.
        if (Object.keys(ctx.subscriptions).length > maxOperations) {
          // Refused, but read: it pays 1 as any request does, so that a flood of them runs its caller dry.
          if (budget) state.remaining = (await budget.take(state.buckets, 1)).remaining;
          return [
            new GraphQLError(
              `Too many operations on this socket: ${maxOperations} run at once, the most WS_MAX_OPERATIONS_PER_SOCKET allows; complete one first`,
              { extensions: { code: "RATE_LIMITED", limit: "operationsPerSocket", max: maxOperations } },
            ),
          ];
        }
        const caller = {
          upgrade: state.upgrade,
          apiKey: state.apiKey,
          remoteAddress: state.caller.remoteAddress,
          charged: (remaining: number) => {
            state.remaining = remaining;
          },
        };
        return await operations.run(caller, payload);
      } finally {
        state.admitting -= 1;
      }
    },
    onNext: (_ctx, _id, _payload, _args, result) => operations.next(result),
    onError: (ctx, _id, _payload, errors) => {
      operationEnded(ctx.extra);
      return operations.errors(errors);
    },
    onComplete: (ctx) => operationEnded(ctx.extra),
  });

  function operationEnded({ socket, state }: SocketExtra): void {
    restartIdle(socket, state);
  }

  /** The caller's frame, as graphql-ws will see it; or why it goes no further. */
  function gate(state: SocketState, data: string): FrameVerdict {
    if (!state.initReceived) {
      state.initReceived = true;
      const { verdict, apiKey } = initFrame(data);
      if (apiKey !== undefined && budget) {
        state.apiKey = apiKey;
        state.buckets = budget.bucketsOf(state.upgrade, apiKey, state.caller.remoteAddress);
      } else if (apiKey !== undefined) {
        state.apiKey = apiKey;
      }
      return verdict;
    }
    const waitSeconds = budget ? budget.secondsUntilServed(state.buckets) : 0;
    if (waitSeconds > 0) {
      const verdict = spentCallerFrame(data, waitSeconds, state.refusedInARow);
      if (verdict.kind === "refuse") state.refusedInARow += 1;
      return verdict;
    }
    // The frames of one read reach here together, before the first of them is charged: a caller
    // has no more operations in admission than its budget held when it was last charged, so that
    // a flood is refused here, unread, and not in the pipeline one by one.
    if (budget && state.admitting >= Math.max(1, Math.floor(state.remaining ?? Infinity)) && data.includes('"subscribe"')) {
      const verdict = spentCallerFrame(data, 1, state.refusedInARow);
      if (verdict.kind === "refuse") state.refusedInARow += 1;
      return verdict;
    }
    state.refusedInARow = 0;
    return deepFrame(data, maxNesting) ?? { kind: "pass", data: documentWithoutQuery(data) };
  }

  /** Answers a `subscribe` refused before it was parsed; counted and, like HTTP's unread refusals, logged summed up. */
  function refuseFrame(
    socket: WebSocket,
    state: SocketState,
    verdict: FrameVerdict & { kind: "refuse" },
    characters: number,
  ): void {
    const { id } = verdict;
    let error: GraphQLFormattedError;
    if (verdict.why === "spent") {
      const waitSeconds = Math.max(1, budget?.secondsUntilServed(state.buckets) ?? 0);
      gateway.metrics.refusal("rate_limited");
      logger.warn("websocket frames refused unread: their callers are over their rate limit");
      error = {
        message: `Rate limit exceeded: your budget is spent; retry after ${waitSeconds} s`,
        extensions: { code: "RATE_LIMITED", retryAfter: waitSeconds, retryAfterSeconds: waitSeconds },
      };
    } else {
      // It was read and measured: it pays 1, as every request does, and its characters, as an HTTP body so nested does.
      if (budget) void budget.take(state.buckets, 1 + Math.floor(characters / CHARACTERS_PER_TOKEN), true);
      gateway.metrics.refusal("nesting_too_deep");
      error = {
        message: `The ${verdict.part} nest deeper than the limit of ${maxNesting}`,
        extensions: { code: "BAD_REQUEST", argument: verdict.part, limit: "nesting", max: maxNesting },
      };
      logger.info({ transport: "websocket", status: 400, reason: "nesting_too_deep", code: "BAD_REQUEST" }, "request refused");
    }
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify({ id, type: "error", payload: [error] }));
  }

  sockets.on("connection", (socket: WebSocket, upgrade: IncomingMessage, caller: SocketCaller) => {
    const headerKey = upgrade.headers[API_KEY_HEADER];
    const state: SocketState = {
      caller,
      upgrade,
      apiKey: typeof headerKey === "string" && headerKey.trim() ? headerKey.trim() : undefined,
      buckets: caller.buckets,
      initReceived: false,
      refusedInARow: 0,
      admitting: 0,
      remaining: caller.remaining,
      running: () => 0,
      idle: undefined,
    };
    states.set(socket, state);
    restartIdle(socket, state);
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
          new Promise<void>((resolve) => {
            if (socket.readyState !== socket.OPEN) return resolve();
            // A send that fails means the socket is going: its close cleans up.
            socket.send(data, () => resolve());
            if (socket.bufferedAmount > maxUnread) {
              closeSocket(socket, 1013, `SLOW_SUBSCRIBER: over ${maxUnread} bytes of results unread`);
            }
          }),
        close: (code, reason) => closeSocket(socket, code ?? 1000, reason ?? ""),
        onMessage: (handle) =>
          socket.on("message", async (data: Buffer) => {
            const verdict = gate(state, data.toString("utf8"));
            if (verdict.kind === "close") return closeSocket(socket, verdict.code, verdict.reason);
            if (verdict.kind === "refuse") return refuseFrame(socket, state, verdict, data.length);
            try {
              await handle(verdict.data);
            } catch (error) {
              logger.error({ err: error }, "unexpected error handling a websocket message");
              closeSocket(socket, CloseCode.InternalServerError, "Internal server error");
            }
          }),
      },
      { socket, state },
    );
    socket.once("close", (code, reason) => {
      clearTimeout(pongWait);
      clearInterval(pings);
      clearTimeout(state.idle);
      states.delete(socket);
      caller.release();
      void closed(code, reason.toString());
    });
  });

  // Unread results of all sockets together stay bounded: the sockets holding most are closed first.
  const sweep = setInterval(() => {
    let unread = 0;
    for (const socket of states.keys()) unread += socket.bufferedAmount;
    if (unread <= maxUnread * UNREAD_SOCKETS_IN_ALL) return;
    const heaviest = [...states.keys()].sort((a, b) => b.bufferedAmount - a.bufferedAmount);
    for (const socket of heaviest) {
      if (unread <= maxUnread * UNREAD_SOCKETS_IN_ALL) break;
      unread -= socket.bufferedAmount;
      closeSocket(socket, 1013, "SLOW_SUBSCRIBER: the gateway holds too many unread results");
      socket.terminate();
    }
  }, UNREAD_SWEEP_MS).unref();

  return {
    path,
    handleUpgrade(request, socket, head) {
      void admission.admit(request).then(
        (admitted) => {
          if ("status" in admitted) {
            gateway.metrics.refusal(admitted.kind === "origin" ? "forbidden" : "rate_limited");
            const answer = () =>
              socket.end(refusalAnswer(admitted.status, admitted.reason, admitted.code, admitted.message, admitted.extensions));
            // A caller that reconnects as soon as it is refused does so once per hold, which grows
            // while it keeps reconnecting to its own socket cap; an origin refusal is a page's
            // mistake, answered at once.
            const holds = gateway.sockets.refusalHolds;
            if (admitted.kind === "origin") answer();
            else if (admitted.address !== undefined) holds.holdRepeated(admitted.address, socket, answer);
            else holds.hold(socket, refusalHoldBound(admitted.extensions), answer);
            return;
          }
          if (socket.destroyed) return admitted.release();
          sockets.handleUpgrade(request, socket, head, (webSocket) => {
            upgraded.set(socket, webSocket);
            sockets.emit("connection", webSocket, request, admitted);
          });
        },
        (error: unknown) => {
          logger.error({ err: error }, "unexpected error admitting a websocket");
          socket.destroy();
        },
      );
    },
    busy(socket) {
      const webSocket = upgraded.get(socket);
      if (!webSocket) return undefined;
      return (states.get(webSocket)?.running() ?? 0) > 0;
    },
    async close(graceMs) {
      clearInterval(sweep);
      // The streams were ended: each socket closes once it has sent their `complete` and answered
      // its queries in flight; those still busy at the grace period are closed all the same.
      const deadline = Date.now() + graceMs;
      while (Date.now() < deadline && [...states.values()].some((state) => state.running() > 0)) {
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

/** How long an upgrade's refusal may be held: until its budget refills, or a full hold for a cap. */
function refusalHoldBound(extensions: Record<string, unknown> | undefined): number {
  const seconds = extensions?.retryAfter;
  return typeof seconds === "number" ? seconds * 1_000 : Number.POSITIVE_INFINITY;
}
