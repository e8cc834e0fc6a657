/**
 * The short-TTL response cache for queries that clients poll ("latest" lists, charts, pages
 * everyone opens): the exact bytes of an error-free query answer, keyed by the request body,
 * its Accept header and the caller's API key, so that callers with different keys never share
 * an answer. A hit is answered before Yoga parses, validates or executes anything.
 *
 * Only POST requests with a JSON body are cached: their key is the whole request, and CSRF
 * prevention never applies to them (a cross-site form cannot send JSON).
 */
import { hash } from "node:crypto";
import { getOperationAST, type ExecutionResult } from "graphql";
import type { FetchAPI, Plugin } from "graphql-yoga";
import { LRUCache } from "lru-cache";
import { asBody, compress, varyOnEncoding, type Compression, type ContentEncoding } from "./compression.ts";
import type { GatewayContext } from "../execution/context.ts";
import type { CachedResponse, SharedResponseTier } from "../shared-state/shared-tiers.ts";
import { truncated } from "../telemetry/logger.ts";
import { OPERATION_NAME_CHARS } from "./request-log.ts";
import { sendingCost } from "../limits/request-costs.ts";
import type { RateLimitPlugins } from "./rate-limit.ts";

export interface ResponseCacheOptions {
  ttlMs: number;
  maxEntries: number;
  maxBytes: number;
  graphqlEndpoint: string;
  /** The header that carries the caller's API key. */
  sessionHeader: string;
  shared?: SharedResponseTier | undefined;
  /** Told of every look-up: `local`/`shared` hits, or a miss. */
  onLookup?: (result: "local" | "shared" | "miss") => void;
  /**
   * How long requests that miss wait for a request for the same key already under way, at most
   * (its execution's deadline, REQUEST_TIMEOUT_MS): they are answered with what it stores.
   */
  joinWithinMs?: number;
  /**
   * When set, a hit is answered compressed as the client accepts. Each answer's bytes as sent
   * (compressed, or as they are) are kept beside it, bounded by `maxBytes` of their own, for no
   * longer than the answer.
   */
  compression?: Compression | undefined;
  /**
   * Charges a hit what sending it costs in all (`sendingCost`, the 1 it paid as it came included):
   * the 429 that refuses it, or undefined (src/plugins/rate-limit.ts's `payInAll`).
   */
  payForSending?: RateLimitPlugins["payInAll"] | undefined;
}

function isJsonPost(request: Request): boolean {
  if (request.method !== "POST") return false;
  const type = request.headers.get("content-type") ?? "";
  return type.startsWith("application/json") || type.startsWith("application/graphql+json");
}

/** An answer as it goes out: the bytes, and the encoding they are in (undefined: as stored). */
export interface EncodedAnswer {
  body: Buffer;
  encoding: ContentEncoding | undefined;
}

/**
 * The answers held, local to the process (the Redis tier is the plugin's): looked up by the
 * plugin inside Yoga and, for a plain JSON POST, by the listener before Yoga (src/server/cache-hit-lane.ts).
 */
export class ResponseStore {
  private readonly local: LRUCache<string, CachedResponse>;
  /** Each answer's bytes as sent, per encoding (identity too: a hit then encodes no text). */
  private readonly variants: LRUCache<string, EncodedAnswer>;
  /** Keys a request that missed is being executed for, and when it has answered. */
  private readonly underWay = new Map<string, Promise<void>>();

  constructor(private readonly options: ResponseCacheOptions) {
    this.local = new LRUCache<string, CachedResponse>({
      max: options.maxEntries,
      maxSize: options.maxBytes,
      ttl: options.ttlMs,
      sizeCalculation: (entry, key) => entry.body.length + entry.contentType.length + (entry.operation?.length ?? 0) + key.length,
    });
    this.variants = new LRUCache<string, EncodedAnswer>({
      max: options.maxEntries * 2,
      maxSize: options.maxBytes,
      sizeCalculation: (answer, key) => answer.body.byteLength + key.length,
    });
  }

