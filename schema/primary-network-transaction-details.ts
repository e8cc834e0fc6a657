/**
 * What a primary-network transaction holds beside its amounts and UTXOs: the asset an X-Chain
 * transaction created, the vertices that hold it, a C-Chain atomic transaction's EVM inputs and
 * outputs, and the L1, subnet, validator key and blockchain records of P-Chain transactions.
 */
import { primaryNetworkAssetCapValues } from "../src/upstream/contract/data-api.ts";
import type {
  BlockchainInfo,
  BlsCredentials,
  EvmInput,
  EvmOutput,
  L1ValidatorManagerDetails,
  L1ValidatorTransactionDetails,
  SubnetOwnershipInfo,
  TransactionVertexDetail,
  XChainAssetDetails,
} from "../src/upstream/types.ts";
import { builder } from "./builder.ts";
import { dateTimeOf } from "./date-times.ts";
import { upstreamEnum } from "./enums.ts";
import { AssetAmountRef, PrimaryNetworkAssetType } from "./primary-network.ts";
import { UtxoCredentialRef } from "./primary-network-utxos.ts";

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
    createdAtTime: t.field({
      type: "DateTime",
      description: "`createdAtTimestamp` as a date.",
      resolve: (parent) => dateTimeOf(parent.createdAtTimestamp),
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
    vertexTime: t.field({
      type: "DateTime",
      description: "`vertexTimestamp` as a date.",
      resolve: (parent) => dateTimeOf(parent.timestamp),
    }),
  }),
});

export const EvmInputRef = builder.objectRef<EvmInput>("EvmInput").implement({
  description: "AVAX taken from a C-Chain account by an export.",
  fields: (t) => ({
    fromAddress: t.expose("fromAddress", { type: "EvmAddress", description: "The C-Chain account (0x address)." }),
    asset: t.expose("asset", { type: AssetAmountRef, description: "The asset and amount taken, fee included." }),
    credentials: t.expose("credentials", { type: [UtxoCredentialRef], description: "The signatures that authorized it." }),
  }),
});

export const EvmOutputRef = builder.objectRef<EvmOutput>("EvmOutput").implement({
  description: "AVAX credited to a C-Chain account by an import.",
  fields: (t) => ({
    toAddress: t.expose("toAddress", { type: "EvmAddress", description: "The C-Chain account (0x address)." }),
    asset: t.expose("asset", { type: AssetAmountRef, description: "The asset and amount credited." }),
  }),
});

export const L1ValidatorManagerRef = builder.objectRef<L1ValidatorManagerDetails>("L1ValidatorManager").implement({
  description: "The contract that manages an L1's validator set, named when the subnet was converted to an L1.",
  fields: (t) => ({
    blockchainId: t.exposeString("blockchainId", { description: "The chain the contract is on (blockchain id, cb58)." }),
    contractAddress: t.expose("contractAddress", { type: "EvmAddress", description: "The contract's address (0x)." }),
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
    threshold: t.exposeInt("threshold", {
      description: "How many of `addresses` must sign: a signature threshold (a `threshold` argument is a balance).",
    }),
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
