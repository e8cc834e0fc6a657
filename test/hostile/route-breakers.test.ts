/**
 * A failure's blast radius is its route (issue 27, item 1). The breaker is one per upstream
 * route: whoever fails one route until its breaker opens makes that route fail fast, and every
 * other route of the service still answers, its calls made. Half-open, the route's probe does not
 * cost a request its sibling fields: the other calls wait for the probe's outcome. Retries spend
 * a budget of their route's own.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ROUTES } from "../../src/upstream/routes.ts";
import { execute, metricsText, startHarness, until, upstreamCalls, type Harness } from "../support/harness.ts";
import { C_CHAIN, MUTATION_ROWS, QUERY_ROWS, valuesOf, type Values } from "../support/route-rows.ts";

/** The audit's look-up: the simulator cannot aggregate this transaction's message, and answers 500. */
const WARP_ROUTE = "GET /v1/signatureAggregator/{network}/aggregateSignatures/{txHash}";
const FAILING_WARP =
  '{ warpSignature(network: MAINNET, txHash: "24n2QhMUBtcGMspvNdaSeGQNF82CDjArUD3f34hpM5PKkKZfGD") { signedMessage } }';
/** The audit's request that an open Data API circuit emptied. */
const AUDIT_QUERY = `{ latestBlocks(first: 2) { nodes { blockNumber } } chain(id: "${C_CHAIN}") { blocks(first: 1) { nodes { blockNumber } } } }`;
const METRICS_ROUTE = "GET /v2/validators/metrics/{metric}";
const FAILING_METRICS = "{ validatorFeeMetrics(metric: TOTAL_VALIDATOR_FEES_DAILY, first: 2) { nodes { timestamp } } }";
const BLOCK_ROUTE = "GET /v1/chains/{chainId}/blocks/{blockId}";

const serviceOf = new Map(Object.values(ROUTES).map((route) => [route.label, route.service]));
const DATA_ROUTES = QUERY_ROWS.concat(MUTATION_ROWS).filter((row) => serviceOf.get(row.route) === "data");
const METRICS_ROUTES = QUERY_ROWS.concat(MUTATION_ROWS).filter((row) => serviceOf.get(row.route) === "metrics");

/** The breaker's defaults (20 calls, half failing), a reset long enough that no probe comes. */
const DEFAULT_BREAKER = { BREAKER_RESET_MS: "600000", RATE_LIMIT_RATE: "100000", RATE_LIMIT_BURST: "100000" };

function breakerGauge(text: string, service: string, method: string, route: string): string | undefined {
  const line = text
    .split("\n")
    .find((entry) =>
      entry.startsWith(`gateway_upstream_breaker_state{service="${service}",method="${method}",route="${route}"}`),
    );
  return line?.split(" ").at(-1);
}

let harness: Harness;
let values: Values;

beforeAll(async () => {
  harness = await startHarness(DEFAULT_BREAKER);
  values = valuesOf(harness);
});

afterAll(async () => {
  await harness.close();
});

beforeEach(() => {
  harness.simulator.setKnobs({ errorRate: 0, errorStatus: 500, errorRoutes: [], latencyMs: 0 });
  harness.simulator.resetCounters();
});

/**
 * Every route of `rows` is called and answered by the service (nothing is served from a cache):
 * with data, or for the row whose input the service refuses when healthy (aggregateWarpSignatures'
 * justification), with the service's own 4xx. Never "circuit open".
 */
async function everyRouteAnswers(rows: typeof QUERY_ROWS): Promise<void> {
  for (const row of rows) {
    harness.gateway.cache.clear();
    harness.simulator.resetCounters();
    const operation = MUTATION_ROWS.includes(row) ? "mutation" : "query";
    const result = await execute(harness, `${operation} { ${row.selection(values)} }`);
    const context = `${row.route} (${row.via})`;
    expect(upstreamCalls(harness)[row.route], `${context} called`).toBeGreaterThan(0);
    if (operation === "query") expect(result.body.errors, context).toBeUndefined();
    for (const error of result.body.errors ?? []) {
      expect(error.extensions?.upstream, `${context}: ${error.message}`).toMatchObject({ status: 400 });
    }
  }
}

