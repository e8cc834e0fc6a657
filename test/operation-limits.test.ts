/**
 * One cost model: MAX_QUERY_COST bounds the cost the rate limiter charges (the upstream calls an
 * operation is estimated to make, and its CPU in calls), and every operation the project has runs
 * under the default limits at its largest pages. Each operation of test/operations/*.graphql runs
 * with the variables its tests use, every `first` it takes from a variable set to the most its
 * field allows (the field's description states it: "`first`: 1 to 100, default 10"), on one
 * gateway with the shipped defaults, each from a key of its own (a client that sends it once).
 * None is refused by any limit, but one whose largest page would make more upstream calls than a
 * caller's whole burst (`OVER_BUDGET_AT_LARGEST`), which runs at the largest `first` that fits.
 */
import {
  OperationTypeNode,
  TypeInfo,
  parse,
  visit,
  visitWithTypeInfo,
  type GraphQLFormattedError,
  type GraphQLSchema,
} from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { schema } from "../src/schema.ts";
import type { KnownChain } from "../src/limits/known-facts.ts";
import { estimateCost } from "../src/limits/upstream-calls.ts";
import { startSimulator } from "../simulator/server.ts";
import {
  execute,
  simulatorGet,
  startInstance,
  until,
  upstreamCalls,
  type Instance,
  type RunningSimulator,
} from "./support/harness.ts";
import { firstBounds } from "./differential/generator.ts";
import { VARIABLES, startSetup, testOperations, type Setup } from "./support/project-operations.ts";
import { subscribeSse } from "./support/subscriptions.ts";

/** The shipped defaults: the harness turns the chain-list preload and the response cache off for tests that count calls. */
const DEFAULTS = { CHAIN_LIST_PRELOAD: "true", RESPONSE_CACHE_TTL_MS: "1000" };
const DEFAULT_LIMITS = loadConfig({}).limits;

/** 10,101 upstream calls: a page of 100 blocks, each with a page of 100 transactions, each read whole. */
const TOO_COSTLY = `{ latestBlocks(first: 100) { nodes { transactions(first: 100) { nodes { txHash value input gasPrice gasLimit nonce } } } } }`;

/** Beside the largest pages, what makes an operation its largest: AddressTransactionsPage over a block range. */
const LARGEST: Record<string, Record<string, unknown>> = {
  AddressTransactionsPage: { startBlock: "1", endBlock: "100000000" },
};

/**
 * The operations whose largest pages cost more than a caller's whole burst (RATE_LIMIT_BURST,
 * 1,000), with their estimates: refused at that size before MAX_QUERY_COST counted upstream calls
 * too (the rate limiter refused them as costing more than its burst, and the complexity measure as
 * over 50,000), and held here to run at the largest `first` that fits. PChainUtxoLinks: a UTXO
 * links to the transactions that created and spent it and to their blocks, which UTXOs share: some
 * 1 call per UTXO (511 calls for 487 UTXOs on the simulator), 1,025 estimated for a full page of
 * 1,024.
 */
const OVER_BUDGET_AT_LARGEST: Record<string, number> = { PChainUtxoLinks: 1_025 };

/**
 * The variables with every `first` that a variable gives set to the most its field allows, as its
 * description states (`firstBounds` throws for a field that states none).
 */
function largestPages(
  schema: GraphQLSchema,
  document: string,
  variables: Record<string, unknown>,
): { variables: Record<string, unknown>; firsts: Record<string, number> } {
  const firsts: Record<string, number> = {};
  const typeInfo = new TypeInfo(schema);
  visit(
    parse(document),
    visitWithTypeInfo(typeInfo, {
      Argument(argument) {
        if (argument.name.value !== "first" || argument.value.kind !== "Variable") return;
        const { max } = firstBounds(String(typeInfo.getParentType()), typeInfo.getFieldDef()!);
        const name = argument.value.name.value;
        firsts[name] = Math.min(firsts[name] ?? Number.POSITIVE_INFINITY, max);
      },
    }),
  );
  return { variables: { ...variables, ...firsts }, firsts };
}

/** A refusal by a limit: over a document or operation limit (BAD_USER_INPUT naming it), or over the caller's budget. */
function refusalsIn(errors: readonly GraphQLFormattedError[] | undefined): GraphQLFormattedError[] {
  return (errors ?? []).filter(
    ({ extensions }) =>
      extensions?.code === "RATE_LIMITED" || (extensions?.code === "BAD_USER_INPUT" && extensions.limit !== undefined),
  );
}

