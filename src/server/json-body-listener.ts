import type { IncomingMessage, ServerResponse } from "node:http";
import { valueNestsDeeperThan } from "../limits/document-shape.ts";
import type { KeyedRequest } from "../plugins/response-cache.ts";
import { textOf, type CacheHitOutcome, type ReadBody } from "./cache-hit-lane.ts";
import type { Logger } from "../telemetry/logger.ts";
import type { OperationLane } from "./operation-lane.ts";
import { answerUnexpected } from "./refusal-answer.ts";

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
  /** The response cache's lane (src/server/cache-hit-lane.ts): answers a hit before Yoga, else gives the key. */
  answerFromCache?:
    | ((
        request: IncomingMessage,
        response: ServerResponse,
        body: ReadBody,
        startedAt: number,
      ) => CacheHitOutcome | Promise<CacheHitOutcome>)
    | undefined;
  /** The operation lane (src/server/operation-lane.ts): executes a known query itself, else leaves it to Yoga. */
  answerKnownOperation?: OperationLane | undefined;
}

type ReadRequest = IncomingMessage & { body?: unknown } & KeyedRequest;
type NodeHandler = (request: ReadRequest, response: ServerResponse) => unknown;

/**
 * The Node handler in front of Yoga. It reads a JSON POST body within the limit and parses it
 * before Yoga sees the request, as a body-parser middleware would: Yoga then takes the parsed body
 * as it is, instead of piping the stream through its own reader for every request. Other bodies,
 * and bodies without a declared length or over the limit, go to Yoga unread; it answers or refuses
 * them itself. A body nested deeper than MAX_NESTING_DEPTH goes to Yoga as text too, and is refused
 * there like any other (src/plugins/refusals.ts): parsed, it would be stringified again by the
 * server adapter, which overflows the stack on such nesting. A body read is first offered to the
 * response cache's lane, which answers a hit before anything is parsed.
 */
export function jsonBodyListener(yoga: NodeHandler, options: JsonBodyListenerOptions) {
  const { maxBodyBytes, maxNestingDepth, refusesSpentCaller, chargeUnusableBody, logger, answerFromCache, answerKnownOperation } =
    options;

  const failed = (error: unknown, response: ServerResponse) => answerUnexpected(response, error, logger, "reading a request");

  function toYoga(request: ReadRequest, response: ServerResponse, text: string, startedAt: number): void {
    let parsed: unknown;
    try {
      // V8 parses JSON without recursion, so any nesting parses; the parsed value is then walked,
      // which costs its objects and arrays, not its characters (a long string is one value).
      parsed = JSON.parse(text);
      if (valueNestsDeeperThan(parsed, maxNestingDepth)) parsed = undefined;
    } catch {
      parsed = undefined;
    }
    // Yoga takes a non-empty object as the parsed body; anything else as text, which it
    // parses and refuses with its own message.
    const usable = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) && Object.keys(parsed).length > 0;
    if (!usable) chargeUnusableBody(request, text.length);
    request.body = usable ? parsed : text;
    const handOn = () => void yoga(request, response);
    if (usable && answerKnownOperation?.(request, response, parsed as Record<string, unknown>, startedAt, handOn)) return;
    handOn();
  }

  return function listener(request: ReadRequest, response: ServerResponse): void {
    const startedAt = performance.now();
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
        const body: ReadBody = { bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) };
        if (!answerFromCache) return toYoga(request, response, textOf(body), startedAt);
        const onOutcome = (outcome: CacheHitOutcome) => {
          if (outcome === true) return;
          request.responseCacheKey = outcome;
          toYoga(request, response, textOf(body), startedAt);
        };
        const outcome = answerFromCache(request, response, body, startedAt);
        if (outcome instanceof Promise) outcome.then(onOutcome).catch((error: unknown) => failed(error, response));
        else onOutcome(outcome);
      } catch (error) {
        failed(error, response);
      }
    });
    request.once("error", () => response.destroy());
  };
}
