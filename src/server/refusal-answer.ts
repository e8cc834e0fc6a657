/** Answers written straight to a socket, for requests the server refuses before Yoga sees them. */

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
