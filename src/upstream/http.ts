/**
 * One HTTP client per upstream service: an undici Pool with keep-alive and explicit
 * timeouts, JSON in and out, upstream errors mapped to typed GraphQL errors, identical
 * concurrent GETs coalesced into one request, every call bounded by its request's deadline,
 * idempotent GETs retried within a budget, and a circuit breaker that fails fast while the
 * service fails; both the budget and the breaker are per route (./route-breakers.ts).
 */
import { setTimeout as sleep } from "node:timers/promises";
import CircuitBreaker from "opossum";
import { Pool } from "undici";
import type { Dispatcher } from "undici";
import type { UpstreamConfig } from "../config.ts";
import type { UpstreamError } from "../errors.ts";
import { CallDeadline } from "./call-deadline.ts";
import { API_KEY_HEADER, type CallOptions, type KeyPolicy, type SentRequests } from "./call-options.ts";
import {
  countsAgainstService,
  describeNetworkError,
  isRetryable,
  parseRetryAfter,
  upstreamMalformed,
  upstreamMessage,
  upstreamStatusError,
  upstreamUnreachable,
} from "./outcomes.ts";
import { requestTarget, type UpstreamCall } from "./request-target.ts";
import { ProbeWaitExpired, RouteBreakers } from "./route-breakers.ts";
import type { BreakerState, UpstreamObserver } from "../telemetry/observers.ts";

/** What the client reports as it works (src/telemetry/observers.ts), when nothing watches it. */
export const silentObserver: UpstreamObserver = { call() {}, retry() {}, breaker() {} };

interface Attempt {
  method: "GET" | "POST";
  route: string;
  path: string;
  body: string | undefined;
  apiKey: string | undefined;
  /** The key is the caller's own (not the gateway's): the upstream's verdict on it is noted. */
  callerKey: boolean;
  requestId: string | undefined;
  deadline: number;
  parseBody: (text: string) => unknown;
  /** Where the request that starts this attempt counts what it sends. */
  sentRequests: SentRequests | undefined;
}

export class UpstreamService {
  readonly name: string;
  private readonly origin: string;
  private readonly basePath: string;
  private readonly pool: Pool;
  private readonly breakers: RouteBreakers<Attempt>;
  private readonly inFlight = new Map<string, Promise<unknown>>();

