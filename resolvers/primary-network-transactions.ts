/**
 * The primary network's transactions: one by id and the latest of each chain (P-, X- and C-Chain
 * atomic), with their address, type and time filters, and `Subscription.newPrimaryNetworkTransactions`.
 * Every argument is checked before any upstream call.
 */
import { builder } from "../schema/builder.ts";
import { resumeArguments, validationIdArguments } from "../schema/renamed-arguments.ts";
import { SortOrderRef } from "../schema/evm-transactions.ts";
import { NetworkRef, upstreamNetwork } from "../schema/networks.ts";
import { CChainRef, PChainRef, PrimaryNetworkChainRef, XChainRef } from "../schema/primary-network.ts";
import {
  CChainAtomicTransactionType,
  PChainTransactionType,
  PrimaryNetworkTransactionType,
  XChainTransactionType,
} from "../schema/primary-network-transaction-kinds.ts";
import {
  CChainAtomicTransactionConnectionRef,
  CChainAtomicTransactionRef,
  PChainTransactionConnectionRef,
  PChainTransactionRef,
  PrimaryNetworkTransactionRef,
  XChainTransactionConnectionRef,
  XChainTransactionRef,
} from "../schema/primary-network-transactions.ts";
import type { GatewayContext } from "../src/execution/context.ts";
import { badUserInput } from "../src/errors.ts";
import { EVM_ADDRESS, afterBlockArgument, cb58IdArgument, validationIdFilter } from "../src/upstream/identifiers.ts";
import { toPageTokenConnection, type ConnectionArgs } from "../src/execution/pagination.ts";
import { callCost, connectionCost, lookupCost, upstreamCalls } from "../src/limits/upstream-cost-declarations.ts";
import { itemOrError, liveTerms } from "../src/live/live-feed.ts";
import { queryMinimum } from "../src/upstream/bounds.ts";
import {
  cChainExportTransactionTxTypeValues,
  cChainImportTransactionTxTypeValues,
  pChainTransactionTypeValues,
  xChainTransactionTypeValues,
} from "../src/upstream/contract/data-api.ts";
import type { PrimaryNetworkOrigin, TransactionFilters } from "../src/upstream/primary-network-api.ts";
import { ROUTES } from "../src/upstream/routes.ts";
import type {
  CChainAtomicTransaction,
  PChainTransaction,
  PrimaryNetworkChainInfo,
  PrimaryNetworkTransaction,
  PrimaryNetworkTxType,
  SortOrder,
  XChainTransaction,
} from "../src/upstream/types.ts";
import { addressesArgument, primaryChainArgument, withChainInfo } from "./primary-network.ts";

const { primaryNetworkTransactions } = ROUTES;
const MIN_TIMESTAMP = queryMinimum("data", primaryNetworkTransactions.path, "startTimestamp");

function timestampArgument(argument: string, value: number | null | undefined): number | undefined {
  if (value === null || value === undefined) return undefined;
  if (value < MIN_TIMESTAMP)
    throw badUserInput(argument, `${argument} must be a Unix time in seconds of at least ${MIN_TIMESTAMP}, got ${value}`);
  return value;
}

/** The route's rule: type and time filters work only among an address's transactions (or, on the P-Chain, an L1 validation's). */
function requireAddressesForFilters(
  args: { addresses?: readonly string[] | null; txTypes?: readonly string[] | null; from?: number | null; to?: number | null },
  allowedBy: string,
): void {
  if (args.addresses) return;
  for (const name of ["txTypes", "from", "to"] as const) {
    if (args[name] !== null && args[name] !== undefined) {
      throw badUserInput(
        name,
        `${name} needs addresses${allowedBy}: the Data API filters by transaction type and time only among an address's transactions`,
      );
    }
  }
}

interface TransactionArgs extends ConnectionArgs {
  addresses?: readonly string[] | null;
  txTypes?: readonly string[] | null;
  validationId?: string | null;
  l1ValidationId?: string | null;
  from?: number | null;
  to?: number | null;
  sortOrder?: SortOrder | null;
}

