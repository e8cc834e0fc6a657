/** Answers written straight to a socket, for requests the server refuses before Yoga sees them. */
import type { ServerResponse } from "node:http";
import { refusalBody } from "../plugins/refusal-notes.ts";
import type { Logger } from "../telemetry/logger.ts";

/**
 * The last resort of an answer the listener writes itself: whatever failed, the client gets a
 * JSON 500, never a stack trace (or, once headers went out, a closed connection); the error is logged.
 */
export function answerUnexpected(response: ServerResponse, error: unknown, logger: Logger, what: string): void {
  logger.error({ err: error }, `unexpected error ${what}`);
  if (response.headersSent) response.destroy();
  else
    response
      .writeHead(500, { "content-type": "application/json; charset=utf-8" })
      .end(refusalBody("Unexpected error.", "INTERNAL_SERVER_ERROR"));
}

/** The answer written straight to the socket to a request the server refuses before reading it. */
export function refusalAnswer(
  status: number,
  reason: string,
  code: string,
  message: string,
  extensions: Record<string, unknown> = {},
): string {
  const body = JSON.stringify({ errors: [{ message, extensions: { code, ...extensions } }] });
  const retryAfter = typeof extensions.retryAfter === "number" ? `retry-after: ${extensions.retryAfter}\r\n` : "";
  return (
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\n${retryAfter}` +
    `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
  );
}
