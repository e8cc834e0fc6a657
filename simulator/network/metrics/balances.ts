/**
 * ERC-20 balances over time, from a token's transfers. The sample's transfers are drawn without
 * regard to balances, so each address is given the least opening balance that keeps its balance
 * from ever going below zero; for BTC.b, which enters the sample only through the bridge, that
 * opening balance is the address's net bridged amount.
 */
import type { AddressBook, Erc20Move } from "./chain-activity.ts";
import type { AddressBalance } from "../../../src/upstream/types.ts";

/** The least opening balance of each address of a token's transfers that keeps every balance at zero or more. */
export function openingBalances(moves: readonly Erc20Move[]): Map<number, bigint> {
  const net = new Map<number, bigint>();
  const opening = new Map<number, bigint>();
  for (const move of moves) {
    const sender = (net.get(move.from) ?? 0n) - move.value;
    net.set(move.from, sender);
    if (-sender > (opening.get(move.from) ?? 0n)) opening.set(move.from, -sender);
    net.set(move.to, (net.get(move.to) ?? 0n) + move.value);
  }
  return opening;
}

export interface HolderQuery {
  threshold: bigint;
  /** Unix seconds; both ends inclusive, either open. */
  start: number | undefined;
  end: number | undefined;
}

/**
 * Addresses whose balance was above the threshold at some time within [start, end] (a balance
 * held when the window opens counts), with their balance at the end of the window, largest first.
 */
export function holders(
  moves: readonly Erc20Move[],
  opening: ReadonlyMap<number, bigint>,
  query: HolderQuery,
  book: AddressBook,
): AddressBalance[] {
  const { threshold, start, end } = query;
  if (start !== undefined && end !== undefined && start > end) return [];
  const balance = new Map(opening);
  const peak = new Map<number, bigint>();
  const raise = (id: number) => {
    const held = balance.get(id) ?? 0n;
    if (held > (peak.get(id) ?? 0n)) peak.set(id, held);
  };
  let open = false;
  const openWindow = () => {
    open = true;
    for (const id of balance.keys()) raise(id);
  };
  if (start === undefined) openWindow();
  for (const move of moves) {
    if (end !== undefined && move.timestamp > end) break;
    if (!open && move.timestamp >= start!) openWindow();
    balance.set(move.from, (balance.get(move.from) ?? 0n) - move.value);
    balance.set(move.to, (balance.get(move.to) ?? 0n) + move.value);
    if (open) raise(move.to);
  }
  if (!open) openWindow();
  const found = [...peak].filter(([, held]) => held > threshold).map(([id]) => ({ id, latest: balance.get(id) ?? 0n }));
  return ranked(found.map(({ id, latest }) => ({ address: book.address(id), amount: latest })));
}

/** Addresses whose net bridged amount is above the threshold, largest first. */
export function bridged(opening: ReadonlyMap<number, bigint>, threshold: bigint, book: AddressBook): AddressBalance[] {
  const found = [...opening].filter(([, amount]) => amount > threshold);
  return ranked(found.map(([id, amount]) => ({ address: book.address(id), amount })));
}

function ranked(entries: { address: string; amount: bigint }[]): AddressBalance[] {
  return entries
    .sort((a, b) => (a.amount === b.amount ? (a.address < b.address ? -1 : 1) : a.amount > b.amount ? -1 : 1))
    .map(({ address, amount }) => ({ address, sortKey: amount.toString() }));
}
