/**
 * `Query.primaryNetwork` and the lists of its chains: blocks, latest transactions, UTXOs,
 * X-Chain vertices and L1 validators. Every argument is checked before any upstream call.
 */
import { builder } from "../schema/builder.ts";
import { EvmChainRef } from "../schema/chains.ts";
import { SortOrderRef } from "../schema/evm-transactions.ts";
import { NetworkRef, upstreamNetwork } from "../schema/networks.ts";
import {
  CChainRef,
  PChainRef,
  PrimaryNetworkChainRef,
  PrimaryNetworkRef,
  XChainRef,
} from "../schema/primary-network.ts";
import { PrimaryNetworkBlockRef, XChainVertexConnectionRef, XChainVertexRef } from "../schema/primary-network-blocks.ts";
import {
  CChainAtomicTransactionConnectionRef,
  CChainAtomicTransactionType,
  PChainTransactionConnectionRef,
  PChainTransactionType,
  XChainTransactionConnectionRef,
  XChainTransactionType,
} from "../schema/primary-network-transactions.ts";
import { PChainUtxoConnectionRef, UtxoConnectionRef, UtxoSortByRef } from "../schema/primary-network-utxos.ts";
import { L1ValidatorConnectionRef } from "../schema/primary-network-validators.ts";
import type { GatewayContext } from "../src/context.ts";
import { badUserInput } from "../src/errors.ts";
import { primeL1Validators, primeTransactions, primeVertices } from "../src/loaders/primary-network.ts";
import { toPageTokenConnection, type ConnectionArgs } from "../src/pagination.ts";
import { queryBounds, queryMinimum, type RouteBounds } from "../src/upstream/bounds.ts";
import { findPrimaryChain, type PrimaryNetworkOrigin, type TransactionFilters } from "../src/upstream/primary-network-api.ts";
import { CB58_ID, EVM_ADDRESS, HEX_32 } from "../src/validate.ts";
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

const BLOCKCHAIN_ROUTE = "/v1/networks/{network}/blockchains/{blockchainId}";
const transactionsRoute = `${BLOCKCHAIN_ROUTE}/transactions`;
const transactionsBounds = pageBounds(queryBounds("data", transactionsRoute));
const utxosBounds = pageBounds(queryBounds("data", `${BLOCKCHAIN_ROUTE}/utxos`, "pageSize", "post"));
const verticesRoute = `${BLOCKCHAIN_ROUTE}/vertices:listByHeight`;
const verticesBounds = pageBounds(queryBounds("data", verticesRoute));
const l1ValidatorsBounds = pageBounds(queryBounds("data", "/v1/networks/{network}/l1Validators"));
const MIN_TIMESTAMP = queryMinimum("data", transactionsRoute, "startTimestamp");
const MIN_VERTEX_HEIGHT = queryMinimum("data", verticesRoute, "vertexHeight");

function pageBounds(bounds: RouteBounds) {
  return { ...bounds, default: bounds.default ?? 10 };
}

const BECH32_ADDRESS = /^(?:[PXC]-)?[a-z]{1,83}1[02-9ac-hj-np-z]{6,}$/;
const HEIGHT = /^(0|[1-9][0-9]{0,19})$/;
const NODE_ID = /^NodeID-[1-9A-HJ-NP-Za-km-z]{20,40}$/;

/** Addresses for an upstream filter, comma-joined: bech32 with or without the chain letter, or 0x where `evm`. */
function addressesArgument(argument: string, addresses: readonly string[], evm: boolean): string {
  if (addresses.length === 0) throw badUserInput(argument, `${argument} must not be empty; leave it out to list without an address filter`);
  for (const address of addresses) {
    if (!BECH32_ADDRESS.test(address) && !(evm && EVM_ADDRESS.test(address))) {
      const forms = evm ? "a bech32 address (avax1..., with or without a chain letter such as C-) or a 0x address" : "a bech32 address (avax1..., with or without a chain letter such as P-)";
      throw badUserInput(argument, `each of ${argument} must be ${forms}, got ${JSON.stringify(address)}`);
    }
  }
  return addresses.join(",");
}

function idArgument(argument: string, value: string, what: string, allowHex = false): string {
  if (CB58_ID.test(value) || (allowHex && HEX_32.test(value))) return value;
  throw badUserInput(argument, `${argument} must be ${what} in cb58${allowHex ? " or as 0x and 64 hex digits" : ""}, got ${JSON.stringify(value)}`);
}

