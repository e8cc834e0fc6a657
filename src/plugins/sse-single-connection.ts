/**
 * graphql-sse's single-connection mode on the GraphQL path, beside Yoga's own SSE (which serves
 * its distinct-connections mode): a PUT reserves an event stream and answers its token, a GET
 * with the token (`x-graphql-event-stream-token`, or `?token=`) listens to it, POSTs with the token
 * put operations on it (each with `extensions.operationId`), a DELETE with `?operationId=` stops
 * one. graphql-sse's handler speaks the protocol; every operation runs as the HTTP request it
 * stands for: its POST's body, without the operationId, sent through Yoga's whole pipeline with
 * the POST's caller headers (as src/server/websocket-operations.ts does for a socket's `subscribe`),
 * so that it meets every rule an HTTP request meets and pays what one pays (the 1 its POST paid as
 * it came counts as its own). Its single answer or its stream goes onto the event stream; a
 * refusal is the POST's answer, JSON with its code and status, as over HTTP.
 *
 * (`@graphql-yoga/plugin-graphql-sse` is not used: it runs operations through Yoga's envelop
 * only, past the hooks where requests pay, persisted documents are looked up and refusals are
 * written, and serves its own path, which pays nothing.)
 *
 * Every request of the mode pays 1 as it comes (src/plugins/rate-limit.ts, before this plugin);
 * what a stream may hold is in src/limits/stream-reservations.ts. A POST must be JSON, so that no
 * cross-site form can send one; a listened stream's GET carries a token no other site knows.
 */
import { createHandler, TOKEN_HEADER_KEY, type Response as SseAnswer } from "graphql-sse";
import type { ExecutionResult } from "graphql";
import type { FetchAPI, Plugin } from "graphql-yoga";
import type { IncomingMessage } from "node:http";
import type { RateLimitConfig } from "../config.ts";
import { bucketsOf } from "../limits/caller-buckets.ts";
import { StreamReservations, type ReservationLimits, type StreamReservation } from "../limits/stream-reservations.ts";
import { passOnRefusal, refusalBody, refusalResponse } from "./refusals.ts";
import { bodiesOf, isSingleConnectionRequest, JSON_TYPE, responseOf, tokenOf } from "./sse-protocol.ts";
import { clientErrors, type SocketStreams } from "./socket-streams.ts";

export interface SseSingleConnectionOptions {
  graphqlEndpoint: string;
  limits: ReservationLimits;
  /** MAX_NESTING_DEPTH: a POST nested deeper is refused unread, as the HTTP listener hands such a body on unparsed. */
  maxNestingDepth: number;
  streams: SocketStreams;
  /** How callers are named (TRUST_PROXY): a reservation is held by its caller's address (an IPv6 /64), as the rate limit names it. */
  callers: RateLimitConfig;
  /** Counts the 1 a POST paid as its operation's (src/plugins/rate-limit.ts), when requests pay. */
  carryPayment?: (carrier: Request, operation: Request) => void;
  /** The gateway's Yoga, whose whole pipeline (its HTTP hooks included) each operation runs through; read once it exists. */
  pipeline(): Pipeline;
  /** Charges a POST whose body is no usable operation by its length, as the HTTP listener does (Node's request, when served). */
  chargeUnusableBody?: (req: IncomingMessage, characters: number) => void;
}

/** What a POST carries to graphql-sse's `onSubscribe`: its operation's body and id, and who sent it. */
interface Carried {
  body: string;
  operationId: string;
  serverContext: unknown;
  reservation: StreamReservation;
  /** Set when the pipeline refused the operation. */
  refused?: boolean;
}

export interface Pipeline {
  handleRequest(request: Request, serverContext: object): Response | Promise<Response>;
  fetchAPI: FetchAPI;
}

const PING = ":\n\n";

export interface SseSingleConnection {
  plugin: Plugin;
  /** Ends every listened stream, for shutdown: its client reconnects (to another instance). */
  endListeners(): void;
}

