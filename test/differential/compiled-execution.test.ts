/**
 * The divergences the differential test found, each on a small schema whose resolvers show what
 * they were given, so that a divergence the gateway's resolvers would hide (they read an absent
 * input field and a null one alike) still shows: graphql-js, graphql-jit as the plugin gives it,
 * and the gateway's compiled execution (src/plugins/compiled-execution.ts), which must answer as graphql-js.
 */
import { useGraphQlJit } from "@envelop/graphql-jit";
import { parse } from "graphql";
import { createSchema, createYoga, type Plugin } from "graphql-yoga";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator } from "../../simulator/server.ts";
import { runsCompiled, useCompiledExecution } from "../../src/plugins/compiled-execution.ts";
import { schema as gatewaySchema } from "../../src/schema.ts";
import { metricsText, startInstance, upstreamCalls, type Instance, type RunningSimulator } from "../support/harness.ts";
import { send } from "./run.ts";

const calls: string[] = [];

const sorted = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(sorted)
    : value && typeof value === "object"
      ? Object.fromEntries(
          Object.entries(value)
            .sort(([a], [b]) => (a < b ? -1 : 1))
            .map(([key, item]) => [key, sorted(item)]),
        )
      : value;

const schema = () =>
  createSchema({
    typeDefs: /* GraphQL */ `
      input Window {
        days: Int = 7
        label: String
      }
      input Filter {
        window: Window
        quorum: Int = 67
      }
      type Block {
        number: Int!
        hash: String!
        parent: Block
      }
      type Query {
        echo(filter: Filter): String!
        block: Block!
        failing: String
      }
      type Mutation {
        record(name: String!): String!
        note(name: String!): String
        fail: String!
      }
      type Subscription {
        job(id: ID!): String!
      }
    `,
    resolvers: {
      Query: {
        echo: (_: unknown, args: unknown) => JSON.stringify(sorted(args)),
        block: () => ({ number: 2, hash: "0x02", parent: { number: 1, hash: "0x01", parent: null } }),
        failing: () => {
          throw new Error("upstream failed");
        },
      },
      Mutation: {
        record: (_: unknown, { name }: { name: string }) => {
          calls.push(name);
          return calls.join(",");
        },
        note: async (_: unknown, { name }: { name: string }) => {
          calls.push(name);
          return calls.join(",");
        },
        fail: async () => {
          calls.push("fail");
          throw new Error("upstream failed");
        },
      },
      Subscription: {
        job: {
          subscribe: async function* (_: unknown, { id }: { id: string }) {
            yield { job: `watching ${String(id)}` };
          },
        },
      },
    },
  });

function server(plugins: Plugin[]) {
  return createYoga({ schema: schema(), plugins, logging: false });
}

const interpreted = server([]);
const pluginAsIs = server([useGraphQlJit() as Plugin]);
const gateway = server(useCompiledExecution({ compileFromRun: 1 }));

async function ask(
  yoga: ReturnType<typeof server>,
  query: string,
  variables: Record<string, unknown> = {},
  subscription = false,
): Promise<string> {
  calls.length = 0;
  const response = await yoga.fetch("http://test/graphql", {
    method: "POST",
    headers: { "content-type": "application/json", accept: subscription ? "text/event-stream" : "application/json" },
    body: JSON.stringify({ query, variables }),
  });
  const text = await response.text();
  // The resolvers that ran count too: a mutation that ran is work done upstream, whatever the answer says.
  return subscription ? text : JSON.stringify({ ...reorderTop(JSON.parse(text) as Record<string, unknown>), ran: [...calls] });
}

/** The order of a response's top-level entries is not significant; the order under `data` is. */
function reorderTop(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).sort(([a], [b]) => (a < b ? -1 : 1)));
}

