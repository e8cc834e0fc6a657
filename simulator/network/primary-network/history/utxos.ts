/**
 * UTXOs: made as a transaction's outputs, spent as its inputs, and found for a wallet to pay with;
 * the history keeps the unspent ones by the chain they can be spent on and by owner.
 */
import { encodeCb58, sha256 } from "../../ids.ts";
import type { Asset, ChainKey, PTransaction, RewardType, SimTransaction, SimUtxo, Wallet } from "../model.ts";
import type { HistoryState } from "./state.ts";

export interface OutputOptions {
  asset?: Asset;
  /** Where the output can be spent, when an export moves it to another chain. */
  consumedOn?: ChainKey;
  rewardType?: RewardType;
  nft?: { groupId: number; payload: string };
}

/** Adds an output to a transaction. */
export function emit(
  state: HistoryState,
  tx: SimTransaction,
  owner: Wallet,
  amount: bigint,
  options: OutputOptions = {},
): SimUtxo {
  const outputIndex = tx.emitted.length;
  const asset = options.asset ?? state.avax;
  const idBytes = sha256(tx.txHash, String(outputIndex));
  const utxo: SimUtxo = {
    utxoId: encodeCb58(idBytes),
    txHash: tx.txHash,
    outputIndex,
    createdOn: tx.chain,
    consumedOn: options.consumedOn ?? tx.chain,
    addresses: [owner.address],
    threshold: 1,
    asset,
    amount,
    timestamp: tx.timestamp,
    blockNumber: blockNumberOf(tx),
    locktime: 0,
    bytes: utxoBytes(idBytes, asset.assetId, amount, owner.address),
    ...(options.rewardType ? { rewardType: options.rewardType } : {}),
    ...(options.nft ? { nft: options.nft } : {}),
  };
  tx.emitted.push(utxo);
  tx.addresses.add(owner.address);
  state.utxos.push(utxo);
  const owned = state.unspent[utxo.consumedOn].get(owner.address);
  if (owned) owned.add(utxo);
  else state.unspent[utxo.consumedOn].set(owner.address, new Set([utxo]));
  return utxo;
}

/** The staked outputs of a staking transaction, in two parts, locked for the staking period. */
export function stakeOutputs(
  state: HistoryState,
  tx: PTransaction,
  owner: Wallet,
  amount: bigint,
  start: number,
  end: number,
): void {
  const first = amount / 3n;
  for (const part of [first, amount - first]) {
    emit(state, tx, owner, part).stake = { start, end };
  }
}

/** Adds an input to a transaction, signed by the UTXO's owner. */
export function spend(state: HistoryState, tx: SimTransaction, utxo: SimUtxo): void {
  const owner = state.wallet(utxo.addresses[0]!);
  utxo.spent = {
    txHash: tx.txHash,
    timestamp: tx.timestamp,
    blockNumber: blockNumberOf(tx),
    credentials: [state.credential(owner, `${tx.txHash}:${utxo.utxoId}`)],
  };
  tx.consumed.push(utxo);
  tx.addresses.add(utxo.addresses[0]!);
  state.unspent[utxo.consumedOn].get(utxo.addresses[0]!)!.delete(utxo);
}

/** Spends the wallet's largest AVAX UTXOs on the transaction's chain to cover `needed`; the rest comes back as change. */
export function fund(state: HistoryState, tx: SimTransaction, wallet: Wallet, needed: bigint): void {
  let total = 0n;
  for (const utxo of spendableUtxos(state, wallet, tx.chain)) {
    if (total >= needed) break;
    spend(state, tx, utxo);
    total += utxo.amount;
  }
  if (total < needed) throw new Error(`simulator: wallet ${wallet.address} cannot pay ${needed} on ${tx.chain}`);
  if (total > needed) emit(state, tx, wallet, total - needed);
}

/** AVAX a wallet can spend on a chain now, largest first, at most four UTXOs. */
function spendableUtxos(state: HistoryState, wallet: Wallet, chain: ChainKey): SimUtxo[] {
  const found: SimUtxo[] = [];
  for (const utxo of state.unspent[chain].get(wallet.address) ?? []) {
    if (
      utxo.createdOn === chain &&
      utxo.asset === state.avax &&
      !utxo.stake &&
      (utxo.stakeableLocktime === undefined || utxo.stakeableLocktime <= state.now)
    ) {
      found.push(utxo);
    }
  }
  return found.sort((a, b) => (a.amount > b.amount ? -1 : a.amount < b.amount ? 1 : 0)).slice(0, 4);
}

export function spendable(state: HistoryState, wallet: Wallet, chain: ChainKey): bigint {
  return spendableUtxos(state, wallet, chain).reduce((sum, utxo) => sum + utxo.amount, 0n);
}

/** A wallet (often the first, so that one address has a long history) that can spend `minimum`. */
export function payer(state: HistoryState, chain: ChainKey, minimum: bigint): Wallet | undefined {
  const preferred = state.random.chance(0.3) ? state.wallets[0]! : state.pick(state.wallets)!;
  if (spendable(state, preferred, chain) >= minimum) return preferred;
  return state.wallets.find((wallet) => spendable(state, wallet, chain) >= minimum);
}

/** An unspent X-Chain UTXO of a fungible token other than AVAX. */
export function tokenUtxo(state: HistoryState, wallet: Wallet): SimUtxo | undefined {
  for (const utxo of state.unspent.X.get(wallet.address) ?? []) {
    if (utxo.asset !== state.avax && !utxo.nft && utxo.createdOn === "X") return utxo;
  }
  return undefined;
}

/** UTXOs exported to a chain and not imported yet, oldest first. */
export function pending(state: HistoryState, chain: ChainKey): SimUtxo[] {
  const found: SimUtxo[] = [];
  for (const owned of state.unspent[chain].values()) {
    for (const utxo of owned) if (utxo.createdOn !== chain) found.push(utxo);
  }
  return found.sort((a, b) => a.timestamp - b.timestamp);
}

function blockNumberOf(tx: SimTransaction): number | undefined {
  if (tx.chain === "C") return tx.blockNumber;
  return tx.block === undefined ? undefined : Number(tx.block.record.blockNumber);
}

/** A compact stand-in for the UTXO's serialized form: codec, id, asset, amount and owner, as hex. */
function utxoBytes(id: Buffer, assetId: string, amount: bigint, address: string): string {
  const amountBytes = Buffer.alloc(8);
  amountBytes.writeBigUInt64BE(amount & 0xffff_ffff_ffff_ffffn);
  return `0x0000${id.toString("hex")}${sha256(assetId).toString("hex")}${amountBytes.toString("hex")}${sha256(address).subarray(0, 20).toString("hex")}`;
}