describe("one route's breaker open: every other route of the service still answers", () => {
  it("Data API: the audit's 20 failed warpSignature look-ups open their route alone; latestBlocks and chain blocks answer, and so does every other route", async () => {
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const failed = await execute(harness, FAILING_WARP);
      expect(failed.body.errors![0]!.extensions).toMatchObject({ code: "UPSTREAM_ERROR", upstream: { status: 500 } });
    }
    expect(upstreamCalls(harness)).toEqual({ [WARP_ROUTE]: 20 });

    // The failing route fails fast: no call.
    harness.simulator.resetCounters();
    const refused = await execute(harness, FAILING_WARP);
    expect(refused.body.errors![0]).toMatchObject({
      message: expect.stringMatching(/circuit open/),
      extensions: { code: "UPSTREAM_UNAVAILABLE" },
    });
    expect(upstreamCalls(harness)).toEqual({});

    // The audit's request: both fields answer, their calls made.
    harness.gateway.cache.clear();
    const audit = await execute<
      { latestBlocks: { nodes: unknown[] }; chain: { blocks: { nodes: unknown[] } } },
      Record<string, never>
    >(harness, AUDIT_QUERY);
    expect(audit.body.errors).toBeUndefined();
    expect(audit.body.data!.latestBlocks.nodes).toHaveLength(2);
    expect(audit.body.data!.chain.blocks.nodes).toHaveLength(1);
    expect(upstreamCalls(harness)).toMatchObject({ "GET /v1/blocks": 1, "GET /v1/chains/{chainId}/blocks": 1 });

    await everyRouteAnswers(DATA_ROUTES.filter((row) => row.route !== WARP_ROUTE));
    // Readiness asks the health routes, whose breakers are closed.
    expect((await harness.gateway.yoga.fetch("http://gateway.test/ready")).status).toBe(200);
    // ...and the failing route still fails fast.
    harness.simulator.resetCounters();
    expect((await execute(harness, FAILING_WARP)).body.errors![0]!.message).toMatch(/circuit open/);
    expect(upstreamCalls(harness)).toEqual({});

    // The gauge says which route is open, and that the others are closed.
    const text = await metricsText(harness);
    expect(breakerGauge(text, "Data API", "GET", "/v1/signatureAggregator/{network}/aggregateSignatures/{txHash}")).toBe("2");
    expect(breakerGauge(text, "Data API", "GET", "/v1/blocks")).toBe("0");
    expect(breakerGauge(text, "Data API", "POST", "/v1/networks/{network}/blockchains/{blockchainId}/utxos")).toBe("0");
  });

  it("Metrics API: 20 failures of validatorFeeMetrics open its route alone; every other Metrics API route answers", async () => {
    harness.simulator.setKnobs({ errorRate: 1, errorStatus: 500, errorRoutes: [METRICS_ROUTE] });
    for (let attempt = 0; attempt < 20; attempt += 1) {
      harness.gateway.cache.clear();
      const failed = await execute(harness, FAILING_METRICS);
      expect(failed.body.errors![0]!.extensions).toMatchObject({ code: "UPSTREAM_ERROR", upstream: { status: 500 } });
    }
    expect(upstreamCalls(harness)).toEqual({ [METRICS_ROUTE]: 20 });

    harness.simulator.resetCounters();
    harness.gateway.cache.clear();
    const refused = await execute(harness, FAILING_METRICS);
    expect(refused.body.errors![0]!.message).toMatch(/circuit open/);
    expect(upstreamCalls(harness)).toEqual({});

    await everyRouteAnswers(METRICS_ROUTES.filter((row) => row.route !== METRICS_ROUTE));
    expect((await harness.gateway.yoga.fetch("http://gateway.test/ready")).status).toBe(200);
    harness.simulator.resetCounters();
    harness.gateway.cache.clear();
    expect((await execute(harness, FAILING_METRICS)).body.errors![0]!.message).toMatch(/circuit open/);
    expect(upstreamCalls(harness)).toEqual({});

    const text = await metricsText(harness);
    expect(breakerGauge(text, "Metrics API", "GET", "/v2/validators/metrics/{metric}")).toBe("2");
    expect(breakerGauge(text, "Metrics API", "GET", "/v2/chains/{chainId}/metrics/{metric}")).toBe("0");
  });
});

