/**
 * Row 6: `GET /ready` asked thousands of times must not become thousands of upstream health checks.
 *
 * Transports: HTTP only: `/ready` is an HTTP endpoint of the listener, not a GraphQL operation.
 */
import { afterEach, describe, expect, it } from "vitest";
import { UpstreamReadiness, type HealthRoute } from "../../src/plugins/readiness.ts";
import { execute, metricsText, startHarness, until, upstreamCalls, type Harness } from "../support/harness.ts";

const HEALTH_ROUTES = ["GET /v1/health-check", "GET /v2/health-check"];

const started: Harness[] = [];
async function harnessWith(env: Record<string, string>): Promise<Harness> {
  const harness = await startHarness(env);
  started.push(harness);
  harness.simulator.resetCounters();
  return harness;
}
afterEach(async () => {
  for (const harness of started.splice(0)) await harness.close();
});

async function ready(harness: Harness, path = "/ready", headers: Record<string, string> = {}): Promise<number> {
  const response = await harness.gateway.yoga.fetch(`http://gateway.test${path}`, { headers });
  await response.arrayBuffer();
  return response.status;
}

async function stillServes(harness: Harness): Promise<void> {
  expect((await execute(harness, "{ __typename }")).body).toEqual({ data: { __typename: "Query" } });
}

describe("row 6: /ready", () => {
  it("row 6: 500 concurrent and 500 sequential GET /ready make one call to each health route", async () => {
    // An interval longer than the test: every ask below falls within the first one.
    const harness = await harnessWith({ READY_CACHE_MS: "600000" });
    const concurrent = await Promise.all(
      Array.from({ length: 500 }, (_, index) =>
        ready(harness, index % 2 ? "/ready" : `/ready?probe=${index}`, { "x-glacier-api-key": `k${index}` }),
      ),
    );
    expect(concurrent.every((status) => status === 200)).toBe(true);
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/health-check": 1, "GET /v2/health-check": 1 });
    for (let index = 0; index < 500; index += 1) expect(await ready(harness)).toBe(200);
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/health-check": 1, "GET /v2/health-check": 1 });
    await stillServes(harness);
  });

  it("row 6: with a health route's breaker open, /ready answers 503 at once, without asking the upstream", async () => {
    // A new check on every ask (1 ms), so that two failed checks open the health route's breaker.
    const harness = await harnessWith({
      READY_CACHE_MS: "1",
      BREAKER_VOLUME_THRESHOLD: "2",
      BREAKER_RESET_MS: "600000",
      UPSTREAM_RETRIES: "0",
    });
    expect(await ready(harness)).toBe(200);
    harness.simulator.setKnobs({ errorRate: 1, errorStatus: 500, errorRoutes: ["GET /v1/health-check"] });
    // Each ask is a failed check (503) until the health route's breaker opens.
    await until(
      async () =>
        (await ready(harness)) === 503 &&
        /^gateway_upstream_breaker_state\{service="Data API",method="GET",route="\/v1\/health-check"\} 2$/m.test(
          await metricsText(harness),
        ),
      "the health route's breaker to open",
      5_000,
    );
    harness.simulator.resetCounters();
    const statuses = await Promise.all(Array.from({ length: 200 }, () => ready(harness)));
    expect(statuses.every((status) => status === 503)).toBe(true);
    expect(upstreamCalls(harness)).toEqual({});
    await stillServes(harness);
  });

  it("row 6: another route's open breaker leaves /ready as the health check says: one route failing is no reason to leave the rotation", async () => {
    const harness = await harnessWith({
      READY_CACHE_MS: "1",
      BREAKER_VOLUME_THRESHOLD: "2",
      BREAKER_RESET_MS: "600000",
      UPSTREAM_RETRIES: "0",
    });
    harness.simulator.setKnobs({ errorRate: 1, errorStatus: 500, errorRoutes: ["GET /v1/chains"] });
    for (let call = 0; call < 3; call += 1) await execute(harness, `{ chains { chainId } }`);
    harness.simulator.resetCounters();
    // The chain list fails fast...
    expect((await execute(harness, `{ chains { chainId } }`)).body.errors![0]!.message).toMatch(/circuit open/);
    expect(upstreamCalls(harness)).toEqual({});
    // ...and the instance is ready: its health routes answer.
    expect(await ready(harness)).toBe(200);
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/health-check": 1, "GET /v2/health-check": 1 });
    expect(await metricsText(harness)).toMatch(
      /^gateway_upstream_breaker_state\{service="Data API",method="GET",route="\/v1\/chains"\} 2$/m,
    );
    await stillServes(harness);
  });

  it("row 6: with the upstream down, /ready turns 503 within one interval, and a burst of asks shares one check", async () => {
    const harness = await harnessWith({ READY_CACHE_MS: "1000", UPSTREAM_RETRIES: "0" });
    expect(await ready(harness)).toBe(200);
    harness.simulator.setKnobs({ errorRate: 1, errorStatus: 500, errorRoutes: HEALTH_ROUTES });
    await until(async () => (await ready(harness)) === 503, "/ready to turn 503", 5_000);
    const before = harness.simulator.counters();
    const statuses = await Promise.all(Array.from({ length: 300 }, () => ready(harness)));
    expect(statuses.every((status) => status === 503)).toBe(true);
    // The burst may straddle the end of an interval: then it shares one new check.
    for (const route of HEALTH_ROUTES)
      expect((harness.simulator.counters()[route] ?? 0) - (before[route] ?? 0)).toBeLessThanOrEqual(1);
    harness.simulator.setKnobs({ errorRate: 0, errorRoutes: [] });
    await until(async () => (await ready(harness)) === 200, "/ready to turn 200 again", 5_000);
    await stillServes(harness);
  });
});

describe("row 6: the readiness check", () => {
  /** A service whose health route answers as `up` says, counting its calls, on a clock the test moves. */
  function fakeRoute(): HealthRoute & { calls: number; up: boolean; release: () => void } {
    let pending: (() => void)[] = [];
    const route = {
      calls: 0,
      up: true,
      release: () => {
        for (const resolve of pending) resolve();
        pending = [];
      },
      route: "/health",
      service: {
        breakerState: () => "closed" as const,
        get: <T>() => {
          route.calls += 1;
          return new Promise<T>((resolve, reject) =>
            pending.push(() => (route.up ? resolve(undefined as T) : reject(new Error("down")))),
          );
        },
      },
    };
    return route;
  }

  it("row 6: checks at most once per interval, and callers who ask during a check share it", async () => {
    let now = 0;
    const route = fakeRoute();
    const readiness = new UpstreamReadiness([route], { maxAgeMs: 1_000, timeoutMs: 2_000, now: () => now });
    const asks = Array.from({ length: 100 }, () => readiness.ready());
    expect(route.calls).toBe(1);
    route.release();
    expect(await Promise.all(asks)).toEqual(asks.map(() => true));
    now = 999;
    expect(readiness.ready()).toBe(true);
    expect(route.calls).toBe(1);

    route.up = false;
    now = 1_000;
    const after = [readiness.ready(), readiness.ready()];
    expect(route.calls).toBe(2);
    route.release();
    expect(await Promise.all(after)).toEqual([false, false]);
    now = 1_999;
    expect(readiness.ready()).toBe(false);
    expect(route.calls).toBe(2);
  });
});
