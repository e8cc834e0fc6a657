/**
 * A response-cache hit answered by the listener, before Yoga: the answer is bytes already held,
 * so the `Request`/`Response` machinery, the plugin chain and the JSON parse of the body would
 * be all its cost. The lane keeps every rule a hit meets inside Yoga: the body was read within
 * MAX_BODY_BYTES and the spent-caller check came first (src/server/json-body-listener.ts); the
 * caller pays its 1 from the same buckets; a key the upstream refused lately is never served;
 * the answer is compressed as `accept-encoding` allows, with the same headers (`x-response-cache:
 * hit`, `x-request-id`, `ratelimit-*`, `vary`); the hit is counted in /metrics and logged with
 * the same line.
 *
 * A connection remembers its last body (up to REMEMBERED_BODY_BYTES) with its key: a client that
 * polls sends the same bytes with the same key and Accept header again, and is then answered without
 * the body being decoded or hashed. Any difference in the three works the key out afresh.
 *
 * What it does not answer goes on to Yoga with the key worked out here, so that the body is
 * hashed once: a miss, a request from a browser (`Origin`: its CORS headers are Yoga's), a
 * caller that cannot pay (Yoga refuses it with the 429 every refusal gets, from the decision
 * taken here), a key the upstream
 * refused (Yoga answers the refusal), a graphql-sse stream's request, any path but the endpoint's.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { TOKEN_HEADER_KEY } from "graphql-sse";
import { negotiateEncoding } from "../plugins/compression.ts";
import { requestIdFrom, requestLineWriter } from "../plugins/request-log.ts";
import type { EncodedAnswer, ResponseStore } from "../plugins/response-store.ts";
import { sendingCost } from "../limits/request-costs.ts";
import type { CachedResponse } from "../shared-state/shared-tiers.ts";
import type { RateLimitDecision } from "../limits/rate-limiter.ts";
import type { PaidIncoming } from "../plugins/rate-limit.ts";
import { remainingOf } from "../plugins/rate-limit-refusals.ts";
import type { Logger } from "../telemetry/logger.ts";

export interface CacheHitLaneOptions {
  store: ResponseStore;
  graphqlEndpoint: string;
  /** The header that carries the caller's API key. */
  sessionHeader: string;
  /** COMPRESSION and COMPRESSION_MIN_BYTES' effect: whether answers carry `vary: accept-encoding`. */
  compressionEnabled: boolean;
  /**
   * Takes the 1 a request pays from its caller's buckets (at once when they are this process's);
   * undefined when rate limiting is off.
   */
  pay?: ((request: IncomingMessage) => RateLimitDecision | Promise<RateLimitDecision>) | undefined;
  /** Whether the upstream refused this API key lately (then Yoga answers the refusal). */
  isRefusedKey(apiKey: string): boolean;
  onHit(): void;
  logger: Logger;
}

/**
 * The lane's outcome: `true` when it answered, else the request's response-cache key for Yoga;
 * given at once when nothing had to be waited for (the usual hit: no promise, no microtask).
 */
export type CacheHitOutcome = true | string;

/** A request body as read, and its text once something has decoded it. */
export interface ReadBody {
  bytes: Buffer;
  text?: string;
}

export function textOf(body: ReadBody): string {
  return (body.text ??= body.bytes.toString("utf8"));
}

/** The largest body a connection remembers with its key; with its headers, what it holds at most. */
const REMEMBERED_BODY_BYTES = 4 * 1024;
const REMEMBERED_HEADER_CHARS = 512;

/** A connection's last body, as its own copy, and the key worked out for it with these headers. */
interface KeyedBody {
  apiKey: string | undefined;
  accept: string | undefined;
  bytes: Buffer;
  key: string;
}

/** A request header's value as one text (repeated ones joined, as Headers joins them). */
export function headerOf(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}

