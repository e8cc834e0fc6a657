/**
 * What the transport does with a WebSocket frame before graphql-ws parses it: the frames a
 * client can send cheaply and make the gateway work or hold memory for.
 *
 * - `connection_init` is read here, within `MAX_INIT_BYTES`, and handed on with nothing but the
 *   API key (bounded): graphql-ws keeps the params for the socket's life, so whatever else a
 *   client put there would be held as long.
 * - A frame nested deeper than MAX_NESTING_DEPTH is refused unparsed, as such an HTTP body is.
 * - A caller whose budget is spent is refused before its frame is parsed: a `subscribe` whose id
 *   leads the frame (as graphql-ws's client, and so Apollo's and urql's, write it) gets an `error`
 *   message for that id, found without parsing; small control frames (`complete`, `ping`, `pong`)
 *   pass; anything else, or more than `MAX_REFUSED_FRAMES` refusals in a row, closes the socket
 *   with 1013 ("try again later").
 * - A `subscribe` that names its document instead of sending it has no `query`, which graphql-ws
 *   would close the socket for: it is given an empty one (`documentWithoutQuery`).
 */
import { CloseCode, MessageType } from "graphql-ws";
import { nestsDeeperThan, valueNestsDeeperThan } from "../limits/document-shape.ts";
import { API_KEY_HEADER } from "../upstream/call-options.ts";

/** The largest `connection_init` frame taken; a larger one closes the socket (4400). */
export const MAX_INIT_BYTES = 4_096;
/** The longest API key taken from the connection params. */
export const MAX_API_KEY_CHARACTERS = 256;
/** Frames refused in a row to a spent caller before its socket is closed. */
export const MAX_REFUSED_FRAMES = 10;
/** Control frames this small pass even when the caller's budget is spent: leaving must stay possible. */
const CONTROL_FRAME_BYTES = 256;
const SUBSCRIBE_HEAD = /^\s*\{\s*"id"\s*:\s*"([^"\\]{1,128})"\s*,\s*"type"\s*:\s*"subscribe"/;

/** What to do with a frame. */
/** What to do with a frame: hand it to graphql-ws, close the socket, or answer its `subscribe` with an `error`. */
export type FrameVerdict =
  | { kind: "pass"; data: string }
  | { kind: "close"; code: number; reason: string }
  | { kind: "refuse"; id: string; why: "spent" }
  | { kind: "refuse"; id: string; why: "nesting"; part: "variables" | "extensions" };

/** The key a client passes in its connection params: `x-glacier-api-key`, else `apiKey`. */
export function apiKeyOfParams(params: unknown): string | undefined {
  if (typeof params !== "object" || params === null) return undefined;
  for (const name of [API_KEY_HEADER, "apiKey"]) {
    const value = (params as Record<string, unknown>)[name];
    if (typeof value === "string" && value.trim()) return value.trim();
  }
  return undefined;
}

/**
 * The first frame of a socket, which must be its `connection_init`: within `MAX_INIT_BYTES`,
 * rewritten to carry only the API key; `apiKey` is the key it named. Any other first frame passes
 * as it is, for graphql-ws to refuse as the protocol says.
 */
export function initFrame(data: string): { verdict: FrameVerdict; apiKey?: string } {
  if (data.length > MAX_INIT_BYTES) {
    return {
      verdict: { kind: "close", code: CloseCode.BadRequest, reason: `connection_init over ${MAX_INIT_BYTES} bytes` },
    };
  }
  let message: unknown;
  try {
    message = JSON.parse(data);
  } catch {
    return { verdict: { kind: "pass", data } };
  }
  if (typeof message !== "object" || message === null || (message as { type?: unknown }).type !== MessageType.ConnectionInit) {
    return { verdict: { kind: "pass", data } };
  }
  const apiKey = apiKeyOfParams((message as { payload?: unknown }).payload);
  if (apiKey !== undefined && apiKey.length > MAX_API_KEY_CHARACTERS) {
    return {
      verdict: { kind: "close", code: CloseCode.BadRequest, reason: `API key over ${MAX_API_KEY_CHARACTERS} characters` },
    };
  }
  const payload = apiKey === undefined ? undefined : { [API_KEY_HEADER]: apiKey };
  return { verdict: { kind: "pass", data: JSON.stringify({ type: MessageType.ConnectionInit, payload }) }, apiKey };
}

