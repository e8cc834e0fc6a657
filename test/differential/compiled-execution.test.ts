/**
 * The divergences the differential test found, each on a small schema whose resolvers show what
 * they were given, so that a divergence the gateway's resolvers would hide (they read an absent
 * input field and a null one alike) still shows: graphql-js, graphql-jit as the plugin gives it,
 * and the gateway's compiled execution (src/plugins/compiled-execution.ts), which must answer as graphql-js.
 */
import { useGraphQlJit } from "@envelop/graphql-jit";
import { createSchema, createYoga, type Plugin } from "graphql-yoga";
import { describe, expect, it } from "vitest";
import { useCompiledExecution } from "../../src/plugins/compiled-execution.ts";

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
const gateway = server(useCompiledExecution());

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