interface Row {
  operation: string;
  /** The variables it ran with. */
  variables: Record<string, unknown>;
  firsts: Record<string, number>;
  estimate: number;
  /** The HTTP status, or for a subscription 200 when its stream opened. */
  status: number;
  refusals: GraphQLFormattedError[];
  errors: number;
}

function table(rows: readonly Row[]): string {
  return [
    `operation                              estimate (MAX_QUERY_COST ${DEFAULT_LIMITS.cost})  status  largest pages`,
    ...rows.map(
      (r) =>
        `${r.refusals.length > 0 ? "✗" : " "} ${r.operation.padEnd(38)}${String(r.estimate).padStart(8)}${String(r.status).padStart(30)}  ${JSON.stringify(r.firsts)}` +
        (r.errors > 0 ? `  ${r.errors} errors` : "") +
        (r.refusals.length > 0 ? `  ${JSON.stringify(r.refusals)}` : ""),
    ),
  ].join("\n");
}

describe("every project operation at its largest pages, under the default limits", () => {
  let simulator: RunningSimulator;
  let setup: Setup;
  let gateway: Instance;
  let chains: KnownChain[];

  beforeAll(async () => {
    simulator = await startSimulator({ dataPort: 0, metricsPort: 0 });
    setup = await startSetup(simulator);
    gateway = await startInstance(simulator, DEFAULTS);
    ({ chains } = await simulatorGet<{ chains: KnownChain[] }>(gateway, "data", "/v1/chains"));
    await until(() => gateway.gateway.upstreams.evm.heldChains() !== undefined, "the chain list's preload");
  });

  afterAll(async () => {
    await gateway?.close();
    await setup?.harness.close();
    await simulator?.close();
  });

  it("uses the default limits: MAX_QUERY_COST a full bucket, RATE_LIMIT_BURST", () => {
    expect(gateway.config.limits).toEqual(DEFAULT_LIMITS);
    expect(gateway.config.limits.cost).toBe(1_000);
    expect(gateway.config.limits.cost).toBe(gateway.config.rateLimit.burst);
  });

  it("runs each at its largest pages, refusing by a limit only those whose largest page costs more than a whole burst", async () => {
    const rows: Row[] = [];
    for (const { name, kind, document } of testOperations()) {
      const given = await VARIABLES[name]!(setup);
      const { variables, firsts } = largestPages(schema, document, { ...given, ...LARGEST[name] });
      const { upstreamCalls: calls, cpuCost } = estimateCost(schema, parse(document), undefined, variables, { chains });
      const caller = { "x-glacier-api-key": `largest-${name}` };
      if (kind === OperationTypeNode.SUBSCRIPTION) {
        const subscription = await subscribeSse(gateway, document, variables, caller);
        await subscription.cancel();
        const { refusal } = subscription;
        const refusals = refusalsIn(refusal?.errors);
        const status = refusal?.status ?? 200;
        rows.push({ operation: name, variables, firsts, estimate: calls + cpuCost, status, refusals, errors: 0 });
        continue;
      }
      const { status, body } = await execute(gateway, document, variables, caller);
      const refusals = refusalsIn(body.errors);
      const errors = body.errors?.length ?? 0;
      rows.push({ operation: name, variables, firsts, estimate: calls + cpuCost, status, refusals, errors });
    }
    console.log(table(rows));
    expect(rows.length).toBe(testOperations().length);
    const failed = rows.filter((row) => row.refusals.length > 0 || row.status !== 200 || row.errors > 0);
    expect(
      failed.map((row) => row.operation),
      table(rows),
    ).toEqual(Object.keys(OVER_BUDGET_AT_LARGEST));
    // Each of those is refused by MAX_QUERY_COST alone, naming it, and runs at the largest `first` that fits.
    for (const row of failed) {
      expect(row.status).toBe(400);
      expect(row.refusals).toEqual([
        expect.objectContaining({
          extensions: expect.objectContaining({ limit: "cost", max: 1_000, actual: OVER_BUDGET_AT_LARGEST[row.operation] }),
        }),
      ]);
      const { document } = testOperations().find(({ name }) => name === row.operation)!;
      const estimate = (first: number) =>
        estimateCost(schema, parse(document), undefined, { ...row.variables, first }, { chains }).upstreamCalls;
      let first = row.firsts.first!;
      while (estimate(first) > DEFAULT_LIMITS.cost) first -= 1;
      console.log(`${row.operation}: the largest first that fits is ${first}, estimated ${estimate(first)}`);
      const fitting = { ...row.variables, first };
      const { status, body } = await execute(gateway, document, fitting, { "x-glacier-api-key": `fitting-${row.operation}` });
      expect([status, body.errors]).toEqual([200, undefined]);
    }
    // The two that the complexity measure refused at its default of 50,000 (51,303 and 56,906).
    expect(rows.find((row) => row.operation === "PChainTransactionsPage")!.firsts).toEqual({ first: 100 });
    expect(rows.find((row) => row.operation === "AddressTransactionsPage")!.firsts).toEqual({ first: 100 });
  }, 120_000);

  it("refuses an operation whose estimate is over MAX_QUERY_COST, naming the limit, before any upstream call", async () => {
    simulator.resetCounters();
    const refused = await execute(gateway, TOO_COSTLY, {}, { "x-glacier-api-key": "too-costly" });
    expect(refused.status).toBe(400);
    const error = refused.body.errors![0]!;
    expect(error.extensions).toEqual({ code: "BAD_USER_INPUT", limit: "cost", max: 1_000, actual: 10_101 });
    expect(error.message).toMatch(/estimated 10101 upstream calls, over the limit of 1000 \(MAX_QUERY_COST\)/);
    expect(upstreamCalls(gateway)).toEqual({});
    // Refused before the rate limiter charged it: the request paid its 1 and its new document.
    expect(Number(refused.headers.get("ratelimit-remaining"))).toBeGreaterThanOrEqual(1_000 - 2);
  });
});

