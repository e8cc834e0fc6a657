/**
 * Failures stay local (issue 17, item 1): an upstream route that fails takes down the field that
 * needs it and nothing else. For every route the gateway calls, the simulator's fault knobs fail
 * that route alone (HTTP 500, 503 and 400 in turn) under a document that also reads a root field
 * needing no call and one needing another route; the error must sit at the failing field's path
 * with the code its status maps to, and every other field must answer as it does without faults.
 *
 * A guard reads the routes the gateway calls from their declarations (src/upstream/routes.ts),
 * which the upstream clients call through, so a new route cannot be left without a row here.
 */
import { readdirSync, readFileSync } from "node:fs";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { GraphQLFormattedError } from "graphql";
import type { ErrorCode } from "../src/errors.ts";
import { ROUTES, type RouteName } from "../src/upstream/routes.ts";
import { execute, startHarness, upstreamCalls, type Harness } from "./support/harness.ts";
import {
  C_CHAIN,
  MUTATION_ROWS,
  P_CHAIN,
  QUERY_ROWS,
  globalId,
  valuesOf,
  type QueryRow,
  type Values,
} from "./support/route-rows.ts";

/** The codes src/errors.ts gives each injected status. */
const STATUS_CODES: ReadonlyArray<[status: number, code: ErrorCode]> = [
  [500, "UPSTREAM_ERROR"],
  [503, "UPSTREAM_UNAVAILABLE"],
  [400, "BAD_USER_INPUT"],
];

/** Needs no upstream call: the primary network's namespace and its chains' ids are in hand. */
const CALM = "calm: primaryNetwork(network: FUJI) { network pChain { blockchainId } xChain { blockchainId } }";
/** Needs `GET /v1/chains` (Data API); for rows that fail that route, a Metrics API route instead. */
const OTHER_ROUTE = "other: chains { chainId chainName }";
const OTHER_ROUTE_WHEN_CHAINS_FAIL =
  "other: validatorFeeMetrics(metric: TOTAL_VALIDATOR_FEES_DAILY, first: 2) { nodes { timestamp } }";

/** Routes of the service description that the gateway calls: its route declarations (src/upstream/routes.ts). */
function routesTheGatewayCalls(): string[] {
  return Object.values(ROUTES)
    .map((route) => route.label)
    .sort();
}

/** The calls of the gateway's upstream clients, each with the route argument it gives (`ROUTES.x.path`, or else). */
function clientCalls(): { method: string; route: string }[] {
  const directory = new URL("../src/upstream/", import.meta.url);
  const calls = /client\.(get|post)\(\s*([^,)]+)/g;
  const found: { method: string; route: string }[] = [];
  for (const file of readdirSync(directory).filter((name) => name.endsWith(".ts"))) {
    const source = readFileSync(new URL(file, directory), "utf8");
    for (const [, method, route] of source.matchAll(calls)) found.push({ method: method!, route: route! });
  }
  return found;
}

function queryDocument(row: QueryRow, values: Values): string {
  const other = row.route === "GET /v1/chains" ? OTHER_ROUTE_WHEN_CHAINS_FAIL : OTHER_ROUTE;
  return `query FailureStaysLocal { ${CALM} ${other} ${row.selection(values)} }`;
}

function valueAt(data: unknown, path: readonly (string | number)[]): unknown {
  return path.reduce<unknown>((value, key) => (value as Record<string | number, unknown> | null | undefined)?.[key], data);
}

let harness: Harness;
let values: Values;

beforeAll(async () => {
  // Every row fails a route on purpose: no retries (one call per failure) and a breaker that
  // cannot open, so that the failures of one row never reach the next; a rate limit that the
  // rows together cannot spend.
  harness = await startHarness({
    UPSTREAM_RETRIES: "0",
    BREAKER_VOLUME_THRESHOLD: "1000000",
    RATE_LIMIT_RATE: "100000",
    RATE_LIMIT_BURST: "100000",
  });
  values = valuesOf(harness);
});

afterAll(async () => {
  await harness.close();
});

beforeEach(() => {
  harness.simulator.setKnobs({ errorRate: 0, errorRoutes: [], errorStatus: 500, faultKind: "status" });
  harness.gateway.cache.clear();
  harness.simulator.resetCounters();
});

afterEach(() => {
  harness.simulator.setKnobs({ errorRate: 0, errorRoutes: [], errorStatus: 500 });
});

function failOnly(route: string, status: number): void {
  harness.gateway.cache.clear();
  harness.simulator.resetCounters();
  harness.simulator.setKnobs({ errorRate: 1, errorStatus: status, errorRoutes: [route], faultKind: "status" });
}

describe("every route the gateway calls has a row", () => {
  it("the rows name exactly the routes of the gateway's upstream clients", () => {
    const called = routesTheGatewayCalls();
    // The scan must see the clients: about two dozen routes, each one the simulator serves.
    expect(called.length).toBeGreaterThanOrEqual(20);
    expect(() => harness.simulator.setKnobs({ errorRoutes: called })).not.toThrow();
    const covered = new Set([...QUERY_ROWS, ...MUTATION_ROWS].map((row) => row.route));
    expect(
      called.filter((route) => !covered.has(route)),
      "routes without a row",
    ).toEqual([]);
    expect(
      [...covered].filter((route) => !called.includes(route)),
      "rows of routes the gateway does not call",
    ).toEqual([]);
  });

  it("the upstream clients call every declared route through its declaration, none by a literal path", () => {
    const calls = clientCalls();
    expect(
      calls.filter((call) => !/^ROUTES\.\w+\.path$/.test(call.route)),
      "calls by a literal path, or other than through a declaration",
    ).toEqual([]);
    const declared = (call: { route: string }) => ROUTES[call.route.split(".")[1] as RouteName];
    expect(
      calls.filter((call) => declared(call)?.method !== call.method),
      "calls of a route not declared, or by another method",
    ).toEqual([]);
    expect(new Set(calls.map((call) => declared(call)?.label)).size).toBe(routesTheGatewayCalls().length);
  });

  it("the field every row reads beside the failing one needs no upstream call", async () => {
    const result = await execute(harness, `{ ${CALM} }`);
    expect(result.body.errors).toBeUndefined();
    expect(upstreamCalls(harness)).toEqual({});
  });
});

