/**
 * The shared cache for upstream records that do not change (a block by hash, a finalized
 * transaction) or change rarely (chain records, for minutes). Shared by all requests of the
 * process, bounded by entries and by bytes; with a second tier shared by several gateways
 * (Redis) behind it when one is given. Upstream data is public, so entries are not
 * partitioned by API key.
 */
import { LRUCache } from "lru-cache";
import type { CacheConfig } from "../config.ts";
import { allowsStaleRecord } from "./outcomes.ts";

interface Entry {
  value: unknown;
}

/** A record found in the shared tier, with the time it has left there (undefined: no expiry). */
export interface SharedRecord {
  value: unknown;
  ttlMs: number | undefined;
}

/** A second tier shared by several gateways (Redis); it must never throw, and never wait long. */
export interface SharedRecordTier {
  get(key: string): Promise<SharedRecord | undefined>;
  /** Stores in the background; `ttlMs` undefined for a record that does not change. */
  set(key: string, value: unknown, ttlMs: number | undefined): void;
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

  constructor(
    config: Pick<CacheConfig, "maxEntries" | "maxBytes" | "finalRecords">,
    private readonly shared?: SharedRecordTier,
  ) {
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

  /** The fresh record held by this process, if any, without counting a look-up (for estimates). */
  peek<T>(key: string): T | undefined {
    return this.lru.peek(key)?.value as T | undefined;
  }

  /** The record held by this process, if any. */
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

  /** A record that does not change, held by this process or else by the shared tier. */
  async find<T>(key: string): Promise<T | undefined> {
    const held = this.get<T>(key);
    if (held !== undefined || this.shared === undefined || !this.keepsFinalRecords) return held;
    return (await this.fromShared(key, undefined)) as T | undefined;
  }

  /**
   * Stores a record that does not change, unless it is already held (no copy, no re-measure,
   * and no rewrite of the shared tier by every page that lists it). True when it stored it.
   */
  remember(key: string, value: unknown): boolean {
    if (!this.keepsFinalRecords || this.lru.has(key)) return false;
    this.lru.set(key, { value });
    this.shared?.set(key, value, undefined);
    return true;
  }

  /**
   * `ttlMs` of 0 or undefined stores a record that does not change: kept until evicted, and not
   * at all when the cache is told to hold no such records.
   */
  set(key: string, value: unknown, ttlMs?: number): void {
    if (!ttlMs && !this.keepsFinalRecords) return;
    // A record that does not change and is held already is in the shared tier already.
    const isNew = Boolean(ttlMs) || !this.lru.has(key);
    this.lru.set(key, { value }, ttlMs ? { ttl: ttlMs } : undefined);
    if (isNew) this.shared?.set(key, value, ttlMs || undefined);
  }

  /**
   * The cached value, from this process or else the shared tier, else the loaded one (stored
   * unless the loader returns null). When the upstream fails and an expired copy is still held,
   * the expired copy is served instead.
   *
   * `readable` false (a caller's key the upstream has not vouched for yet) loads anew and
   * serves nothing held, stale or not: the upstream decides whether the key may have it.
   */
  async getOrLoad<T>(key: string, load: () => Promise<T>, ttlMs?: number, readable = true): Promise<T> {
    if (!readable) {
      const value = await load();
      if (value !== null && value !== undefined) this.set(key, value, ttlMs);
      return value;
    }
    const cached = this.get<T>(key);
    if (cached !== undefined) return cached;
    if (this.shared !== undefined && (ttlMs || this.keepsFinalRecords)) {
      const shared = await this.fromShared(key, ttlMs || undefined);
      if (shared !== undefined) return shared as T;
    }
    let value: T;
    try {
      value = await load();
    } catch (error) {
      const stale = allowsStaleRecord(error) ? this.lru.get(key, { allowStale: true }) : undefined;
      if (stale === undefined) throw error;
      this.staleServed += 1;
      return stale.value as T;
    }
    if (value !== null && value !== undefined) this.set(key, value, ttlMs);
    return value;
  }

  /** A record from the shared tier, copied into this process for the time it has left there. */
  private async fromShared(key: string, ttlMs: number | undefined): Promise<unknown> {
    const found = await this.shared?.get(key);
    if (found === undefined) return undefined;
    if (ttlMs === undefined) {
      this.lru.set(key, { value: found.value });
    } else {
      const left = found.ttlMs ?? ttlMs;
      if (left <= 0) return undefined;
      this.lru.set(key, { value: found.value }, { ttl: Math.min(left, ttlMs) });
    }
    return found.value;
  }

  /** Loads a value anew and stores it; a failed load keeps what is stored (refresh-ahead). */
  async refresh(key: string, load: () => Promise<unknown>, ttlMs?: number): Promise<void> {
    const value = await load();
    if (value !== null && value !== undefined) this.set(key, value, ttlMs);
  }

  stats(): CacheStats {
    return {
      hits: this.hits,
      misses: this.misses,
      staleServed: this.staleServed,
      entries: this.lru.size,
      bytes: this.lru.calculatedSize,
    };
  }

  /** Empties this process's tier (the shared tier is left as it is). */
  clear(): void {
    this.lru.clear();
  }
}
