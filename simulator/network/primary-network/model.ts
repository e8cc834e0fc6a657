/**
 * The primary network as the simulator keeps it: transactions that consume and emit UTXOs on
 * the P-, X- and C-Chain, blocks, vertices and L1 validators. UTXOs are kept once and rendered
 * in the record shape of the chain that shows them, with their current spent state.
 */
import type { components } from "../../../src/upstream/contract/data-api.ts";
import type {
  AssetAmount,
  CChainAtomicTransaction,
  L1Validator,
  PChainTransaction,
  PChainTransactionType,
  PChainUtxo,
  PrimaryNetworkBlock,
  PrimaryNetworkChainName,
  PrimaryNetworkTransaction,
  Utxo,
  UtxoCredential,
  XChainAssetDetails,
  XChainTransaction,
  XChainTransactionType,
  XChainVertex,
} from "../../../src/upstream/types.ts";
import type { BlsKey } from "./bls.ts";

export type RewardType = components["schemas"]["RewardType"];

export type ChainKey = "P" | "X" | "C";
export const CHAIN_NAMES: Record<ChainKey, PrimaryNetworkChainName> = { P: "p-chain", X: "x-chain", C: "c-chain" };

export interface Wallet {
  /** Bech32 without the chain letter, the form the records show (`avax1...`, `fuji1...`). */
  address: string;
  /** The wallet's account on the C-Chain. */
  evmAddress: string;
  /** Its secp256k1 public key, compressed, as 0x hex (shown in credentials). */
  publicKey: string;
}

export interface Asset {
  assetId: string;
  name: string;
  symbol: string;
  denomination: number;
  type: AssetAmount["type"];
}

interface Spend {
  txHash: string;
  timestamp: number;
  /** Height of the consuming transaction's block; undefined inside an X-Chain vertex. */
  blockNumber: number | undefined;
  credentials: UtxoCredential[];
}

export interface SimUtxo {
  utxoId: string;
  txHash: string;
  outputIndex: number;
  createdOn: ChainKey;
  /** Where it can be spent: the chain that created it, or an export's destination. */
  consumedOn: ChainKey;
  addresses: string[];
  threshold: number;
  asset: Asset;
  amount: bigint;
  timestamp: number;
  /** Height of the creating transaction's block; undefined inside an X-Chain vertex. */
  blockNumber: number | undefined;
  locktime: number;
  stakeableLocktime?: number;
  stake?: { start: number; end: number };
  rewardType?: RewardType;
  nft?: { groupId: number; payload: string };
  bytes: string;
  spent?: Spend;
}

export interface SimBlock {
  chain: ChainKey;
  record: PrimaryNetworkBlock;
}

export interface SimVertex {
  record: XChainVertex;
}

export interface SimL1Validator {
  validationId: string;
  validationIdHex: string;
  nodeId: string;
  subnetId: string;
  weight: number;
  remainingBalance: number;
  creationTimestamp: number;
  bls: BlsKey;
  remainingBalanceOwner: { addresses: string[]; threshold: number };
  deactivationOwner: { addresses: string[]; threshold: number };
}

/** What an L1 transaction says about one validator, as it was at that transaction. */
export interface L1ValidatorChange {
  validator: SimL1Validator;
  weight: number;
  remainingBalance: number;
  balanceChange?: number;
  /** Registration and conversion show the validator's BLS credentials. */
  showCredentials: boolean;
}

interface TransactionBase {
  txHash: string;
  timestamp: number;
  consumed: SimUtxo[];
  emitted: SimUtxo[];
  /** Every address the transaction touches, bech32 without chain letter or lower-case 0x. */
  addresses: Set<string>;
}

export interface PTransaction extends TransactionBase {
  chain: "P";
  txType: PChainTransactionType;
  block: SimBlock;
  /** The record's fields other than UTXOs, amounts and BLS credentials. */
  fields: Partial<PChainTransaction>;
  burned: bigint;
  staked: bigint;
  l1BalanceBurned: bigint;
  l1Changes: L1ValidatorChange[];
  /** A validator's BLS key, for AddPermissionlessValidatorTx. */
  bls?: BlsKey;
}

export interface XTransaction extends TransactionBase {
  chain: "X";
  txType: XChainTransactionType;
  memo: string;
  sourceChain?: string;
  destinationChain?: string;
  assetCreated?: XChainAssetDetails;
  /** Linear transactions sit in a block, the earlier ones in a vertex. */
  block?: SimBlock;
  vertex?: SimVertex;
}