describe.each([
  [
    "an input object's field given a variable without a value takes the field's default",
    "query($label: String, $days: Int) { echo(filter: { window: { days: $days, label: $label } }) }",
    { label: "x" },
    false,
  ],
  ["a subscription's argument written inline reaches its resolver", `subscription { job(id: "42") }`, {}, true],
  [
    "a subscription's argument through a variable of another name reaches its resolver",
    `subscription($job: ID!) { job(id: $job) }`,
    { job: "42" },
    true,
  ],
  [
    "fields answer in document order around fragments",
    "query { block { ...Parent number ... on Block { hash } } } fragment Parent on Block { parent { number } }",
    {},
    false,
  ],
  [
    "a mutation's fields run in document order around fragments",
    `mutation { ...First b: record(name: "b") } fragment First on Mutation { a: record(name: "a") }`,
    {},
    false,
  ],
  ["a failing non-null mutation field stops the mutations after it", `mutation { fail b: record(name: "b") }`, {}, false],
  [
    "a mutation whose non-null argument a variable makes null fails alone: the mutations after it run",
    `mutation($name: String = "a") { a: note(name: $name) b: note(name: "b") }`,
    { name: null },
    false,
  ],
  ["an error carries the location of its field", "query { block { number } failing }", {}, false],
  // One response key selected more than once, one of its selections under @skip/@include.
  [
    "fields inside a fragment under a skipped selection of a key stay out when another selection includes the key",
    "query { block { parent @skip(if: true) { ... on Block { number } } parent { hash } } }",
    {},
    false,
  ],
  [
    "a key selected again answers at the place of its first included selection",
    "query { block { number @skip(if: true) hash ... on Block { number } } }",
    {},
    false,
  ],
  [
    "a key selected again answers at the place of its first included selection, the condition through a variable",
    "query($later: Boolean!) { block { number @include(if: $later) hash ... on Block { number } } }",
    { later: false },
    false,
  ],
  [
    "an error is located at the included selections of its key only",
    "query { block { number } failing @skip(if: true) ...Failing } fragment Failing on Query { failing }",
    {},
    false,
  ],
  // One named fragment spread more than once in one selection set, or under different conditions.
  [
    "a fragment spread twice, skipped at its later spread, is answered at its first",
    "query { block { ...Number hash ...Number @skip(if: true) } } fragment Number on Block { number }",
    {},
    false,
  ],
  [
    "a fragment spread twice is answered where its first spread is",
    "query { block { ...Number hash ...Number } } fragment Number on Block { number }",
    {},
    false,
  ],
  [
    "a fragment left out at one place is answered at another",
    "query { a: block { ...Number @include(if: false) hash } b: block { ...Number } } fragment Number on Block { number }",
    {},
    false,
  ],
])("%s", (_, query, variables, subscription) => {
  it("differs between graphql-jit as the plugin gives it and graphql-js", async () => {
    expect(await ask(pluginAsIs, query, variables, subscription)).not.toEqual(
      await ask(interpreted, query, variables, subscription),
    );
  });

  it("is answered by the gateway's compiled execution as graphql-js answers it", async () => {
    expect(await ask(gateway, query, variables, subscription)).toEqual(await ask(interpreted, query, variables, subscription));
  });
});

/**
 * The documents the audit of issue 27 found diverging, on the gateway's own schema: both
 * gateways (compiled, and graphql-js) over one simulator answer them alike, with the same
 * upstream calls, and compiled execution leaves the first two to graphql-js.
 */
