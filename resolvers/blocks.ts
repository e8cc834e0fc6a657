/** The latest blocks across chains, and the links from a block to its chain and parent. */
import { EvmBlockConnectionRef, EvmBlockRef, evmBlockId } from "../schema/blocks.ts";
import { builder } from "../schema/builder.ts";
import { EvmChainRef } from "../schema/chains.ts";
import { NetworkRef, upstreamNetwork } from "../schema/networks.ts";
import { primeBlocks } from "../src/loaders/evm.ts";
import { describeFirst, toPageTokenConnection } from "../src/pagination.ts";
import { PARENT_BLOCK_FIELDS_KNOWN_FROM_CHILD, selectsOnly } from "../src/selection.ts";
import { queryBounds } from "../src/upstream/bounds.ts";
import type { EvmBlock } from "../src/upstream/types.ts";
import { isZeroHash } from "../src/validate.ts";

const latestBlocksBounds = queryBounds("data", "/v1/blocks");
const LATEST_BLOCKS_DEFAULT = latestBlocksBounds.default ?? 10;

builder.queryFields((t) => ({
  latestBlocks: t.field({
    type: EvmBlockConnectionRef,
    nullable: true,
    description: `The latest blocks of every EVM chain the Data API indexes, newest first (\`GET /v1/blocks\`). ${describeFirst(latestBlocksBounds, LATEST_BLOCKS_DEFAULT)}`,
    args: {
      ...t.arg.connectionArgs(),
      network: t.arg({ type: NetworkRef, description: "Only blocks of chains of this network." }),
    },
    resolve: async (_root, args, context) => {
      const network = upstreamNetwork(args.network);
      const connection = await toPageTokenConnection(args, {
        bounds: { ...latestBlocksBounds, default: LATEST_BLOCKS_DEFAULT },
        filters: { field: "Query.latestBlocks", network: network ?? null },
        nodeKey: evmBlockId,
        fetchPage: async (page) => {
          const response = await context.upstreams.evm.listLatestBlocksAllChains(network, page, context.call);
          return { items: response.blocks, nextPageToken: response.nextPageToken };
        },
      });
      primeBlocks(context.loaders, connection.edges.map((edge) => edge.node));
      return connection;
    },
  }),
}));

builder.objectFields(EvmBlockRef, (t) => ({
  chain: t.field({
    type: EvmChainRef,
    nullable: true,
    description: "The chain the block belongs to.",
    resolve: (block, _args, context) => context.loaders.chain.load(block.chainId),
  }),
  parent: t.field({
    type: EvmBlockRef,
    nullable: true,
    description: "The block before this one; null for the first block of the chain.",
    resolve: (block, _args, context, info) => {
      if (block.blockNumber === "0" || isZeroHash(block.parentHash)) return null;
      if (selectsOnly(info, PARENT_BLOCK_FIELDS_KNOWN_FROM_CHILD)) {
        // Everything asked is known from the child: its parent's hash, number and chain. The
        // partial record is safe because no other field of it is resolved.
        const known: Pick<EvmBlock, "chainId" | "blockHash" | "blockNumber"> = {
          chainId: block.chainId,
          blockHash: block.parentHash,
          blockNumber: (BigInt(block.blockNumber) - 1n).toString(),
        };
        return known as EvmBlock;
      }
      return context.loaders.block.load({ chainId: block.chainId, blockId: block.parentHash });
    },
  }),
}));
