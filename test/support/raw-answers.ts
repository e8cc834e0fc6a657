/** HTTP answers as a client reads them off the wire: status, headers and the bytes as sent (still compressed), and log lines as a test reads them. */
import { request as httpRequest, type Agent, type IncomingHttpHeaders } from "node:http";
import { Writable } from "node:stream";
import { brotliDecompressSync, gunzipSync } from "node:zlib";

export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The bytes as sent, still compressed. */
  bytes: Buffer;
  /** The client's port: answers with the same one came over the same connection. */
  localPort?: number | undefined;
}

/** One request to a server on loopback `port`, with `content-length` set for a body; over `agent`'s connections when given. */
export function send(
  port: number,
  method: "GET" | "POST",
  path: string,
  headers: Record<string, string>,
  body?: string,
  agent?: Agent,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: "127.0.0.1",
        port,
        method,
        path,
        headers: body === undefined ? headers : { ...headers, "content-length": String(Buffer.byteLength(body)) },
        ...(agent ? { agent } : {}),
      },
      (incoming) => {
        const localPort = incoming.socket.localPort;
        const chunks: Buffer[] = [];
        incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
        incoming.once("end", () =>
          resolve({
            status: incoming.statusCode ?? 0,
            headers: incoming.headers,
            bytes: Buffer.concat(chunks),
            localPort,
          }),
        );
        incoming.once("error", reject);
      },
    );
    outgoing.once("error", reject);
    outgoing.end(body);
  });
}

/** The answer's text, decompressed as its `content-encoding` says (br, gzip, or none). */
export function decodedText(answer: RawAnswer): string {
  const encoding = answer.headers["content-encoding"];
  if (encoding === "br") return brotliDecompressSync(answer.bytes).toString("utf8");
  if (encoding === "gzip") return gunzipSync(answer.bytes).toString("utf8");
  return answer.bytes.toString("utf8");
}

/** A destination for a logger that parses each JSON line written into `records`. */
export function recordingLog(records: Record<string, unknown>[]): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n").filter(Boolean))
        records.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
}