function timestampArgument(argument: string, value: number | null | undefined): number | undefined {
  if (value === null || value === undefined) return undefined;
  if (value < MIN_TIMESTAMP) throw badUserInput(argument, `${argument} must be a Unix time in seconds of at least ${MIN_TIMESTAMP}, got ${value}`);
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
      throw badUserInput(name, `${name} needs addresses${allowedBy}: the Data API filters by transaction type and time only among an address's transactions`);
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
    addresses: args.addresses ? addressesArgument("addresses", args.addresses, origin.chain === "c-chain") : undefined,
    txTypes: args.txTypes ? (args.txTypes as PrimaryNetworkTxType[]) : undefined,
    l1ValidationId: args.l1ValidationId ? idArgument("l1ValidationId", args.l1ValidationId, "a validation id", true) : undefined,
    startTimestamp: timestampArgument("from", args.from),
    endTimestamp: timestampArgument("to", args.to),
    sortOrder: args.sortOrder ?? undefined,
  };
  if (!filters.l1ValidationId) requireAddressesForFilters(args, origin.chain === "p-chain" ? " (or l1ValidationId)" : "");
  const connection = await toPageTokenConnection<T, PrimaryNetworkChainInfo>(args, {
    bounds: transactionsBounds,
    filters: { field, network: origin.network, blockchainId: origin.blockchainId, ...filters },
    nodeKey: (tx) => tx.txHash,
    fetchPage: async (page) => {
      const response = await context.upstreams.primaryNetwork.listTransactions(origin, filters, page, context.call);
      return { items: response.items as T[], nextPageToken: response.nextPageToken, meta: response.chainInfo };
    },
  });
  primeTransactions(context.loaders, origin, connection.edges.map((edge) => edge.node));
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
async function utxoConnection<U extends PrimaryNetworkUtxo>(origin: PrimaryNetworkOrigin, args: UtxoArgs, field: string, context: GatewayContext) {
  const addresses = addressesArgument("addresses", args.addresses, false);
  const filters = {
    assetId: args.assetId ? idArgument("assetId", args.assetId, "an asset id") : undefined,
    includeSpent: args.includeSpent ?? undefined,
    sortBy: args.sortBy ?? undefined,
    sortOrder: args.sortOrder ?? undefined,
  };
  return toPageTokenConnection<U, PrimaryNetworkChainInfo>(args, {
    bounds: utxosBounds,
    filters: { field, network: origin.network, blockchainId: origin.blockchainId, addresses, ...filters },
    nodeKey: (utxo) => utxo.utxoId,
    fetchPage: async (page) => {
      const response = await context.upstreams.primaryNetwork.listUtxos(origin, addresses, filters, page, context.call);
      return { items: response.items as U[], nextPageToken: response.nextPageToken, meta: response.chainInfo };
    },
  });
}

const describeTransactions = (chain: string, extra: string) =>
  `The chain's latest ${chain} transactions, newest first unless \`sortOrder\` says otherwise (\`GET ${transactionsRoute}\`). \`first\`: ${transactionsBounds.min} to ${transactionsBounds.max}, default ${transactionsBounds.default}; a page may hold fewer when its transactions have many UTXOs. \`txTypes\`, \`from\` and \`to\` need \`addresses\`${extra}.`;

const describeUtxos = (which: string) =>
  `UTXOs of some addresses on this chain (${which}), the unspent ones unless \`includeSpent\` (\`POST ${BLOCKCHAIN_ROUTE}/utxos\`). \`first\`: ${utxosBounds.min} to ${utxosBounds.max}, default ${utxosBounds.default}.`;

