/**
 * `Query.primaryNetwork` and the lists of its chains: blocks, latest transactions, UTXOs,
 * X-Chain vertices and L1 validators. Every argument is checked before any upstream call.
 */
import { builder } from "../schema/builder.ts";
import { EvmChainRef } from "../schema/chains.ts";
import { SortOrderRef } from "../schema/evm-transactions.ts";
import { NetworkRef, upstreamNetwork } from "../schema/networks.ts";
import { CChainRef, PChainRef, PrimaryNetworkChainRef, PrimaryNetworkRef, XChainRef } from "../schema/primary-network.ts";
import { PrimaryNetworkBlockRef, XChainVertexConnectionRef, XChainVertexRef } from "../schema/primary-network-blocks.ts";
import {
  CChainAtomicTransactionConnectionRef,
  CChainAtomicTransactionRef,
  CChainAtomicTransactionType,
  PChainTransactionConnectionRef,
  PChainTransactionRef,
  PChainTransactionType,
  PrimaryNetworkTransactionRef,
  PrimaryNetworkTransactionType,
  XChainTransactionConnectionRef,
  XChainTransactionRef,
  XChainTransactionType,
} from "../schema/primary-network-transactions.ts";
import { PChainUtxoConnectionRef, UtxoConnectionRef, UtxoSortByRef } from "../schema/primary-network-utxos.ts";
import { L1ValidatorConnectionRef, L1ValidatorRef } from "../schema/primary-network-validators.ts";
import type { GatewayContext } from "../src/execution/context.ts";
import { badUserInput } from "../src/execution/errors.ts";
import { chooseValidationOfNode } from "../src/execution/loaders/primary-network.ts";
import { toPageTokenConnection, type ConnectionArgs } from "../src/execution/pagination.ts";
import { CHAIN_LIST_LOOKUP, callCost, connectionCost, lookupCost, upstreamCalls } from "../src/limits/upstream-calls.ts";
import { queryMinimum } from "../src/upstream/bounds.ts";
import {
  findPrimaryChain,
  originOf,
  primaryChain,
  type L1ValidatorFilters,
  type PrimaryNetworkName,
  type PrimaryNetworkOrigin,
  type TransactionFilters,
} from "../src/upstream/primary-network-api.ts";
import { ROUTES } from "../src/upstream/routes.ts";
import {
  BECH32_ADDRESS,
  BLOCK_NUMBER,
  addressCountArgument,
  bech32AddressProblem,
  CB58_ID,
  EVM_ADDRESS,
  HEX_32,
  afterBlockArgument,
  cb58IdArgument,
  nodeIdArgument,
  quoted,
} from "../src/execution/identifiers.ts";
import { itemOrError, liveTerms } from "../src/live/live-feed.ts";
import {
  cChainExportTransactionTxTypeValues,
  cChainImportTransactionTxTypeValues,
  pChainTransactionTypeValues,
  xChainTransactionTypeValues,
} from "../src/upstream/contract/data-api.ts";
import type {
  CChainAtomicTransaction,
  L1Validator,
  PChainTransaction,
  PChainUtxo,
  PrimaryNetworkChainInfo,
  PrimaryNetworkTransaction,
  PrimaryNetworkTxType,
  PrimaryNetworkUtxo,
  SortOrder,
  Utxo,
  UtxosSortBy,
  XChainTransaction,
  XChainVertex,
} from "../src/upstream/types.ts";

const { primaryNetworkTransactions, utxos, verticesAtHeight, l1Validators } = ROUTES;
const MIN_TIMESTAMP = queryMinimum("data", primaryNetworkTransactions.path, "startTimestamp");
const MIN_VERTEX_HEIGHT = queryMinimum("data", verticesAtHeight.path, "vertexHeight");

/**
 * Addresses of `network` for an upstream filter, comma-joined: bech32 with or without the chain
 * letter, or 0x where `evm`; at most `MAX_ADDRESSES`. `required`: the argument cannot be left
 * out, so an empty list is refused as such.
 */
