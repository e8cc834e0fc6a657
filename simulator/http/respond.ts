import type { ServerResponse } from "node:http";

const BIGINT_MARK = "\u0000bigint\u0000";
const MARKED_BIGINT = /"\\u0000bigint\\u0000(-?[0-9]+)"/g;

/**
 * JSON text of a body; a bigint (a wei amount of a metric) becomes a JSON number with all its
 * digits, as a service that does not round its numbers sends it. Bodies without one take the
 * plain JSON.stringify path.
 */
export function jsonText(body: unknown): string {
  try {
    return JSON.stringify(body);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return JSON.stringify(body, (_key, value: unknown) => (typeof value === "bigint" ? `${BIGINT_MARK}${value}` : value)).replace(
      MARKED_BIGINT,
      "$1",
    );
  }
}

export function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  sendJsonText(response, status, jsonText(body), headers);
}

/** Sends JSON that is already serialized, or already encoded. */
export function sendJsonText(
  response: ServerResponse,
  status: number,
  payload: string | Buffer,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, {
    ...headers,
    "content-type": "application/json; charset=utf-8",
    "content-length": typeof payload === "string" ? Buffer.byteLength(payload) : payload.length,
  });
  response.end(payload);
}