/** A page of a chain's latest transactions; `T` is the chain's transaction shape. */
export async function transactionConnection<T extends PrimaryNetworkTransaction>(
  origin: PrimaryNetworkOrigin,
  args: TransactionArgs,
  field: string,
  context: GatewayContext,
) {
  const filters: TransactionFilters = {
    addresses: args.addresses
      ? addressesArgument("addresses", args.addresses, origin.network, origin.chain === "c-chain")
      : undefined,
    txTypes: args.txTypes ? (args.txTypes as PrimaryNetworkTxType[]) : undefined,
    l1ValidationId: validationIdFilter(args),
    startTimestamp: timestampArgument("from", args.from),
    endTimestamp: timestampArgument("to", args.to),
    sortOrder: args.sortOrder ?? undefined,
  };
  if (!filters.l1ValidationId) requireAddressesForFilters(args, origin.chain === "p-chain" ? " (or validationId)" : "");
  const connection = await toPageTokenConnection<T, PrimaryNetworkChainInfo>(args, {
    bounds: primaryNetworkTransactions.page,
    filters: { field, network: origin.network, blockchainId: origin.blockchainId, ...filters },
    nodeKey: (tx) => tx.txHash,
    fetchPage: async (page) => {
      const response = await context.loaders.primaryNetworkPages.transactions(origin, filters, page);
      return { items: response.items as T[], nextPageToken: response.nextPageToken, meta: response.chainInfo };
    },
  });
  return withChainInfo(connection, origin);
}

const describeTransactions = (chain: string, extra: string) =>
  `The chain's latest ${chain} transactions, newest first unless \`sortOrder\` says otherwise (\`${primaryNetworkTransactions.label}\`). ${primaryNetworkTransactions.firstText} \`txTypes\`, \`from\` and \`to\` need \`addresses\`${extra}.`;

const transactionFilterArgs = (t: Parameters<Parameters<typeof builder.objectFields>[1]>[0]) => ({
  addresses: t.arg.stringList({
    description:
      "Only transactions that touch one of these addresses (at most 100): bech32 (`avax1...`, `fuji1...`) of the network, with or without the chain letter.",
  }),
  from: t.arg({
    type: "SafeInt",
    description: "Only transactions accepted at or after this Unix time (seconds, >= 0); needs `addresses`.",
  }),
  to: t.arg({
    type: "SafeInt",
    description: "Only transactions accepted at or before this Unix time (seconds, >= 0); needs `addresses`.",
  }),
  sortOrder: t.arg({ type: SortOrderRef, description: "ASC: oldest first; DESC (the default): newest first." }),
});

const describeTransaction = (chain: string, type: string) =>
  `One ${chain} transaction by its id (\`${ROUTES.primaryNetworkTransaction.label}\`), as a \`${type}\`; null when this chain has none with that id (a transaction of another chain included).`;
const hashArg = (t: Parameters<Parameters<typeof builder.objectFields>[1]>[0]) => ({
  hash: t.arg.string({ required: true, description: "The transaction's id (cb58)." }),
});

/** A transaction of a chain by its id, checked before any call; null when the chain has none. */
function transactionOnChain<T extends PrimaryNetworkTransaction>(
  chain: PrimaryNetworkOrigin,
  hash: string,
  context: GatewayContext,
): Promise<T | null> {
  const id = cb58IdArgument("hash", hash, "a transaction id");
  return context.loaders.primaryNetworkTransaction.load({ origin: chain, id }) as Promise<T | null>;
}