function addressesArgument(
  argument: string,
  addresses: readonly string[],
  network: PrimaryNetworkName,
  evm: boolean,
  required = false,
): string {
  if (addresses.length === 0) {
    throw required
      ? badUserInput(argument, `${argument} must hold at least one address: the route lists the UTXOs of the addresses given`, {
          min: 1,
        })
      : badUserInput(argument, `${argument} must not be empty; leave it out to list without an address filter`);
  }
  addressCountArgument(argument, addresses);
  for (const address of addresses) {
    if (!BECH32_ADDRESS.test(address) && !(evm && EVM_ADDRESS.test(address))) {
      const forms = evm
        ? "a bech32 address (avax1..., with or without a chain letter such as C-) or a 0x address"
        : "a bech32 address (avax1..., with or without a chain letter such as P-)";
      throw badUserInput(argument, `each of ${argument} must be ${forms}, got ${JSON.stringify(address)}`);
    }
    const problem = EVM_ADDRESS.test(address) ? undefined : bech32AddressProblem(address, network);
    if (problem !== undefined) throw badUserInput(argument, `${argument} holds ${quoted(address)}: ${problem}`);
  }
  return addresses.join(",");
}

/** One of a network's three chains, by its blockchain id or its alias (`p-chain`, `x-chain`, `c-chain`). */
function primaryChainArgument(argument: string, network: PrimaryNetworkName, value: string): PrimaryNetworkOrigin {
  const origin = findPrimaryChain(network, value);
  if (!origin) {
    throw badUserInput(
      argument,
      `${argument} must be the blockchain id of the ${network} P-, X- or C-Chain, or p-chain, x-chain or c-chain; got ${JSON.stringify(value)}`,
    );
  }
  return origin;
}

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
  l1ValidationId?: string | null;
  from?: number | null;
  to?: number | null;
  sortOrder?: SortOrder | null;
}

/** A page of a chain's latest transactions; `T` is the chain's transaction shape. */
async function transactionConnection<T extends PrimaryNetworkTransaction>(
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
    l1ValidationId:
      args.l1ValidationId != null ? cb58IdArgument("l1ValidationId", args.l1ValidationId, "a validation id", true) : undefined,
    startTimestamp: timestampArgument("from", args.from),
    endTimestamp: timestampArgument("to", args.to),
    sortOrder: args.sortOrder ?? undefined,
  };
  if (!filters.l1ValidationId) requireAddressesForFilters(args, origin.chain === "p-chain" ? " (or l1ValidationId)" : "");
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

/** A connection that read no page (`first: 0`) still tells its chain: the one it was asked of. */
function withChainInfo<C extends { meta: PrimaryNetworkChainInfo | undefined }>(connection: C, origin: PrimaryNetworkOrigin): C {
  connection.meta ??= { chainName: origin.chain, network: origin.network };
  return connection;
}

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

const describeTransactions = (chain: string, extra: string) =>
  `The chain's latest ${chain} transactions, newest first unless \`sortOrder\` says otherwise (\`${primaryNetworkTransactions.label}\`). ${primaryNetworkTransactions.firstText} \`txTypes\`, \`from\` and \`to\` need \`addresses\`${extra}.`;

const describeUtxos = (which: string) =>
  `UTXOs of some addresses on this chain (${which}), the unspent ones unless \`includeSpent\` (\`${utxos.label}\`). ${utxos.firstText}`;

