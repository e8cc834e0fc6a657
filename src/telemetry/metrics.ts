/**
 * Prometheus metrics of the gateway (prom-client), on a registry of its own per gateway so
 * that several gateways in one process (tests) never share counters. GraphQL request counts
 * and latencies by operation are kept by OperationSeries (./operation-series.ts) on the same registry.
 *
 * Every label value comes from a fixed set (services, route templates, loader names, statuses,
 * refusal reasons) or, for operation names, from a bounded one (OperationNameLabels), whose names
 * that lose their label have their series removed: nothing a client sends can add series without
 * bound.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { RedisRole } from "../config.ts";
import { CounterTally, type TallySlot } from "./counter-tally.ts";
import type { BreakerState, UpstreamObserver, WatchedCache } from "./observers.ts";

const BREAKER_LEVEL: Record<BreakerState, number> = { closed: 0, "half-open": 1, open: 2 };

/** Why the gateway refused a request: the `reason` label of `gateway_refusals_total`. */
export const REFUSAL_REASONS = [
  "body_too_large",
  "length_required",
  "malformed_request",
  "method_not_allowed",
  "unsupported_media_type",
  "not_acceptable",
  "csrf",
  "nesting_too_deep",
  "parse_failed",
  "validation_failed",
  "over_limit",
  "invalid_variables",
  "persisted_operation",
  "rate_limited",
  "forbidden",
  "not_found",
  "other",
] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

