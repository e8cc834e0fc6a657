/**
 * WebSocket (graphql-ws) and raw TCP clients of the attacks of `npm run bench:hostile`, each
 * bound to a loopback address of its own. They never throw: a refused upgrade, a reset, a close
 * frame, a gateway that is gone are each counted once, as the attacker saw them, and a socket
 * the attack closes itself is not counted as the gateway's doing.
 */
import { connect, type Socket } from "node:net";
import WebSocket from "ws";
import { failureOf, sleep, type Tally } from "./client.ts";
import type { AttackContext } from "./types.ts";

export const GRAPHQL_WS = "graphql-transport-ws";

export interface GraphQLWsMessage {
  type?: string;
  id?: string;
  payload?: unknown;
}

export const wsUrl = (context: AttackContext): string => `${context.origin.replace(/^http/, "ws")}${context.path}`;

export const subscribeFrame = (id: string, query: string, variables?: Record<string, unknown>): string =>
  JSON.stringify({ id, type: "subscribe", payload: variables ? { query, variables } : { query } });

type ErrorList = { extensions?: { code?: unknown } }[];

/** What a graphql-ws message was, for counting: its type, and the code of its first error (`data` for a `next` without). */
export function messageOutcome(message: GraphQLWsMessage): string {
  const codeOf = (errors: unknown) => {
    const code = Array.isArray(errors) ? (errors as ErrorList)[0]?.extensions?.code : undefined;
    return typeof code === "string" ? code : "no code";
  };
  if (message.type === "error") return `error ${codeOf(message.payload)}`;
  if (message.type === "next") {
    const errors = (message.payload as { errors?: unknown } | undefined)?.errors;
    return errors === undefined ? "next data" : `next ${codeOf(errors)}`;
  }
  return message.type ?? "no type";
}

/** How an upgrade failed: `upgrade refused: HTTP 429` when the gateway answered, else the socket's error code. */
function upgradeFailure(error: Error): string {
  const status = /Unexpected server response: (\d+)/.exec(error.message)?.[1];
  if (status) return `upgrade refused: HTTP ${status}`;
  // ws's own errors (a handshake that timed out) have no code: their message says what happened.
  return (error as { code?: unknown }).code === undefined ? `failed: ${error.message.slice(0, 60)}` : failureOf(error);
}

export interface SocketOptions {
  url: string;
  localAddress: string;
  tally: Tally;
  /** Prefix of every outcome counted. */
  label?: string;
  headers?: Record<string, string>;
  /** Each message, parsed; one that is not JSON is counted and not handed on. */
  onMessage?: (message: GraphQLWsMessage) => void;
}

/** One graphql-ws client socket of an attack. */
export class AttackSocket {
  readonly ws: WebSocket;
  /** True once open, false if it never opened. */
  readonly opened: Promise<boolean>;
  /** True once the gateway acknowledged `connection_init`, false if the socket closed before. */
  readonly acked: Promise<boolean>;
  /** Resolves with the close code when the socket is closed, whoever closed it. */
  readonly closed: Promise<number>;
  bytesSent = 0;
  bytesReceived = 0;
  private closedByUs = false;

  constructor(options: SocketOptions) {
    const { tally, label = "" } = options;
    const ws = new WebSocket(options.url, GRAPHQL_WS, {
      localAddress: options.localAddress,
      headers: options.headers,
      perMessageDeflate: false,
      handshakeTimeout: 10_000,
    });
    this.ws = ws;
    let wasOpen = false;
    let failure: string | undefined;
    ws.on("error", (error) => {
      if (!wasOpen) failure ??= upgradeFailure(error);
    });
    this.opened = new Promise((resolve) => {
      ws.once("open", () => {
        wasOpen = true;
        resolve(true);
      });
      ws.once("close", () => resolve(false));
    });
    this.acked = new Promise((resolve) => {
      ws.on("message", (data: Buffer) => {
        this.bytesReceived += data.length;
        let message: GraphQLWsMessage;
        try {
          message = JSON.parse(data.toString("utf8")) as GraphQLWsMessage;
        } catch {
          tally.add(`${label}a message that is not JSON`);
          return;
        }
        if (message.type === "connection_ack") resolve(true);
        options.onMessage?.(message);
      });
      ws.once("close", () => resolve(false));
    });
    this.closed = new Promise((resolve) => {
      ws.once("close", (code: number, reason: Buffer) => {
        if (!this.closedByUs) {
          if (!wasOpen) tally.add(`${label}${failure ?? "failed before opening"}`);
          else {
            const text = reason.toString("utf8").slice(0, 60);
            tally.add(`${label}closed by the gateway: ${code}${text ? ` ${text}` : code === 1006 ? " (no close frame)" : ""}`);
          }
        }
        resolve(code);
      });
    });
  }

  get open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  /** Sends a text frame if the socket is open; false if it is not. */
  send(text: string): boolean {
    if (!this.open) return false;
    this.ws.send(text, () => {
      // A send that fails is the socket closing: counted by its close.
    });
    this.bytesSent += Buffer.byteLength(text);
    return true;
  }

  /** Opens graphql-ws: sends `connection_init` (with `payload` as its text, when given) and waits for the answer. */
  async init(payload?: string): Promise<boolean> {
    if (!(await this.opened)) return false;
    this.send(payload ?? JSON.stringify({ type: "connection_init" }));
    return this.acked;
  }