export interface CTransaction extends TransactionBase {
  chain: "C";
  txType: "ImportTx" | "ExportTx";
  memo: string;
  blockNumber: number;
  blockHash: string;
  sourceChain: string;
  destinationChain: string;
  evmInputs: { fromAddress: string; amount: bigint; credentials: UtxoCredential[] }[];
  evmOutputs: { toAddress: string; amount: bigint }[];
}

export type SimTransaction = PTransaction | XTransaction | CTransaction;

function assetAmount(asset: Asset, amount: bigint): AssetAmount {
  return { ...asset, amount: amount.toString() };
}

/** Sums of amounts per asset, in order of first appearance. */
function assetTotals(items: readonly { asset: Asset; amount: bigint }[]): AssetAmount[] {
  const totals = new Map<string, { asset: Asset; amount: bigint }>();
  for (const { asset, amount } of items) {
    const total = totals.get(asset.assetId);
    if (total) total.amount += amount;
    else totals.set(asset.assetId, { asset, amount });
  }
  return [...totals.values()].map((total) => assetAmount(total.asset, total.amount));
}

/**
 * An object whose members the contract leaves open (`{"type": "object"}`), for which the
 * generated type is an empty record.
 */
function openObject(value: Record<string, unknown>): Record<string, never> {
  return value as Record<string, never>;
}

/** Renders UTXOs, transactions and validators; chain ids come from the network. */
export class RecordRenderer {
  constructor(
    private readonly chainIds: Record<ChainKey, string>,
    private readonly avax: Asset,
  ) {}

  pChainUtxo(utxo: SimUtxo): PChainUtxo {
    const record: PChainUtxo = {
      ...this.utxoIdentity(utxo),
      amount: utxo.amount.toString(),
      assetId: utxo.asset.assetId,
      blockNumber: String(utxo.blockNumber ?? 0),
      blockTimestamp: utxo.timestamp,
      platformLocktime: utxo.locktime,
      outputIndex: utxo.outputIndex,
      staked: utxo.stake !== undefined,
      threshold: utxo.threshold,
      txHash: utxo.txHash,
      utxoType: utxo.stake ? "STAKE" : "TRANSFER",
    };
    if (utxo.spent) {
      record.consumingTxHash = utxo.spent.txHash;
      record.consumingBlockNumber = String(utxo.spent.blockNumber ?? 0);
      record.consumingBlockTimestamp = utxo.spent.timestamp;
    }
    if (utxo.stakeableLocktime !== undefined) record.stakeableLocktime = utxo.stakeableLocktime;
    if (utxo.stake) {
      record.utxoStartTimestamp = utxo.stake.start;
      record.utxoEndTimestamp = utxo.stake.end;
    }
    if (utxo.rewardType) record.rewardType = utxo.rewardType;
    return record;
  }

  utxo(utxo: SimUtxo): Utxo {
    const record: Utxo = {
      ...this.utxoIdentity(utxo),
      creationTxHash: utxo.txHash,
      locktime: utxo.locktime,
      outputIndex: String(utxo.outputIndex),
      threshold: utxo.threshold,
      timestamp: utxo.timestamp,
      utxoType: utxo.nft ? "NFT_TRANSFER" : "TRANSFER",
    };
    if (utxo.spent) {
      record.consumingTxHash = utxo.spent.txHash;
      record.consumingTxTimestamp = utxo.spent.timestamp;
      record.credentials = utxo.spent.credentials;
    }
    if (utxo.nft) {
      record.groupId = utxo.nft.groupId;
      record.payload = utxo.nft.payload;
    }
    return record;
  }

  /** The fields that open a UTXO's record on every chain: owners, asset, chains and id. */
  private utxoIdentity(utxo: SimUtxo) {
    return {
      addresses: utxo.addresses,
      asset: assetAmount(utxo.asset, utxo.amount),
      consumedOnChainId: this.chainIds[utxo.consumedOn],
      createdOnChainId: this.chainIds[utxo.createdOn],
      utxoId: utxo.utxoId,
      utxoBytes: utxo.bytes,
    };
  }

  transaction(tx: SimTransaction): PrimaryNetworkTransaction {
    switch (tx.chain) {
      case "P":
        return this.pChainTransaction(tx);
      case "X":
        return this.xChainTransaction(tx);
      case "C":
        return this.cChainTransaction(tx);
    }
  }

  l1Validator(validator: SimL1Validator): L1Validator {
    return {
      validationId: validator.validationId,
      validationIdHex: validator.validationIdHex,
      nodeId: validator.nodeId,
      subnetId: validator.subnetId,
      weight: validator.weight,
      remainingBalance: validator.remainingBalance,
      creationTimestamp: validator.creationTimestamp,
      blsCredentials: openObject(validator.bls.credentials()),
      remainingBalanceOwner: validator.remainingBalanceOwner,
      deactivationOwner: validator.deactivationOwner,
    };
  }

