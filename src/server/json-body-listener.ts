import type { IncomingMessage, ServerResponse } from "node:http";
import { nestsDeeperThan } from "../limits/document-shape.ts";
import { refusalBody } from "../plugins/refusals.ts";
import type { Logger } from "../telemetry/logger.ts";

export interface JsonBodyListenerOptions {
  /** MAX_BODY_BYTES: larger bodies, and bodies without a declared length, go to Yoga unread. */
  maxBodyBytes: number;
  /** MAX_NESTING_DEPTH: a body nested deeper goes to Yoga as text, which refuses it. */
  maxNestingDepth: number;
  /** Answers a caller whose budget is spent before anything is read; true when it did. */
  refusesSpentCaller: (request: IncomingMessage, response: ServerResponse) => boolean;
  /** Charges a body that is not a usable GraphQL request, by its length. */
  chargeUnusableBody: (request: IncomingMessage, characters: number) => void;
  logger: Logger;
}

type NodeHandler = (request: IncomingMessage & { body?: unknown }, response: ServerResponse) => unknown;

/**
 * The Node handler in front of Yoga. It reads a JSON POST body within the limit and parses it
 * before Yoga sees the request, as a body-parser middleware would: Yoga then takes the parsed body
 * as it is, instead of piping the stream through its own reader for every request. Other bodies,
 * and bodies without a declared length or over the limit, go to Yoga unread; it answers or refuses
 * them itself. A body nested deeper than MAX_NESTING_DEPTH goes to Yoga as text too, and is refused
 * there like any other (src/plugins/refusals.ts): parsed, it would be stringified again by the
 * server adapter, which overflows the stack on such nesting.
 */
export function jsonBodyListener(yoga: NodeHandler, options: JsonBodyListenerOptions) {
  const { maxBodyBytes, maxNestingDepth, refusesSpentCaller, chargeUnusableBody, logger } = options;
  return function listener(request: IncomingMessage & { body?: unknown }, response: ServerResponse): void {
    if (refusesSpentCaller(request, response)) return;
    const declared = Number(request.headers["content-length"]);
    const json = request.headers["content-type"]?.startsWith("application/json") ?? false;
    if (request.method !== "POST" || !json || !(declared > 0 && declared <= maxBodyBytes)) {
      void yoga(request, response);
      return;
    }
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.once("end", () => {
      try {
        const text = Buffer.concat(chunks).toString("utf8");
        let parsed: unknown;
        try {
          parsed = nestsDeeperThan(text, maxNestingDepth) ? undefined : JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        // Yoga takes a non-empty object as the parsed body; anything else as text, which it
        // parses and refuses with its own message.
        const usable = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) && Object.keys(parsed).length > 0;
        if (!usable) chargeUnusableBody(request, text.length);
        request.body = usable ? parsed : text;
        void yoga(request, response);
      } catch (error) {
        // The last resort: whatever failed, the client gets JSON, never a stack trace.
        logger.error({ err: error }, "unexpected error reading a request");
        if (response.headersSent) response.destroy();
        else
          response
            .writeHead(500, { "content-type": "application/json; charset=utf-8" })
            .end(refusalBody("Unexpected error.", "INTERNAL_SERVER_ERROR"));
      }
    });
    request.once("error", () => response.destroy());
  };
}
