/**
 * What each upstream route has of its own: a circuit breaker and a retry budget. A route is a
 * method and a route template from the route table (`GET /v1/chains/{chainId}/blocks`), a fixed
 * set that no input can grow, so one breaker per route costs a bounded amount. A route's failures
 * open its own breaker and spend its own budget only: a caller who finds one look-up the service
 * answers with 500 cannot make every other route fail fast, nor spend their retries.
 *
 * Half-open, opossum lets one call through (the probe) and refuses the others at once. Here, the
 * route's other calls wait for the probe's outcome instead, each within its own deadline: they go
 * on if it closed the breaker and fail fast if it opened it again. They all wait on one promise,
 * and only as long as they exist.
 */
import CircuitBreaker from "opossum";
import type { BreakerState } from "../telemetry/observers.ts";

export interface RouteBreakerSettings {
  /** The breaker opens when this share (percent) of its route's recent calls failed... */
  errorPercentage: number;
  /** ...once the route made at least this many calls in the rolling window. */
  volumeThreshold: number;
  /** How long the breaker stays open before one probe call may pass. */
  resetMs: number;
  /** Each call adds this much to its route's retry budget; each retry takes 1. */
  retryBudgetRatio: number;
  retryBudgetCap: number;
  /** Whether a call's error counts as a failure of the service (else the breaker counts it a success). */
  countsAgainstService: (error: unknown) => boolean;
  /** Told each route's state as it changes, and once when the route is first called. */
  onState: (method: string, route: string, state: BreakerState) => void;
}

/** A call that waited for its route's probe until its deadline passed; it was never sent. */
export class ProbeWaitExpired extends Error {
  constructor() {
    super("the request's deadline passed while the route's probe was under way");
  }
}

/** Retries spend from a budget that calls refill, so that retries never multiply an outage. */
export class RetryBudget {
  private tokens: number;

  constructor(
    private readonly ratio: number,
    private readonly cap: number,
  ) {
    this.tokens = cap;
  }

  deposit(): void {
    this.tokens = Math.min(this.cap, this.tokens + this.ratio);
  }

  withdraw(): boolean {
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** Whether `promise` settles before `deadline` (epoch ms); the timer goes as soon as it does. */
function settlesBefore(promise: Promise<void>, deadline: number): Promise<boolean> {
  const remaining = deadline - Date.now();
  if (remaining <= 0) return Promise.resolve(false);
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), remaining);
    void promise.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

export class RouteBreaker<A> {
  readonly budget: RetryBudget;
  private readonly breaker: CircuitBreaker<[A], unknown>;
  /** Settles (never rejects) when the half-open breaker's probe has its outcome; unset otherwise. */
  private probe: Promise<void> | undefined;

  constructor(
    name: string,
    action: (argument: A) => Promise<unknown>,
    settings: RouteBreakerSettings,
    onState: (state: BreakerState) => void,
  ) {
    this.budget = new RetryBudget(settings.retryBudgetRatio, settings.retryBudgetCap);
    this.breaker = new CircuitBreaker(action, {
      name,
      timeout: false,
      errorThresholdPercentage: settings.errorPercentage,
      volumeThreshold: settings.volumeThreshold,
      resetTimeout: settings.resetMs,
      rollingCountTimeout: 10_000,
      // Latency is measured by the gateway's histograms; the breaker would keep and sort every call's.
      rollingPercentilesEnabled: false,
      errorFilter: (error: unknown) => !settings.countsAgainstService(error),
    });
    this.breaker.on("open", () => onState("open"));
    this.breaker.on("halfOpen", () => onState("half-open"));
    this.breaker.on("close", () => onState("closed"));
    onState("closed");
  }

  get state(): BreakerState {
    return this.breaker.opened ? "open" : this.breaker.halfOpen ? "half-open" : "closed";
  }

  /**
   * Runs the action through the breaker. While the probe of a half-open breaker is under way,
   * waits for its outcome first (until `deadline`, else ProbeWaitExpired): a closed breaker then
   * lets the call through, an open one refuses it with opossum's own error (`isOurError`).
   */
  async fire(argument: A, deadline: number): Promise<unknown> {
    while (this.probe !== undefined) {
      if (!(await settlesBefore(this.probe, deadline))) throw new ProbeWaitExpired();
    }
    // From here to `fire` nothing awaits: no other call can take the probe in between.
    const probing = this.breaker.halfOpen && this.breaker.pendingClose;
    const call = this.breaker.fire(argument);
    if (probing) {
      const done = () => {
        if (this.probe === probe) this.probe = undefined;
      };
      // The probe's outcome is set (closed, or open again) before its call settles.
      const probe: Promise<void> = call.then(done, done);
      this.probe = probe;
    }
    return call;
  }

  shutdown(): void {
    this.breaker.shutdown();
  }
}

/** The breakers of one service's routes, made as each route is first called. */
export class RouteBreakers<A> {
  private readonly routes = new Map<string, RouteBreaker<A>>();

  constructor(
    private readonly service: string,
    private readonly action: (argument: A) => Promise<unknown>,
    private readonly settings: RouteBreakerSettings,
  ) {}

  /** The breaker of `method` `route` (a route template, never a filled path). */
  of(method: string, route: string): RouteBreaker<A> {
    const key = `${method} ${route}`;
    let found = this.routes.get(key);
    if (found === undefined) {
      found = new RouteBreaker(`${this.service} ${key}`, this.action, this.settings, (state) =>
        this.settings.onState(method, route, state),
      );
      this.routes.set(key, found);
    }
    return found;
  }

  /** The state of a route's breaker; closed for a route not called yet. */
  state(method: string, route: string): BreakerState {
    return this.routes.get(`${method} ${route}`)?.state ?? "closed";
  }

  shutdown(): void {
    for (const breaker of this.routes.values()) breaker.shutdown();
  }
}
