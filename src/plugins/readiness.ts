/**
 * `GET /ready`: whether the upstreams can serve. The answer comes from one health check of the
 * upstreams at most `maxAgeMs` old: however many callers ask, and however often, the upstreams
 * see at most one check per interval, and callers who ask while a check runs share it.
 */
import type { Plugin } from "graphql-yoga";
import type { UpstreamService } from "../upstream/http.ts";

/** One service and the route that tells whether it is up. */
export interface HealthRoute {
  service: Pick<UpstreamService, "breakerState" | "get">;
  route: string;
}

export interface ReadinessOptions {
  /** How long one check's result answers every caller. */
  maxAgeMs: number;
  /** How long one check may wait for the upstreams. */
  timeoutMs: number;
  /** The clock, in ms; for tests. */
  now?: () => number;
}

export class UpstreamReadiness {
  private readonly now: () => number;
  private checked: { ready: boolean; at: number } | undefined;
  private checking: Promise<boolean> | undefined;

  constructor(
    private readonly routes: readonly HealthRoute[],
    private readonly options: ReadinessOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /**
   * Ready when no health route's breaker is open and the last health check, at most `maxAgeMs`
   * old, passed. Other routes' breakers do not count: one route failing (a look-up the service
   * cannot answer, which any caller can repeat) leaves the service's other routes serving, so
   * taking the instance out of rotation would help no one.
   */
  ready(): boolean | Promise<boolean> {
    // An open breaker is known here and now: it answers at once, without a check.
    if (this.routes.some(({ service, route }) => service.breakerState(route) === "open")) return false;
    if (this.checked && this.now() - this.checked.at < this.options.maxAgeMs) return this.checked.ready;
    this.checking ??= this.check().then((ready) => {
      this.checked = { ready, at: this.now() };
      this.checking = undefined;
      return ready;
    });
    return this.checking;
  }

  private async check(): Promise<boolean> {
    const deadline = Date.now() + this.options.timeoutMs;
    try {
      await Promise.all(this.routes.map(({ service, route }) => service.get({ route }, { deadline })));
      return true;
    } catch {
      return false;
    }
  }
}

/**
 * Answers `endpoint` with 200 while `readiness` says ready, else 503. Matched on the path Yoga
 * has parsed already; Yoga's own readiness plugin tests a URLPattern against every request,
 * which costs more than the rest of the plugins together on a request for a cached answer.
 */
export function useReadiness(endpoint: string, readiness: UpstreamReadiness): Plugin {
  return {
    onRequest({ url, endResponse, fetchAPI }) {
      if (url.pathname !== endpoint) return;
      const answer = (ready: boolean) => endResponse(new fetchAPI.Response(null, { status: ready ? 200 : 503 }));
      const ready = readiness.ready();
      if (typeof ready === "boolean") return answer(ready);
      return ready.then(answer);
    },
  };
}
