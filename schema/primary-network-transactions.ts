/**
 * Transactions of the primary network. The three chains describe them differently, so each has
 * its own type; `PrimaryNetworkTransaction` holds what they share.
 */
import { xChainNonLinearTransactionChainFormatValues } from "../src/upstream/contract/data-api.ts";
import { originOf, registeredOrigin, type PrimaryNetworkOrigin } from "../src/upstream/primary-network-api.ts";
import { parsedOrRefused, validKey } from "../src/execution/global-ids.ts";
import { CB58_ID } from "../src/upstream/identifiers.ts";
import type {
  CChainAtomicTransaction,
  PChainTransaction,
  PrimaryNetworkTransaction,
  XChainTransaction,
} from "../src/upstream/types.ts";
import { builder } from "./builder.ts";
import { dateTimeOf } from "./date-times.ts";
import { upstreamEnum } from "./enums.ts";
import { NetworkRef } from "./networks.ts";
import {
  AssetAmountRef,
  chainInfoOf,
  chainRecordId,
  parseChainRecordId,
  PrimaryNetworkChainInfoRef,
  PrimaryNetworkChainName,
} from "./primary-network.ts";
import {
  BlockchainInfoRef,
  BlsCredentialsRef,
  EvmInputRef,
  EvmOutputRef,
  L1ValidatorManagerRef,
  L1ValidatorTransactionDetailsRef,
  SubnetOwnershipRef,
  XChainAssetRef,
  XChainTransactionVertexRef,
} from "./primary-network-transaction-details.ts";
import { PrimaryNetworkTransactionType } from "./primary-network-transaction-kinds.ts";
import { PChainUtxoRef, PrimaryNetworkUtxoRef, UtxoRef } from "./primary-network-utxos.ts";

export const XChainFormat = upstreamEnum(
  "XChainFormat",
  xChainNonLinearTransactionChainFormatValues,
  "Where an X-Chain transaction was accepted: in a vertex of the DAG, or in a block.",
  { "non-linear": "In a vertex of the DAG (the X-Chain's early history).", linear: "In a block." },
);
/** When a transaction was accepted: the P-Chain names it `blockTimestamp`, the X- and C-Chain `timestamp`. */
export function blockTimestampOf(tx: PrimaryNetworkTransaction): number {
  return "blockTimestamp" in tx ? tx.blockTimestamp : tx.timestamp;
}

/** The height of a transaction's block as a decimal string (`blockHeight` on the X- and C-Chain); undefined in an X-Chain vertex. */
export function blockNumberOf(tx: PrimaryNetworkTransaction): string | undefined {
  return "blockNumber" in tx ? tx.blockNumber : "blockHeight" in tx ? String(tx.blockHeight) : undefined;
}

const TYPE_OF_CHAIN = {
  "p-chain": "PChainTransaction",
  "x-chain": "XChainTransaction",
  "c-chain": "CChainAtomicTransaction",
} as const;