describe("the audit's documents on the gateway's schema", () => {
  const skippedWithFragment = `{ latestBlocks(first: 1) { edges @skip(if: true) { ... on EvmBlockEdge { node { chainId } } } edges { __typename } } }`;
  const skippedFirst = `{ chain(id: "43114") { chainName @skip(if: true) chainId ... on EvmChain { chainName } } }`;
  const avgTpsWithoutPage = [
    `{ chain(id: "43114") { avgTps(first: 0) { status lastRun } } }`,
    `{ chain(id: "43114") { avgTps(first: 0) { lastRun status } } }`,
    `{ chain(id: "43114") { avgTps(first: 0) { lastRunTime pageInfo { hasNextPage } } } }`,
  ];
  const plain = `query ($id: ID!) { chain(id: $id) { chainName chainId @include(if: true) ...Names } latestBlocks(first: 1) { edges { node { chainId } } } } fragment Names on EvmChain { chainName }`;

  let simulator: RunningSimulator;
  let compiled: Instance;
  let interpretedGateway: Instance;

  beforeAll(async () => {
    simulator = await startSimulator({ dataPort: 0, metricsPort: 0 });
    compiled = await startInstance(simulator, { GRAPHQL_JIT: "true", GRAPHQL_JIT_FROM_RUN: "1" });
    interpretedGateway = await startInstance(simulator, { GRAPHQL_JIT: "false" });
  });

  afterAll(async () => {
    await compiled?.close();
    await interpretedGateway?.close();
    await simulator?.close();
  });

  /** The answer of one gateway, from cold caches, with the upstream calls it made. */
  async function answer(instance: Instance, query: string, variables: Record<string, unknown>) {
    instance.gateway.cache.clear();
    simulator.resetCounters();
    const result = await send(instance.gateway, { query, variables }, false);
    return { result, calls: upstreamCalls(instance) };
  }

  const selects = (query: string, variables: Record<string, unknown> = {}) =>
    runsCompiled({ schema: gatewaySchema, document: parse(query), variableValues: variables });

  it("leaves the documents with a key selected again under @skip to graphql-js", () => {
    expect(selects(skippedWithFragment)).toBe(false);
    expect(selects(skippedFirst)).toBe(false);
  });

  it("still compiles the ordinary shapes: single conditions, a fragment spread once, a key selected again unconditionally", () => {
    expect(selects(plain, { id: "43114" })).toBe(true);
    expect(selects(`{ chain(id: "43114") { chainId chainName } chain(id: "43114") { chainName } }`)).toBe(true);
    expect(selects(`{ a: chain(id: "43114") { ...N } b: chain(id: "1") { ...N } } fragment N on EvmChain { chainId }`)).toBe(
      true,
    );
  });

  it.each(avgTpsWithoutPage)("refuses %s on both paths, naming first, before any call for it", async (query) => {
    for (const instance of [compiled, interpretedGateway]) {
      const { result, calls } = await answer(instance, query, {});
      const body = result.body as { data: unknown; errors: { extensions: Record<string, unknown> }[] };
      expect(body.data).toEqual({ chain: { avgTps: null } });
      expect(body.errors.map((error) => error.extensions)).toEqual([
        { code: "BAD_USER_INPUT", argument: "first", min: 1, max: 100 },
      ]);
      expect(calls).toEqual({ "GET /v1/chains": 1 });
    }
  });

  const alike: [string, string, Record<string, unknown>][] = [
    ["a key selected again with a skipped fragment", skippedWithFragment, {}],
    ["a key whose first selection is skipped", skippedFirst, {}],
    ...avgTpsWithoutPage.map((query): [string, string, Record<string, unknown>] => [query, query, {}]),
    ["an ordinary query", plain, { id: "43114" }],
  ];

  it("compiles a document at its second run (GRAPHQL_JIT_FROM_RUN's default), not one sent once, and answers it alike each run", async () => {
    const fresh = await startInstance(simulator, { GRAPHQL_JIT: "true" });
    try {
      const compiledSoFar = async () =>
        Number(/^gateway_documents_compiled_total (\d+)$/m.exec(await metricsText(fresh))?.[1] ?? Number.NaN);
      const answers: string[] = [];
      for (const run of [1, 2, 3]) {
        answers.push(JSON.stringify((await send(fresh.gateway, { query: plain, variables: { id: "43114" } }, false)).body));
        expect(await compiledSoFar()).toBe(run === 1 ? 0 : 1);
      }
      expect(new Set(answers).size).toBe(1);
      expect(answers[0]).toContain('"chainName"');
      // A new alias each time is a new document each time: none is compiled.
      for (const alias of ["a", "b", "c"])
        await send(fresh.gateway, { query: `{ ${alias}: chain(id: "43114") { chainId } }`, variables: {} }, false);
      expect(await compiledSoFar()).toBe(1);
    } finally {
      await fresh.close();
    }
  });

  it.each(alike)("answers %s alike, with the same upstream calls", async (_, query, variables) => {
    const first = await answer(compiled, query, variables);
    const second = await answer(interpretedGateway, query, variables);
    // As text: the order of the answer's fields counts.
    expect(JSON.stringify(first)).toBe(JSON.stringify(second));
  });
});
