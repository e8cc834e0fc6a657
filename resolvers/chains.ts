/** Root fields for EVM chains, and the links from a chain to its metrics record and blocks. */
import { ApiFeature, ChainMetricsInfoRef, EvmChainRef } from "../schema/chains.ts";
import { EvmBlockConnectionRef, EvmBlockRef, evmBlockId } from "../schema/blocks.ts";
import { builder } from "../schema/builder.ts";
import { NetworkRef, upstreamNetwork } from "../schema/networks.ts";
import { badUserInput } from "../src/errors.ts";
import { toPageTokenConnection } from "../src/execution/pagination.ts";
import { CHAIN_LIST_LOOKUP, connectionCost, lookupCost, upstreamCalls } from "../src/limits/upstream-cost-declarations.ts";
import { ROUTES } from "../src/upstream/routes.ts";
import type { ApiFeature as UpstreamApiFeature } from "../src/upstream/types.ts";
import { blockIdArgument, chainIdArgument } from "../src/upstream/identifiers.ts";

builder.queryFields((t) => ({
  chains: t.field({
    type: [EvmChainRef],
    nullable: true,
    // The held chain list answers `chains`, filtered or not, and every chain look-up.
    extensions: upstreamCalls({ ...CHAIN_LIST_LOOKUP, listsChains: true }),
    description:
      "The EVM chains the Data API indexes, optionally of one network or with one feature, in the Data API's order. Filtered from the full chain list (`GET /v1/chains`), which the gateway holds for the chain TTL and which `chain` and every chain link share: one call at most per request, whatever the filters.",
    args: {
      network: t.arg({ type: NetworkRef, description: "Only chains of this network (`isTestnet` says which)." }),
      feature: t.arg({ type: ApiFeature.ref, description: "Only chains with this Data API feature enabled." }),
    },
    resolve: async (_root, args, context) => {
      if (args.feature === "UNKNOWN") throw badUserInput("feature", "feature must be a known feature, not UNKNOWN");
      const network = upstreamNetwork(args.network);
      const feature = (args.feature ?? undefined) as UpstreamApiFeature | undefined;
      const all = await context.loaders.chainList();
      // What `GET /v1/chains?network=&feature=` answers: the chains of the network, by the
      // record's `isTestnet`, that list the feature among their `enabledFeatures`.
      return all.filter(
        (chain) =>
          (network === undefined || chain.isTestnet === (network === "fuji")) &&
          (feature === undefined || (chain.enabledFeatures ?? []).includes(feature)),
      );
    },
  }),
  chain: t.field({
    type: EvmChainRef,
    nullable: true,
    extensions: upstreamCalls(CHAIN_LIST_LOOKUP),
    description:
      "One EVM chain by its EVM chain id (such as 43114) or its blockchain id; null when the Data API does not know it.",
    args: { id: t.arg.id({ required: true, description: "An EVM chain id in decimal, or a blockchain id in cb58." }) },
    resolve: (_root, args, context) => context.loaders.chain.load(chainIdArgument("id", String(args.id))),
  }),
}));

builder.objectFields(EvmChainRef, (t) => ({
  metricsInfo: t.field({
    type: ChainMetricsInfoRef,
    nullable: true,
    extensions: upstreamCalls(lookupCost(ROUTES.metricsChain)),
    description: "How the Metrics API knows this chain (`GET /v2/chains/{chainId}`); null when it has no metrics for it.",
    resolve: (chain, _args, context) => context.loaders.metricsChain.load(chain.chainId),
  }),
  blocks: t.field({
    type: EvmBlockConnectionRef,
    nullable: true,
    extensions: upstreamCalls(connectionCost(ROUTES.chainBlocks)),
    description: `The chain's latest blocks, newest first (\`GET /v1/chains/{chainId}/blocks\`). ${ROUTES.chainBlocks.firstText}`,
    args: { ...t.arg.connectionArgs() },
    resolve: async (chain, args, context) => {
      const connection = await toPageTokenConnection(args, {
        bounds: ROUTES.chainBlocks.page,
        filters: { field: "EvmChain.blocks", chainId: chain.chainId },
        nodeKey: evmBlockId,
        fetchPage: async (page) => {
          const response = await context.loaders.evmPages.chainBlocks(chain.chainId, page);
          return { items: response.blocks, nextPageToken: response.nextPageToken };
        },
      });
      return connection;
    },
  }),
  block: t.field({
    type: EvmBlockRef,
    nullable: true,
    extensions: upstreamCalls(lookupCost(ROUTES.block)),
    description:
      "One block of the chain by number or hash (`GET /v1/chains/{chainId}/blocks/{blockId}`); null when there is none.",
    args: { id: t.arg.string({ required: true, description: "A block number in decimal, or a block hash." }) },
    resolve: (chain, args, context) =>
      context.loaders.block.load({ chainId: chain.chainId, blockId: blockIdArgument("id", args.id) }),
  }),
}));