const transactionFilterArgs = (t: Parameters<Parameters<typeof builder.objectFields>[1]>[0]) => ({
  addresses: t.arg.stringList({
    description:
      "Only transactions that touch one of these addresses: bech32 (`avax1...`, `fuji1...`), with or without the chain letter.",
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

const utxoArgs = (t: Parameters<Parameters<typeof builder.objectFields>[1]>[0]) => ({
  addresses: t.arg.stringList({
    required: true,
    description: "The addresses whose UTXOs to list: bech32 (`avax1...`, `fuji1...`), with or without the chain letter.",
  }),
  includeSpent: t.arg.boolean({ description: "Also list UTXOs that have been spent." }),
  sortBy: t.arg({ type: UtxoSortByRef, description: "What to order by (the upstream's default: creation time)." }),
  sortOrder: t.arg({ type: SortOrderRef, description: "ASC: smallest or oldest first; DESC: largest or newest first." }),
});

builder.queryFields((t) => ({
  primaryNetwork: t.field({
    type: PrimaryNetworkRef,
    description: "The Avalanche primary network (P-, X- and C-Chain) of a network, and its L1 validators.",
    args: { network: t.arg({ type: NetworkRef, required: true, description: "The network; `TESTNET` is the same as `FUJI`." }) },
    resolve: (_root, args) => ({ network: upstreamNetwork(args.network) }),
  }),
}));

builder.objectFields(PrimaryNetworkRef, (t) => ({
  blockchain: t.field({
    type: PrimaryNetworkChainRef,
    nullable: true,
    description: "One chain of this primary network by its blockchain id, or by `p-chain`, `x-chain` or `c-chain`.",
    args: {
      id: t.arg.string({
        required: true,
        description: "A blockchain id (cb58) of one of this network's three chains, or an alias.",
      }),
    },
    resolve: (scope, args) => {
      return primaryChainArgument("id", scope.network, args.id);
    },
  }),
  l1Validators: t.field({
    type: L1ValidatorConnectionRef,
    nullable: true,
    extensions: upstreamCalls(connectionCost(l1Validators)),
    description: `The network's L1 validators, the active ones unless \`includeInactive\` (\`${l1Validators.label}\`). ${l1Validators.firstText}`,
    args: {
      ...t.arg.connectionArgs(),
      l1ValidationId: t.arg.string({ description: "Only the validator of this validation id (cb58 or 0x hex)." }),
      includeInactive: t.arg.boolean({ description: "Also list validators that were disabled or ran out of balance." }),
      nodeId: t.arg.string({ description: "Only validators of this node: `NodeID-` followed by its id in cb58." }),
      subnetId: t.arg.string({ description: "Only validators of this L1 (its subnet id, cb58)." }),
    },
    resolve: (scope, args, context) => {
      const filters: L1ValidatorFilters = {
        l1ValidationId:
          args.l1ValidationId != null
            ? cb58IdArgument("l1ValidationId", args.l1ValidationId, "a validation id", true)
            : undefined,
        includeInactiveL1Validators: args.includeInactive ?? undefined,
        nodeId: args.nodeId != null ? nodeIdArgument("nodeId", args.nodeId) : undefined,
        subnetId: args.subnetId != null ? cb58IdArgument("subnetId", args.subnetId, "a subnet id") : undefined,
      };
      return l1ValidatorConnection(scope.network, filters, args, "PrimaryNetwork.l1Validators", context);
    },
  }),
  l1Validator: t.field({
    type: L1ValidatorRef,
    nullable: true,
    extensions: upstreamCalls(callCost(l1Validators)),
    description:
      "One L1 validator, active or not, by exactly one of `validationId` and `nodeId` (`GET /v1/networks/{network}/l1Validators` with `includeInactiveL1Validators`); null when there is none. A node may have validated more than once (or validate several L1s): by `nodeId`, the answer is its active validation, the latest created if it has several, else its latest validation; list them all with `l1Validators(nodeId:, includeInactive: true)`.",
    args: {
      validationId: t.arg.string({ description: "The validation's id, in cb58 or as 0x and 64 hex digits." }),
      nodeId: t.arg.string({ description: "The validator's node: `NodeID-` followed by its id in cb58." }),
    },
    resolve: (scope, args, context) => {
      const byValidation = args.validationId !== null && args.validationId !== undefined;
      const byNode = args.nodeId !== null && args.nodeId !== undefined;
      if (byValidation === byNode) {
        throw badUserInput(byValidation ? "nodeId" : "validationId", "give exactly one of validationId and nodeId");
      }
      if (byValidation) {
        const id = cb58IdArgument("validationId", args.validationId!, "a validation id", true);
        return context.loaders.l1Validator.load({ network: scope.network, id });
      }
      return l1ValidatorOfNode(scope.network, nodeIdArgument("nodeId", args.nodeId!), context);
    },
  }),
}));

/** A node's validations, active or not, in the route's largest page; the one `chooseValidationOfNode` picks. */
async function l1ValidatorOfNode(
  network: PrimaryNetworkName,
  nodeId: string,
  context: GatewayContext,
): Promise<L1Validator | null> {
  const filters: L1ValidatorFilters = { nodeId, includeInactiveL1Validators: true };
  const page = await context.loaders.primaryNetworkPages.l1Validators(network, filters, {
    pageSize: l1Validators.page.max,
    pageToken: undefined,
  });
  return chooseValidationOfNode(page.items);
}

/** A page of a network's L1 validators, through the list route's filters. */
async function l1ValidatorConnection(
  network: PrimaryNetworkName,
  filters: L1ValidatorFilters,
  args: ConnectionArgs,
  field: string,
  context: GatewayContext,
) {
  const connection = await toPageTokenConnection<L1Validator, string>(args, {
    bounds: l1Validators.page,
    filters: { field, network, ...filters },
    nodeKey: (validator) => validator.validationId,
    fetchPage: async (page) => {
      const response = await context.loaders.primaryNetworkPages.l1Validators(network, filters, page);
      return { items: response.items, nextPageToken: response.nextPageToken, meta: response.blockHeight };
    },
  });
  return connection;
}

builder.objectFields(L1ValidatorRef, (t) => ({
  subnetValidators: t.field({
    type: L1ValidatorConnectionRef,
    nullable: true,
    extensions: upstreamCalls(connectionCost(l1Validators)),
    description: `The validators of the same L1, this one among them: the active ones unless \`includeInactive\` (\`${l1Validators.label}\` with its \`subnetId\`). ${l1Validators.firstText}`,
    args: {
      ...t.arg.connectionArgs(),
      includeInactive: t.arg.boolean({ description: "Also list validators that were disabled or ran out of balance." }),
    },
    resolve: (validator, args, context) => {
      const filters: L1ValidatorFilters = {
        subnetId: validator.subnetId,
        includeInactiveL1Validators: args.includeInactive ?? undefined,
      };
      return l1ValidatorConnection(originOf(validator).network, filters, args, "L1Validator.subnetValidators", context);
    },
  }),
  transactions: t.field({
    type: PChainTransactionConnectionRef,
    nullable: true,
    extensions: upstreamCalls(connectionCost(primaryNetworkTransactions)),
    description: `The P-Chain transactions of this validation, newest first unless \`sortOrder\` says otherwise: its registration (or the conversion that created it), weight changes, balance top-ups and its disabling (\`${primaryNetworkTransactions.label}\` with its \`l1ValidationId\`). ${primaryNetworkTransactions.firstText}`,
    args: {
      ...t.arg.connectionArgs(),
      txTypes: t.arg({ type: [PChainTransactionType.ref], description: "Only transactions of these kinds." }),
      from: t.arg({ type: "SafeInt", description: "Only transactions accepted at or after this Unix time (seconds, >= 0)." }),
      to: t.arg({ type: "SafeInt", description: "Only transactions accepted at or before this Unix time (seconds, >= 0)." }),
      sortOrder: t.arg({ type: SortOrderRef, description: "ASC: oldest first; DESC (the default): newest first." }),
    },
    resolve: (validator, args, context) =>
      transactionConnection<PChainTransaction>(
        primaryChain(originOf(validator).network, "p-chain"),
        { ...args, l1ValidationId: validator.validationId },
        "L1Validator.transactions",
        context,
      ),
  }),
}));

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
    description: describeTransactions("P-Chain", ", or `l1ValidationId`, which finds every transaction of one L1 validator"),
    args: {
      ...t.arg.connectionArgs(),
      ...transactionFilterArgs(t),
      txTypes: t.arg({
        type: [PChainTransactionType.ref],
        description: "Only transactions of these kinds; needs `addresses` or `l1ValidationId`.",
      }),
      l1ValidationId: t.arg.string({ description: "Only the transactions of this L1 validation (its id in cb58 or 0x hex)." }),
    },
    resolve: (chain, args, context) => transactionConnection<PChainTransaction>(chain, args, "PChain.transactions", context),
  }),
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
          "Only transactions that touch one of these addresses: bech32 (`avax1...`, with or without the chain letter) or 0x C-Chain accounts.",
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
  utxos: t.field({
    type: UtxoConnectionRef,
    nullable: true,
    extensions: upstreamCalls(connectionCost(utxos)),
    description: describeUtxos("those exported to the C-Chain, waiting in shared memory or imported"),
    args: { ...t.arg.connectionArgs(), ...utxoArgs(t) },
    resolve: (chain, args, context) => utxoConnection<Utxo>(chain, args, "CChain.utxos", context),
  }),
  evmChain: t.field({
    type: EvmChainRef,
    nullable: true,
    extensions: upstreamCalls(CHAIN_LIST_LOOKUP),
    description: "The C-Chain as an EVM chain, with its blocks and EVM transactions.",
    resolve: (chain, _args, context) => context.loaders.chain.load(chain.blockchainId),
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
          "Only transactions that touch one of these addresses: bech32 (`avax1...`, `fuji1...`), with or without the chain letter; on the C-Chain also 0x accounts.",
      }),
      txTypes: t.arg({
        type: [PrimaryNetworkTransactionType.ref],
        description: "Only transactions of these kinds, each one the chain has.",
      }),
      after: t.arg({
        type: "BigInt",
        description:
          "The last block height whose transactions were seen (to resume after a reconnect): the transactions of later blocks come first, within `LIVE_MAX_CATCH_UP`.",
      }),
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
      const after = afterBlockArgument(args.after);
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
