/**
 * The shared cache for upstream records that do not change (a block by hash, a finalized
 * transaction) or change rarely (chain records, for minutes). Shared by all requests of the
 * process, bounded by entries and by bytes. Upstream data is public, so entries are not
 * partitioned by API key.
 */
import { LRUCache } from "lru-cache";
import type { CacheConfig } from "../config.ts";

interface Entry {
  value: unknown;
}

export interface CacheStats {
  hits: number;
  misses: number;
  entries: number;
  bytes: number;
}

export class RecordCache {
  private readonly lru: LRUCache<string, Entry>;
  private hits = 0;
  private misses = 0;

  constructor(config: Pick<CacheConfig, "maxEntries" | "maxBytes">) {
    this.lru = new LRUCache<string, Entry>({
      max: config.maxEntries,
      maxSize: config.maxBytes,
      // Size is measured once, when a record is stored: its JSON length, plus the key.
      sizeCalculation: (entry, key) => Math.max(1, JSON.stringify(entry.value).length + key.length),
    });
  }

  get<T>(key: string): T | undefined {
    const entry = this.lru.get(key);
    if (entry === undefined) {
      this.misses += 1;
      return undefined;
    }
    this.hits += 1;
    return entry.value as T;
  }

  /** `ttlMs` of 0 or undefined keeps the record until it is evicted. */
  set(key: string, value: unknown, ttlMs?: number): void {
    this.lru.set(key, { value }, ttlMs ? { ttl: ttlMs } : undefined);
  }

  /** The cached value, else the loaded one (stored unless the loader returns null). */
  async getOrLoad<T>(key: string, load: () => Promise<T>, ttlMs?: number): Promise<T> {
    const cached = this.get<T>(key);
    if (cached !== undefined) return cached;
    const value = await load();
    if (value !== null && value !== undefined) this.set(key, value, ttlMs);
    return value;
  }

  stats(): CacheStats {
    return { hits: this.hits, misses: this.misses, entries: this.lru.size, bytes: this.lru.calculatedSize };
  }

  clear(): void {
    this.lru.clear();
  }
}
