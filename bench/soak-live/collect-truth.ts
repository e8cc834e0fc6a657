/**
 * Reads from the simulator, after the run, what every question's sequence was from the first
 * item any of its subscribers got, and what the links of every item they got hold.
 */
import type { SeenItem } from "./kinds.ts";
import type { Truth } from "./items.ts";
import { Sequence } from "./sequences.ts";
import { C_CHAIN } from "./settings.ts";
import type { Subscriber } from "./subscriber.ts";
import {
  addressTransactions,
  chainBlocks,
  firstTransactionHashes,
  inBatches,
  metricPoints,
  primaryNetworkBlock,
  primaryNetworkTransactions,
  type TruthItem,
} from "./upstream-truth.ts";

/** How many reads go to the simulator at once. */
const WIDTH = 8;

export interface CollectedTruth {
  sequences: Map<string, Sequence>;
  truth: Truth;
  /** Reads made, for the report (none of them counted in the calls a minute). */
  reads: number;
}

export async function collectTruth(dataUrl: string, metricsUrl: string, subscribers: Subscriber[]): Promise<CollectedTruth> {
  let reads = 0;
  const counted = <T>(promise: Promise<T>) => {
    reads += 1;
    return promise;
  };
  // The distinct items each question's subscribers got, and where each stream of it starts.
  const itemsByQuestion = new Map<string, { subscriber: Subscriber; items: Set<SeenItem> }>();
  const firstNumber = new Map<string, Map<string, number>>();
  for (const subscriber of subscribers) {
    const entry = itemsByQuestion.get(subscriber.question) ?? { subscriber, items: new Set<SeenItem>() };
    itemsByQuestion.set(subscriber.question, entry);
    const starts = firstNumber.get(subscriber.question) ?? new Map<string, number>();
    firstNumber.set(subscriber.question, starts);
    for (const { item } of subscriber.received) {
      if (!item) continue;
      entry.items.add(item);
      starts.set(item.stream, Math.min(starts.get(item.stream) ?? item.number, item.number));
    }
  }

  // EVM blocks of each chain, from the first any question needs (an address's transactions need the C-Chain's).
  const chainStarts = new Map<string, number>();
  for (const [question, starts] of firstNumber) {
    const kind = itemsByQuestion.get(question)!.subscriber.kind.name;
    if (kind !== "chain-blocks" && kind !== "network-blocks" && kind !== "address-transactions") continue;
    for (const [stream, number] of starts) {
      const chainId = kind === "address-transactions" ? C_CHAIN : stream;
      chainStarts.set(chainId, Math.min(chainStarts.get(chainId) ?? number, number));
    }
  }
  const blocksByChain = new Map<string, TruthItem[]>();
  await inBatches([...chainStarts], WIDTH, async ([chainId, from]) => {
    blocksByChain.set(chainId, await counted(chainBlocks(dataUrl, chainId, from)));
  });
  const blocks = new Map<string, TruthItem>();
  for (const list of blocksByChain.values()) for (const block of list) blocks.set(`${block.stream}:${block.number}`, block);

  const sequences = new Map<string, Sequence>();
  const transactions = new Map<string, TruthItem>();
  let points = new Map<number, number>();
  await inBatches([...itemsByQuestion], WIDTH, async ([question, { subscriber }]) => {
    const starts = firstNumber.get(question)!;
    if (starts.size === 0) return;
    const from = Math.min(...starts.values());
    let items: TruthItem[] = [];
    switch (subscriber.kind.name) {
      case "chain-blocks":
      case "network-blocks":
        items = [...starts].flatMap(([chainId, start]) =>
          (blocksByChain.get(chainId) ?? []).filter((block) => block.number >= start),
        );
        break;
      case "address-transactions":
        items = await counted(addressTransactions(dataUrl, C_CHAIN, subscriber.address!, from));
        break;
      case "p-chain-transactions":
      case "x-chain-transactions":
        items = await counted(
          primaryNetworkTransactions(dataUrl, subscriber.kind.name === "p-chain-transactions" ? "p-chain" : "x-chain", from),
        );
        break;
      case "chain-metric":
        points = await counted(metricPoints(metricsUrl, C_CHAIN, "txCount", "hour", 100));
        return;
    }
    const ofTransactions = subscriber.kind.name !== "chain-blocks" && subscriber.kind.name !== "network-blocks";
    if (ofTransactions) for (const item of items) transactions.set(item.id, item);
    sequences.set(question, new Sequence(items));
  });

  // What the links of the items pushed hold: a block's first transactions, a primary-network transaction's block.
  const blockKeys = new Map<string, { chainId: string; number: number }>();
  const primaryBlocks = new Map<string, string>();
  for (const { subscriber, items } of itemsByQuestion.values()) {
    for (const item of items) {
      const kind = subscriber.kind.name;
      if ((kind === "chain-blocks" || kind === "network-blocks") && Number(item.detail.txCount) > 0) {
        const chainId = String(item.detail.chainId);
        blockKeys.set(`${chainId}:${item.number}`, { chainId, number: item.number });
      }
      if ((kind === "p-chain-transactions" || kind === "x-chain-transactions") && typeof item.detail.blockHash === "string") {
        primaryBlocks.set(item.detail.blockHash, kind === "p-chain-transactions" ? "p-chain" : "x-chain");
      }
    }
  }
  const firstTransactions = new Map<string, string[]>();
  await inBatches([...blockKeys], WIDTH, async ([key, block]) => {
    firstTransactions.set(key, await counted(firstTransactionHashes(dataUrl, block.chainId, block.number, 3)));
  });
  const primaryNetworkBlocks: Truth["primaryNetworkBlocks"] = new Map();
  await inBatches([...primaryBlocks], WIDTH, async ([blockHash, blockchainId]) => {
    primaryNetworkBlocks.set(blockHash, await counted(primaryNetworkBlock(dataUrl, blockchainId, blockHash)));
  });

  return { sequences, truth: { blocks, firstTransactions, transactions, primaryNetworkBlocks, metricPoints: points }, reads };
}
