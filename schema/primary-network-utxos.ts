/** UTXOs of the primary network: the P-Chain's record, and the one the X- and C-Chain share. */
import { rewardTypeValues, utxosSortByOptionValues, utxoTypeValues } from "../src/upstream/contract/data-api.ts";
import type { PChainUtxo, PrimaryNetworkUtxo, Utxo, UtxoCredential } from "../src/upstream/types.ts";
import { builder } from "./builder.ts";
import { dateTimeOf } from "./date-times.ts";
import { graphqlEnumName, upstreamEnum } from "./enums.ts";
import { AssetAmountRef, chainInfoOf, PrimaryNetworkChainInfoRef } from "./primary-network.ts";

export function isPChainUtxo(utxo: PrimaryNetworkUtxo): utxo is PChainUtxo {
  return "txHash" in utxo;
}

/** The transaction that created a UTXO: `txHash` of a P-Chain UTXO, `creationTxHash` of the others. */
export function creationTxHashOf(utxo: PrimaryNetworkUtxo): string {
  return isPChainUtxo(utxo) ? utxo.txHash : utxo.creationTxHash;
}

/** A UTXO's output index: a number on the P-Chain, decimal text on the X- and C-Chain. */
function outputIndexOf(utxo: PrimaryNetworkUtxo): number {
  if (isPChainUtxo(utxo)) return utxo.outputIndex;
  const index = /^(0|[1-9][0-9]{0,8})$/.test(utxo.outputIndex) ? Number(utxo.outputIndex) : Number.NaN;
  if (Number.isNaN(index))
    throw new Error(`the Data API sent an output index that is not a small decimal integer: ${JSON.stringify(utxo.outputIndex)}`);
  return index;
}

export const UtxoType = upstreamEnum("UtxoType", utxoTypeValues, "What a P-Chain UTXO is for.", {
  STAKE: "Locked as stake of a validator or delegator until the staking period ends.",
  TRANSFER: "Spendable AVAX (possibly time-locked).",
});

export const RewardType = upstreamEnum("RewardType", rewardTypeValues, "Which staking reward a P-Chain UTXO pays out.", {
  VALIDATOR: "A validator's reward for its own stake.",
  DELEGATOR: "A delegator's reward, less the validator's fee.",
  VALIDATOR_FEE: "The fee a validator earns on a delegation to it.",
});

export const UtxoSortByRef = builder.enumType("UtxoSortBy", {
  description: "What a list of UTXOs is ordered by.",
  values: Object.fromEntries(
    utxosSortByOptionValues.map((value) => [
      graphqlEnumName(value),
      { value, description: value === "amount" ? "The UTXO's amount." : "When the UTXO was created." },
    ]),
  ),
});

export const UtxoCredentialRef = builder.objectRef<UtxoCredential>("UtxoCredential").implement({
  description: "A signature that authorized spending a UTXO (or an EVM input), with the key that made it.",
  fields: (t) => ({
    signature: t.exposeString("signature", { nullable: true, description: "The secp256k1 signature, as 0x hex." }),
    publicKey: t.exposeString("publicKey", { nullable: true, description: "The signer's public key, as 0x hex." }),
  }),
});