export const PrimaryNetworkTransactionRef = builder
  .interfaceRef<PrimaryNetworkTransaction>("PrimaryNetworkTransaction")
  .implement({
    description:
      "A transaction of the primary network. Each chain describes its transactions differently (`PChainTransaction`, `XChainTransaction`, `CChainAtomicTransaction`); the fields here are common to all three.",
    interfaces: [builder.nodeInterfaceRef()],
    resolveType: (tx) => TYPE_OF_CHAIN[originOf(tx).chain],
    fields: (t) => ({
      network: t.field({ type: NetworkRef, description: "The transaction's network.", resolve: (tx) => originOf(tx).network }),
      blockchainId: t.field({
        type: "String",
        description: "The transaction's chain (blockchain id, cb58).",
        resolve: (tx) => originOf(tx).blockchainId,
      }),
      chainName: t.field({
        type: PrimaryNetworkChainName.ref,
        description: "Which chain of the primary network the transaction is on.",
        resolve: (tx) => originOf(tx).chain,
      }),
      txHash: t.exposeString("txHash", { description: "The transaction's id (cb58)." }),
      txType: t.field({
        type: PrimaryNetworkTransactionType.ref,
        description:
          "The kind of transaction. The values of all three chains are in one enum; a chain's transactions have only that chain's kinds.",
        resolve: (tx) => PrimaryNetworkTransactionType.fromUpstream(tx.txType) ?? "UNKNOWN",
      }),
      blockTimestamp: t.field({
        type: "SafeInt",
        description:
          "When the transaction was accepted, in Unix seconds: the time of the block that holds it (for an X-Chain transaction in a vertex of the DAG, of the latest vertex that accepted it).",
        resolve: blockTimestampOf,
      }),
      blockTime: t.field({
        type: "DateTime",
        description: "`blockTimestamp` as a date.",
        resolve: (parent) => dateTimeOf(blockTimestampOf(parent)),
      }),
      blockNumber: t.field({
        type: "BigInt",
        nullable: true,
        description: "The height of the block that holds the transaction; null for an X-Chain transaction in a vertex.",
        resolve: (tx) => blockNumberOf(tx) ?? null,
      }),
      memo: t.exposeString("memo", { nullable: true, description: "The memo the sender attached." }),
      sourceChain: t.exposeString("sourceChain", {
        nullable: true,
        description: "Imports: the chain the assets came from (blockchain id).",
      }),
      destinationChain: t.exposeString("destinationChain", {
        nullable: true,
        description: "Exports: the chain the assets go to (blockchain id).",
      }),
      blockHash: t.string({
        nullable: true,
        description: "The id of the block that holds the transaction; null in an X-Chain vertex.",
        resolve: (tx) => ("blockHash" in tx ? tx.blockHash : null),
      }),
      consumedUtxos: t.field({
        type: [PrimaryNetworkUtxoRef],
        description: "The UTXOs the transaction spent.",
        resolve: (tx) => ("consumedUtxos" in tx ? tx.consumedUtxos : []),
      }),
      emittedUtxos: t.field({
        type: [PrimaryNetworkUtxoRef],
        description: "The UTXOs the transaction created.",
        resolve: (tx) => ("emittedUtxos" in tx ? tx.emittedUtxos : []),
      }),
    }),
  });

/** The key of a transaction's global id: a transaction id (cb58) on the chain its type belongs to. */
function parseTransactionId(typename: string, chain: PrimaryNetworkOrigin["chain"], id: string) {
  return parseChainRecordId(typename, id, {
    shape: `the id (cb58) of a transaction of the ${chain === "c-chain" ? "C" : chain === "p-chain" ? "P" : "X"}-Chain`,
    valid: (txHash, origin) => origin.chain === chain && CB58_ID.test(txHash),
  });
}

/**
 * `isTypeOf` of a chain's transaction type. graphql-js asks it of every value of a field of that
 * type, and an interface that resolves no type asks it of every possible type's values: of an
 * EVM record, a block, a vertex, an L1 validator. So it answers for any value and never throws:
 * a primary-network transaction (the only records of this client with a `txType`) of that chain.
 */
function isTransactionOf(chain: PrimaryNetworkOrigin["chain"]) {
  return (value: unknown) =>
    typeof value === "object" && value !== null && "txType" in value && registeredOrigin(value)?.chain === chain;
}

export const PChainTransactionRef = builder.objectRef<PChainTransaction>("PChainTransaction");
export const XChainTransactionRef = builder.objectRef<XChainTransaction>("XChainTransaction");
export const CChainAtomicTransactionRef = builder.objectRef<CChainAtomicTransaction>("CChainAtomicTransaction");

