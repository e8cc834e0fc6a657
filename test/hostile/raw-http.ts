/** Raw TCP clients of a gateway served on a real port: what a hostile client sends, byte by byte. */
import { connect, type AddressInfo, type Socket } from "node:net";
import { createGatewayServer, type GatewayServer } from "../../src/server/http-server.ts";
import { createLogger } from "../../src/telemetry/logger.ts";
import { startHarness, type Harness } from "../support/harness.ts";

export interface RawConnection {
  socket: Socket;
  /** Everything the server sent on this connection so far. */
  received(): string;
  /** Set once the connection is closed, by either side. */
  readonly closed: boolean;
  /** Resolves when the connection is closed. */
  whenClosed: Promise<void>;
}

/** Opens a connection and resolves once it is established (the server may still close it at once). */
export function openConnection(port: number, localAddress?: string): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1", localAddress });
    let text = "";
    let closed = false;
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => (text += chunk));
    // A connection the server resets ends with an error: it is closed all the same.
    socket.on("error", () => {});
    const whenClosed = new Promise<void>((done) =>
      socket.once("close", () => {
        closed = true;
        done();
      }),
    );
    socket.once("connect", () =>
      resolve({
        socket,
        received: () => text,
        get closed() {
          return closed;
        },
        whenClosed,
      }),
    );
    socket.once("error", reject);
  });
}

/** A whole HTTP/1.1 request that closes its connection after the answer. */
export function graphqlRequest(query: string): string {
  const body = JSON.stringify({ query });
  return (
    `POST /graphql HTTP/1.1\r\nhost: gateway.test\r\ncontent-type: application/json\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
  );
}

/** Sends a request on an open connection and resolves with the status and body of the answer, once the server closes it. */
export async function exchange(connection: RawConnection, request: string): Promise<{ status: number; body: string }> {
  connection.socket.write(request);
  await connection.whenClosed;
  return parseAnswer(connection.received());
}

export function parseAnswer(text: string): { status: number; body: string } {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
  const head = text.indexOf("\r\n\r\n");
  let body = head < 0 ? "" : text.slice(head + 4);
  if (/\r\ntransfer-encoding: chunked\r\n/i.test(text.slice(0, head))) body = unchunk(body);
  return { status, body };
}

function unchunk(text: string): string {
  let out = "";
  let rest = text;
  for (;;) {
    const line = rest.indexOf("\r\n");
    if (line < 0) return out;
    const size = Number.parseInt(rest.slice(0, line), 16);
    if (!(size > 0)) return out;
    out += rest.slice(line + 2, line + 2 + size);
    rest = rest.slice(line + 2 + size + 2);
  }
}

/** A gateway served on a real loopback port by the server the process uses, over the simulator. */
export interface Served {
  harness: Harness;
  server: GatewayServer;
  port: number;
}

/** Serves a gateway built with `env` on a free loopback port; `stopServed` stops it. */
export async function serveGateway(env: Record<string, string>): Promise<Served> {
  const harness = await startHarness(env);
  const server = createGatewayServer(
    harness.gateway.listener,
    harness.config.server,
    createLogger("silent"),
    harness.gateway.metrics.registry,
  );
  await new Promise<void>((resolve) => server.server.listen(0, "127.0.0.1", resolve));
  harness.simulator.resetCounters();
  return { harness, server, port: (server.server.address() as AddressInfo).port };
}

export async function stopServed({ harness, server }: Served): Promise<void> {
  await server.drain({ graceMs: 0 });
  await harness.close();
}