export class GatewayMetrics implements UpstreamObserver {
  readonly registry = new Registry();
  private readonly upstreamRequests: Counter<"service" | "method" | "route" | "outcome">;
  private readonly upstreamDuration: Histogram<"service" | "route">;
  private readonly upstreamRetries: Counter<"service" | "method" | "route">;
  private readonly breakerState: Gauge<"service" | "method" | "route">;
  private readonly loaderBatchSize: Histogram<"loader">;
  private readonly refusalHolds: Counter<"outcome">;
  private readonly documentsCompiled: Counter;
  private readonly responseCacheLookups: Record<"local" | "shared" | "miss", TallySlot>;
  private readonly operationLaneRequests: Record<"executed" | "handed_on", TallySlot>;
  private readonly redisAvailable: Gauge;
  /** Made with the first cache link (REDIS_CACHE_URL), so that a gateway without one shows none. */
  private redisCacheAvailable: Gauge | undefined;
  private readonly redisFallbacks: Counter<"operation">;
  private readonly sharedCacheLookups: Counter<"tier" | "result">;
  private readonly rateLimitDecisions: Record<"allowed" | "limited", Record<"redis" | "local", TallySlot>>;
  private readonly refusals: Counter<"reason">;

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: "gateway_process_" });
    const registers = [this.registry];
    this.upstreamRequests = new Counter({
      name: "gateway_upstream_requests_total",
      help: "Upstream HTTP attempts by service, route template and outcome (HTTP status, network-error or deadline).",
      labelNames: ["service", "method", "route", "outcome"],
      registers,
    });
    this.upstreamDuration = new Histogram({
      name: "gateway_upstream_request_duration_seconds",
      help: "Duration of upstream HTTP attempts, body included.",
      labelNames: ["service", "route"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.upstreamRetries = new Counter({
      name: "gateway_upstream_retries_total",
      help: "Retries of idempotent upstream GETs.",
      labelNames: ["service", "method", "route"],
      registers,
    });
    this.breakerState = new Gauge({
      name: "gateway_upstream_breaker_state",
      help: "Circuit breaker state per upstream route (method and route template), from its first call: 0 closed, 1 half-open, 2 open.",
      labelNames: ["service", "method", "route"],
      // Over several workers (cluster /metrics), the worst of them.
      aggregator: "max",
      registers,
    });
    this.loaderBatchSize = new Histogram({
      name: "gateway_loader_batch_size",
      help: "Keys per DataLoader batch.",
      labelNames: ["loader"],
      buckets: [1, 2, 5, 10, 20, 50, 100],
      registers,
    });
    // Counted once per request (a cache hit's own cost): tallied, added when collected.
    const lookups = new CounterTally<"result">();
    this.responseCacheLookups = {
      local: lookups.slot({ result: "local" }),
      shared: lookups.slot({ result: "shared" }),
      miss: lookups.slot({ result: "miss" }),
    };
    new Counter({
      name: "gateway_response_cache_lookups_total",
      help: "Response cache look-ups of cacheable requests: a hit in this process (local), in the shared tier (shared), or a miss.",
      labelNames: ["result"],
      registers,
      collect() {
        lookups.addTo(this);
      },
    });
    const laneRequests = new CounterTally<"outcome">();
    this.operationLaneRequests = {
      executed: laneRequests.slot({ outcome: "executed" }),
      handed_on: laneRequests.slot({ outcome: "handed_on" }),
    };
    new Counter({
      name: "gateway_operation_lane_requests_total",
      help: "Known queries the listener took past Yoga's HTTP layer (src/server/operation-lane.ts): executed there, or handed on to Yoga before anything ran (the caller could not pay, or an identical request came first).",
      labelNames: ["outcome"],
      registers,
      collect() {
        laneRequests.addTo(this);
      },
    });
    this.redisAvailable = new Gauge({
      name: "gateway_redis_up",
      help: "1 while the shared Redis answers, 0 while the gateway falls back to its local cache and buckets (or has no Redis).",
      // Over several workers (cluster /metrics), 1 only while every worker reaches Redis.
      aggregator: "min",
      registers,
    });
    this.redisFallbacks = new Counter({
      name: "gateway_redis_fallbacks_total",
      help: "Redis commands that failed or timed out, by what they were for; each was answered from local state.",
      labelNames: ["operation"],
      registers,
    });
    this.sharedCacheLookups = new Counter({
      name: "gateway_shared_cache_lookups_total",
      help: "Look-ups that Redis answered, in the record tier or the response tier, by result (hit or miss); those it did not answer are fallbacks.",
      labelNames: ["tier", "result"],
      registers,
    });
    const decisions = new CounterTally<"result" | "store">();
    this.rateLimitDecisions = {
      allowed: {
        redis: decisions.slot({ result: "allowed", store: "redis" }),
        local: decisions.slot({ result: "allowed", store: "local" }),
      },
      limited: {
        redis: decisions.slot({ result: "limited", store: "redis" }),
        local: decisions.slot({ result: "limited", store: "local" }),
      },
    };
    new Counter({
      name: "gateway_rate_limit_decisions_total",
      help: "Operations the rate limiter let run (allowed) or refused (limited), by where the caller's bucket was: shared in Redis, or in this process.",
      labelNames: ["result", "store"],
      registers,
      collect() {
        decisions.addTo(this);
      },
    });
    this.refusals = new Counter({
      name: "gateway_refusals_total",
      help: "Requests the gateway refused before or instead of running them (bad requests, limits, budgets), by reason.",
      labelNames: ["reason"],
      registers,
    });
    this.refusalHolds = new Counter({
      name: "gateway_refusal_holds_total",
      help: "Refusals for a spent budget or a socket cap, by how they were answered: after REFUSAL_HOLD_MS (held), or at once because REFUSAL_HOLD_MAX were held (overflowed).",
      labelNames: ["outcome"],
      registers,
    });
    this.documentsCompiled = new Counter({
      name: "gateway_documents_compiled_total",
      help: "Documents graphql-jit compiled: each at its GRAPHQL_JIT_FROM_RUN-th run, once while the parse cache holds it.",
      registers,
    });
  }

  documentCompiled(): void {
    this.documentsCompiled.inc();
  }

  refusal(reason: RefusalReason): void {
    this.refusals.inc({ reason: REFUSAL_REASONS.includes(reason) ? reason : "other" });
  }

  rateLimitDecision(result: "allowed" | "limited", store: "redis" | "local"): void {
    this.rateLimitDecisions[result][store].count += 1;
  }

  redisUp(up: boolean, role: RedisRole = "shared"): void {
    if (role === "shared") return this.redisAvailable.set(up ? 1 : 0);
    this.redisCacheAvailable ??= new Gauge({
      name: "gateway_redis_cache_up",
      help: "1 while the Redis of the cache tiers (REDIS_CACHE_URL) answers, 0 while the gateway serves from its local caches alone.",
      aggregator: "min",
      registers: [this.registry],
    });
    this.redisCacheAvailable.set(up ? 1 : 0);
  }

  /** A Redis command that failed or timed out, so that the gateway went on with what it holds locally. */
  redisFallback(operation: string): void {
    this.redisFallbacks.inc({ operation });
  }

  /** A look-up in the shared (Redis) tier of the record cache or the response cache. */
  sharedCacheLookup(tier: "record" | "response", hit: boolean): void {
    this.sharedCacheLookups.inc({ tier, result: hit ? "hit" : "miss" });
  }

  operationLaneRequest(outcome: "executed" | "handed_on"): void {
    this.operationLaneRequests[outcome].count += 1;
  }

  responseCacheLookup(result: "local" | "shared" | "miss"): void {
    this.responseCacheLookups[result].count += 1;
  }

  call(service: string, method: string, route: string, outcome: string, seconds: number): void {
    this.upstreamRequests.inc({ service, method, route, outcome });
    this.upstreamDuration.observe({ service, route }, seconds);
  }

  retry(service: string, method: string, route: string): void {
    this.upstreamRetries.inc({ service, method, route });
  }

  breaker(service: string, method: string, route: string, state: BreakerState): void {
    this.breakerState.set({ service, method, route }, BREAKER_LEVEL[state]);
  }

  loaderBatch(loader: string, size: number): void {
    this.loaderBatchSize.observe({ loader }, size);
  }

  /** Counts cache look-ups as they happen; sizes are read when Prometheus scrapes. */
  watchCache(cache: WatchedCache): void {
    const registers = [this.registry];
    const lookups = new Counter({
      name: "gateway_cache_lookups_total",
      help: "Shared record cache look-ups by result (hit or miss).",
      labelNames: ["result"],
      registers,
    });
    cache.onLookup = (hit) => lookups.inc({ result: hit ? "hit" : "miss" });
    this.watchSizes(
      "gateway_cache",
      { entries: "Records in the shared cache.", bytes: "Approximate bytes (JSON length) held by the shared cache." },
      () => cache.stats(),
    );
  }

  /** `<name>_entries` and `<name>_bytes` of a cache, read when Prometheus scrapes. */
  watchSizes(name: string, help: { entries: string; bytes: string }, sizes: () => { entries: number; bytes: number }): void {
    for (const measure of ["entries", "bytes"] as const) {
      new Gauge({
        name: `${name}_${measure}`,
        help: help[measure],
        registers: [this.registry],
        collect() {
          this.set(sizes()[measure]);
        },
      });
    }
  }

  /** The live feed's pollers and their subscribers on this gateway, read when Prometheus scrapes. */
  watchLive(counts: () => { pollers: number; subscribers: number }, readsWaiting: () => number): void {
    new Gauge({
      name: "gateway_live_pollers",
      help: "Live questions this gateway polls (or follows another gateway's poller of): one per distinct route and arguments with subscribers.",
      registers: [this.registry],
      collect() {
        this.set(counts().pollers);
      },
    });
    new Gauge({
      name: "gateway_live_subscribers",
      help: "Open live subscriptions (new blocks, transactions, metric points) on this gateway.",
      registers: [this.registry],
      collect() {
        this.set(counts().subscribers);
      },
    });
    new Gauge({
      name: "gateway_live_reads_waiting",
      help: "Live pollers' upstream reads waiting for their turn of LIVE_MAX_READS_PER_SECOND: above 0 for long, the pollers' intervals stretch.",
      registers: [this.registry],
      collect() {
        this.set(readsWaiting());
      },
    });
  }

  /** The refusals held back now; `refusalHeld` counts each as it is held or, the holds full, answered at once. */
  watchRefusalHolds(held: () => number): void {
    new Gauge({
      name: "gateway_refusals_held",
      help: "Refusals (spent budgets, socket caps) waiting out REFUSAL_HOLD_MS before they are answered.",
      registers: [this.registry],
      collect() {
        this.set(held());
      },
    });
  }

  refusalHeld(outcome: "held" | "overflowed"): void {
    this.refusalHolds.inc({ outcome });
  }
}
