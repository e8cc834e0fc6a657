/**
 * Transactions of the primary network. The three chains describe them differently, so each has
 * its own type; `PrimaryNetworkTransaction` holds what they share.
 */
import {
  cChainExportTransactionTxTypeValues,
  cChainImportTransactionTxTypeValues,
  pChainTransactionTypeValues,
  primaryNetworkAssetCapValues,
  primaryNetworkTxTypeValues,
  xChainNonLinearTransactionChainFormatValues,
  xChainTransactionTypeValues,
} from "../src/upstream/contract/data-api.ts";
import { originOf, type PrimaryNetworkOrigin } from "../src/upstream/primary-network-api.ts";
import { parsedOrRefused, validKey } from "../src/execution/global-ids.ts";
import { CB58_ID } from "../src/execution/identifiers.ts";
import type {
  BlockchainInfo,
  BlsCredentials,
  CChainAtomicTransaction,
  EvmInput,
  EvmOutput,
  L1ValidatorManagerDetails,
  L1ValidatorTransactionDetails,
  PChainTransaction,
  PrimaryNetworkTransaction,
  SubnetOwnershipInfo,
  TransactionVertexDetail,
  XChainAssetDetails,
  XChainTransaction,
} from "../src/upstream/types.ts";
import { builder } from "./builder.ts";
import { upstreamEnum } from "./enums.ts";
import { NetworkRef } from "./networks.ts";
import {
  AssetAmountRef,
  chainInfoOf,
  chainRecordId,
  parseChainRecordId,
  PrimaryNetworkAssetType,
  PrimaryNetworkChainInfoRef,
  PrimaryNetworkChainName,
} from "./primary-network.ts";
import { PChainUtxoRef, PrimaryNetworkUtxoRef, UtxoCredentialRef, UtxoRef } from "./primary-network-utxos.ts";

export const PChainTransactionType = upstreamEnum(
  "PChainTransactionType",
  pChainTransactionTypeValues,
  "The kinds of P-Chain transaction that `PChain.transactions(txTypes:)` filters by (a transaction's own `txType` is a `PrimaryNetworkTransactionType`, which holds these values too).",
  {
    AddValidatorTx: "Adds a primary network validator (before the Banff upgrade).",
    AddSubnetValidatorTx: "Adds a validator to a subnet.",
    AddDelegatorTx: "Delegates stake to a primary network validator (before the Banff upgrade).",
    CreateChainTx: "Creates a blockchain on a subnet.",
    CreateSubnetTx: "Creates a subnet; its id is the transaction's hash.",
    ImportTx: "Takes AVAX that another chain exported to the P-Chain out of shared memory.",
    ExportTx: "Sends AVAX to another chain's shared memory.",
    AdvanceTimeTx: "Moves the P-Chain's clock forward (before the Banff upgrade).",
    RewardValidatorTx: "Ends a staking period: returns the stake and pays the rewards.",
    RemoveSubnetValidatorTx: "Removes a validator from a subnet.",
    TransformSubnetTx: "Turns a subnet into an elastic (permissionless) subnet.",
    AddPermissionlessValidatorTx: "Adds a validator, with its BLS key.",
    AddPermissionlessDelegatorTx: "Delegates stake to a validator.",
    BaseTx: "Transfers AVAX on the P-Chain.",
    TransferSubnetOwnershipTx: "Hands a subnet to new owners.",
    ConvertSubnetToL1Tx: "Converts a subnet into an L1 with its first validators and a validator manager.",
    RegisterL1ValidatorTx: "Adds a validator to an L1.",
    SetL1ValidatorWeightTx: "Changes an L1 validator's weight.",
    DisableL1ValidatorTx: "Disables an L1 validator and returns its remaining balance.",
    IncreaseL1ValidatorBalanceTx: "Adds to the balance an L1 validator pays its fees from.",
    UNKNOWN: "A transaction the Data API does not classify, or a kind added after this gateway was built.",
  },
);

