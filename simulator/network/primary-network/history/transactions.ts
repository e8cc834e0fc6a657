/** The transactions of the history: made empty for a step, then filed in their block or vertex once their UTXOs are in. */
import type { ChainKey, CTransaction, PTransaction, SimBlock, XTransaction } from "../model.ts";
import type { PChainTransactionType, XChainTransactionType } from "../../../../src/upstream/types.ts";
import { TX_FEE } from "./parameters.ts";
import type { HistoryState, XPlace } from "./state.ts";

export function newPTx(state: HistoryState, txType: PChainTransactionType, block: SimBlock): PTransaction {
  return {
    chain: "P",
    txType,
    txHash: state.id(`tx:P:${state.sequence++}`),
    timestamp: state.now,
    block,
    consumed: [],
    emitted: [],
    addresses: new Set(),
    fields: {},
    burned: 0n,
    staked: 0n,
    l1BalanceBurned: 0n,
    l1Changes: [],
  };
}

export function newXTx(state: HistoryState, txType: XChainTransactionType, place: XPlace, txHash?: string): XTransaction {
  return {
    chain: "X",
    txType,
    txHash: txHash ?? state.id(`tx:X:${state.sequence++}`),
    timestamp: state.now,
    memo: "",
    ...place,
    consumed: [],
    emitted: [],
    addresses: new Set(),
  };
}

export function newCTx(
  state: HistoryState,
  txType: CTransaction["txType"],
  blockNumber: number,
  other: ChainKey,
  source: ChainKey = "C",
): CTransaction {
  const block = state.input.cBlocks.block(blockNumber)!;
  const { chainIds } = state.input;
  return {
    chain: "C",
    txType,
    txHash: state.id(`tx:C:${state.sequence++}`),
    timestamp: block.blockTimestamp,
    blockNumber,
    blockHash: block.blockHash,
    memo: "",
    sourceChain: txType === "ExportTx" ? chainIds.C : chainIds[source],
    destinationChain: txType === "ExportTx" ? chainIds[other] : chainIds.C,
    consumed: [],
    emitted: [],
    addresses: new Set(),
    evmInputs: [],
    evmOutputs: [],
  };
}

/** Files a finished P-Chain transaction in its block and burns its fee. */
export function finishP(state: HistoryState, tx: PTransaction): void {
  state.supply -= tx.burned;
  tx.block.record.transactions.push(tx.txHash);
  tx.block.record.txCount += 1;
  tx.block.record.blockSizeBytes += 220 + 90 * (tx.consumed.length + tx.emitted.length);
  tx.block.record.currentSupply = state.supply.toString();
  for (const address of tx.fields.rewardAddresses ?? []) tx.addresses.add(address);
  state.transactions.P.push(tx);
}

/** Files a finished X-Chain transaction in its block or vertex and burns its fee. */
export function finishX(state: HistoryState, tx: XTransaction, burned = TX_FEE): void {
  const container = tx.block?.record ?? tx.vertex!.record;
  container.transactions.push(tx.txHash);
  container.txCount += 1;
  const size = 200 + 90 * (tx.consumed.length + tx.emitted.length);
  if (tx.block) tx.block.record.blockSizeBytes += size;
  else tx.vertex!.record.vertexSizeBytes += size;
  state.supply -= burned;
  state.transactions.X.push(tx);
}
