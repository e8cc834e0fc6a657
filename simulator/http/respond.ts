import type { ServerResponse } from "node:http";

export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  sendJsonText(response, status, JSON.stringify(body), headers);
}

/** Sends JSON that is already serialized, or already encoded. */
export function sendJsonText(response: ServerResponse, status: number, payload: string | Buffer, headers: Record<string, string> = {}): void {
  response.writeHead(status, {
    ...headers,
    "content-type": "application/json; charset=utf-8",
    "content-length": typeof payload === "string" ? Buffer.byteLength(payload) : payload.length,
  });
  response.end(payload);
}