export const XChainTransactionType = upstreamEnum(
  "XChainTransactionType",
  xChainTransactionTypeValues,
  "The kinds of X-Chain transaction that `XChain.transactions(txTypes:)` filters by (a transaction's own `txType` is a `PrimaryNetworkTransactionType`, which holds these values too).",
  {
    BaseTx: "Transfers assets on the X-Chain.",
    CreateAssetTx: "Creates an asset; its id is the transaction's hash.",
    OperationTx: "Mints or transfers non-fungible tokens.",
    ImportTx: "Takes assets that another chain exported to the X-Chain out of shared memory.",
    ExportTx: "Sends assets to another chain's shared memory.",
    UNKNOWN: "A transaction the Data API does not classify, or a kind added after this gateway was built.",
  },
);

export const CChainAtomicTransactionType = upstreamEnum(
  "CChainAtomicTransactionType",
  [...cChainImportTransactionTxTypeValues, ...cChainExportTransactionTxTypeValues],
  "The kinds of C-Chain atomic transaction that `CChain.transactions(txTypes:)` filters by (a transaction's own `txType` is a `PrimaryNetworkTransactionType`, which holds these values too).",
  {
    ImportTx: "Takes AVAX from shared memory into C-Chain accounts.",
    ExportTx: "Sends AVAX from C-Chain accounts to another chain's shared memory.",
  },
);

/**
 * The kind of any primary-network transaction: the value set of every chain together, as the
 * Data API's `PrimaryNetworkTxType` holds it. GraphQL requires one type for `txType` on the
 * interface and on each chain's type, so the field has this enum everywhere; each chain's
 * `txTypes` filter keeps the chain's own enum, which offers only the kinds that chain has.
 */
export const PrimaryNetworkTransactionType = upstreamEnum(
  "PrimaryNetworkTransactionType",
  primaryNetworkTxTypeValues,
  "The kind of a transaction of the primary network, of any of its three chains (the values of `PChainTransactionType`, `XChainTransactionType` and `CChainAtomicTransactionType` together). One enum serves `txType` on every chain so that one fragment on `PrimaryNetworkTransaction` can read it; the `txTypes` filter of each chain's `transactions` takes the chain's own enum, which lists only the kinds that chain has.",
  {
    AddValidatorTx: "P-Chain: adds a primary network validator (before the Banff upgrade).",
    AddSubnetValidatorTx: "P-Chain: adds a validator to a subnet.",
    AddDelegatorTx: "P-Chain: delegates stake to a primary network validator (before the Banff upgrade).",
    CreateChainTx: "P-Chain: creates a blockchain on a subnet.",
    CreateSubnetTx: "P-Chain: creates a subnet; its id is the transaction's hash.",
    ImportTx:
      "Any chain: takes assets that another chain exported to this one out of shared memory (on the C-Chain, into accounts).",
    ExportTx: "Any chain: sends assets to another chain's shared memory (on the C-Chain, from accounts).",
    AdvanceTimeTx: "P-Chain: moves the P-Chain's clock forward (before the Banff upgrade).",
    RewardValidatorTx: "P-Chain: ends a staking period, returning the stake and paying the rewards.",
    RemoveSubnetValidatorTx: "P-Chain: removes a validator from a subnet.",
    TransformSubnetTx: "P-Chain: turns a subnet into an elastic (permissionless) subnet.",
    AddPermissionlessValidatorTx: "P-Chain: adds a validator, with its BLS key.",
    AddPermissionlessDelegatorTx: "P-Chain: delegates stake to a validator.",
    BaseTx: "P- or X-Chain: transfers assets on the chain.",
    TransferSubnetOwnershipTx: "P-Chain: hands a subnet to new owners.",
    ConvertSubnetToL1Tx: "P-Chain: converts a subnet into an L1 with its first validators and a validator manager.",
    RegisterL1ValidatorTx: "P-Chain: adds a validator to an L1.",
    SetL1ValidatorWeightTx: "P-Chain: changes an L1 validator's weight.",
    DisableL1ValidatorTx: "P-Chain: disables an L1 validator and returns its remaining balance.",
    IncreaseL1ValidatorBalanceTx: "P-Chain: adds to the balance an L1 validator pays its fees from.",
    CreateAssetTx: "X-Chain: creates an asset; its id is the transaction's hash.",
    OperationTx: "X-Chain: mints or transfers non-fungible tokens.",
    UNKNOWN: "A transaction the Data API does not classify, or a kind added after this gateway was built.",
  },
);