builder.interfaceFields(PrimaryNetworkChainRef, (t) => ({
  transaction: t.field({
    type: PrimaryNetworkTransactionRef,
    nullable: true,
    extensions: upstreamCalls(lookupCost(ROUTES.primaryNetworkTransaction)),
    description: `One transaction of this chain by its id (\`${ROUTES.primaryNetworkTransaction.label}\`), as the chain's own type (\`PChainTransaction\`, \`XChainTransaction\` or \`CChainAtomicTransaction\`); null when this chain has none with that id.`,
    args: { hash: t.arg.string({ required: true, description: "The transaction's id (cb58)." }) },
    resolve: (chain, args, context) => transactionOnChain(chain, args.hash, context),
  }),
}));

builder.objectFields(PChainRef, (t) => ({
  transaction: t.field({
    type: PChainTransactionRef,
    nullable: true,
    extensions: upstreamCalls(lookupCost(ROUTES.primaryNetworkTransaction)),
    description: describeTransaction("P-Chain", "PChainTransaction"),
    args: hashArg(t),
    resolve: (chain, args, context) => transactionOnChain<PChainTransaction>(chain, args.hash, context),
  }),
  transactions: t.field({
    type: PChainTransactionConnectionRef,
    nullable: true,
    extensions: upstreamCalls(connectionCost(primaryNetworkTransactions)),
    description: describeTransactions("P-Chain", ", or `validationId`, which finds every transaction of one L1 validator"),
    args: {
      ...t.arg.connectionArgs(),
      ...transactionFilterArgs(t),
      txTypes: t.arg({
        type: [PChainTransactionType.ref],
        description: "Only transactions of these kinds; needs `addresses` or `validationId`.",
      }),
      ...validationIdArguments(t.arg, "Only the transactions of this L1 validation: its id"),
    },
    resolve: (chain, args, context) => transactionConnection<PChainTransaction>(chain, args, "PChain.transactions", context),
  }),
}));

builder.objectFields(XChainRef, (t) => ({
  transaction: t.field({
    type: XChainTransactionRef,
    nullable: true,
    extensions: upstreamCalls(lookupCost(ROUTES.primaryNetworkTransaction)),
    description: describeTransaction("X-Chain", "XChainTransaction"),
    args: hashArg(t),
    resolve: (chain, args, context) => transactionOnChain<XChainTransaction>(chain, args.hash, context),
  }),
  transactions: t.field({
    type: XChainTransactionConnectionRef,
    nullable: true,
    extensions: upstreamCalls(connectionCost(primaryNetworkTransactions)),
    description: describeTransactions("X-Chain", ""),
    args: {
      ...t.arg.connectionArgs(),
      ...transactionFilterArgs(t),
      txTypes: t.arg({ type: [XChainTransactionType.ref], description: "Only transactions of these kinds; needs `addresses`." }),
    },
    resolve: (chain, args, context) => transactionConnection<XChainTransaction>(chain, args, "XChain.transactions", context),
  }),
}));

builder.objectFields(CChainRef, (t) => ({
  transaction: t.field({
    type: CChainAtomicTransactionRef,
    nullable: true,
    extensions: upstreamCalls(lookupCost(ROUTES.primaryNetworkTransaction)),
    description: describeTransaction("C-Chain atomic", "CChainAtomicTransaction"),
    args: hashArg(t),
    resolve: (chain, args, context) => transactionOnChain<CChainAtomicTransaction>(chain, args.hash, context),
  }),
  transactions: t.field({
    type: CChainAtomicTransactionConnectionRef,
    nullable: true,
    extensions: upstreamCalls(connectionCost(primaryNetworkTransactions)),
    description: describeTransactions("C-Chain atomic", "; `addresses` here may also be 0x accounts"),
    args: {
      ...t.arg.connectionArgs(),
      ...transactionFilterArgs(t),
      addresses: t.arg.stringList({
        description:
          "Only transactions that touch one of these addresses (at most 100): bech32 (`avax1...`, with or without the chain letter) of the network, or 0x C-Chain accounts.",
      }),
      txTypes: t.arg({
        type: [CChainAtomicTransactionType.ref],
        description: "Only imports or only exports; needs `addresses`.",
      }),
    },
    resolve: (chain, args, context) => {
      if (args.txTypes?.includes("UNKNOWN")) throw badUserInput("txTypes", "txTypes must be IMPORT_TX or EXPORT_TX, not UNKNOWN");
      return transactionConnection<CChainAtomicTransaction>(chain, args, "CChain.transactions", context);
    },
  }),
}));