  /** Stops reading: what the gateway sends stays in its buffers. */
  pauseReading(): void {
    (this.ws as unknown as { _socket?: Socket })._socket?.pause();
  }

  resumeReading(): void {
    (this.ws as unknown as { _socket?: Socket })._socket?.resume();
  }

  /** Closes it from this side, at once: not counted as the gateway's doing. */
  close(): void {
    this.closedByUs = true;
    this.ws.terminate();
  }
}

/** A connection an attack holds, WebSocket or raw TCP. */
export interface Held {
  /** Resolves when the connection is open; false if it never opened. */
  opened: Promise<boolean>;
  readonly open: boolean;
  closed: Promise<unknown>;
  close(): void;
}

export interface HoldOptions<T extends Held> {
  context: AttackContext;
  /** How many connections are held at once. */
  count: number;
  /** The address of the connection in slot `index`. */
  addressOf(index: number): string;
  connect(address: string): T;
  /** What a connection does once open; the slot waits for the connection to close after it. */
  onOpen?(connection: T, index: number): Promise<void>;
  /** Open again what the gateway closed, until the deadline (default); else each slot is opened once. */
  reconnect?: boolean;
}

export interface Holder<T extends Held> {
  /** Resolves once every slot's first connection is open and past `onOpen`, or failed. */
  settled: Promise<void>;
  /** The connections open now, by slot. */
  current: (T | undefined)[];
  stats: { attempts: number; opened: number; open: number; peakOpen: number };
  /** Stops reopening and closes every connection (from this side). Returns how many were open. */
  stop(): number;
}

/**
 * Holds `count` connections open from the attacker's addresses until the deadline, opening them
 * in batches of 50 (so that the listen backlog is not what refuses them). A connection the
 * gateway closes is opened again at once when it lived a second or more, else after 250 ms, so
 * that a gateway that refuses at once is not hammered. Stopped at the end of the attack.
 */
export function holdConnections<T extends Held>(options: HoldOptions<T>): Holder<T> {
  const { context, count } = options;
  let stopped = false;
  const current: (T | undefined)[] = Array.from({ length: count }, () => undefined);
  const stats = { attempts: 0, opened: 0, open: 0, peakOpen: 0 };
  const firsts: Promise<void>[] = [];
  const slot = async (index: number, first: () => void) => {
    await sleep(Math.floor(index / 50) * 20);
    while (!stopped && performance.now() < context.deadline) {
      const connection = options.connect(options.addressOf(index));
      current[index] = connection;
      stats.attempts += 1;
      const began = performance.now();
      const opened = await connection.opened;
      if (opened) {
        stats.opened += 1;
        stats.open += 1;
        stats.peakOpen = Math.max(stats.peakOpen, stats.open);
        await options.onOpen?.(connection, index);
        first();
        await connection.closed;
        stats.open -= 1;
      } else first();
      current[index] = undefined;
      if (options.reconnect === false) return;
      if (performance.now() - began < 1_000) await sleep(250);
    }
    first();
  };
  for (let index = 0; index < count; index += 1) {
    firsts.push(
      new Promise<void>((resolve) =>
        slot(index, resolve).catch((error: unknown) => {
          // Not the gateway's doing: a bug of the attack, counted rather than thrown.
          context.tally.add(`the attack's slot failed: ${error instanceof Error ? error.message.slice(0, 80) : String(error)}`);
          resolve();
        }),
      ),
    );
  }
  const holder: Holder<T> = {
    settled: Promise.all(firsts).then(() => undefined),
    current,
    stats,
    stop() {
      stopped = true;
      let open = 0;
      for (const connection of current) {
        if (!connection) continue;
        if (connection.open) open += 1;
        connection.close();
      }
      return open;
    },
  };
  context.onEnd(() => holder.stop());
  return holder;
}

/** A raw TCP connection of an attack, counted as AttackSocket counts its sockets. */
export class RawConnection implements Held {
  readonly socket: Socket;
  readonly opened: Promise<boolean>;
  readonly closed: Promise<void>;
  /** The status line of what the gateway answered, if it did. */
  answered = "";
  private closedByUs = false;

  constructor(host: string, port: number, localAddress: string, tally: Tally, label = "") {
    const socket = connect({ host, port, localAddress });
    this.socket = socket;
    let connected = false;
    let failure: string | undefined;
    socket.on("error", (error) => {
      if (!connected) failure ??= failureOf(error);
    });
    socket.on("data", (data: Buffer) => {
      if (!this.answered) this.answered = /^HTTP\/1\.1 (\d+)/.exec(data.toString("latin1"))?.[1] ?? "?";
    });
    this.opened = new Promise((resolve) => {
      socket.once("connect", () => {
        connected = true;
        resolve(true);
      });
      socket.once("close", () => resolve(false));
    });
    this.closed = new Promise((resolve) => {
      socket.once("close", () => {
        if (!this.closedByUs) {
          if (!connected) tally.add(`${label}${failure ?? "failed before connecting"}`);
          else
            tally.add(
              `${label}${this.answered ? `closed by the gateway after HTTP ${this.answered}` : "closed by the gateway without an answer"}`,
            );
        }
        resolve();
      });
    });
  }

  get open(): boolean {
    return !this.socket.destroyed && this.socket.readyState === "open";
  }

  write(text: string): void {
    if (this.open) this.socket.write(text);
  }

  close(): void {
    this.closedByUs = true;
    this.socket.destroy();
  }
}
