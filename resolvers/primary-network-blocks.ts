/**
 * The primary network's blocks and the X-Chain's DAG: a chain's block by height or id, a vertex by
 * id and the vertices at one height. Every argument is checked before any upstream call.
 */
import { builder } from "../schema/builder.ts";
import { SortOrderRef } from "../schema/evm-transactions.ts";
import { PrimaryNetworkChainRef, XChainRef } from "../schema/primary-network.ts";
import { PrimaryNetworkBlockRef, XChainVertexConnectionRef, XChainVertexRef } from "../schema/primary-network-blocks.ts";
import { badUserInput } from "../src/errors.ts";
import { BLOCK_NUMBER, CB58_ID, HEX_32, cb58IdArgument } from "../src/upstream/identifiers.ts";
import { toPageTokenConnection } from "../src/execution/pagination.ts";
import { connectionCost, lookupCost, upstreamCalls } from "../src/limits/upstream-cost-declarations.ts";
import { queryMinimum } from "../src/upstream/bounds.ts";
import { primaryChain } from "../src/upstream/primary-network-api.ts";
import { ROUTES } from "../src/upstream/routes.ts";
import type { PrimaryNetworkChainInfo, XChainVertex } from "../src/upstream/types.ts";
import { withChainInfo } from "./primary-network.ts";

const { verticesAtHeight } = ROUTES;
const MIN_VERTEX_HEIGHT = queryMinimum("data", verticesAtHeight.path, "vertexHeight");

builder.interfaceFields(PrimaryNetworkChainRef, (t) => ({
  block: t.field({
    type: PrimaryNetworkBlockRef,
    nullable: true,
    extensions: upstreamCalls(lookupCost(ROUTES.primaryNetworkBlock)),
    description: `One block of the chain by height or id (\`${ROUTES.primaryNetworkBlock.label}\`); null when there is none. On the X-Chain, only its blocks: earlier history is in vertices.`,
    args: {
      id: t.arg.string({
        required: true,
        description: "A block height in decimal, or a block id: cb58 on the P- and X-Chain, 0x hex on the C-Chain.",
      }),
    },
    resolve: (chain, args, context) => {
      const cChain = chain.chain === "c-chain";
      if (!BLOCK_NUMBER.test(args.id) && !(cChain ? HEX_32.test(args.id) : CB58_ID.test(args.id))) {
        throw badUserInput(
          "id",
          `id must be a block height in decimal or a block id (${cChain ? "0x and 64 hex digits" : "cb58"}), got ${JSON.stringify(args.id)}`,
        );
      }
      return context.loaders.primaryNetworkBlock.load({ origin: chain, id: cChain ? args.id.toLowerCase() : args.id });
    },
  }),
}));

builder.objectFields(XChainRef, (t) => ({
  vertex: t.field({
    type: XChainVertexRef,
    nullable: true,
    extensions: upstreamCalls(lookupCost(ROUTES.vertex)),
    description: `One vertex of the X-Chain's DAG by its id (\`${ROUTES.vertex.label}\`); null when there is none.`,
    args: { hash: t.arg.string({ required: true, description: "The vertex's id (cb58)." }) },
    resolve: (chain, args, context) =>
      context.loaders.xChainVertex.load({ network: chain.network, id: cb58IdArgument("hash", args.hash, "a vertex id") }),
  }),
  verticesAtHeight: t.field({
    type: XChainVertexConnectionRef,
    nullable: true,
    // The X-Chain's DAG holds one vertex at most heights (every height in the simulator).
    extensions: upstreamCalls(connectionCost(verticesAtHeight, { expectedItems: 1 })),
    description: `The vertices at one height of the X-Chain's DAG (\`${verticesAtHeight.label}\`). ${verticesAtHeight.firstText}`,
    args: {
      ...t.arg.connectionArgs(),
      height: t.arg({
        type: "BigInt",
        required: true,
        description: `The height in the DAG: ${MIN_VERTEX_HEIGHT} to ${Number.MAX_SAFE_INTEGER}.`,
      }),
      sortOrder: t.arg({ type: SortOrderRef, description: "ASC: in the order they were accepted; DESC: the reverse." }),
    },
    resolve: async (chain, args, context) => {
      const height = BigInt(args.height);
      if (height < BigInt(MIN_VERTEX_HEIGHT) || height > BigInt(Number.MAX_SAFE_INTEGER)) {
        throw badUserInput(
          "height",
          `height must be between ${MIN_VERTEX_HEIGHT} and ${Number.MAX_SAFE_INTEGER}, got ${args.height}`,
          {
            min: MIN_VERTEX_HEIGHT,
            max: Number.MAX_SAFE_INTEGER,
          },
        );
      }
      const vertexHeight = Number(height);
      const sortOrder = args.sortOrder ?? undefined;
      const connection = await toPageTokenConnection<XChainVertex, PrimaryNetworkChainInfo>(args, {
        bounds: verticesAtHeight.page,
        filters: { field: "XChain.verticesAtHeight", network: chain.network, height: vertexHeight, sortOrder },
        nodeKey: (vertex) => vertex.vertexHash,
        fetchPage: async (page) => {
          const response = await context.loaders.primaryNetworkPages.verticesAtHeight(
            chain.network,
            vertexHeight,
            sortOrder,
            page,
          );
          return { items: response.items, nextPageToken: response.nextPageToken, meta: response.chainInfo };
        },
      });
      return withChainInfo(connection, primaryChain(chain.network, "x-chain"));
    },
  }),
}));