describe("MAX_QUERY_COST", () => {
  let simulator: RunningSimulator;
  beforeAll(async () => {
    simulator = await startSimulator({ dataPort: 0, metricsPort: 0 });
  });
  afterAll(async () => simulator?.close());

  async function refusedOn(env: Record<string, string>, document: string) {
    const gateway = await startInstance(simulator, env);
    try {
      simulator.resetCounters();
      const { status, body } = await execute(gateway, document);
      return { status, error: body.errors?.[0], calls: upstreamCalls(gateway) };
    } finally {
      await gateway.close();
    }
  }

  it("holds with RATE_LIMIT=false too", async () => {
    const { status, error, calls } = await refusedOn({ RATE_LIMIT: "false" }, TOO_COSTLY);
    expect(status).toBe(400);
    expect(error?.extensions).toMatchObject({ code: "BAD_USER_INPUT", limit: "cost", max: 1_000, actual: 10_101 });
    expect(calls).toEqual({});
  });

  it("stays 1,000 whatever RATE_LIMIT_BURST is, unless set", () => {
    expect(loadConfig({ RATE_LIMIT_BURST: "20000" }).limits.cost).toBe(1_000);
    expect(loadConfig({ RATE_LIMIT_BURST: "20000", MAX_QUERY_COST: "20000" }).limits.cost).toBe(20_000);
  });

  it.each([
    ["held, as the gateway preloads it: no call before refusing", "true", {}],
    ["not held yet: fetched once, the call the operation makes first", "false", { "GET /v1/chains": 1 }],
  ])("counts the chains the gateway lists, with the list %s", async (_, preload, calls) => {
    // The chain list, and a page of blocks per chain.
    const document = `{ chains { blocks(first: 1) { nodes { blockHash } } } }`;
    const listed = ((await (await fetch(`${simulator.dataUrl}/v1/chains`)).json()) as { chains: KnownChain[] }).chains;
    const estimate = estimateCost(schema, parse(document), undefined, {}, { chains: listed }).upstreamCalls;
    expect(estimate).toBe(1 + listed.length);
    // Without the list, the estimate assumes ASSUMED_CHAIN_COUNT chains: over the limit, where the list fits.
    expect(estimateCost(schema, parse(document), undefined, {}, {}).upstreamCalls).toBeGreaterThan(estimate);
    const gateway = await startInstance(simulator, {
      ...DEFAULTS,
      CHAIN_LIST_PRELOAD: preload,
      MAX_QUERY_COST: String(estimate - 1),
    });
    try {
      if (preload === "true")
        await until(() => gateway.gateway.upstreams.evm.heldChains() !== undefined, "the chain list's preload");
      simulator.resetCounters();
      const refused = await execute(gateway, document);
      expect(refused.body.errors![0]!.extensions).toMatchObject({ limit: "cost", max: estimate - 1, actual: estimate });
      expect(upstreamCalls(gateway)).toEqual(calls);
    } finally {
      await gateway.close();
    }
    const fits = await startInstance(simulator, { ...DEFAULTS, CHAIN_LIST_PRELOAD: preload, MAX_QUERY_COST: String(estimate) });
    try {
      const admitted = await execute(fits, document);
      expect([admitted.status, admitted.body.errors]).toEqual([200, undefined]);
    } finally {
      await fits.close();
    }
  });
});
