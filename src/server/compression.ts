/**
 * Compression of answers with node:zlib: brotli or gzip as the client's `accept-encoding` allows
 * (brotli preferred), with `vary: accept-encoding`. Answers under a threshold stay as they are,
 * and so do streams (SSE, multipart), which are never buffered. Compression runs on libuv's
 * thread pool, not the event loop; its CPU is bounded by the answer's size, which the caller
 * already paid for by its operation's cost.
 *
 * A static page (GraphiQL, ~9 MB: src/plugins/graphiql-page.ts) is compressed by its server, once per
 * encoding, harder (`compress(…, "static")`), and its bytes kept.
 */
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import type { Plugin } from "graphql-yoga";
import type { CompressionConfig } from "../config.ts";

export type ContentEncoding = "br" | "gzip";

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** Dynamic answers: brotli 4 and gzip 6 compress about as well as the highest levels on JSON, at a fraction of their CPU. */
const DYNAMIC = { brotliQuality: 4, gzipLevel: 6 };
/**
 * Static pages are compressed once per process: brotli 9 with a 16 MB window takes ~2 s on the
 * 9 MB GraphiQL page (1.85 MB); 11 would take ~20 s for 8 % less, per gateway process.
 */
const STATIC = { brotliQuality: 9, brotliWindowBits: 24, gzipLevel: 9 };
/** Responses that are streamed, event by event: never buffered, so never compressed. */
const STREAMING = /text\/event-stream|multipart\/mixed/i;

/**
 * The encoding to answer in for an `accept-encoding` header: the acceptable one (q > 0) the client
 * weighs highest, brotli before gzip when it weighs them equally; undefined for identity.
 */
export function negotiateEncoding(header: string | null | undefined): ContentEncoding | undefined {
  if (!header) return undefined;
  const weights = new Map<string, number>();
  for (const part of header.split(",")) {
    const [name = "", ...parameters] = part.split(";");
    const q = parameters
      .map((parameter) => /^\s*q\s*=\s*([\d.]+)\s*$/i.exec(parameter)?.[1])
      .find((value) => value !== undefined);
    const weight = q === undefined ? 1 : Number(q);
    weights.set(name.trim().toLowerCase(), Number.isFinite(weight) ? weight : 0);
  }
  const wildcard = weights.get("*") ?? 0;
  const br = weights.get("br") ?? wildcard;
  const gzipWeight = weights.get("gzip") ?? weights.get("x-gzip") ?? wildcard;
  if (br <= 0 && gzipWeight <= 0) return undefined;
  return br >= gzipWeight ? "br" : "gzip";
}

/** Compresses an answer for the given encoding, at the level for dynamic answers or static pages. */
export function compress(body: Uint8Array, encoding: ContentEncoding, kind: "dynamic" | "static" = "dynamic"): Promise<Buffer> {
  const levels = kind === "static" ? STATIC : DYNAMIC;
  if (encoding === "gzip") return gzipAsync(body, { level: levels.gzipLevel });
  return brotliAsync(body, {
    params: {
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_QUALITY]: levels.brotliQuality,
      [constants.BROTLI_PARAM_SIZE_HINT]: body.byteLength,
      ...(kind === "static" ? { [constants.BROTLI_PARAM_LGWIN]: STATIC.brotliWindowBits } : {}),
    },
  });
}

/** Compressed bytes as a response body. */
export function asBody(bytes: Buffer): BodyInit {
  return new Uint8Array(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.byteLength);
}

/** Adds `accept-encoding` to a response's `vary`, keeping what it varies on already. */
export function varyOnEncoding(headers: Headers): void {
  const vary = headers.get("vary");
  if (!vary) headers.set("vary", "accept-encoding");
  else if (!/(^|,)\s*(accept-encoding|\*)\s*(,|$)/i.test(vary)) headers.set("vary", `${vary}, accept-encoding`);
}

export interface Compression {
  /** The Yoga plugin that compresses answers; place it after every plugin that reads a response's body. */
  plugin: Plugin;
  /** The encoding to answer a request in, or undefined for identity. */
  negotiate(request: Request): ContentEncoding | undefined;
  minBytes: number;
}

export function createCompression(config: CompressionConfig): Compression {
  function negotiate(request: Request): ContentEncoding | undefined {
    return config.enabled ? negotiateEncoding(request.headers.get("accept-encoding")) : undefined;
  }

  const plugin: Plugin = {
    async onResponse({ request, response, setResponse, fetchAPI }) {
      if (!config.enabled || request.method === "HEAD" || response.status === 204 || response.status === 304) return;
      if (STREAMING.test(response.headers.get("content-type") ?? "")) return;
      varyOnEncoding(response.headers);
      if (response.headers.has("content-encoding")) return;
      const encoding = negotiate(request);
      if (encoding === undefined) return;
      const declared = response.headers.get("content-length");
      if (declared !== null && Number(declared) < config.minBytes) return;
      const text = await response.text();
      const headers = new fetchAPI.Headers(response.headers);
      const init = { status: response.status, statusText: response.statusText, headers };
      const bytes = Buffer.from(text);
      if (bytes.byteLength < config.minBytes) {
        setResponse(new fetchAPI.Response(text, init));
        return;
      }
      try {
        const body = await compress(bytes, encoding);
        headers.set("content-encoding", encoding);
        headers.set("content-length", String(body.byteLength));
        setResponse(new fetchAPI.Response(asBody(body), init));
      } catch {
        // Not expected of zlib on a buffer; the answer goes as it is rather than not at all.
        setResponse(new fetchAPI.Response(text, init));
      }
    },
  };

  return { plugin, negotiate, minBytes: config.minBytes };
}