describe("a failing upstream route fails only the field that needs it", () => {
  it.each(QUERY_ROWS.map((row) => [row.route, row.via, row] as const))("%s (through %s)", async (route, _via, row) => {
    const document = queryDocument(row, values);

    // Without faults the document answers in full and calls the route.
    const healthy = await execute<Record<string, unknown>, Record<string, never>>(harness, document);
    expect(healthy.body.errors, "errors without faults").toBeUndefined();
    expect(upstreamCalls(harness)[route], `${route} called without faults`).toBeGreaterThan(0);
    const { calm, other } = healthy.body.data!;
    expect(calm).toEqual({ network: "FUJI", pChain: { blockchainId: P_CHAIN }, xChain: { blockchainId: expect.any(String) } });
    expect(other).toBeTruthy();

    for (const [status, code] of STATUS_CODES) {
      failOnly(route, status);
      const failed = await execute<Record<string, unknown>, Record<string, never>>(harness, document);
      const context = `${route} failing with HTTP ${status}`;
      expect(upstreamCalls(harness)[route], `${context}: the route was called`).toBeGreaterThan(0);
      expect(failed.status, context).toBe(200);
      expect(failed.body.data, `${context}: data`).not.toBeNull();
      expect(failed.body.data?.calm, `${context}: the field that needs no call`).toEqual(calm);
      expect(failed.body.data?.other, `${context}: the field that needs another route`).toEqual(other);
      expect(valueAt(failed.body.data, row.path), `${context}: the failing field`).toBeNull();
      const errors: GraphQLFormattedError[] = failed.body.errors ?? [];
      expect(errors.length, `${context}: errors`).toBeGreaterThan(0);
      for (const error of errors) {
        expect(error.path, `${context}: ${error.message}`).toEqual(row.path);
        expect(error.extensions, `${context}: ${error.message}`).toMatchObject({ code, upstream: { status } });
      }
    }
  });
});

describe("a failing mutation route nulls the mutation alone", () => {
  it.each(MUTATION_ROWS.map((row) => [row.route, row.via, row] as const))("%s (%s)", async (route, _via, row) => {
    const document = `mutation FailureIsTheAnswer { ${row.selection(values)} }`;
    for (const [status, code] of STATUS_CODES) {
      failOnly(route, status);
      const failed = await execute(harness, document);
      const context = `${route} failing with HTTP ${status}`;
      // Sent once: a POST is never retried.
      expect(upstreamCalls(harness), context).toEqual({ [route]: 1 });
      expect(failed.body.data, context).toEqual({ [row.via]: null });
      expect(failed.body.errors, context).toHaveLength(1);
      expect(failed.body.errors![0], context).toMatchObject({ path: row.path, extensions: { code, upstream: { status } } });
    }
  });
});

describe("node(id:) refusals stay on node", () => {
  const refused: ReadonlyArray<[what: string, id: string]> = [
    ["not a global id", "garbage"],
    ["not base64", "a===="],
    ["base64 without a key", globalId("EvmChain")],
    ["a type that does not exist", globalId("Foo:1")],
    ["a type that is not a Node", globalId("PageInfo:1")],
    ["a key of the wrong shape", globalId("EvmChain:zz")],
  ];

  for (const compiled of [true, false]) {
    describe(compiled ? "compiled execution" : "graphql-js execution", () => {
      let local: Harness;
      beforeAll(async () => {
        local = await startHarness({ GRAPHQL_JIT: String(compiled), GRAPHQL_JIT_FROM_RUN: "1" });
      });
      afterAll(async () => {
        await local.close();
      });

      it.each(refused)("%s, inline and as a variable: BAD_USER_INPUT on that node alone, no call for it", async (_what, id) => {
        const inline = `{ chain(id: "${C_CHAIN}") { chainName } n: node(id: ${JSON.stringify(id)}) { id } }`;
        const variable = `query Refetch($id: ID!) { chain(id: "${C_CHAIN}") { chainName } n: node(id: $id) { id } }`;
        for (const [document, variables] of [
          [inline, undefined],
          [variable, { id }],
        ] as const) {
          local.gateway.cache.clear();
          local.simulator.resetCounters();
          const result = await execute(local, document, variables);
          expect(result.status).toBe(200);
          expect(result.body.data).toEqual({ chain: { chainName: "Avalanche (C-Chain)" }, n: null });
          expect(result.body.errors).toHaveLength(1);
          expect(result.body.errors![0]).toMatchObject({ path: ["n"], extensions: { code: "BAD_USER_INPUT", argument: "id" } });
          // Only the sibling's chain list: the refused id reaches no route.
          expect(upstreamCalls(local)).toEqual({ "GET /v1/chains": 1 });
        }
      });
    });
  }
});
