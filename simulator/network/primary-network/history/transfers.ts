/** Base transactions of the P- and X-Chain: AVAX (or, on the X-Chain, sometimes a token) sent from one wallet to another. */
import type { SimBlock } from "../model.ts";
import { TX_FEE } from "./parameters.ts";
import { newPTx, newXTx } from "./transactions.ts";
import type { HistoryState, Plan, XPlace } from "./state.ts";
import { emit, fund, payer, spend, spendable, tokenUtxo } from "./utxos.ts";

export function planTransfer<Place>(state: HistoryState, chain: "P" | "X", kind: "BaseTx" | "UNKNOWN"): Plan<Place> | undefined {
  const sender = payer(state, chain, TX_FEE * 100n);
  if (!sender) return undefined;
  return (place) => {
    const tx = chain === "P" ? newPTx(state, kind, place as SimBlock) : newXTx(state, "BaseTx", place as XPlace);
    const recipient = state.pick(state.wallets.filter((wallet) => wallet !== sender))!;
    const token = chain === "X" ? tokenUtxo(state, sender) : undefined;
    if (token && state.random.chance(0.5)) {
      spend(state, tx, token);
      const part = token.amount / 3n;
      emit(state, tx, recipient, part, { asset: token.asset });
      emit(state, tx, sender, token.amount - part, { asset: token.asset });
      fund(state, tx, sender, TX_FEE);
    } else {
      const amount = spendable(state, sender, chain) / BigInt(state.random.int(4, 20));
      emit(state, tx, recipient, amount);
      fund(state, tx, sender, amount + TX_FEE);
    }
    if (tx.chain === "P") {
      tx.burned = TX_FEE;
      if (state.random.chance(0.3)) tx.fields.memo = kind === "UNKNOWN" ? "unclassified" : `payment ${state.sequence}`;
    } else if (tx.chain === "X" && state.random.chance(0.3)) {
      tx.memo = `payment ${state.sequence}`;
    }
    return tx;
  };
}
