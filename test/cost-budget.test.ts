/**
 * The rate limiter's charge against the calls a cold gateway makes, for every operation the
 * project has: each bench operation and each operation of test/operations/*.graphql, with the
 * variables its tests use. For each, a fresh gateway (empty caches, no chain-list preload) over
 * one simulator runs it once; the simulator's request log counts the upstream calls, and the
 * gateway's `ratelimit-remaining` tells what it charged. The estimate (what an operation pays
 * before it runs) must be tight, `1 <= estimate <= 1.5 × cold` for an operation that calls
 * upstream, and the charge once the operation is settled must be `max(estimate, cold)`: the
 * estimate, plus the calls it made beyond it (an operation that calls nothing still pays the 1
 * every request pays).
 */
import { OperationTypeNode, parse } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { referenceOperations } from "../bench/operations/index.ts";
import { PlainUpstream } from "../bench/upstream.ts";
import { schema } from "../src/schema.ts";
import { newDocumentCost } from "../src/limits/request-costs.ts";
import { NO_FACTS, type KnownChain } from "../src/limits/known-facts.ts";
import { estimateCost } from "../src/limits/upstream-calls.ts";
import { startSimulator } from "../simulator/server.ts";
import {
  execute,
  simulatorGet,
  startHarness,
  startInstance,
  until,
  upstreamCalls,
  type Harness,
  type RunningSimulator,
} from "./support/harness.ts";
import { VARIABLES, startSetup, testOperations, type Setup } from "./support/project-operations.ts";

/** A bucket so deep and so slow that what a request took is what it was charged. */
const BURST = 1_000_000;
const BUDGET = { RATE_LIMIT_BURST: String(BURST), RATE_LIMIT_RATE: "0.000001" };

interface Row {
  operation: string;
  /** The upstream calls the cold run made. */
  cold: number;
  /** The upstream calls estimated before it ran (what the operation paid up front). */
  estimate: number;
  /** What the operation was charged once settled, in upstream calls. */
  charged: number;
  /** Within 1.5 × cold, at least 1, and settled to max(estimate, cold). */
  within: boolean;
  /** The cold calls by route, shown for a row out of bounds. */
  routes: Record<string, number>;
}

function row(operation: string, routes: Record<string, number>, estimate: number, charged: number): Row {
  const cold = Object.values(routes).reduce((sum, count) => sum + count, 0);
  const within =
    (cold === 0 || estimate >= 1) &&
    estimate <= Math.max(1, Math.floor(1.5 * cold)) &&
    // Every request pays at least 1, an operation that calls nothing too.
    charged === Math.max(1, estimate, cold);
  return { operation, cold, estimate, charged, within, routes };
}

function table(rows: readonly Row[]): string {
  return [
    "operation                                   cold  estimate  ratio  charged",
    ...rows.map(
      (r) =>
        `${r.within ? " " : "✗"} ${r.operation.padEnd(42)}${String(r.cold).padStart(5)}${String(r.estimate).padStart(10)}${(r.cold === 0 ? "-" : (r.estimate / r.cold).toFixed(2)).padStart(7)}${String(r.charged).padStart(9)}` +
        (r.within ? "" : `  ${JSON.stringify(r.routes)}`),
    ),
  ].join("\n");
}

