/**
 * A field that can call upstream declares what it costs, or the schema build fails: the check
 * (`assertUpstreamCostsDeclared`, run by src/schema.ts) on small Pothos schemas and on the real one.
 */
import SchemaBuilder from "@pothos/core";
import { describe, expect, it } from "vitest";
import {
  NO_UPSTREAM_CALL,
  assertUpstreamCostsDeclared,
  byImplementation,
  callCost,
  connectionCost,
  upstreamCalls,
} from "../src/limits/upstream-cost-declarations.ts";
import { ROUTES } from "../src/upstream/routes.ts";
import { schema } from "../src/schema.ts";

interface Context {
  fetchName: () => Promise<string>;
}

/** A small schema of the types and fields `declare` adds to a builder whose context reaches an upstream. */
function smallSchema(
  declare: (builder: PothosSchemaTypes.SchemaBuilder<PothosSchemaTypes.ExtendDefaultTypes<{ Context: Context }>>) => void,
) {
  const builder = new SchemaBuilder<{ Context: Context }>({});
  builder.queryType({});
  declare(builder);
  return builder.toSchema();
}

describe("the check that fields calling upstream declare their cost", () => {
  it("fails, naming each field whose resolver takes the context and declares no cost", () => {
    const undeclared = smallSchema((builder) => {
      builder.queryFields((t) => ({
        name: t.string({ resolve: (_root, _args, context) => context.fetchName() }),
        other: t.string({ resolve: (_root, _args, context) => context.fetchName() }),
        constant: t.string({ resolve: () => "no context, no call" }),
      }));
    });
    expect(() => assertUpstreamCostsDeclared(undeclared)).toThrow(
      /fields that can call upstream without a declared cost .*: Query\.name, Query\.other$/,
    );
  });

  it("passes when each such field declares a cost, or explicitly none", () => {
    const declared = smallSchema((builder) => {
      builder.queryFields((t) => ({
        name: t.string({
          extensions: upstreamCalls(callCost(ROUTES.chain)),
          resolve: (_root, _args, context) => context.fetchName(),
        }),
        page: t.string({
          extensions: upstreamCalls(connectionCost(ROUTES.latestBlocks)),
          resolve: (_root, _args, context) => context.fetchName(),
        }),
        local: t.string({ extensions: upstreamCalls(NO_UPSTREAM_CALL), resolve: (_root, _args, context) => typeof context }),
      }));
    });
    expect(() => assertUpstreamCostsDeclared(declared)).not.toThrow();
  });

  it("fails for a declaration that is not a cost, and for an interface's cost that leaves out an implementation", () => {
    const malformed = smallSchema((builder) => {
      builder.queryFields((t) => ({
        name: t.string({ extensions: { upstreamCalls: 1 }, resolve: (_root, _args, context) => context.fetchName() }),
      }));
    });
    expect(() => assertUpstreamCostsDeclared(malformed)).toThrow(/: Query\.name$/);

    const partial = smallSchema((builder) => {
      const Named = builder.interfaceRef<{ kind: string }>("Named").implement({
        resolveType: (value) => value.kind,
        fields: (t) => ({
          name: t.string({
            extensions: upstreamCalls(byImplementation({ A: callCost(ROUTES.chain) })),
            resolve: (_parent, _args, context) => context.fetchName(),
          }),
        }),
      });
      builder.objectRef<{ kind: string }>("A").implement({ interfaces: [Named], fields: () => ({}) });
      builder.objectRef<{ kind: string }>("B").implement({ interfaces: [Named], fields: () => ({}) });
      builder.queryFields((t) => ({ named: t.field({ type: Named, resolve: () => ({ kind: "A" }) }) }));
    });
    expect(() => assertUpstreamCostsDeclared(partial)).toThrow(/: B\.name$/);
  });

  it("passes on the gateway's schema", () => {
    expect(() => assertUpstreamCostsDeclared(schema)).not.toThrow();
  });
});
