/**
 * The UTXOs of some addresses on each chain of the primary network: `utxos` of the P-, X- and
 * C-Chain. Every argument is checked before any upstream call.
 */
import { builder } from "../schema/builder.ts";
import { SortOrderRef } from "../schema/evm-transactions.ts";
import { CChainRef, PChainRef, XChainRef } from "../schema/primary-network.ts";
import { PChainUtxoConnectionRef, UtxoConnectionRef, UtxoSortByRef } from "../schema/primary-network-utxos.ts";
import type { GatewayContext } from "../src/execution/context.ts";
import { cb58IdArgument } from "../src/upstream/identifiers.ts";
import { toPageTokenConnection, type ConnectionArgs } from "../src/execution/pagination.ts";
import { connectionCost, upstreamCalls } from "../src/limits/upstream-cost-declarations.ts";
import type { PrimaryNetworkOrigin } from "../src/upstream/primary-network-api.ts";
import { ROUTES } from "../src/upstream/routes.ts";
import type {
  PChainUtxo,
  PrimaryNetworkChainInfo,
  PrimaryNetworkUtxo,
  SortOrder,
  Utxo,
  UtxosSortBy,
} from "../src/upstream/types.ts";
import { addressesArgument, withChainInfo } from "./primary-network.ts";

const { utxos } = ROUTES;

interface UtxoArgs extends ConnectionArgs {
  addresses: readonly string[];
  assetId?: string | null;
  includeSpent?: boolean | null;
  sortBy?: UtxosSortBy | null;
  sortOrder?: SortOrder | null;
}

/** A page of UTXOs of some addresses on a chain; `U` is the chain's UTXO shape. */
async function utxoConnection<U extends PrimaryNetworkUtxo>(
  origin: PrimaryNetworkOrigin,
  args: UtxoArgs,
  field: string,
  context: GatewayContext,
) {
  const addresses = addressesArgument("addresses", args.addresses, origin.network, false, true);
  const filters = {
    assetId: args.assetId != null ? cb58IdArgument("assetId", args.assetId, "an asset id") : undefined,
    includeSpent: args.includeSpent ?? undefined,
    sortBy: args.sortBy ?? undefined,
    sortOrder: args.sortOrder ?? undefined,
  };
  const connection = await toPageTokenConnection<U, PrimaryNetworkChainInfo>(args, {
    bounds: utxos.page,
    filters: { field, network: origin.network, blockchainId: origin.blockchainId, addresses, ...filters },
    nodeKey: (utxo) => utxo.utxoId,
    fetchPage: async (page) => {
      const response = await context.upstreams.primaryNetwork.listUtxos(origin, addresses, filters, page, context.call);
      return { items: response.items as U[], nextPageToken: response.nextPageToken, meta: response.chainInfo };
    },
  });
  return withChainInfo(connection, origin);
}

const describeUtxos = (which: string) =>
  `UTXOs of some addresses on this chain (${which}), the unspent ones unless \`includeSpent\` (\`${utxos.label}\`). ${utxos.firstText}`;

const utxoArgs = (t: Parameters<Parameters<typeof builder.objectFields>[1]>[0]) => ({
  addresses: t.arg.stringList({
    required: true,
    description:
      "The addresses whose UTXOs to list, 1 to 100: bech32 (`avax1...`, `fuji1...`) of the network, with or without the chain letter.",
  }),
  includeSpent: t.arg.boolean({ description: "Also list UTXOs that have been spent." }),
  sortBy: t.arg({ type: UtxoSortByRef, description: "What to order by (the upstream's default: creation time)." }),
  sortOrder: t.arg({ type: SortOrderRef, description: "ASC: smallest or oldest first; DESC: largest or newest first." }),
});

builder.objectFields(PChainRef, (t) => ({
  utxos: t.field({
    type: PChainUtxoConnectionRef,
    nullable: true,
    extensions: upstreamCalls(connectionCost(utxos)),
    description: describeUtxos("staked ones included"),
    args: { ...t.arg.connectionArgs(), ...utxoArgs(t) },
    resolve: (chain, args, context) => utxoConnection<PChainUtxo>(chain, args, "PChain.utxos", context),
  }),
}));

builder.objectFields(XChainRef, (t) => ({
  utxos: t.field({
    type: UtxoConnectionRef,
    nullable: true,
    extensions: upstreamCalls(connectionCost(utxos)),
    description: describeUtxos("of AVAX and other assets"),
    args: {
      ...t.arg.connectionArgs(),
      ...utxoArgs(t),
      assetId: t.arg.string({ description: "Only UTXOs of this asset (its id, cb58)." }),
    },
    resolve: (chain, args, context) => utxoConnection<Utxo>(chain, args, "XChain.utxos", context),
  }),
}));

builder.objectFields(CChainRef, (t) => ({
  utxos: t.field({
    type: UtxoConnectionRef,
    nullable: true,
    extensions: upstreamCalls(connectionCost(utxos)),
    description: describeUtxos("those exported to the C-Chain, waiting in shared memory or imported"),
    args: { ...t.arg.connectionArgs(), ...utxoArgs(t) },
    resolve: (chain, args, context) => utxoConnection<Utxo>(chain, args, "CChain.utxos", context),
  }),
}));