builder.node(PChainTransactionRef, {
  description:
    "A P-Chain transaction (`GET /v1/networks/{network}/blockchains/{blockchainId}/transactions/{txHash}`). Which fields are set depends on `txType`: staking fields on validator and delegator transactions, L1 fields on L1 transactions, and so on.",
  interfaces: [PrimaryNetworkTransactionRef],
  id: {
    resolve: (tx) => chainRecordId(tx, tx.txHash),
    parse: (id) => parsedOrRefused(() => parseTransactionId("PChainTransaction", "p-chain", id)),
  },
  isTypeOf: isTransactionOf("p-chain"),
  loadOne: (key, context) => context.loaders.primaryNetworkTransaction.load(validKey(key)) as Promise<PChainTransaction | null>,
  fields: (t) => ({
    blockTimestamp: t.expose("blockTimestamp", { type: "SafeInt", description: "When its block was accepted, in Unix seconds." }),
    blockNumber: t.expose("blockNumber", { type: "BigInt", description: "The height of its block." }),
    blockHash: t.exposeString("blockHash", { description: "The id of its block (cb58)." }),
    consumedUtxos: t.expose("consumedUtxos", { type: [PChainUtxoRef], description: "The UTXOs the transaction spent." }),
    emittedUtxos: t.expose("emittedUtxos", { type: [PChainUtxoRef], description: "The UTXOs the transaction created." }),
    value: t.expose("value", { type: [AssetAmountRef], description: "The amounts the transaction's outputs hold, per asset." }),
    amountBurned: t.expose("amountBurned", {
      type: [AssetAmountRef],
      description: "The fees the transaction burned, per asset.",
    }),
    amountStaked: t.expose("amountStaked", {
      type: [AssetAmountRef],
      description: "Validator and delegator transactions: the stake locked, per asset.",
    }),
    amountL1ValidatorBalanceBurned: t.expose("amountL1ValidatorBalanceBurned", {
      type: [AssetAmountRef],
      description: "L1 transactions: the AVAX moved into L1 validators' balances, per asset.",
    }),
    startTimestamp: t.expose("startTimestamp", {
      type: "SafeInt",
      nullable: true,
      description: "Validator and delegator transactions: when the staking period starts, in Unix seconds.",
    }),
    startTime: t.field({
      type: "DateTime",
      nullable: true,
      description: "`startTimestamp` as a date.",
      resolve: (parent) => dateTimeOf(parent.startTimestamp),
    }),
    endTimestamp: t.expose("endTimestamp", {
      type: "SafeInt",
      nullable: true,
      description: "Validator and delegator transactions: when the staking period ends, in Unix seconds.",
    }),
    endTime: t.field({
      type: "DateTime",
      nullable: true,
      description: "`endTimestamp` as a date.",
      resolve: (parent) => dateTimeOf(parent.endTimestamp),
    }),
    delegationFeePercent: t.exposeString("delegationFeePercent", {
      nullable: true,
      description:
        'Validator transactions: the share of delegators\' rewards the validator keeps, in percent (such as "2.0000").',
    }),
    nodeId: t.exposeString("nodeId", {
      nullable: true,
      description: "The validator's node (`NodeID-...`), where the transaction concerns one.",
    }),
    subnetId: t.exposeString("subnetId", { nullable: true, description: "The subnet or L1 the transaction concerns (cb58)." }),
    l1ValidatorManagerDetails: t.expose("l1ValidatorManagerDetails", {
      type: L1ValidatorManagerRef,
      nullable: true,
      description: "ConvertSubnetToL1Tx: the contract that manages the L1's validators.",
    }),
    l1ValidatorDetails: t.expose("l1ValidatorDetails", {
      type: [L1ValidatorTransactionDetailsRef],
      nullable: true,
      description: "L1 transactions: the L1 validators they concern, as of the transaction.",
    }),
    estimatedReward: t.expose("estimatedReward", {
      type: "BigInt",
      nullable: true,
      description: "Validator and delegator transactions: the reward expected at the end of the staking period, in nAVAX.",
    }),
    rewardTxHash: t.exposeString("rewardTxHash", {
      nullable: true,
      description:
        "Validator and delegator transactions: the RewardValidatorTx that ended the staking period, once there is one.",
    }),
    rewardAddresses: t.exposeStringList("rewardAddresses", {
      nullable: true,
      description: "Staking transactions: the addresses rewards go to.",
    }),
    memo: t.exposeString("memo", { nullable: true, description: "The memo the sender attached." }),
    stakingTxHash: t.exposeString("stakingTxHash", {
      nullable: true,
      description: "RewardValidatorTx: the validator or delegator transaction whose staking period it ends.",
    }),
    subnetOwnershipInfo: t.expose("subnetOwnershipInfo", {
      type: SubnetOwnershipRef,
      nullable: true,
      description: "CreateSubnetTx and TransferSubnetOwnershipTx: the subnet's owners after the transaction.",
    }),
    blsCredentials: t.expose("blsCredentials", {
      type: BlsCredentialsRef,
      nullable: true,
      description: "AddPermissionlessValidatorTx: the validator's BLS key and proof of possession.",
    }),
    blockchainInfo: t.expose("blockchainInfo", {
      type: BlockchainInfoRef,
      nullable: true,
      description: "CreateChainTx: the blockchain created.",
    }),
  }),
});