const transactionFilterArgs = (t: Parameters<Parameters<typeof builder.objectFields>[1]>[0]) => ({
  addresses: t.arg.stringList({
    description: "Only transactions that touch one of these addresses: bech32 (`avax1...`, `fuji1...`), with or without the chain letter.",
  }),
  from: t.arg({ type: "SafeInt", description: "Only transactions accepted at or after this Unix time (seconds, >= 0); needs `addresses`." }),
  to: t.arg({ type: "SafeInt", description: "Only transactions accepted at or before this Unix time (seconds, >= 0); needs `addresses`." }),
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
    args: { id: t.arg.string({ required: true, description: "A blockchain id (cb58) of one of this network's three chains, or an alias." }) },
    resolve: (scope, args) => {
      const chain = findPrimaryChain(scope.network, args.id);
      if (!chain) {
        throw badUserInput(
          "id",
          `id must be the blockchain id of the ${scope.network} P-, X- or C-Chain, or p-chain, x-chain or c-chain; got ${JSON.stringify(args.id)}`,
        );
      }
      return chain;
    },
  }),
  l1Validators: t.field({
    type: L1ValidatorConnectionRef,
    nullable: true,
    description: `The network's L1 validators, the active ones unless \`includeInactive\` (\`GET /v1/networks/{network}/l1Validators\`). \`first\`: ${l1ValidatorsBounds.min} to ${l1ValidatorsBounds.max}, default ${l1ValidatorsBounds.default}.`,
    args: {
      ...t.arg.connectionArgs(),
      l1ValidationId: t.arg.string({ description: "Only the validator of this validation id (cb58 or 0x hex)." }),
      includeInactive: t.arg.boolean({ description: "Also list validators that were disabled or ran out of balance." }),
      nodeId: t.arg.string({ description: "Only validators of this node: `NodeID-` followed by its id in cb58." }),
      subnetId: t.arg.string({ description: "Only validators of this L1 (its subnet id, cb58)." }),
    },
    resolve: async (scope, args, context) => {
      if (args.nodeId && !NODE_ID.test(args.nodeId)) {
        throw badUserInput("nodeId", `nodeId must be NodeID- followed by a node id in cb58, got ${JSON.stringify(args.nodeId)}`);
      }
      const filters = {
        l1ValidationId: args.l1ValidationId ? idArgument("l1ValidationId", args.l1ValidationId, "a validation id", true) : undefined,
        includeInactiveL1Validators: args.includeInactive ?? undefined,
        nodeId: args.nodeId ?? undefined,
        subnetId: args.subnetId ? idArgument("subnetId", args.subnetId, "a subnet id") : undefined,
      };
      const connection = await toPageTokenConnection<L1Validator, string>(args, {
        bounds: l1ValidatorsBounds,
        filters: { field: "PrimaryNetwork.l1Validators", network: scope.network, ...filters },
        nodeKey: (validator) => validator.validationId,
        fetchPage: async (page) => {
          const response = await context.upstreams.primaryNetwork.listL1Validators(scope.network, filters, page, context.call);
          return { items: response.items, nextPageToken: response.nextPageToken, meta: response.blockHeight };
        },
      });
      primeL1Validators(context.loaders, scope.network, connection.edges.map((edge) => edge.node));
      return connection;
    },
  }),
}));

builder.interfaceFields(PrimaryNetworkChainRef, (t) => ({
  block: t.field({
    type: PrimaryNetworkBlockRef,
    nullable: true,
    description: `One block of the chain by height or id (\`GET ${BLOCKCHAIN_ROUTE}/blocks/{blockId}\`); null when there is none. On the X-Chain, only its blocks: earlier history is in vertices.`,
    args: { id: t.arg.string({ required: true, description: "A block height in decimal, or a block id: cb58 on the P- and X-Chain, 0x hex on the C-Chain." }) },
    resolve: (chain, args, context) => {
      const cChain = chain.chain === "c-chain";
      if (!HEIGHT.test(args.id) && !(cChain ? HEX_32.test(args.id) : CB58_ID.test(args.id))) {
        throw badUserInput(
          "id",
          `id must be a block height in decimal or a block id (${cChain ? "0x and 64 hex digits" : "cb58"}), got ${JSON.stringify(args.id)}`,
        );
      }
      return context.loaders.primaryNetworkBlock.load({ origin: chain, id: cChain ? args.id.toLowerCase() : args.id });
    },
  }),
}));

builder.objectFields(PChainRef, (t) => ({
  transactions: t.field({
    type: PChainTransactionConnectionRef,
    nullable: true,
    description: describeTransactions("P-Chain", ", or `l1ValidationId`, which finds every transaction of one L1 validator"),
    args: {
      ...t.arg.connectionArgs(),
      ...transactionFilterArgs(t),
      txTypes: t.arg({ type: [PChainTransactionType.ref], description: "Only transactions of these kinds; needs `addresses` or `l1ValidationId`." }),
      l1ValidationId: t.arg.string({ description: "Only the transactions of this L1 validation (its id in cb58 or 0x hex)." }),
    },
    resolve: (chain, args, context) => transactionConnection<PChainTransaction>(chain, args, "PChain.transactions", context),
  }),
  utxos: t.field({
    type: PChainUtxoConnectionRef,
    nullable: true,
    description: describeUtxos("staked ones included"),
    args: { ...t.arg.connectionArgs(), ...utxoArgs(t) },
    resolve: (chain, args, context) => utxoConnection<PChainUtxo>(chain, args, "PChain.utxos", context),
  }),
}));

