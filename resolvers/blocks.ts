/** The latest blocks across chains, and the links from a block to its chain and parent. */
import { EvmBlockConnectionRef, EvmBlockRef, evmBlockId } from "../schema/blocks.ts";
import { builder } from "../schema/builder.ts";
import { resumeArguments } from "../schema/renamed-arguments.ts";
import { EvmChainRef } from "../schema/chains.ts";
import { NetworkRef, upstreamNetwork } from "../schema/networks.ts";
import { toPageTokenConnection } from "../src/execution/pagination.ts";
import { PARENT_BLOCK_FIELDS_KNOWN_FROM_CHILD, selectsOnly } from "../src/execution/selection.ts";
import { CHAIN_LIST_LOOKUP, callCost, connectionCost, upstreamCalls } from "../src/limits/upstream-cost-declarations.ts";
import { ROUTES } from "../src/upstream/routes.ts";
import type { EvmBlock } from "../src/upstream/types.ts";
import { GatewayError, badUserInput } from "../src/errors.ts";
import { EVM_CHAIN_ID, afterBlockArgument, isZeroHash, quoted } from "../src/upstream/identifiers.ts";
import { itemOrError, liveTerms } from "../src/live/live-feed.ts";
import type { GatewayContext } from "../src/execution/context.ts";

builder.queryFields((t) => ({
  latestBlocks: t.field({
    type: EvmBlockConnectionRef,
    nullable: true,
    extensions: upstreamCalls(connectionCost(ROUTES.latestBlocks)),
    description: `The latest blocks of every EVM chain the Data API indexes, newest first (\`GET /v1/blocks\`). ${ROUTES.latestBlocks.firstText}`,
    args: {
      ...t.arg.connectionArgs(),
      network: t.arg({ type: NetworkRef, description: "Only blocks of chains of this network." }),
    },
    resolve: async (_root, args, context) => {
      const network = upstreamNetwork(args.network);
      const connection = await toPageTokenConnection(args, {
        bounds: ROUTES.latestBlocks.page,
        filters: { field: "Query.latestBlocks", network: network ?? null },
        nodeKey: evmBlockId,
        fetchPage: async (page) => {
          const response = await context.loaders.evmPages.latestBlocks(network, page);
          return { items: response.blocks, nextPageToken: response.nextPageToken };
        },
      });
      return connection;
    },
  }),
}));

builder.objectFields(EvmBlockRef, (t) => ({
  chain: t.field({
    type: EvmChainRef,
    nullable: true,
    extensions: upstreamCalls(CHAIN_LIST_LOOKUP),
    description: "The chain the block belongs to.",
    resolve: (block, _args, context) => context.loaders.chain.load(block.chainId),
  }),
  parent: t.field({
    type: EvmBlockRef,
    nullable: true,
    // A page of latest blocks holds consecutive blocks of each chain, which prime the block loader:
    // only the oldest block of each chain in the page has its parent outside it.
    extensions: upstreamCalls(
      callCost(ROUTES.block, {
        freeWhenSelectingOnly: PARENT_BLOCK_FIELDS_KNOWN_FROM_CHILD,
        atMostPerList: { "EvmChain.blocks": 1, "Query.latestBlocks": "chain" },
      }),
    ),
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

builder.subscriptionFields((t) => ({
  newBlocks: t.field({
    type: EvmBlockRef,
    nullable: true,
    // A subscription is charged once, for its first read.
    extensions: upstreamCalls(callCost(ROUTES.chainBlocks)),
    description: `Each new block of one EVM chain as it arrives, oldest first, each once. ${liveTerms(ROUTES.chainBlocks, "LIVE_BLOCKS_POLL_MS", "one chain")}`,
    args: {
      chainId: t.arg.id({ required: true, description: "The chain's EVM chain id in decimal (such as 43114)." }),
      ...resumeArguments(t.arg, "The last block number seen"),
    },
    subscribe: async (_root, args, context) => {
      const after = afterBlockArgument(args);
      const chainId = await indexedChainId(args.chainId, context);
      return context.live.feed.subscribe(context.live.questions.chainBlocks(chainId), {
        after,
        call: context.call,
        chargeRead: context.chargeRead,
        caller: context.liveCaller,
      });
    },
    resolve: itemOrError,
  }),
  newNetworkBlocks: t.field({
    type: EvmBlockRef,
    nullable: true,
    extensions: upstreamCalls(callCost(ROUTES.latestBlocks)),
    description: `Each new block of every EVM chain of a network as it arrives, each once, each chain's in order (oldest first by time across chains). ${liveTerms(ROUTES.latestBlocks, "LIVE_BLOCKS_POLL_MS", "one network")}`,
    args: { network: t.arg({ type: NetworkRef, required: true, description: "The network whose chains' blocks to push." }) },
    subscribe: (_root, args, context) =>
      context.live.feed.subscribe(context.live.questions.networkBlocks(upstreamNetwork(args.network)), {
        call: context.call,
        chargeRead: context.chargeRead,
        caller: context.liveCaller,
      }),
    resolve: itemOrError,
  }),
}));

/** A live subscription's chain: an EVM chain id in decimal that the Data API indexes. */
export async function indexedChainId(value: string | number, context: GatewayContext): Promise<string> {
  const chainId = String(value);
  if (!EVM_CHAIN_ID.test(chainId)) {
    throw badUserInput("chainId", `chainId must be an EVM chain id in decimal (such as 43114), got ${quoted(chainId)}`);
  }
  const chain = await context.loaders.chain.load(chainId);
  if (!chain) throw new GatewayError(`The Data API does not index a chain ${quoted(chainId)}`, "NOT_FOUND");
  return chainId;
}