export const XChainFormat = upstreamEnum(
  "XChainFormat",
  xChainNonLinearTransactionChainFormatValues,
  "Where an X-Chain transaction was accepted: in a vertex of the DAG, or in a block.",
  { "non-linear": "In a vertex of the DAG (the X-Chain's early history).", linear: "In a block." },
);

export const AssetCap = upstreamEnum("AssetCap", primaryNetworkAssetCapValues, "Whether an asset's supply can grow.", {
  fixed: "The supply was set when the asset was created.",
  variable: "Holders of the minting rights can mint more.",
});

export const XChainAssetRef = builder.objectRef<XChainAssetDetails>("XChainAsset").implement({
  description: "An asset the X-Chain knows, as the transaction that created it describes it.",
  fields: (t) => ({
    assetId: t.exposeString("assetId", { description: "The asset's id (cb58): the hash of the transaction that created it." }),
    name: t.exposeString("name", { description: "The asset's name." }),
    symbol: t.exposeString("symbol", { description: "The asset's ticker symbol." }),
    denomination: t.exposeInt("denomination", { description: "Decimal places of the asset's amounts." }),
    type: t.field({
      type: PrimaryNetworkAssetType.ref,
      description: "How the asset is held.",
      resolve: (asset) => PrimaryNetworkAssetType.fromUpstream(asset.type) ?? "UNKNOWN",
    }),
    createdAtTimestamp: t.expose("createdAtTimestamp", {
      type: "SafeInt",
      description: "When the asset was created, in Unix seconds.",
    }),
    cap: t.field({
      type: AssetCap.ref,
      description: "Whether the supply can grow.",
      resolve: (asset) => AssetCap.fromUpstream(asset.cap) ?? "UNKNOWN",
    }),
  }),
});

export const XChainTransactionVertexRef = builder.objectRef<TransactionVertexDetail>("XChainTransactionVertex").implement({
  description:
    "A vertex that holds an X-Chain transaction, as the transaction names it (the fields are named as on `XChainVertex`).",
  fields: (t) => ({
    vertexHash: t.exposeString("hash", { description: "The vertex's id (cb58)." }),
    vertexHeight: t.field({
      type: "BigInt",
      description: "The vertex's height in the DAG.",
      resolve: (vertex) => String(vertex.height),
    }),
    vertexTimestamp: t.expose("timestamp", { type: "SafeInt", description: "When the vertex was accepted, in Unix seconds." }),
  }),
});

export const EvmInputRef = builder.objectRef<EvmInput>("EvmInput").implement({
  description: "AVAX taken from a C-Chain account by an export.",
  fields: (t) => ({
    fromAddress: t.exposeString("fromAddress", { description: "The C-Chain account (0x address)." }),
    asset: t.expose("asset", { type: AssetAmountRef, description: "The asset and amount taken, fee included." }),
    credentials: t.expose("credentials", { type: [UtxoCredentialRef], description: "The signatures that authorized it." }),
  }),
});

export const EvmOutputRef = builder.objectRef<EvmOutput>("EvmOutput").implement({
  description: "AVAX credited to a C-Chain account by an import.",
  fields: (t) => ({
    toAddress: t.exposeString("toAddress", { description: "The C-Chain account (0x address)." }),
    asset: t.expose("asset", { type: AssetAmountRef, description: "The asset and amount credited." }),
  }),
});

