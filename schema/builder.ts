/** The one Pothos builder of the gateway. Types register themselves on it, one file per domain. */
import SchemaBuilder, { brandWithType, completeValue, getTypeBrand, type OutputType, type SchemaTypes } from "@pothos/core";
import DirectivePlugin from "@pothos/plugin-directives";
import FederationPlugin from "@pothos/plugin-federation";
import RelayPlugin from "@pothos/plugin-relay";
import type { GatewayContext } from "../src/execution/context.ts";
import { checkNodeId, decodeGlobalId } from "../src/execution/global-ids.ts";
import { upstreamCalls } from "../src/limits/upstream-cost-declarations.ts";

export const builder = new SchemaBuilder<{
  Context: GatewayContext;
  DefaultFieldNullability: false;
  DefaultEdgesNullability: false;
  DefaultNodeNullability: false;
  Scalars: {
    BigInt: { Input: string; Output: string | bigint | number };
    Decimal: { Input: string; Output: string };
    DateTime: { Input: Date; Output: Date | string | number };
    SafeInt: { Input: number; Output: number };
    Hash: { Input: string; Output: string };
    EvmAddress: { Input: string; Output: string };
    JSON: { Input: unknown; Output: unknown };
    JSONObject: { Input: Record<string, unknown>; Output: Record<string, unknown> };
    _Any: { Input: unknown; Output: unknown };
  };
}>({
  plugins: [RelayPlugin, DirectivePlugin, FederationPlugin],
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
    // A global id is checked like any argument: malformed, over-long or of a type that is not
    // a Node, it is a BAD_USER_INPUT on `node`; each node type's `id.parse` checks its key
    // (see src/execution/global-ids.ts for why the refusals are thrown here rather than while decoding).
    decodeGlobalID: (globalId) => decodeGlobalId(globalId),
    nodeQueryOptions: {
      // A transaction refetched by its id is read whole: its complete view is held.
      extensions: upstreamCalls({ calls: 1, holds: "complete transaction" }),
      args: { id: { description: "The object's `id`, as a field `id` of this gateway returned it." } },
      resolve: (_root, args, _context, info, resolveNode) => {
        checkNodeId(args.id, info);
        // The id names the type of what it loads, and `node` says so: the Node interface reads
        // the brand and never has to guess the type through every Node type's `isTypeOf`. The
        // relay plugin brands what it loads only once the load is done, and answers the same id
        // asked again in the request with that load while it is still pending, unbranded.
        // A type's name is a brand as the relay plugin gives it (its types take only refs and scalars).
        const typename = args.id.typename as OutputType<SchemaTypes>;
        return completeValue(resolveNode(args.id), (node) => {
          if (node !== null && getTypeBrand(node) === null) brandWithType(node, typename);
          return node;
        });
      },
      description:
        "Refetches any object that has an `id` of this gateway (a block, a chain, ...). Null when it no longer exists.",
    },
    nodeTypeOptions: { description: "An object that can be refetched by its global `id` through `Query.node`." },
    pageInfoTypeOptions: {
      description: "Where a page of a connection stands. Pages go forward only, following the upstream's page tokens.",
    },
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
builder.mutationType({
  description:
    "Operations that start work upstream: transaction exports and Warp signature aggregation. A document's mutations run one after another, in document order; each is nullable, so one that fails is null with its error and the others keep their results.",
});
builder.subscriptionType({ description: "Streams over Server-Sent Events (send `accept: text/event-stream`)." });