/** The kinds of transaction each chain has: a subscription's `txTypes` may name only those of its chain. */
const TX_TYPES_OF_CHAIN: Record<PrimaryNetworkOrigin["chain"], ReadonlySet<string>> = {
  "p-chain": new Set(pChainTransactionTypeValues),
  "x-chain": new Set(xChainTransactionTypeValues),
  "c-chain": new Set([...cChainImportTransactionTxTypeValues, ...cChainExportTransactionTxTypeValues]),
};

builder.subscriptionFields((t) => ({
  newPrimaryNetworkTransactions: t.field({
    type: PrimaryNetworkTransactionRef,
    nullable: true,
    // A subscription is charged once, for its first read.
    extensions: upstreamCalls(callCost(primaryNetworkTransactions)),
    description: `Each new transaction of the P-, X- or C-Chain (its atomic transactions) as it is accepted, oldest first, each once: of some addresses, or of all. \`txTypes\` keeps only some kinds; the gateway applies it, so subscribers with other kinds share the poller. ${liveTerms(primaryNetworkTransactions, "LIVE_PRIMARY_NETWORK_POLL_MS", "one chain and one set of addresses")}`,
    args: {
      network: t.arg({ type: NetworkRef, required: true, description: "The network; `TESTNET` is the same as `FUJI`." }),
      blockchainId: t.arg.string({
        required: true,
        description: "The chain: its blockchain id (cb58), or `p-chain`, `x-chain` or `c-chain`.",
      }),
      addresses: t.arg.stringList({
        description:
          "Only transactions that touch one of these addresses (at most 100): bech32 (`avax1...`, `fuji1...`) of the network, with or without the chain letter; on the C-Chain also 0x accounts.",
      }),
      txTypes: t.arg({
        type: [PrimaryNetworkTransactionType.ref],
        description: "Only transactions of these kinds, each one the chain has.",
      }),
      ...resumeArguments(t.arg, "The last block height whose transactions were seen"),
    },
    subscribe: (_root, args, context) => {
      const network = upstreamNetwork(args.network);
      const origin = primaryChainArgument("blockchainId", network, args.blockchainId);
      if (args.addresses) addressesArgument("addresses", args.addresses, origin.network, origin.chain === "c-chain");
      const addresses = args.addresses ? canonicalAddresses(args.addresses).join(",") : undefined;
      const kinds = TX_TYPES_OF_CHAIN[origin.chain];
      const txTypes = args.txTypes ? new Set<string>(args.txTypes) : undefined;
      for (const txType of txTypes ?? []) {
        if (!kinds.has(txType)) {
          throw badUserInput(
            "txTypes",
            `txTypes must name kinds the ${origin.chain} has (${[...kinds].join(", ")}); got ${txType}`,
          );
        }
      }
      const after = afterBlockArgument(args);
      return context.live.feed.subscribe(context.live.questions.primaryNetworkTransactions(origin, addresses), {
        after,
        call: context.call,
        chargeRead: context.chargeRead,
        caller: context.liveCaller,
        accepts: txTypes && ((tx) => txTypes.has(tx.txType)),
      });
    },
    resolve: itemOrError,
  }),
}));

/** One order and one form for a set of addresses (the chain letter dropped, duplicates too), so that one set is one question. */
function canonicalAddresses(addresses: readonly string[]): string[] {
  return [
    ...new Set(addresses.map((address) => (EVM_ADDRESS.test(address) ? address.toLowerCase() : address.replace(/^[PXC]-/, "")))),
  ].sort();
}
