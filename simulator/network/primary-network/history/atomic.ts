/**
 * Atomic transactions between the P-, X- and C-Chain: an export leaves AVAX in shared memory for
 * another chain, and a later import on that chain takes it out.
 */
import type { ChainKey, SimBlock } from "../model.ts";
import { ATOMIC_FEE, NANO_AVAX, TX_FEE } from "./parameters.ts";
import { newCTx, newPTx, newXTx } from "./transactions.ts";
import type { HistoryState, Plan, XPlace } from "./state.ts";
import { emit, fund, payer, pending, spend, spendable } from "./utxos.ts";

/** Moves AVAX into shared memory for another chain of the primary network. */
export function planExport<Place>(state: HistoryState, chain: ChainKey): Plan<Place> | undefined {
  const destinations = (["P", "X", "C"] as const).filter(
    (destination) => destination !== chain && (destination !== "X" || state.now >= state.xLinearFrom),
  );
  // Prefer a destination with nothing waiting to be imported.
  const empty = destinations.filter((destination) => pending(state, destination).length === 0);
  const destination = state.pick(empty.length > 0 ? empty : destinations);
  const sender = chain === "C" ? state.pick(state.wallets) : payer(state, chain, TX_FEE * 100n);
  if (!destination || !sender) return undefined;
  return (place) => {
    const recipient = state.random.chance(0.7) ? sender : state.pick(state.wallets)!;
    if (chain === "C") {
      const blockNumber = place as number;
      const tx = newCTx(state, "ExportTx", blockNumber, destination);
      const amount = BigInt(state.random.int(1, 200)) * NANO_AVAX;
      emit(state, tx, recipient, amount, { consumedOn: destination });
      tx.evmInputs.push({
        fromAddress: sender.evmAddress,
        amount: amount + ATOMIC_FEE,
        credentials: [state.credential(sender, tx.txHash)],
      });
      tx.addresses.add(sender.evmAddress);
      state.supply -= ATOMIC_FEE;
      return tx;
    }
    const tx = chain === "P" ? newPTx(state, "ExportTx", place as SimBlock) : newXTx(state, "ExportTx", place as XPlace);
    const amount = spendable(state, sender, chain) / BigInt(state.random.int(5, 30));
    emit(state, tx, recipient, amount, { consumedOn: destination });
    fund(state, tx, sender, amount + TX_FEE);
    if (tx.chain === "P") {
      tx.burned = TX_FEE;
      tx.fields = { destinationChain: state.input.chainIds[destination] };
    } else if (tx.chain === "X") {
      tx.destinationChain = state.input.chainIds[destination];
    }
    return tx;
  };
}

/** Takes a wallet's AVAX out of shared memory, from one source chain. */
export function planImport<Place>(state: HistoryState, chain: ChainKey): Plan<Place> | undefined {
  const waiting = pending(state, chain);
  const first = waiting[0];
  if (!first) return undefined;
  const owner = first.addresses[0]!;
  const taken = waiting.filter((utxo) => utxo.addresses[0] === owner && utxo.createdOn === first.createdOn).slice(0, 4);
  const wallet = state.wallet(owner);
  const total = taken.reduce((sum, utxo) => sum + utxo.amount, 0n);
  if (total <= ATOMIC_FEE * 2n) return undefined;
  const source = state.input.chainIds[first.createdOn];
  return (place) => {
    if (chain === "C") {
      const tx = newCTx(state, "ImportTx", place as number, "C", first.createdOn);
      for (const utxo of taken) spend(state, tx, utxo);
      tx.evmOutputs.push({ toAddress: wallet.evmAddress, amount: total - ATOMIC_FEE });
      tx.addresses.add(wallet.evmAddress);
      state.supply -= ATOMIC_FEE;
      return tx;
    }
    const tx = chain === "P" ? newPTx(state, "ImportTx", place as SimBlock) : newXTx(state, "ImportTx", place as XPlace);
    for (const utxo of taken) spend(state, tx, utxo);
    emit(state, tx, wallet, total - TX_FEE);
    if (tx.chain === "P") {
      tx.burned = TX_FEE;
      tx.fields = { sourceChain: source };
    } else if (tx.chain === "X") {
      tx.sourceChain = source;
    }
    return tx;
  };
}