export const L1ValidatorManagerRef = builder.objectRef<L1ValidatorManagerDetails>("L1ValidatorManager").implement({
  description: "The contract that manages an L1's validator set, named when the subnet was converted to an L1.",
  fields: (t) => ({
    blockchainId: t.exposeString("blockchainId", { description: "The chain the contract is on (blockchain id, cb58)." }),
    contractAddress: t.exposeString("contractAddress", { description: "The contract's address (0x)." }),
  }),
});

export const L1ValidatorTransactionDetailsRef = builder
  .objectRef<L1ValidatorTransactionDetails>("L1ValidatorTransactionDetails")
  .implement({
    description: "What an L1 transaction did to one L1 validator, as of that transaction.",
    fields: (t) => ({
      validationId: t.exposeString("validationId", {
        description: "The validation's id (cb58): one validator's term on the L1.",
      }),
      validationIdHex: t.exposeString("validationIdHex", { description: "The same id as 0x hex." }),
      nodeId: t.exposeString("nodeId", { description: "The validator's node (`NodeID-...`)." }),
      subnetId: t.exposeString("subnetId", { description: "The L1 (its subnet id, cb58)." }),
      weight: t.expose("weight", { type: "BigInt", description: "The validator's weight after the transaction." }),
      remainingBalance: t.expose("remainingBalance", {
        type: "BigInt",
        description: "The validator's balance for fees after the transaction, in nAVAX.",
      }),
      balanceChange: t.expose("balanceChange", {
        type: "BigInt",
        nullable: true,
        description: "How much the transaction changed the balance, in nAVAX (negative when returned).",
      }),
      blsCredentials: t.expose("blsCredentials", {
        type: "JSONObject",
        nullable: true,
        description:
          "The validator's BLS credentials where the transaction sets them (registration, conversion), as the Data API sends them.",
      }),
    }),
  });

export const SubnetOwnershipRef = builder.objectRef<SubnetOwnershipInfo>("SubnetOwnership").implement({
  description: "Who controls a subnet: the keys that may change it.",
  fields: (t) => ({
    locktime: t.expose("locktime", {
      type: "SafeInt",
      description: "Unix seconds before which the owners cannot act (0: none).",
    }),
    threshold: t.exposeInt("threshold", { description: "How many of `addresses` must sign." }),
    addresses: t.exposeStringList("addresses", { description: "The owners' addresses." }),
  }),
});

export const BlsCredentialsRef = builder.objectRef<BlsCredentials>("BlsCredentials").implement({
  description: "A validator's BLS key, which signs Warp messages, with the proof that the validator holds its secret key.",
  fields: (t) => ({
    publicKey: t.exposeString("publicKey", { description: "The 48-byte compressed public key, as 0x hex." }),
    proofOfPossession: t.exposeString("proofOfPossession", {
      description: "A 96-byte signature of the public key by its secret key, as 0x hex.",
    }),
  }),
});

export const BlockchainInfoRef = builder.objectRef<BlockchainInfo>("BlockchainInfo").implement({
  description: "The blockchain a CreateChainTx created.",
  fields: (t) => ({
    chainName: t.exposeString("chainName", { description: "The chain's name." }),
    vmId: t.exposeString("vmId", { description: "The virtual machine it runs (cb58)." }),
    genesisData: t.expose("genesisData", {
      type: "JSON",
      nullable: true,
      description: "Its genesis: an object for EVM chains (config, alloc, ...), else the text the upstream gives.",
    }),
  }),
});

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
  isTypeOf: (tx) => originOf(tx as object).chain === "p-chain",
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
    endTimestamp: t.expose("endTimestamp", {
      type: "SafeInt",
      nullable: true,
      description: "Validator and delegator transactions: when the staking period ends, in Unix seconds.",
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
  isTypeOf: (tx) => originOf(tx as object).chain === "x-chain",
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
  isTypeOf: (tx) => originOf(tx as object).chain === "c-chain",
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
