/**
 * What telemetry watches, as telemetry sees it: the upstream client's calls and breakers, and a
 * cache's look-ups and size. Declared here, below the rooms that are watched (src/upstream/), so
 * that they depend on telemetry and telemetry on none of them.
 */

/** A route breaker's state (src/upstream/route-breakers.ts). */
export type BreakerState = "closed" | "open" | "half-open";

/** Told of each upstream call, retry and breaker change (src/upstream/http.ts tells it). */
export interface UpstreamObserver {
  call(service: string, method: string, route: string, outcome: string, seconds: number): void;
  retry(service: string, method: string, route: string): void;
  /** A route's breaker changed state (or was made, closed, by the route's first call). */
  breaker(service: string, method: string, route: string, state: BreakerState): void;
}

/** A cache whose look-ups are counted and whose size is read when Prometheus scrapes (src/upstream/cache.ts's RecordCache). */
export interface WatchedCache {
  onLookup: (hit: boolean) => void;
  stats(): { entries: number; bytes: number };
}