  /** A request's key: its caller's API key, its Accept header and its body, so that callers with different keys never share an answer. */
  keyOf(apiKey: string | undefined, accept: string | undefined, body: string): string {
    return hash("sha256", `${apiKey?.trim() ?? ""}\0${accept ?? ""}\0${body}`, "base64url");
  }

  get(key: string): CachedResponse | undefined {
    return this.local.get(key);
  }

  /** Keeps an answer for the TTL, or for `ttlMs` when shorter (what it has left in a shared tier). */
  set(key: string, entry: CachedResponse, ttlMs?: number): void {
    this.local.set(key, entry, ttlMs === undefined ? undefined : { ttl: Math.max(1, Math.min(ttlMs, this.options.ttlMs)) });
  }

  /**
   * Marks `key` as being executed for, unless it is already; the function that says it has
   * answered (whether or not it stored anything), which runs by itself after `withinMs`.
   */
  lead(key: string, withinMs: number): (() => void) | undefined {
    if (this.underWay.has(key)) return undefined;
    let end!: () => void;
    const answered = new Promise<void>((resolve) => (end = resolve));
    this.underWay.set(key, answered);
    const timer = setTimeout(() => done(), withinMs);
    timer.unref();
    const done = () => {
      clearTimeout(timer);
      if (this.underWay.get(key) === answered) this.underWay.delete(key);
      end();
    };
    return done;
  }

  /** When a request for `key` is under way: resolves once it has answered. */
  underWayFor(key: string): Promise<void> | undefined {
    return this.underWay.get(key);
  }

  /** What `encoded` gives when it is already held, without waiting; else undefined. */
  heldEncoded(key: string, encoding: ContentEncoding | undefined): EncodedAnswer | undefined {
    return this.variants.get(this.variantKey(key, this.wanted(encoding)));
  }

  /** The encoding an answer is sent in when `encoding` is accepted: none while compression is off. */
  private wanted(encoding: ContentEncoding | undefined): ContentEncoding | undefined {
    return this.options.compression ? encoding : undefined;
  }

  private variantKey(key: string, wanted: ContentEncoding | undefined): string {
    return `${wanted ?? "identity"}:${key}`;
  }

  /**
   * The answer's bytes in `encoding` (as stored when compression is off, not accepted, or the
   * answer is under its minimum), encoded once and kept beside it for no longer than it has left.
   */
  async encoded(key: string, entry: CachedResponse, encoding: ContentEncoding | undefined): Promise<EncodedAnswer> {
    const wanted = this.wanted(encoding);
    const variantKey = this.variantKey(key, wanted);
    const held = this.variants.get(variantKey);
    if (held) return held;
    const bytes = Buffer.from(entry.body);
    const answer: EncodedAnswer =
      wanted === undefined || bytes.byteLength < this.options.compression!.minBytes
        ? { body: bytes, encoding: undefined }
        : { body: await compress(bytes, wanted), encoding: wanted };
    const ttl = this.local.getRemainingTTL(key);
    if (ttl > 0) this.variants.set(variantKey, answer, { ttl: Number.isFinite(ttl) ? ttl : this.options.ttlMs });
    return answer;
  }
}

/** The key the listener worked out from the raw body, when it read the request (src/server/json-body-listener.ts). */
export interface KeyedRequest {
  responseCacheKey?: string;
}