builder.node(XChainTransactionRef, {
  description:
    "An X-Chain transaction (`GET /v1/networks/{network}/blockchains/{blockchainId}/transactions/{txHash}`), from a vertex of the DAG (`chainFormat` NON_LINEAR) or from a block (LINEAR).",
  interfaces: [PrimaryNetworkTransactionRef],
  id: {
    resolve: (tx) => chainRecordId(tx, tx.txHash),
    parse: (id) => parsedOrRefused(() => parseTransactionId("XChainTransaction", "x-chain", id)),
  },
  isTypeOf: isTransactionOf("x-chain"),
  loadOne: (key, context) => context.loaders.primaryNetworkTransaction.load(validKey(key)) as Promise<XChainTransaction | null>,
  fields: (t) => ({
    chainFormat: t.field({
      type: XChainFormat.ref,
      description: "Whether a vertex or a block holds the transaction.",
      resolve: (tx) => XChainFormat.fromUpstream(tx.chainFormat) ?? "UNKNOWN",
    }),
    memo: t.exposeString("memo", { description: "The memo the sender attached (empty when none)." }),
    consumedUtxos: t.expose("consumedUtxos", { type: [UtxoRef], description: "The UTXOs the transaction spent." }),
    emittedUtxos: t.expose("emittedUtxos", { type: [UtxoRef], description: "The UTXOs the transaction created." }),
    amountUnlocked: t.expose("amountUnlocked", {
      type: [AssetAmountRef],
      description: "The amounts its spent UTXOs held, per asset.",
    }),
    amountCreated: t.expose("amountCreated", {
      type: [AssetAmountRef],
      description: "The amounts its new UTXOs hold, per asset.",
    }),
    assetCreated: t.expose("assetCreated", {
      type: XChainAssetRef,
      nullable: true,
      description: "CreateAssetTx: the asset created.",
    }),
    vertices: t.field({
      type: [XChainTransactionVertexRef],
      nullable: true,
      description: "NON_LINEAR: the vertices that hold the transaction; null for a transaction in a block.",
      resolve: (tx) => ("vertices" in tx ? tx.vertices : null),
    }),
    blockNumber: t.field({
      type: "BigInt",
      nullable: true,
      description: "LINEAR: the height of the block that holds the transaction; null in a vertex.",
      resolve: (tx) => blockNumberOf(tx) ?? null,
    }),
  }),
});

