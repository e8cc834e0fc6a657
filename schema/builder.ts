/** The one Pothos builder of the gateway. Types register themselves on it, one file per domain. */
import SchemaBuilder from "@pothos/core";
import RelayPlugin from "@pothos/plugin-relay";
import type { GatewayContext } from "../src/context.ts";

export const builder = new SchemaBuilder<{
  Context: GatewayContext;
  DefaultFieldNullability: false;
  DefaultEdgesNullability: false;
  DefaultNodeNullability: false;
  Scalars: {
    BigInt: { Input: string; Output: string | bigint | number };
    DateTime: { Input: Date; Output: Date | string | number };
    SafeInt: { Input: number; Output: number };
    Hash: { Input: string; Output: string };
    EvmAddress: { Input: string; Output: string };
  };
}>({
  plugins: [RelayPlugin],
  defaultFieldNullability: false,
  relay: {
    clientMutationId: "omit",
    cursorType: "String",
    idFieldOptions: { description: "A global id: pass it to `Query.node` to refetch this object." },
    nodesOnConnection: { description: "The page's nodes without their cursors." },
    edgesFieldOptions: { nullable: false, description: "The page's items, each with the cursor that continues after it." },
    nodeFieldOptions: { nullable: false, description: "The item." },
    pageInfoFieldOptions: { description: "Where this page stands, and the cursor to continue with." },
    hasNextPageFieldOptions: { description: "True when the upstream has more items after this page." },
    hasPreviousPageFieldOptions: { description: "Always false: pages go forward only." },
    startCursorFieldOptions: { description: "The cursor of the first edge of the page; null when the page is empty." },
    endCursorFieldOptions: { description: "The cursor of the last edge; pass it as `after` for the next page." },
    nodesQueryOptions: false,
    nodeQueryOptions: {
      description: "Refetches any object that has an `id` of this gateway (a block, a chain, ...). Null when it no longer exists.",
    },
    nodeTypeOptions: { description: "An object that can be refetched by its global `id` through `Query.node`." },
    pageInfoTypeOptions: { description: "Where a page of a connection stands. Pages go forward only, following the upstream's page tokens." },
    firstArgOptions: {
      description: "How many items to return, within the upstream route's page size bounds (see the field's description).",
    },
    afterArgOptions: { description: "An edge's `cursor` (or `pageInfo.endCursor`): the page starts right after that edge." },
    lastArgOptions: { description: "Not supported: the upstream pages forward only. Use `first`." },
    beforeArgOptions: { description: "Not supported: the upstream pages forward only. Use `after`." },
    cursorFieldOptions: { description: "Opaque; pass it as `after` to continue right after this edge." },
  },
});

builder.queryType({ description: "Entry points into the Avalanche chain data and metrics graph." });