/** A breaker that opens on 3 failed calls and lets a probe through 300 ms later; no retries. */
const QUICK_BREAKER = {
  UPSTREAM_RETRIES: "0",
  BREAKER_VOLUME_THRESHOLD: "3",
  BREAKER_ERROR_PERCENTAGE: "50",
  BREAKER_RESET_MS: "300",
};
const CHAIN_METRICS_ROUTE = "GET /v2/chains/{chainId}/metrics/{metric}";

interface Recovering {
  service: string;
  route: string;
  /** One call of the route, `n` making each call another (no coalescing, no cache). */
  one: (n: number) => string;
}

const RECOVERING: readonly Recovering[] = [
  {
    service: "Data API",
    route: BLOCK_ROUTE,
    one: (n) => `b${n}: block(id: "${500 + n}") { blockNumber }`,
  },
  {
    service: "Metrics API",
    route: CHAIN_METRICS_ROUTE,
    one: (n) =>
      `m${n}: metrics(metric: ${["TX_COUNT", "ACTIVE_ADDRESSES", "ACTIVE_SENDERS"][n]}, first: 2) { nodes { timestamp } }`,
  },
];

describe.each(RECOVERING)(
  "half-open, $service: the probe's siblings on its route wait for its outcome",
  ({ service, route, one }) => {
    let quick: Harness;
    const siblings = (count: number) =>
      `{ chain(id: "${C_CHAIN}") { ${Array.from({ length: count }, (_, n) => one(n)).join(" ")} } }`;
    const [method, template] = route.split(" ") as [string, string];
    const gauge = async () => breakerGauge(await metricsText(quick), service, method, template);

    beforeEach(async () => {
      quick = await startHarness(QUICK_BREAKER);
      await execute(quick, `{ chain(id: "${C_CHAIN}") { chainId } }`);
      // Open the route's breaker: 3 failed calls, then the 4th fails fast.
      quick.simulator.setKnobs({ errorRate: 1, errorStatus: 500, errorRoutes: [route] });
      for (let call = 0; call < 3; call += 1) await execute(quick, siblings(1));
      quick.simulator.resetCounters();
      expect((await execute(quick, siblings(1))).body.errors![0]!.message).toMatch(/circuit open/);
      expect(upstreamCalls(quick)).toEqual({});
    });

    afterEach(async () => {
      await quick.close();
    });

    /** The breaker lets a probe through 300 ms after it opened. */
    const untilHalfOpen = () => sleep(400);

    it("the service healthy again: all 3 sibling fields on the recovering route get data, none is refused", async () => {
      // The probe takes 100 ms: its siblings are sent while it is under way.
      quick.simulator.setKnobs({ errorRate: 0, latencyMs: 100 });
      await untilHalfOpen();
      quick.simulator.resetCounters();
      const healed = await execute<{ chain: Record<string, unknown> }, Record<string, never>>(quick, siblings(3));
      expect(healed.body.errors).toBeUndefined();
      expect(Object.values(healed.body.data!.chain).every((value) => value !== null)).toBe(true);
      expect(upstreamCalls(quick)).toEqual({ [route]: 3 });
      expect(await gauge()).toBe("0");
    });

    it("the service still failing: the probe fails, its waiting siblings fail fast without a call", async () => {
      quick.simulator.setKnobs({ latencyMs: 100 });
      await untilHalfOpen();
      expect(await gauge()).toBe("1");
      quick.simulator.resetCounters();
      const failed = await execute(quick, siblings(3));
      const messages = failed.body.errors!.map((error) => error.message);
      expect(messages).toHaveLength(3);
      expect(messages.filter((message) => /HTTP 500/.test(message))).toHaveLength(1);
      expect(messages.filter((message) => /circuit open/.test(message))).toHaveLength(2);
      expect(upstreamCalls(quick)).toEqual({ [route]: 1 });
      expect(await gauge()).toBe("2");
    });
  },
);

