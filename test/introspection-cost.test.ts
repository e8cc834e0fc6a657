/** An introspection's price: the values of its answer, counted before it runs, exactly as execution makes them. */
import { execute, getIntrospectionQuery, getOperationAST, Kind, parse, type FragmentDefinitionNode } from "graphql";
import { describe, expect, it } from "vitest";
import { INTROSPECTION_VALUES_PER_UNIT, introspectionValues } from "../src/limits/introspection-cost.ts";
import { NO_FACTS } from "../src/limits/known-facts.ts";
import { estimateCost } from "../src/limits/upstream-calls.ts";
import { schema } from "../src/schema.ts";

/** Every value of an answer: each object and list, and each of their entries, leaves and nulls included. */
function valuesOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + value.reduce((sum: number, item) => sum + valuesOf(item), 0);
  if (value !== null && typeof value === "object") return 1 + Object.values(value).reduce((sum, item) => sum + valuesOf(item), 0);
  return 1;
}

function parsed(query: string) {
  const document = parse(query);
  const fragments: Record<string, FragmentDefinitionNode> = {};
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
  }
  return { document, operation: getOperationAST(document)!, fragments };
}

/** The values counted before the run, and those of the introspection fields of the answer execution gives. */
function countedAndAnswered(query: string, variables: Record<string, unknown> = {}, once = parsed(query)) {
  const { document, operation, fragments } = once;
  const result = execute({ schema, document, variableValues: variables });
  expect(result).not.toHaveProperty("errors");
  // The operations here select nothing else at their root but `__typename`.
  const introspected = Object.entries((result as { data: Record<string, unknown> }).data).filter(([key]) => key !== "__typename");
  const answered = introspected.reduce((sum, [, value]) => sum + valuesOf(value), 0);
  return { counted: introspectionValues(schema, operation, fragments, variables), answered };
}

describe("the price of an introspection", () => {
  it("counts the values of the full introspection's answer exactly, some 13,500: 15 units", () => {
    const { counted, answered } = countedAndAnswered(getIntrospectionQuery());
    expect(counted).toBe(answered);
    expect(counted).toBeGreaterThan(10_000);
    const estimate = estimateCost(schema, parse(getIntrospectionQuery()), undefined, {}, NO_FACTS);
    expect(estimate).toEqual({
      upstreamCalls: 0,
      cpuCost: 1 + Math.ceil(counted / INTROSPECTION_VALUES_PER_UNIT),
      wantsChainList: false,
    });
  });

  it("counts every alias, fragments and inline fragments, and leaves out what @skip and @include leave out", () => {
    const query = `
      query Aliases($skip: Boolean!) {
        a: __schema { types { ...Type } }
        b: __schema { types { name fields @skip(if: $skip) { name } } }
        ... on Query { c: __type(name: "EvmBlock") { name fields { name type { ...Ref } } } }
        __typename
      }
      fragment Type on __Type { name kind fields(includeDeprecated: true) { name args { name defaultValue } } }
      fragment Ref on __Type { kind name ofType { kind name ofType { kind name } } }
    `;
    for (const skip of [true, false]) {
      const { counted, answered } = countedAndAnswered(query, { skip });
      expect(counted).toBe(answered);
    }
    const once = countedAndAnswered(
      `{ __schema { types { ...Type } } } fragment Type on __Type { name kind fields(includeDeprecated: true) { name args { name defaultValue } } }`,
    );
    expect(countedAndAnswered(query, { skip: true }).counted).toBeGreaterThan(once.counted);
  });

  it("counts again, for one parsed operation, for new values of the variables its introspection reads", () => {
    const introspection = `__type(name: $name) { name fields(includeDeprecated: $deprecated) { name } } ... @include(if: $other) { __schema { queryType { name } } }`;
    const { operation, fragments } = parsed(
      `query ($name: String!, $deprecated: Boolean, $other: Boolean!, $first: Int) { ${introspection} latestBlocks(first: $first) { nodes { blockHash } } }`,
    );
    // What execution answers, of the same introspection without the field that calls upstream.
    const answered = (variables: Record<string, unknown>) =>
      countedAndAnswered(`query ($name: String!, $deprecated: Boolean, $other: Boolean!) { ${introspection} }`, variables)
        .answered;
    for (const [name, deprecated, other, first] of [
      ["EvmBlock", false, true, 1],
      ["EvmBlock", false, true, 2],
      ["Query", true, true, 2],
      ["Query", true, false, 2],
      ["EvmBlock", false, false, 3],
    ] as const) {
      const counted = introspectionValues(schema, operation, fragments, { name, deprecated, other, first });
      expect(counted, `${name} ${deprecated} ${other}`).toBe(answered({ name, deprecated, other }));
    }
  });

  it("counts a type looked up by a variable, a type that does not exist, and nothing for an operation without introspection", () => {
    const byName = `query ($name: String!) { __type(name: $name) { name possibleTypes { name } interfaces { name } enumValues { name } inputFields { name } } }`;
    for (const name of ["Node", "EvmBlock", "Network", "NoSuchType"]) {
      const { counted, answered } = countedAndAnswered(byName, { name });
      expect(counted, name).toBe(answered);
    }
    const plain = parse(`{ __typename }`);
    expect(introspectionValues(schema, getOperationAST(plain)!, {}, {})).toBe(0);
    expect(estimateCost(schema, plain, undefined, {}, NO_FACTS).cpuCost).toBe(0);
    // The smallest introspection costs 2: 1, and 1 for its few values.
    expect(estimateCost(schema, parse(`{ __schema { queryType { name } } }`), undefined, {}, NO_FACTS).cpuCost).toBe(2);
  });
});
