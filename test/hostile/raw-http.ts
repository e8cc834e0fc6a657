/** Raw TCP clients of a gateway served on a real port: what a hostile client sends, byte by byte. */
import { connect, type Socket } from "node:net";

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