export function useSseSingleConnection(options: SseSingleConnectionOptions): SseSingleConnection {
  const { graphqlEndpoint: endpoint, streams } = options;
  const reservations = new StreamReservations(options.limits);
  const carried = new WeakMap<Request, Carried>();
  /** The length of each single answer, read as text: what it adds to its stream's unread bytes. */
  const answerBytes = new WeakMap<object, number>();

  /** Runs a POST's operation through the pipeline: its single answer, its stream, or its refusal as the POST's answer. */
  async function run(post: Request) {
    const yoga = options.pipeline();
    const entry = carried.get(post)!;
    const { body, serverContext } = entry;
    const headers = new yoga.fetchAPI.Headers(post.headers);
    headers.delete(TOKEN_HEADER_KEY);
    // Its answer is read here, not sent: never compressed.
    headers.delete("accept-encoding");
    headers.set("content-type", "application/json");
    // What graphql-sse's mode answers in: its POSTs take application/json.
    headers.set("accept", "application/json");
    headers.set("content-length", String(Buffer.byteLength(body)));
    const operation = new yoga.fetchAPI.Request(`http://gateway${endpoint}`, { method: "POST", headers, body });
    options.carryPayment?.(post, operation);
    streams.expect(operation);
    const { req } = (serverContext ?? {}) as { req?: unknown };
    const response = await yoga.handleRequest(operation, { req, transport: "graphql-sse" });
    const stream = streams.take(operation);
    if (stream) return stream;
    const text = await response.text();
    let answer: ExecutionResult | undefined;
    try {
      answer = JSON.parse(text) as ExecutionResult;
    } catch {
      answer = undefined;
    }
    if (answer && "data" in answer) {
      answerBytes.set(answer, text.length);
      return answer;
    }
    passOnRefusal(post);
    entry.refused = true;
    const refusal: SseAnswer = answer
      ? [text, { status: response.status, statusText: "", headers: Object.fromEntries(response.headers) }]
      : [refusalBody("Unexpected error.", "INTERNAL_SERVER_ERROR"), { status: 500, statusText: "", headers: {} }];
    return refusal;
  }

  const handler = createHandler<Request>({
    authenticate: (request) => tokenOf(request.raw),
    onSubscribe: (request) => run(request.raw),
    onNext(_context, request, result) {
      const shown = result.errors ? { ...result, errors: clientErrors(result.errors) } : result;
      const reservation = carried.get(request.raw)?.reservation;
      const bytes = answerBytes.get(result) ?? JSON.stringify(shown).length;
      reservation?.queued(bytes, options.limits.maxUnreadBytes);
      return shown as typeof result;
    },
  });

  /** A request as graphql-sse's handler reads it. */
  const asHandled = (request: Request, method = request.method, body: string | null = null, headers = request.headers) => ({
    method,
    url: request.url,
    headers,
    body,
    raw: request,
    context: undefined,
  });

  async function listen(request: Request, reservation: StreamReservation, fetchAPI: FetchAPI): Promise<Response> {
    if (reservation.listening) {
      return refusalResponse(fetchAPI.Response, 409, "This event stream is listened to already", "BAD_REQUEST");
    }
    let cut = (_why: string) => {};
    reservations.listen(reservation, (why) => cut(why));
    const headers = new fetchAPI.Headers({ accept: "text/event-stream", [TOKEN_HEADER_KEY]: reservation.token });
    // graphql-sse's handler holds a stream only from here on, while it is listened to.
    await handler(asHandled(request, "PUT", null, new fetchAPI.Headers({ [TOKEN_HEADER_KEY]: reservation.token })));
    const [messages, init] = await handler(asHandled(request, "GET", null, headers));
    if (messages === null || typeof messages === "string") {
      reservations.release(reservation);
      return responseOf(fetchAPI, [messages, init]);
    }
    const encoder = new fetchAPI.TextEncoder();
    let ended = false;
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const end = (why?: string) => {
      if (ended) return;
      ended = true;
      reservations.release(reservation);
      void messages.return(undefined);
      if (why !== undefined) {
        controller.enqueue(encoder.encode(`: ${why}\n\n`));
        controller.close();
      }
    };
    const body = new fetchAPI.ReadableStream<Uint8Array>({
      start: (given) => void (controller = given),
      async pull() {
        const { done, value } = await messages.next();
        if (ended) return;
        if (value) {
          const bytes = encoder.encode(value);
          if (value !== PING) reservation.read(bytes.byteLength);
          controller.enqueue(bytes);
        }
        if (done) {
          end();
          controller.close();
        }
      },
      cancel: () => end(),
    });
    cut = end;
    request.signal.addEventListener("abort", () => end(), { once: true });
    return new fetchAPI.Response(body, { status: init.status, headers: init.headers });
  }

  function reserve(request: Request, serverContext: unknown, fetchAPI: FetchAPI): Response {
    const { req } = (serverContext ?? {}) as { req?: IncomingMessage };
    const names = bucketsOf({ request, req }, options.callers).map(({ name }) => name);
    const reservation = reservations.reserve(names.find((name) => name.startsWith("address:")) ?? names[0]!);
    if (typeof reservation !== "string") {
      return new fetchAPI.Response(reservation.token, { status: 201, headers: { "content-type": "text/plain; charset=utf-8" } });
    }
    const { perCaller, unlistened } = options.limits;
    const [message, max] =
      reservation === "caller"
        ? [`Too many event streams: you hold ${perCaller}, the most SSE_MAX_STREAMS_PER_ADDRESS allows; end one first`, perCaller]
        : [`Too many event streams wait to be listened to on this instance (${unlistened}); retry shortly`, unlistened];
    const limit = reservation === "caller" ? "eventStreamsPerCaller" : "eventStreams";
    const seconds = String(Math.ceil(options.limits.listenWithinMs / 1_000));
    return new fetchAPI.Response(JSON.stringify({ errors: [{ message, extensions: { code: "RATE_LIMITED", limit, max } }] }), {
      status: 429,
      headers: { "content-type": JSON_TYPE, "retry-after": seconds },
    });
  }

  async function answer(request: Request, serverContext: unknown, fetchAPI: FetchAPI): Promise<Response> {
    if (request.method === "PUT") return reserve(request, serverContext, fetchAPI);
    const reservation = reservations.find(tokenOf(request)!);
    if (!reservation) {
      const message = "No event stream is reserved under this token: reserve one with a PUT, and listen to it first";
      return refusalResponse(fetchAPI.Response, 404, message, "NOT_FOUND");
    }
    if (request.method === "GET") return listen(request, reservation, fetchAPI);
    if (!reservation.listening) {
      const message =
        "Nobody listens to this event stream yet: GET it (accept: text/event-stream) before sending operations onto it";
      return refusalResponse(fetchAPI.Response, 409, message, "BAD_REQUEST");
    }
    if (request.method === "DELETE") return responseOf(fetchAPI, await handler(asHandled(request)));
    if (!request.headers.get("content-type")?.startsWith("application/json")) {
      return refusalResponse(fetchAPI.Response, 415, "Unsupported media type: send application/json", "BAD_REQUEST");
    }
    const text = await request.text();
    const bodies = bodiesOf(text, options.maxNestingDepth);
    if (!bodies) {
      const { req } = (serverContext ?? {}) as { req?: IncomingMessage };
      if (req) options.chargeUnusableBody?.(req, text.length);
      const message = `The body is not a JSON object, or nests deeper than the limit of ${options.maxNestingDepth}`;
      return refusalResponse(fetchAPI.Response, 400, message, "BAD_REQUEST");
    }
    const entry: Carried = { body: bodies.forPipeline, operationId: bodies.operationId, serverContext, reservation };
    carried.set(request, entry);
    const answered = await handler(asHandled(request, "POST", bodies.forHandler));
    if (entry.refused) {
      // graphql-sse keeps a refused operation's id among the stream's running ones: let it go.
      const url = new URL(request.url);
      url.search = new URLSearchParams({ operationId: entry.operationId }).toString();
      await handler({ ...asHandled(request, "DELETE"), url: url.toString() });
    }
    return responseOf(fetchAPI, answered);
  }

  return {
    plugin: {
      onRequest({ request, url, serverContext, endResponse, fetchAPI }) {
        if (!isSingleConnectionRequest(request, url, endpoint)) return;
        return answer(request, serverContext, fetchAPI).then(endResponse);
      },
    },
    endListeners: () => reservations.endAll("SHUTTING_DOWN: the gateway is shutting down; reconnect"),
  };
}