  constructor(
    name: string,
    baseUrl: string,
    private readonly config: UpstreamConfig,
    private readonly defaultApiKey?: string,
    private readonly observer: UpstreamObserver = silentObserver,
    private readonly keyPolicy?: KeyPolicy,
  ) {
    const url = new URL(baseUrl);
    this.name = name;
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, "");
    this.pool = new Pool(this.origin, {
      connections: config.connections,
      pipelining: 1,
      connectTimeout: config.connectTimeoutMs,
      headersTimeout: config.headersTimeoutMs,
      bodyTimeout: config.bodyTimeoutMs,
      keepAliveTimeout: config.keepAliveTimeoutMs,
    });
    this.breakers = new RouteBreakers(name, (attempt: Attempt) => this.attempt(attempt), {
      errorPercentage: config.breakerErrorPercentage,
      volumeThreshold: config.breakerVolumeThreshold,
      resetMs: config.breakerResetMs,
      retryBudgetRatio: config.retryBudgetRatio,
      retryBudgetCap: config.retryBudgetCap,
      countsAgainstService,
      onState: (method, route, state) => observer.breaker(name, method, route, state),
    });
  }

  /**
   * The state of one route's breaker (`GET` and a route template); closed for a route not called
   * yet. A service has no state of its own: a route's failures say nothing of its other routes.
   */
  breakerState(route: string, method: "GET" | "POST" = "GET"): BreakerState {
    return this.breakers.state(method, route);
  }

  /**
   * Whether records the gateway holds may answer for this call's key: always for the gateway's
   * own key; for a caller's key, once this service accepted it lately. Until then the caller's
   * calls go upstream, so that a key the service refuses is never served from a shared cache.
   */
  vouchesFor(options: CallOptions | undefined): boolean {
    if (options?.apiKey === undefined || this.keyPolicy === undefined) return true;
    return this.keyPolicy.verdicts.isAccepted(options.apiKey);
  }

  /** GET a JSON document; identical concurrent GETs (same URL and key) share one request. */
  get<T>(call: UpstreamCall, options: CallOptions = {}): Promise<T> {
    let path: string;
    try {
      path = requestTarget(this.basePath, call);
    } catch (error) {
      return Promise.reject(error);
    }
    const apiKey = options.apiKey ?? this.defaultApiKey;
    const deadline = options.deadline ?? Date.now() + this.config.headersTimeoutMs + this.config.bodyTimeoutMs;
    const coalesceKey = `${apiKey ?? ""}\u0000${path}`;
    let shared = this.inFlight.get(coalesceKey) as Promise<T> | undefined;
    if (!shared) {
      shared = this.send<T>({
        method: "GET",
        route: call.route,
        path,
        body: undefined,
        apiKey,
        callerKey: options.apiKey !== undefined,
        requestId: options.requestId,
        deadline,
        parseBody: options.parseBody ?? JSON.parse,
        sentRequests: options.sentRequests,
      });
      this.inFlight.set(coalesceKey, shared);
      void shared.then(
        () => this.inFlight.delete(coalesceKey),
        () => this.inFlight.delete(coalesceKey),
      );
      return shared;
    }
    // A caller that joins a request already under way still gets its own deadline.
    return this.withinDeadline(shared, deadline);
  }

  /** POST a JSON body; never retried, never coalesced. */
  post<T>(call: UpstreamCall, body: unknown, options: CallOptions = {}): Promise<T> {
    let path: string;
    try {
      path = requestTarget(this.basePath, call);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.send<T>({
      method: "POST",
      route: call.route,
      path,
      body: JSON.stringify(body),
      apiKey: options.apiKey ?? this.defaultApiKey,
      callerKey: options.apiKey !== undefined,
      requestId: options.requestId,
      deadline: options.deadline ?? Date.now() + this.config.headersTimeoutMs + this.config.bodyTimeoutMs,
      parseBody: options.parseBody ?? JSON.parse,
      sentRequests: options.sentRequests,
    });
  }

  async close(): Promise<void> {
    this.breakers.shutdown();
    await this.pool.close();
  }

  /**
   * The timer is cleared as soon as the shared request settles: a timer left to run out would
   * keep the settled answer reachable until the deadline, promoting every page into old space.
   */
  private withinDeadline<T>(promise: Promise<T>, deadline: number): Promise<T> {
    const remaining = deadline - Date.now();
    if (remaining <= 0) return Promise.reject(upstreamUnreachable(this.name, "the request's deadline passed"));
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(upstreamUnreachable(this.name, "the request's deadline passed")), remaining);
      promise.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }

  private async send<T>(attempt: Attempt): Promise<T> {
    const route = this.breakers.of(attempt.method, attempt.route);
    route.budget.deposit();
    for (let retry = 0; ; retry += 1) {
      // A call whose request ran out of time before it was sent says nothing of the service: it
      // never reaches the breaker, so that callers' deadlines cannot open the circuit for everyone.
      if (attempt.deadline <= Date.now()) throw this.deadlinePassed(attempt);
      try {
        return (await route.fire(attempt, attempt.deadline)) as T;
      } catch (error) {
        if (error instanceof ProbeWaitExpired) throw this.deadlinePassed(attempt);
        if (CircuitBreaker.isOurError(error as Error)) {
          throw upstreamUnreachable(this.name, "failing fast while this route of the service recovers (circuit open)");
        }
        if (attempt.method !== "GET" || retry >= this.config.retries || !isRetryable(error)) throw error;
        const backoff = this.backoffMs(retry, error);
        if (Date.now() + backoff >= attempt.deadline || !route.budget.withdraw()) throw error;
        this.observer.retry(this.name, attempt.method, attempt.route);
        await sleep(backoff);
      }
    }
  }

  /** A call never sent because its request's deadline passed first. */
  private deadlinePassed(attempt: Attempt): UpstreamError {
    this.observer.call(this.name, attempt.method, attempt.route, "deadline", 0);
    return upstreamUnreachable(this.name, "the request's deadline passed");
  }

  /** Notes what the service said of a caller's key: refused (401, 403), or accepted where it checks keys. */
  private noteVerdict(apiKey: string, status: number): void {
    if (this.keyPolicy === undefined) return;
    if (status === 401 || status === 403) this.keyPolicy.verdicts.refuse(apiKey, { status, service: this.name });
    else if (this.keyPolicy.checksKeys && status >= 200 && status < 300) this.keyPolicy.verdicts.accept(apiKey);
  }

  /** Full jitter on an exponential base, but never sooner than the service's `retry-after`. */
  private backoffMs(retry: number, error: UpstreamError): number {
    const exponential = this.config.retryBaseMs * 2 ** retry;
    const jittered = Math.random() * exponential;
    const retryAfter = (error.extensions.retryAfter as number | null | undefined) ?? null;
    return retryAfter !== null ? Math.max(retryAfter * 1000, jittered) : jittered;
  }

  private async attempt(attempt: Attempt): Promise<unknown> {
    const started = performance.now();
    const observe = (outcome: string) =>
      this.observer.call(this.name, attempt.method, attempt.route, outcome, (performance.now() - started) / 1000);
    // `send` checked the deadline just before: at least a millisecond is left, or the call stops at once.
    const remaining = Math.max(1, attempt.deadline - Date.now());

    const headers: Record<string, string> = { accept: "application/json" };
    if (attempt.body !== undefined) headers["content-type"] = "application/json";
    if (attempt.apiKey) headers[API_KEY_HEADER] = attempt.apiKey;
    if (attempt.requestId) headers["x-request-id"] = attempt.requestId;

    let response: Dispatcher.ResponseData;
    let text: string;
    // The deadline ends the call wherever it is: queued for a connection of the pool, waiting
    // for headers, or reading the body. Undici's own timeouts start only once it is sent.
    const deadline = new CallDeadline(remaining);
    if (attempt.sentRequests) attempt.sentRequests.count += 1;
    try {
      response = await this.pool.request({
        method: attempt.method,
        path: attempt.path,
        headers,
        body: attempt.body,
        signal: deadline,
        headersTimeout: Math.min(this.config.headersTimeoutMs, remaining),
        bodyTimeout: Math.min(this.config.bodyTimeoutMs, remaining),
      });
      text = await response.body.text();
    } catch (error) {
      const passed = deadline.aborted;
      observe(passed ? "deadline" : "network-error");
      throw upstreamUnreachable(this.name, passed ? "the request's deadline passed" : describeNetworkError(error));
    } finally {
      deadline.clear();
    }

    const { statusCode } = response;
    observe(String(statusCode));
    if (attempt.callerKey && attempt.apiKey !== undefined) this.noteVerdict(attempt.apiKey, statusCode);
    if (statusCode < 200 || statusCode >= 300) {
      const retryAfter = response.headers["retry-after"];
      throw upstreamStatusError(
        this.name,
        statusCode,
        upstreamMessage(text),
        parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter),
      );
    }
    try {
      return attempt.parseBody(text);
    } catch {
      throw upstreamMalformed(this.name, statusCode);
    }
  }
}