  private pChainTransaction(tx: PTransaction): PChainTransaction {
    const amounts = (amount: bigint) => (amount > 0n ? [assetAmount(this.avax, amount)] : []);
    const record: PChainTransaction = {
      txHash: tx.txHash,
      txType: tx.txType,
      blockTimestamp: tx.timestamp,
      blockNumber: tx.block.record.blockNumber,
      blockHash: tx.block.record.blockHash,
      consumedUtxos: tx.consumed.map((utxo) => this.pChainUtxo(utxo)),
      emittedUtxos: tx.emitted.map((utxo) => this.pChainUtxo(utxo)),
      value: assetTotals(tx.emitted),
      amountBurned: amounts(tx.burned),
      amountStaked: amounts(tx.staked),
      amountL1ValidatorBalanceBurned: amounts(tx.l1BalanceBurned),
      ...tx.fields,
    };
    if (tx.l1Changes.length > 0) {
      record.l1ValidatorDetails = tx.l1Changes.map((change) => ({
        validationId: change.validator.validationId,
        validationIdHex: change.validator.validationIdHex,
        nodeId: change.validator.nodeId,
        subnetId: change.validator.subnetId,
        weight: change.weight,
        remainingBalance: change.remainingBalance,
        ...(change.balanceChange === undefined ? {} : { balanceChange: change.balanceChange }),
        ...(change.showCredentials ? { blsCredentials: openObject(change.validator.bls.credentials()) } : {}),
      }));
    }
    if (tx.bls) record.blsCredentials = tx.bls.credentials();
    return record;
  }

  private xChainTransaction(tx: XTransaction): XChainTransaction {
    const common = {
      txHash: tx.txHash,
      timestamp: tx.timestamp,
      txType: tx.txType,
      memo: tx.memo,
      consumedUtxos: tx.consumed.map((utxo) => this.utxo(utxo)),
      emittedUtxos: tx.emitted.map((utxo) => this.utxo(utxo)),
      amountUnlocked: assetTotals(tx.consumed),
      amountCreated: assetTotals(tx.emitted),
      ...(tx.sourceChain === undefined ? {} : { sourceChain: tx.sourceChain }),
      ...(tx.destinationChain === undefined ? {} : { destinationChain: tx.destinationChain }),
      ...(tx.assetCreated === undefined ? {} : { assetCreated: tx.assetCreated }),
    };
    if (tx.block) {
      return {
        ...common,
        chainFormat: "linear",
        blockHeight: Number(tx.block.record.blockNumber),
        blockHash: tx.block.record.blockHash,
      };
    }
    const vertex = tx.vertex!.record;
    return {
      ...common,
      chainFormat: "non-linear",
      vertices: [{ hash: vertex.vertexHash, height: vertex.vertexHeight, timestamp: vertex.vertexTimestamp }],
    };
  }

  private cChainTransaction(tx: CTransaction): CChainAtomicTransaction {
    const common = {
      txHash: tx.txHash,
      blockHeight: tx.blockNumber,
      blockHash: tx.blockHash,
      timestamp: tx.timestamp,
      memo: tx.memo,
      sourceChain: tx.sourceChain,
      destinationChain: tx.destinationChain,
    };
    if (tx.txType === "ExportTx") {
      const inputs = tx.evmInputs.map((input) => ({ asset: tx.emitted[0]!.asset, amount: input.amount }));
      return {
        ...common,
        txType: "ExportTx",
        amountUnlocked: assetTotals(inputs),
        amountCreated: assetTotals(tx.emitted),
        evmInputs: tx.evmInputs.map((input, index) => ({
          fromAddress: input.fromAddress,
          asset: assetAmount(inputs[index]!.asset, input.amount),
          credentials: input.credentials,
        })),
        emittedUtxos: tx.emitted.map((utxo) => this.utxo(utxo)),
      };
    }
    const outputs = tx.evmOutputs.map((output) => ({ asset: tx.consumed[0]!.asset, amount: output.amount }));
    return {
      ...common,
      txType: "ImportTx",
      amountUnlocked: assetTotals(tx.consumed),
      amountCreated: assetTotals(outputs),
      evmOutputs: tx.evmOutputs.map((output, index) => ({
        toAddress: output.toAddress,
        asset: assetAmount(outputs[index]!.asset, output.amount),
      })),
      consumedUtxos: tx.consumed.map((utxo) => this.utxo(utxo)),
    };
  }
}