builder.node(CChainAtomicTransactionRef, {
  description:
    "A C-Chain atomic transaction: an import into C-Chain accounts from shared memory, or an export from them (`GET /v1/networks/{network}/blockchains/{blockchainId}/transactions/{txHash}`).",
  interfaces: [PrimaryNetworkTransactionRef],
  id: {
    resolve: (tx) => chainRecordId(tx, tx.txHash),
    parse: (id) => parsedOrRefused(() => parseTransactionId("CChainAtomicTransaction", "c-chain", id)),
  },
  isTypeOf: isTransactionOf("c-chain"),
  loadOne: (key, context) =>
    context.loaders.primaryNetworkTransaction.load(validKey(key)) as Promise<CChainAtomicTransaction | null>,
  fields: (t) => ({
    blockNumber: t.field({
      type: "BigInt",
      description: "The height of the C-Chain block that holds the transaction.",
      resolve: (tx) => String(tx.blockHeight),
    }),
    blockHash: t.exposeString("blockHash", { description: "The hash of that block (0x)." }),
    memo: t.exposeString("memo", { description: "The memo the sender attached (empty when none)." }),
    sourceChain: t.exposeString("sourceChain", { description: "The chain the AVAX comes from (blockchain id)." }),
    destinationChain: t.exposeString("destinationChain", { description: "The chain the AVAX goes to (blockchain id)." }),
    amountUnlocked: t.expose("amountUnlocked", {
      type: [AssetAmountRef],
      description: "The amounts taken from accounts or spent UTXOs, per asset.",
    }),
    amountCreated: t.expose("amountCreated", {
      type: [AssetAmountRef],
      description: "The amounts credited to accounts or to new UTXOs, per asset.",
    }),
    evmInputs: t.field({
      type: [EvmInputRef],
      nullable: true,
      description: "Exports: the C-Chain accounts debited; null for an import.",
      resolve: (tx) => ("evmInputs" in tx ? tx.evmInputs : null),
    }),
    evmOutputs: t.field({
      type: [EvmOutputRef],
      nullable: true,
      description: "Imports: the C-Chain accounts credited; null for an export.",
      resolve: (tx) => ("evmOutputs" in tx ? tx.evmOutputs : null),
    }),
    consumedUtxos: t.field({
      type: [UtxoRef],
      description: "Imports: the UTXOs taken from shared memory; empty for an export.",
      resolve: (tx) => ("consumedUtxos" in tx ? tx.consumedUtxos : []),
    }),
    emittedUtxos: t.field({
      type: [UtxoRef],
      description: "Exports: the UTXOs put into shared memory; empty for an import.",
      resolve: (tx) => ("emittedUtxos" in tx ? tx.emittedUtxos : []),
    }),
  }),
});

const connectionFields = {
  chainInfo: { type: PrimaryNetworkChainInfoRef, description: "The chain and network that answered.", resolve: chainInfoOf },
};

export const PChainTransactionConnectionRef = builder.connectionObject(
  {
    type: PChainTransactionRef,
    name: "PChainTransactionConnection",
    description:
      "A page of P-Chain transactions. A page may hold fewer than `first` when its transactions have many UTXOs; `pageInfo.hasNextPage` tells whether more follow.",
    fields: (t) => ({ chainInfo: t.field(connectionFields.chainInfo) }),
  },
  { name: "PChainTransactionEdge", description: "A transaction and the cursor that continues after it." },
);

export const XChainTransactionConnectionRef = builder.connectionObject(
  {
    type: XChainTransactionRef,
    name: "XChainTransactionConnection",
    description:
      "A page of X-Chain transactions. A page may hold fewer than `first` when its transactions have many UTXOs; `pageInfo.hasNextPage` tells whether more follow.",
    fields: (t) => ({ chainInfo: t.field(connectionFields.chainInfo) }),
  },
  { name: "XChainTransactionEdge", description: "A transaction and the cursor that continues after it." },
);

export const CChainAtomicTransactionConnectionRef = builder.connectionObject(
  {
    type: CChainAtomicTransactionRef,
    name: "CChainAtomicTransactionConnection",
    description:
      "A page of C-Chain atomic transactions. A page may hold fewer than `first` when its transactions have many UTXOs; `pageInfo.hasNextPage` tells whether more follow.",
    fields: (t) => ({ chainInfo: t.field(connectionFields.chainInfo) }),
  },
  { name: "CChainAtomicTransactionEdge", description: "A transaction and the cursor that continues after it." },
);