export const PrimaryNetworkUtxoRef = builder.interfaceRef<PrimaryNetworkUtxo>("PrimaryNetworkUtxo").implement({
  description:
    "An unspent or spent transaction output of the primary network: an amount of one asset that some addresses control. The P-Chain and the X-/C-Chain describe UTXOs differently; the fields here are common to both, under the P-Chain's names.",
  resolveType: (utxo) => (isPChainUtxo(utxo) ? "PChainUtxo" : "Utxo"),
  fields: (t) => ({
    utxoId: t.exposeString("utxoId", { description: "The UTXO's id (cb58)." }),
    addresses: t.exposeStringList("addresses", {
      description: "The addresses that control the UTXO, without chain letter (`avax1...`).",
    }),
    asset: t.expose("asset", { type: AssetAmountRef, description: "The asset and amount the UTXO holds." }),
    createdOnChainId: t.exposeString("createdOnChainId", {
      description: "The chain whose transaction created the UTXO (blockchain id).",
    }),
    consumedOnChainId: t.exposeString("consumedOnChainId", {
      description: "The chain the UTXO is spent on: the chain that created it, or the destination of the export that created it.",
    }),
    consumingTxHash: t.exposeString("consumingTxHash", {
      nullable: true,
      description: "The transaction that spent the UTXO; null while unspent.",
    }),
    utxoBytes: t.exposeString("utxoBytes", { nullable: true, description: "The UTXO's serialized bytes, as 0x hex." }),
    threshold: t.expose("threshold", {
      type: "Int",
      nullable: true,
      description: "How many of `addresses` must sign to spend the UTXO: a signature threshold.",
    }),
    txHash: t.string({
      description: "The transaction that created the UTXO (cb58), on `createdOnChainId`.",
      resolve: creationTxHashOf,
    }),
    outputIndex: t.int({
      description: "The UTXO's index among the outputs of the transaction that created it.",
      resolve: (utxo) => outputIndexOf(utxo),
    }),
    blockTimestamp: t.field({
      type: "SafeInt",
      description:
        "When the transaction that created the UTXO was accepted, in Unix seconds: the time of its block (of its vertex, in the X-Chain's DAG).",
      resolve: (utxo) => (isPChainUtxo(utxo) ? utxo.blockTimestamp : utxo.timestamp),
    }),
    blockTime: t.field({
      type: "DateTime",
      description: "`blockTimestamp` as a date.",
      resolve: (parent) => dateTimeOf(isPChainUtxo(parent) ? parent.blockTimestamp : parent.timestamp),
    }),
    consumingBlockTimestamp: t.field({
      type: "SafeInt",
      nullable: true,
      description:
        "When the transaction that spent the UTXO was accepted (the time of its block), in Unix seconds; null while unspent.",
      resolve: (utxo) => (isPChainUtxo(utxo) ? utxo.consumingBlockTimestamp : utxo.consumingTxTimestamp) ?? null,
    }),
    consumingBlockTime: t.field({
      type: "DateTime",
      nullable: true,
      description: "`consumingBlockTimestamp` as a date; null while unspent.",
      resolve: (parent) => dateTimeOf(isPChainUtxo(parent) ? parent.consumingBlockTimestamp : parent.consumingTxTimestamp),
    }),
    spent: t.boolean({
      description: "True once a transaction has spent the UTXO.",
      resolve: (utxo) => utxo.consumingTxHash !== undefined,
    }),
  }),
});