builder.objectFields(XChainRef, (t) => ({
  transactions: t.field({
    type: XChainTransactionConnectionRef,
    nullable: true,
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
    description: `One vertex of the X-Chain's DAG by its id (\`GET ${BLOCKCHAIN_ROUTE}/vertices/{vertexHash}\`); null when there is none.`,
    args: { hash: t.arg.string({ required: true, description: "The vertex's id (cb58)." }) },
    resolve: (chain, args, context) =>
      context.loaders.xChainVertex.load({ network: chain.network, id: idArgument("hash", args.hash, "a vertex id") }),
  }),
  verticesAtHeight: t.field({
    type: XChainVertexConnectionRef,
    nullable: true,
    description: `The vertices at one height of the X-Chain's DAG (\`GET ${verticesRoute}\`). \`first\`: ${verticesBounds.min} to ${verticesBounds.max}, default ${verticesBounds.default}.`,
    args: {
      ...t.arg.connectionArgs(),
      height: t.arg.int({ required: true, description: `The height in the DAG (>= ${MIN_VERTEX_HEIGHT}).` }),
      sortOrder: t.arg({ type: SortOrderRef, description: "ASC: in the order they were accepted; DESC: the reverse." }),
    },
    resolve: async (chain, args, context) => {
      if (args.height < MIN_VERTEX_HEIGHT) throw badUserInput("height", `height must be at least ${MIN_VERTEX_HEIGHT}, got ${args.height}`);
      const sortOrder = args.sortOrder ?? undefined;
      const connection = await toPageTokenConnection<XChainVertex, PrimaryNetworkChainInfo>(args, {
        bounds: verticesBounds,
        filters: { field: "XChain.verticesAtHeight", network: chain.network, height: args.height, sortOrder },
        nodeKey: (vertex) => vertex.vertexHash,
        fetchPage: async (page) => {
          const response = await context.upstreams.primaryNetwork.listVerticesAtHeight(chain.network, args.height, sortOrder, page, context.call);
          return { items: response.items, nextPageToken: response.nextPageToken, meta: response.chainInfo };
        },
      });
      primeVertices(context.loaders, chain.network, connection.edges.map((edge) => edge.node));
      return connection;
    },
  }),
}));

builder.objectFields(CChainRef, (t) => ({
  transactions: t.field({
    type: CChainAtomicTransactionConnectionRef,
    nullable: true,
    description: describeTransactions("C-Chain atomic", "; `addresses` here may also be 0x accounts"),
    args: {
      ...t.arg.connectionArgs(),
      ...transactionFilterArgs(t),
      addresses: t.arg.stringList({
        description: "Only transactions that touch one of these addresses: bech32 (`avax1...`, with or without the chain letter) or 0x C-Chain accounts.",
      }),
      txTypes: t.arg({ type: [CChainAtomicTransactionType.ref], description: "Only imports or only exports; needs `addresses`." }),
    },
    resolve: (chain, args, context) => {
      if (args.txTypes?.includes("UNKNOWN")) throw badUserInput("txTypes", "txTypes must be IMPORT_TX or EXPORT_TX, not UNKNOWN");
      return transactionConnection<CChainAtomicTransaction>(chain, args, "CChain.transactions", context);
    },
  }),
  utxos: t.field({
    type: UtxoConnectionRef,
    nullable: true,
    description: describeUtxos("those exported to the C-Chain, waiting in shared memory or imported"),
    args: { ...t.arg.connectionArgs(), ...utxoArgs(t) },
    resolve: (chain, args, context) => utxoConnection<Utxo>(chain, args, "CChain.utxos", context),
  }),
  evmChain: t.field({
    type: EvmChainRef,
    nullable: true,
    description: "The C-Chain as an EVM chain, with its blocks and EVM transactions.",
    resolve: (chain, _args, context) => context.loaders.chain.load(chain.blockchainId),
  }),
}));
