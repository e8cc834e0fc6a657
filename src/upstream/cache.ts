/**
 * The shared cache for upstream records that do not change (a block by hash, a finalized
 * transaction) or change rarely (chain records, for minutes). Shared by all requests of the
 * process, bounded by entries and by bytes. Upstream data is public, so entries are not
 * partitioned by API key.
 */
import { LRUCache } from "lru-cache";
import type { CacheConfig } from "../config.ts";
import { UpstreamError } from "../errors.ts";

/** Failures of the service itself, as opposed to answers about the request (404, 401, 400). */
function isServiceFailure(error: unknown): boolean {
  return error instanceof UpstreamError && ["UPSTREAM_UNAVAILABLE", "UPSTREAM_ERROR", "RATE_LIMITED"].includes(error.code);
}

interface Entry {
  value: unknown;
}

export interface CacheStats {
  hits: number;
  misses: number;
  /** Expired records served because their upstream failed. */
  staleServed: number;
  entries: number;
  bytes: number;
}

export class RecordCache {
  private readonly lru: LRUCache<string, Entry>;
  private hits = 0;
  private misses = 0;
  private staleServed = 0;
  /** Told of every look-up; the gateway's metrics count them. */
  onLookup: (hit: boolean) => void = () => {};

  private readonly keepsFinalRecords: boolean;

  constructor(config: Pick<CacheConfig, "maxEntries" | "maxBytes" | "finalRecords">) {
    this.keepsFinalRecords = config.finalRecords;
    this.lru = new LRUCache<string, Entry>({
      max: config.maxEntries,
      maxSize: config.maxBytes,
      // An expired record stays until evicted, to be served if its upstream fails (stale-if-error).
      noDeleteOnStaleGet: true,
      // Size is measured once, when a record is stored: its JSON length, plus the key.
      sizeCalculation: (entry, key) => Math.max(1, JSON.stringify(entry.value).length + key.length),
    });
  }

  get<T>(key: string): T | undefined {
    const entry = this.lru.get(key);
    if (entry === undefined) {
      this.misses += 1;
      this.onLookup(false);
      return undefined;
    }
    this.hits += 1;
    this.onLookup(true);
    return entry.value as T;
  }

  /** Stores a record that does not change, unless it is already held (no copy, no re-measure). */
  remember(key: string, value: unknown): void {
    if (this.keepsFinalRecords && !this.lru.has(key)) this.lru.set(key, { value });
  }

  /**
   * `ttlMs` of 0 or undefined stores a record that does not change: kept until evicted, and not
   * at all when the cache is told to hold no such records.
   */
  set(key: string, value: unknown, ttlMs?: number): void {
    if (!ttlMs && !this.keepsFinalRecords) return;
    this.lru.set(key, { value }, ttlMs ? { ttl: ttlMs } : undefined);
  }

  /**
   * The cached value, else the loaded one (stored unless the loader returns null). When the
   * upstream fails and an expired copy is still held, the expired copy is served instead.
   */
  async getOrLoad<T>(key: string, load: () => Promise<T>, ttlMs?: number): Promise<T> {
    const cached = this.get<T>(key);
    if (cached !== undefined) return cached;
    let value: T;
    try {
      value = await load();
    } catch (error) {
      const stale = isServiceFailure(error) ? this.lru.get(key, { allowStale: true }) : undefined;
      if (stale === undefined) throw error;
      this.staleServed += 1;
      return stale.value as T;
    }
    if (value !== null && value !== undefined) this.set(key, value, ttlMs);
    return value;
  }

  /** Loads a value anew and stores it; a failed load keeps what is stored (refresh-ahead). */
  async refresh(key: string, load: () => Promise<unknown>, ttlMs?: number): Promise<void> {
    const value = await load();
    if (value !== null && value !== undefined) this.set(key, value, ttlMs);
  }

  stats(): CacheStats {
    return { hits: this.hits, misses: this.misses, staleServed: this.staleServed, entries: this.lru.size, bytes: this.lru.calculatedSize };
  }

  clear(): void {
    this.lru.clear();
  }
}
