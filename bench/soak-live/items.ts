/**
 * Whether an item a subscriber got is what the simulator holds: a block's hash at its number, its
 * parent hash, transaction count and first transactions; a transaction's block, and what its
 * links hold; a metric point's value, which only grows while its interval fills. Worked out once
 * per distinct answer.
 */
import type { KindName, SeenItem } from "./kinds.ts";
import type { TruthItem } from "./upstream-truth.ts";

export interface Truth {
  /** EVM blocks by "chainId:number". */
  blocks: Map<string, TruthItem>;
  /** The first transaction hashes of EVM blocks, by "chainId:number", as many as the selection asks. */
  firstTransactions: Map<string, string[]>;
  /** Transactions by hash: an address's (C-Chain) and the P- and X-Chain's. */
  transactions: Map<string, TruthItem>;
  /** Primary-network blocks by hash. */
  primaryNetworkBlocks: Map<string, { blockNumber: number; parentHash: string; transactions: string[] }>;
  /** The metric's points at the end, by timestamp. */
  metricPoints: Map<number, number>;
}

const same = (a: unknown, b: unknown) => a === null || a === undefined || a === b;
/** The schema spells the upstream's `ExportTx` as `EXPORT_TX`. */
const enumKey = (value: unknown) => String(value).replaceAll("_", "").toLowerCase();

function blockProblem(item: SeenItem, truth: Truth): string | undefined {
  const chainId = String(item.detail.chainId);
  const block = truth.blocks.get(`${chainId}:${item.number}`);
  if (!block) return `block ${chainId}:${item.number} is not upstream`;
  if (block.id !== item.id) return `block ${chainId}:${item.number} hash ${item.id}, upstream ${block.id}`;
  if (block.detail.parentHash !== item.detail.parentHash) return `block ${chainId}:${item.number} parent hash differs`;
  if (block.detail.txCount !== item.detail.txCount) return `block ${chainId}:${item.number} txCount differs`;
  const firstTxHashes = item.detail.firstTxHashes as string[] | null;
  const expected = truth.firstTransactions.get(`${chainId}:${item.number}`);
  if (firstTxHashes !== null && expected !== undefined && firstTxHashes.join() !== expected.join())
    return `block ${chainId}:${item.number} transactions(first: 3) ${firstTxHashes.join()}, upstream ${expected.join()}`;
  if (!same(item.detail.linkedChainId, chainId))
    return `block ${chainId}:${item.number} chain link is ${String(item.detail.linkedChainId)}`;
  return undefined;
}

function addressTransactionProblem(item: SeenItem, truth: Truth): string | undefined {
  const tx = truth.transactions.get(item.id);
  if (!tx) return `transaction ${item.id} is not upstream`;
  if (tx.number !== item.number || tx.detail.blockHash !== item.detail.blockHash)
    return `transaction ${item.id} block ${item.number}, upstream ${tx.number}`;
  if (!same(item.detail.linkedBlockHash, tx.detail.blockHash) || !same(item.detail.linkedBlockNumber, tx.number))
    return `transaction ${item.id} block link is another block`;
  const block = truth.blocks.get(`43114:${tx.number}`);
  if (block && !same(item.detail.linkedParentHash, block.detail.parentHash))
    return `transaction ${item.id} block link's parent hash differs`;
  if (!same(item.detail.linkedChainId, "43114"))
    return `transaction ${item.id} chain link is ${String(item.detail.linkedChainId)}`;
  return undefined;
}

function primaryNetworkTransactionProblem(item: SeenItem, truth: Truth): string | undefined {
  const tx = truth.transactions.get(item.id);
  if (!tx) return `transaction ${item.id} is not upstream`;
  if (tx.number !== item.number || tx.detail.blockHash !== item.detail.blockHash)
    return `transaction ${item.id} block ${item.number}, upstream ${tx.number}`;
  if (enumKey(tx.detail.txType) !== enumKey(item.detail.txType))
    return `transaction ${item.id} type ${String(item.detail.txType)}, upstream ${String(tx.detail.txType)}`;
  if (!same(item.detail.linkedBlockHash, tx.detail.blockHash) || !same(item.detail.linkedBlockNumber, tx.number))
    return `transaction ${item.id} block link is another block`;
  if (item.detail.linkedHoldsTx === false) return `transaction ${item.id} block link does not hold it`;
  const block = truth.primaryNetworkBlocks.get(String(tx.detail.blockHash));
  if (block && !same(item.detail.linkedParentHash, block.parentHash))
    return `transaction ${item.id} block link's parent hash differs`;
  return undefined;
}

function metricPointProblem(item: SeenItem, truth: Truth): string | undefined {
  const final = truth.metricPoints.get(item.number);
  if (final === undefined) return `metric point ${item.number} is not upstream`;
  if (Number(item.id) !== Number(item.detail.value))
    return `metric point ${item.number} value ${String(item.detail.value)} and valueExact ${item.id} differ`;
  // TX_COUNT of an interval only grows as it fills: a value above its final one was never upstream.
  if (Number(item.id) > final) return `metric point ${item.number} value ${item.id} above the upstream ${final}`;
  return undefined;
}

export function itemProblem(kind: KindName, item: SeenItem, truth: Truth): string | undefined {
  switch (kind) {
    case "chain-blocks":
    case "network-blocks":
      return blockProblem(item, truth);
    case "address-transactions":
      return addressTransactionProblem(item, truth);
    case "p-chain-transactions":
    case "x-chain-transactions":
      return primaryNetworkTransactionProblem(item, truth);
    case "chain-metric":
      return metricPointProblem(item, truth);
  }
}