export function cacheHitLane(options: CacheHitLaneOptions) {
  const { store } = options;
  const logRequest = requestLineWriter(options.logger);
  const lastKeyed = new WeakMap<Socket, KeyedBody>();

  function keyFor(request: IncomingMessage, apiKey: string | undefined, read: ReadBody): string {
    const accept = headerOf(request, "accept");
    const body = read.bytes;
    const last = lastKeyed.get(request.socket);
    if (last !== undefined && last.apiKey === apiKey && last.accept === accept && last.bytes.equals(body)) return last.key;
    const key = store.keyOf(apiKey?.trim(), accept, textOf(read));
    if (body.byteLength <= REMEMBERED_BODY_BYTES && (apiKey?.length ?? 0) + (accept?.length ?? 0) <= REMEMBERED_HEADER_CHARS) {
      // A copy: the body read may be a slice of a larger buffer, which it would keep alive.
      const bytes = Buffer.allocUnsafeSlow(body.byteLength);
      body.copy(bytes);
      lastKeyed.set(request.socket, { apiKey, accept, bytes, key });
    }
    return key;
  }

  const encodingFor = (request: IncomingMessage) =>
    options.compressionEnabled ? negotiateEncoding(headerOf(request, "accept-encoding")) : undefined;

  function write(
    request: IncomingMessage,
    response: ServerResponse,
    entry: CachedResponse,
    answer: EncodedAnswer,
    decision: RateLimitDecision | undefined,
    startedAt: number,
  ): void {
    const requestId = requestIdFrom(request.headers["x-request-id"]);
    const headers: Record<string, string | number> = {
      "content-type": entry.contentType,
      "x-response-cache": "hit",
      "content-length": answer.body.byteLength,
      "x-request-id": requestId,
    };
    if (answer.encoding) headers["content-encoding"] = answer.encoding;
    if (options.compressionEnabled) headers.vary = "accept-encoding";
    if (decision) {
      headers["ratelimit-limit"] = decision.burst;
      headers["ratelimit-remaining"] = remainingOf(decision);
    }
    response.writeHead(200, headers);
    response.end(answer.body);
    options.onHit();
    logRequest({
      requestId,
      method: "POST",
      // Truncated as the request that stored it was logged (src/plugins/response-cache.ts).
      operation: entry.operation ?? null,
      status: 200,
      startedAt,
    });
  }

  function serve(
    request: IncomingMessage,
    response: ServerResponse,
    key: string,
    entry: CachedResponse,
    decision: RateLimitDecision | undefined,
    startedAt: number,
  ): CacheHitOutcome | Promise<CacheHitOutcome> {
    if (decision && !decision.allowed) {
      // Yoga refuses it as it refuses any request whose 1 was refused, without taking it again.
      (request as IncomingMessage & PaidIncoming).paidAsItCame = decision;
      return key;
    }
    const encoding = encodingFor(request);
    const held = store.heldEncoded(key, encoding);
    if (held) return send(request, response, key, entry, held, decision, startedAt);
    return store.encoded(key, entry, encoding).then((answer) => send(request, response, key, entry, answer, decision, startedAt));
  }

  function send(
    request: IncomingMessage,
    response: ServerResponse,
    key: string,
    entry: CachedResponse,
    answer: EncodedAnswer,
    decision: RateLimitDecision | undefined,
    startedAt: number,
  ): CacheHitOutcome {
    if (decision && sendingCost(answer.body.byteLength) > 1) {
      // An answer over 64 KiB costs more than the 1 paid: Yoga's hit charges the rest, or refuses it.
      (request as IncomingMessage & PaidIncoming).paidAsItCame = decision;
      return key;
    }
    write(request, response, entry, answer, decision, startedAt);
    return true;
  }

  /** Answers `request` (a JSON POST whose body is `body`) from the store when it may; else its key. */
  return function answerFromCache(
    request: IncomingMessage,
    response: ServerResponse,
    body: ReadBody,
    startedAt: number,
  ): CacheHitOutcome | Promise<CacheHitOutcome> {
    const sent = headerOf(request, options.sessionHeader);
    const key = keyFor(request, sent, body);
    const apiKey = sent?.trim();
    if (request.url !== options.graphqlEndpoint || request.headers.origin !== undefined) return key;
    if (request.headers[TOKEN_HEADER_KEY] !== undefined) return key;
    const entry = store.get(key);
    if (entry === undefined || (apiKey && options.isRefusedKey(apiKey))) return key;
    const paying = options.pay?.(request);
    if (paying instanceof Promise) return paying.then((decision) => serve(request, response, key, entry, decision, startedAt));
    return serve(request, response, key, entry, paying, startedAt);
  };
}