export function useResponseCache(store: ResponseStore, options: ResponseCacheOptions): Plugin<GatewayContext> {
  /** Requests that missed, by their key; and the results worth storing. */
  const pending = new WeakMap<Request, string>();
  /** Requests that missed first for their key: how each says it has answered. */
  const leaders = new WeakMap<Request, () => void>();
  const storable = new WeakMap<Request, ExecutionResult>();
  const operations = new WeakMap<Request, string>();
  const lookup = options.onLookup ?? (() => {});

  async function respond(
    hit: { key: string; entry: CachedResponse; encoding: ContentEncoding | undefined },
    request: Request,
    req: Parameters<RateLimitPlugins["payInAll"]>[1],
    fetchAPI: FetchAPI,
  ): Promise<Response> {
    const { key, entry, encoding } = hit;
    const headers = new fetchAPI.Headers({ "content-type": entry.contentType, "x-response-cache": "hit" });
    const answer = await store.encoded(key, entry, encoding);
    const cost = sendingCost(answer.body.byteLength);
    if (cost > 1 && options.payForSending) {
      const what = "this answer from the response cache (1 per 64 KiB of it sent)";
      const refused = await options.payForSending(request, req, cost, what, fetchAPI);
      if (refused) return refused;
    }
    headers.set("content-length", String(answer.body.byteLength));
    if (answer.encoding === undefined) return new fetchAPI.Response(asBody(answer.body), { status: 200, headers });
    headers.set("content-encoding", answer.encoding);
    varyOnEncoding(headers);
    return new fetchAPI.Response(asBody(answer.body), { status: 200, headers });
  }

  return {
    async onRequest({ request, url, serverContext, setRequest, setRequestHandler, fetchAPI }) {
      if (url.pathname !== options.graphqlEndpoint || !isJsonPost(request)) return;
      let current = request;
      let key = (serverContext as { req?: KeyedRequest } | undefined)?.req?.responseCacheKey;
      if (key === undefined) {
        const body = await request.text();
        // Fetch implementations other than Yoga's own cannot read a body twice.
        if (request.bodyUsed) {
          current = new fetchAPI.Request(request.url, { method: "POST", headers: request.headers, body, signal: request.signal });
          setRequest(current);
        }
        key = store.keyOf(
          current.headers.get(options.sessionHeader) ?? undefined,
          current.headers.get("accept") ?? undefined,
          body,
        );
      }
      let entry = store.get(key);
      if (entry) {
        lookup("local");
      } else if (options.shared) {
        const shared = await options.shared.get(key);
        if (shared) {
          lookup("shared");
          entry = shared.response;
          // Kept here only for what it has left there, so that no answer outlives its TTL.
          store.set(key, entry, shared.ttlMs);
        }
      }
      // Identical requests that miss together are executed once: the others wait for its answer
      // (a poll of many clients when the answer expires), and execute themselves only when it
      // stored none (it failed, or was not a plain query).
      const underWay = entry ? undefined : store.underWayFor(key);
      if (underWay) {
        await underWay;
        entry = store.get(key);
        if (entry) lookup("local");
      }
      if (entry) {
        const hit = { key, entry, encoding: options.compression?.negotiate(current) };
        const req = (serverContext as { req?: Parameters<RateLimitPlugins["payInAll"]>[1] } | undefined)?.req;
        const asked = current;
        setRequestHandler(() => respond(hit, asked, req, fetchAPI));
        return;
      }
      lookup("miss");
      pending.set(current, key);
      const answered = store.lead(key, options.joinWithinMs ?? options.ttlMs);
      if (answered) leaders.set(current, answered);
    },

    onParams({ request, params }) {
      if (pending.has(request) && typeof params.operationName === "string")
        operations.set(request, truncated(params.operationName, OPERATION_NAME_CHARS));
    },

    onExecute({ args }) {
      const request = args.contextValue.request;
      if (!pending.has(request) || getOperationAST(args.document, args.operationName)?.operation !== "query") return;
      return {
        onExecuteDone({ result }) {
          if (!(Symbol.asyncIterator in result) && !result.errors?.length) storable.set(request, result);
        },
      };
    },

    async onResponse({ request, response, setResponse, fetchAPI }) {
      const answered = leaders.get(request);
      try {
        await keep(request, response, setResponse, fetchAPI);
      } finally {
        answered?.();
      }
    },
  };

  async function keep(
    request: Request,
    response: Response,
    setResponse: (response: Response) => void,
    fetchAPI: { Response: typeof Response },
  ): Promise<void> {
    const key = pending.get(request);
    if (key === undefined || !storable.has(request) || response.status !== 200) return;
    const body = await response.text();
    if (response.bodyUsed) setResponse(new fetchAPI.Response(body, { status: response.status, headers: response.headers }));
    const entry: CachedResponse = {
      body,
      contentType: response.headers.get("content-type") ?? "application/json",
      operation: operations.get(request) ?? null,
    };
    store.set(key, entry);
    options.shared?.set(key, entry, options.ttlMs);
  }
}