describe("half-open: a call waits for the probe only within its own deadline", () => {
  it("a call whose deadline comes before the probe's answer ends at its deadline, never sent; the probe's own request gets its data", async () => {
    const quick = await startHarness(QUICK_BREAKER);
    try {
      await execute(quick, `{ chain(id: "${C_CHAIN}") { chainId } }`);
      quick.simulator.setKnobs({ errorRate: 1, errorStatus: 500, errorRoutes: [BLOCK_ROUTE] });
      for (let call = 0; call < 3; call += 1)
        await execute(quick, `{ chain(id: "${C_CHAIN}") { block(id: "${600 + call}") { blockNumber } } }`);
      quick.simulator.setKnobs({ errorRate: 0, latencyMs: 800 });
      await sleep(400);
      quick.simulator.resetCounters();
      const probe = execute<{ chain: { block: { blockNumber: string } } }, Record<string, never>>(
        quick,
        `{ chain(id: "${C_CHAIN}") { block(id: "700") { blockNumber } } }`,
      );
      await until(() => upstreamCalls(quick)[BLOCK_ROUTE] === 1, "the probe to be sent", 2_000);
      const started = Date.now();
      await expect(quick.gateway.upstreams.evm.getBlock(C_CHAIN, "701", { deadline: started + 150 })).rejects.toMatchObject({
        message: expect.stringMatching(/deadline passed/),
      });
      expect(Date.now() - started).toBeLessThan(600);
      expect(upstreamCalls(quick)).toEqual({ [BLOCK_ROUTE]: 1 });
      const probed = await probe;
      expect(probed.body.errors).toBeUndefined();
      expect(probed.body.data!.chain.block.blockNumber).toBe("700");
    } finally {
      await quick.close();
    }
  });
});

describe("retries spend their route's budget", () => {
  it("a route that spent its retry budget leaves every other route's retries", async () => {
    const spare = await startHarness({
      UPSTREAM_RETRIES: "2",
      UPSTREAM_RETRY_BASE_MS: "1",
      UPSTREAM_RETRY_BUDGET_RATIO: "0",
      UPSTREAM_RETRY_BUDGET_CAP: "2",
      BREAKER_VOLUME_THRESHOLD: "1000000",
    });
    try {
      await execute(spare, `{ chain(id: "${C_CHAIN}") { chainId } }`);
      const block = (id: string) => execute(spare, `{ chain(id: "${C_CHAIN}") { block(id: "${id}") { blockNumber } } }`);
      spare.simulator.setKnobs({ errorRate: 1, errorStatus: 503, errorRoutes: [BLOCK_ROUTE] });
      spare.simulator.resetCounters();
      await block("800");
      expect(upstreamCalls(spare)).toEqual({ [BLOCK_ROUTE]: 3 });
      // The block route's budget is spent: its next failure is not retried.
      spare.simulator.resetCounters();
      await block("801");
      expect(upstreamCalls(spare)).toEqual({ [BLOCK_ROUTE]: 1 });
      // Another route's failures are retried from its own budget.
      spare.simulator.setKnobs({ errorRoutes: ["GET /v1/blocks"] });
      spare.simulator.resetCounters();
      const latest = await execute(spare, "{ latestBlocks(first: 2) { nodes { blockNumber } } }");
      expect(latest.body.errors![0]!.extensions).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", upstream: { status: 503 } });
      expect(upstreamCalls(spare)).toEqual({ "GET /v1/blocks": 3 });
    } finally {
      await spare.close();
    }
  });
});