describe("the rate limiter's charge against a cold gateway's calls", () => {
  let simulator: RunningSimulator;
  let setup: Setup;
  /** The chain list, as the rate limiter has it for an estimate that depends on its length. */
  let chains: KnownChain[];

  beforeAll(async () => {
    simulator = await startSimulator({ dataPort: 0, metricsPort: 0 });
    setup = await startSetup(simulator, BUDGET);
    ({ chains } = await simulatorGet<{ chains: KnownChain[] }>(setup.harness, "data", "/v1/chains"));
  });

  afterAll(async () => {
    await setup?.harness.close();
    await simulator?.close();
  });

  /** Runs a document once on a fresh gateway: the upstream calls it made, and the operation's charge. */
  async function measure(name: string, document: string, variables: Record<string, unknown>): Promise<Row> {
    const gateway = await startInstance(simulator, BUDGET);
    try {
      simulator.resetCounters();
      const response = await execute(gateway, document, variables);
      expect(response.body.errors, name).toBeUndefined();
      // The request paid its document's reading, and the operation its estimated calls (at least
      // 1) and CPU, which the schema alone tells (a Warp verification), then the calls it made
      // beyond the estimate. The estimate counts the chain list when it depends on its length,
      // as the rate limiter does.
      let estimate = estimateCost(schema, parse(document), undefined, variables, NO_FACTS);
      if (estimate.wantsChainList) estimate = estimateCost(schema, parse(document), undefined, variables, { chains });
      const charged = BURST - Number(response.headers.get("ratelimit-remaining")) - newDocumentCost(document) - estimate.cpuCost;
      return row(name, upstreamCalls(gateway), estimate.upstreamCalls, charged);
    } finally {
      await gateway.close();
    }
  }

  it("has variables for every test operation", () => {
    expect(
      testOperations()
        .map(({ name }) => name)
        .filter((name) => !(name in VARIABLES)),
    ).toEqual([]);
  });

  it("estimates within 1.5 × the cold calls and settles the charge to max(estimate, cold) for every bench and test operation", async () => {
    const rows: Row[] = [];
    for (const operation of referenceOperations) {
      const upstream = new PlainUpstream(simulator.dataUrl, simulator.metricsUrl);
      const { variables } = await operation.prepare(upstream).finally(() => upstream.close());
      rows.push(await measure(`bench ${operation.name}`, operation.document, variables));
    }
    // A subscription pays its first read when it starts and 1 for each later read as its poller
    // makes it: its charge is its calls by construction.
    const measured = testOperations().filter(({ kind }) => kind !== OperationTypeNode.SUBSCRIPTION);
    for (const { name, document } of measured) {
      const variables = VARIABLES[name];
      if (variables === undefined) continue;
      rows.push(await measure(name, document, await variables(setup)));
    }
    console.log(table(rows));
    expect(
      rows.filter((r) => !r.within).map((r) => r.operation),
      table(rows),
    ).toEqual([]);
    // Every operation the project has was measured (a subscription pays per read, by construction).
    expect(rows.length).toBe(referenceOperations.length + measured.length);
  }, 180_000);
});

describe("metrics of every chain at the default budget", () => {
  let harness: Harness | undefined;
  afterAll(async () => harness?.close());

  const METRICS = [
    "TX_COUNT",
    "ACTIVE_ADDRESSES",
    "ACTIVE_SENDERS",
    "GAS_USED",
    "CONTRACTS",
    "DEPLOYERS",
    "FEES_PAID",
    "AVG_TPS",
    "MAX_TPS",
  ];
  const document = `{ chains { chainId ${METRICS.map((metric, index) => `m${index}: metrics(metric: ${metric}, interval: DAY, first: 7) { nodes { value } }`).join(" ")} } }`;

  it.each([
    ["held, as the gateway preloads it", "true"],
    ["not held yet, so fetched once before the estimate", "false"],
  ])("charges what the chain list (%s) holds, and a second such query is not refused", async (_, preload) => {
    harness = await startHarness({ CHAIN_LIST_PRELOAD: preload });
    const chains = (await simulatorGet<{ chains: unknown[] }>(harness, "data", "/v1/chains")).chains.length;
    if (preload === "true") {
      // the preload's own call, answered before the operation comes
      await until(() => (harness!.simulator.counters()["GET /v1/chains"] ?? 0) >= 1, "the chain list's preload");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    harness.simulator.resetCounters();
    const first = await execute(harness, document);
    expect(first.body.errors).toBeUndefined();
    const calls = Object.values(upstreamCalls(harness)).reduce((sum, count) => sum + count, 0);
    // the chain list (held or fetched once), then a series per chain and metric
    expect(calls).toBe((preload === "true" ? 0 : 1) + chains * METRICS.length);
    // What it was charged, less what the bucket refilled meanwhile (100 a second by default).
    const charged = harness.config.rateLimit.burst - Number(first.headers.get("ratelimit-remaining")) - newDocumentCost(document);
    const estimate = 1 + chains * METRICS.length;
    expect(charged).toBeLessThanOrEqual(estimate);
    expect(charged).toBeGreaterThan(estimate - 20);
    const second = await execute(harness, document);
    expect(second.status).toBe(200);
    expect(second.body.errors).toBeUndefined();
    await harness.close();
    harness = undefined;
  });
});
