/**
 * The response cache's store, local to the process: the answers held, with their bytes as sent
 * per encoding, and the requests under way for a key. The plugin (src/plugins/response-cache.ts)
 * and the listener's lane (src/server/cache-hit-lane.ts) read it; the Redis tier is the plugin's.
 */
import { hash } from "node:crypto";
import { LRUCache } from "lru-cache";
import { compress, type Compression, type ContentEncoding } from "./compression.ts";
import type { CachedResponse, SharedResponseTier } from "../shared-state/shared-tiers.ts";
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

  /** Keeps an answer that cannot change while the process runs until it is the least recently used (no TTL). */
  setLasting(key: string, entry: CachedResponse): void {
    this.local.set(key, entry, { ttl: 0 });
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
    // Infinity: a lasting answer (`setLasting`), whose variants last as long.
    if (ttl > 0) this.variants.set(variantKey, answer, { ttl: Number.isFinite(ttl) ? ttl : 0 });
    return answer;
  }
}