/** The id of a `subscribe` frame that leads with it, read from the frame's head only; undefined otherwise. */
function subscribeId(data: string): string | undefined {
  return SUBSCRIBE_HEAD.exec(data.slice(0, 200))?.[1];
}

/**
 * A frame whose variables or extensions nest deeper than `max` (MAX_NESTING_DEPTH), which
 * graphql-ws must not take: the body of its operation could not be written again. Its `subscribe`
 * is refused by id, naming what nests too deep as an HTTP refusal does; a frame nested deeper that
 * is no `subscribe` closes the socket (4400).
 */
export function deepFrame(data: string, max: number): FrameVerdict | undefined {
  // The frame's envelope (message, payload, variables) is three levels: within them, nothing to look at.
  if (!nestsDeeperThan(data, max + 2)) return undefined;
  const close: FrameVerdict = {
    kind: "close",
    code: CloseCode.BadRequest,
    reason: `Message nested deeper than the limit of ${max}`,
  };
  let message: { id?: unknown; type?: unknown; payload?: { variables?: unknown; extensions?: unknown } };
  try {
    // Parsing is bounded by WS_MAX_MESSAGE_BYTES and does not recurse; writing it again would.
    message = JSON.parse(data) as typeof message;
  } catch {
    return close;
  }
  if (message?.type !== MessageType.Subscribe || typeof message.id !== "string") return close;
  for (const part of ["variables", "extensions"] as const) {
    if (valueNestsDeeperThan(message.payload?.[part], max)) return { kind: "refuse", id: message.id, why: "nesting", part };
  }
  return undefined;
}

/**
 * A frame from a caller whose budget is spent for `retryAfterSeconds` more, read only as far as
 * its head; `refusedInARow` frames were refused before it.
 */
export function spentCallerFrame(data: string, retryAfterSeconds: number, refusedInARow: number): FrameVerdict {
  const tryAgain: FrameVerdict = {
    kind: "close",
    code: 1013,
    reason: `RATE_LIMITED: your budget is spent; retry after ${retryAfterSeconds} s`,
  };
  const id = subscribeId(data);
  if (id !== undefined) return refusedInARow >= MAX_REFUSED_FRAMES ? tryAgain : { kind: "refuse", id, why: "spent" };
  if (data.length <= CONTROL_FRAME_BYTES && !data.includes('"subscribe"')) return { kind: "pass", data };
  return tryAgain;
}

/**
 * A `subscribe` whose payload has no `query` (it names a persisted document by `documentId` or
 * Apollo's `extensions.persistedQuery`, or sends nothing) is given an empty one: graphql-ws takes
 * a payload without a query string as a malformed message and closes the socket (4400), where
 * HTTP hands such a body to the pipeline, which runs the persisted document or refuses the
 * request with its code. The operation's body leaves the empty query out
 * (src/server/websocket-operations.ts), so that it is the body an HTTP client would have sent.
 * Only a frame that does not say `"query"` anywhere is parsed here; one that says it elsewhere
 * (a variable named `query`) and lacks the payload's is left to graphql-ws.
 */
export function documentWithoutQuery(data: string): string {
  if (data.includes('"query"') || !data.includes('"subscribe"')) return data;
  let message: { type?: unknown; payload?: unknown };
  try {
    message = JSON.parse(data) as typeof message;
  } catch {
    return data;
  }
  const { payload } = message ?? {};
  if (message?.type !== MessageType.Subscribe || typeof payload !== "object" || payload === null || Array.isArray(payload)) {
    return data;
  }
  return JSON.stringify({ ...message, payload: { query: "", ...payload } });
}