export const PChainUtxoRef = builder.objectRef<PChainUtxo>("PChainUtxo").implement({
  description: "A UTXO as the P-Chain describes it: with the blocks that created and spent it, and its staking state.",
  interfaces: [PrimaryNetworkUtxoRef],
  isTypeOf: (utxo) => isPChainUtxo(utxo as PrimaryNetworkUtxo),
  fields: (t) => ({
    amount: t.expose("amount", {
      type: "BigInt",
      deprecationReason: "The Data API deprecates it; use `asset.amount`.",
      description: "The amount, in the asset's smallest unit.",
    }),
    assetId: t.exposeString("assetId", {
      deprecationReason: "The Data API deprecates it; use `asset.assetId`.",
      description: "The asset's id.",
    }),
    blockNumber: t.expose("blockNumber", {
      type: "BigInt",
      description: "The height of the block that created the UTXO, on the chain that created it (`createdOnChainId`).",
    }),
    consumingBlockNumber: t.expose("consumingBlockNumber", {
      type: "BigInt",
      nullable: true,
      description: "The height of the block that spent the UTXO, on `consumedOnChainId`; null while unspent.",
    }),
    platformLocktime: t.expose("platformLocktime", {
      type: "SafeInt",
      nullable: true,
      description: "Unix seconds until which the UTXO cannot be spent at all (0: not locked).",
    }),
    stakeableLocktime: t.expose("stakeableLocktime", {
      type: "SafeInt",
      nullable: true,
      description: "Unix seconds until which the UTXO can only be staked, not transferred.",
    }),
    staked: t.exposeBoolean("staked", { nullable: true, description: "True while the UTXO is locked as stake." }),
    utxoStartTimestamp: t.expose("utxoStartTimestamp", {
      type: "SafeInt",
      nullable: true,
      description: "Stake: when the staking period starts, in Unix seconds.",
    }),
    utxoStartTime: t.field({
      type: "DateTime",
      nullable: true,
      description: "`utxoStartTimestamp` as a date.",
      resolve: (parent) => dateTimeOf(parent.utxoStartTimestamp),
    }),
    utxoEndTimestamp: t.expose("utxoEndTimestamp", {
      type: "SafeInt",
      nullable: true,
      description: "Stake: when the staking period ends and the stake comes back, in Unix seconds.",
    }),
    utxoEndTime: t.field({
      type: "DateTime",
      nullable: true,
      description: "`utxoEndTimestamp` as a date.",
      resolve: (parent) => dateTimeOf(parent.utxoEndTimestamp),
    }),
    rewardType: t.field({
      type: RewardType.ref,
      nullable: true,
      description: "For a reward UTXO, which reward it pays.",
      resolve: (utxo) => RewardType.fromUpstream(utxo.rewardType),
    }),
    utxoType: t.field({
      type: UtxoType.ref,
      description: "Stake or spendable.",
      resolve: (utxo) => UtxoType.fromUpstream(utxo.utxoType) ?? "UNKNOWN",
    }),
  }),
});

export const UtxoRef = builder.objectRef<Utxo>("Utxo").implement({
  description:
    "A UTXO as the X-Chain and the C-Chain describe it (on the C-Chain: one waiting in shared memory to be imported, or imported).",
  interfaces: [PrimaryNetworkUtxoRef],
  isTypeOf: (utxo) => !isPChainUtxo(utxo as PrimaryNetworkUtxo),
  fields: (t) => ({
    locktime: t.expose("locktime", {
      type: "SafeInt",
      description: "Unix seconds until which the UTXO cannot be spent (0: not locked).",
    }),
    threshold: t.exposeInt("threshold", {
      description: "How many of `addresses` must sign to spend the UTXO: a signature threshold.",
    }),
    credentials: t.expose("credentials", {
      type: [UtxoCredentialRef],
      nullable: true,
      description: "The signatures that spent the UTXO; null while unspent.",
    }),
    groupId: t.exposeInt("groupId", { nullable: true, description: "NFTs: the group of the collection the token belongs to." }),
    payload: t.exposeString("payload", { nullable: true, description: "NFTs: the token's payload, as 0x hex." }),
    utxoType: t.exposeString("utxoType", { description: "The kind of output, as the Data API names it (such as `TRANSFER`)." }),
  }),
});

export const PChainUtxoConnectionRef = builder.connectionObject(
  {
    type: PChainUtxoRef,
    name: "PChainUtxoConnection",
    description: "A page of P-Chain UTXOs.",
    fields: (t) => ({
      chainInfo: t.field({
        type: PrimaryNetworkChainInfoRef,
        description: "The chain and network that answered.",
        resolve: chainInfoOf,
      }),
    }),
  },
  { name: "PChainUtxoEdge", description: "A UTXO and the cursor that continues after it." },
);

export const UtxoConnectionRef = builder.connectionObject(
  {
    type: UtxoRef,
    name: "UtxoConnection",
    description: "A page of X-Chain or C-Chain UTXOs.",
    fields: (t) => ({
      chainInfo: t.field({
        type: PrimaryNetworkChainInfoRef,
        description: "The chain and network that answered.",
        resolve: chainInfoOf,
      }),
    }),
  },
  { name: "UtxoEdge", description: "A UTXO and the cursor that continues after it." },
);
