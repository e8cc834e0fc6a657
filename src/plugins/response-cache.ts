/**
 * The short-TTL response cache for queries that clients poll ("latest" lists, charts, pages
 * everyone opens): the exact bytes of an error-free query answer, keyed by the request body,
 * its Accept header and the caller's API key, so that callers with different keys never share
 * an answer. A hit is answered before Yoga parses, validates or executes anything.
 *
 * Only POST requests with a JSON body are cached: their key is the whole request, and CSRF
 * prevention never applies to them (a cross-site form cannot send JSON).
 */
import { createHash } from "node:crypto";
import { getOperationAST, type ExecutionResult } from "graphql";
import type { Plugin } from "graphql-yoga";
import { LRUCache } from "lru-cache";
import { asBody, compress, varyOnEncoding, type Compression, type ContentEncoding } from "./compression.ts";
import type { GatewayContext } from "../execution/context.ts";

export interface CachedResponse {
  body: string;
  contentType: string;
}

/** A second tier shared by several gateways (Redis); it must never throw. */
export interface SharedResponseTier {
  /** The answer, with the time it has left there (undefined: no expiry). */
  get(key: string): Promise<{ response: CachedResponse; ttlMs: number | undefined } | undefined>;
  set(key: string, response: CachedResponse, ttlMs: number): void;
}

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
   * When set, a hit is answered compressed as the client accepts, and each answer's compressed
   * bytes are kept beside it (bounded by `maxBytes` of their own, for no longer than the answer).
   */
  compression?: Compression | undefined;
}

function isJsonPost(request: Request): boolean {
  if (request.method !== "POST") return false;
  const type = request.headers.get("content-type") ?? "";
  return type.startsWith("application/json") || type.startsWith("application/graphql+json");
}

export function useResponseCache(options: ResponseCacheOptions): Plugin<GatewayContext> {
  const local = new LRUCache<string, CachedResponse>({
    max: options.maxEntries,
    maxSize: options.maxBytes,
    ttl: options.ttlMs,
    sizeCalculation: (entry, key) => entry.body.length + entry.contentType.length + key.length,
  });
  /** Requests that missed, by their key; and the results worth storing. */
  const pending = new WeakMap<Request, string>();
  const storable = new WeakMap<Request, ExecutionResult>();
  const lookup = options.onLookup ?? (() => {});
  const compressed = new LRUCache<string, Buffer>({
    max: options.maxEntries * 2,
    maxSize: options.maxBytes,
    sizeCalculation: (bytes, key) => bytes.byteLength + key.length,
  });

  async function respond(
    key: string,
    entry: CachedResponse,
    encoding: ContentEncoding | undefined,
    fetchAPI: { Response: typeof Response; Headers: typeof Headers },
  ): Promise<Response> {
    const headers = new fetchAPI.Headers({ "content-type": entry.contentType, "x-response-cache": "hit" });
    const compression = options.compression;
    if (!compression || encoding === undefined || Buffer.byteLength(entry.body) < compression.minBytes) {
      return new fetchAPI.Response(entry.body, { status: 200, headers });
    }
    const variantKey = `${encoding}:${key}`;
    let body = compressed.get(variantKey);
    if (!body) {
      body = await compress(Buffer.from(entry.body), encoding);
      // No longer than the answer it compresses has left.
      const ttl = local.getRemainingTTL(key);
      if (ttl > 0) compressed.set(variantKey, body, { ttl: Number.isFinite(ttl) ? ttl : options.ttlMs });
    }
    headers.set("content-encoding", encoding);
    headers.set("content-length", String(body.byteLength));
    varyOnEncoding(headers);
    return new fetchAPI.Response(asBody(body), { status: 200, headers });
  }

  return {
    async onRequest({ request, url, setRequest, setRequestHandler, fetchAPI }) {
      if (url.pathname !== options.graphqlEndpoint || !isJsonPost(request)) return;
      const body = await request.text();
      let current = request;
      // Fetch implementations other than Yoga's own cannot read a body twice.
      if (request.bodyUsed) {
        current = new fetchAPI.Request(request.url, { method: "POST", headers: request.headers, body, signal: request.signal });
        setRequest(current);
      }
      const key = createHash("sha256")
        .update(current.headers.get(options.sessionHeader)?.trim() ?? "")
        .update("\0")
        .update(current.headers.get("accept") ?? "")
        .update("\0")
        .update(body)
        .digest("base64url");
      let entry = local.get(key);
      if (entry) {
        lookup("local");
      } else if (options.shared) {
        const shared = await options.shared.get(key);
        if (shared) {
          lookup("shared");
          entry = shared.response;
          // Kept here only for what it has left there, so that no answer outlives its TTL.
          local.set(
            key,
            entry,
            shared.ttlMs === undefined ? undefined : { ttl: Math.max(1, Math.min(shared.ttlMs, options.ttlMs)) },
          );
        }
      }
      if (entry) {
        const hit = entry;
        const encoding = options.compression?.negotiate(current);
        setRequestHandler(() => respond(key, hit, encoding, fetchAPI));
        return;
      }
      lookup("miss");
      pending.set(current, key);
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
      const key = pending.get(request);
      if (key === undefined || !storable.has(request) || response.status !== 200) return;
      const body = await response.text();
      if (response.bodyUsed) setResponse(new fetchAPI.Response(body, { status: response.status, headers: response.headers }));
      const entry = { body, contentType: response.headers.get("content-type") ?? "application/json" };
      local.set(key, entry);
      options.shared?.set(key, entry, options.ttlMs);
    },
  };
}
