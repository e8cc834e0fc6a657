/**
 * What a chain's transactions did, block by block: who took part and who sent (in transactions
 * and token transfers), which contracts were created and by whom, gas prices and fees, and every
 * ERC-20 transfer. Read once from the summaries of the chain's transactions, which come from the
 * same plans as the records the Data API serves, so that metrics and records always agree.
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { ZERO_ADDRESS } from "../evm-transactions/catalog.ts";
import type { ChainTransactions, SimulatedChain } from "../index.ts";

/** Numbers for addresses, shared by every chain so that sets of them can be merged across chains. */
export class AddressBook {
  private readonly ids = new Map<string, number>();
  private readonly addresses: string[] = [];

  id(address: string): number {
    const key = address.toLowerCase();
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.addresses.length;
      this.ids.set(key, id);
      this.addresses.push(key);
    }
    return id;
  }

  address(id: number): string {
    return this.addresses[id]!;
  }
}

/** Lists of address ids, one per block: block n's ids are `ids[offsets[n]]` up to `ids[offsets[n + 1]]`. */
export interface BlockIdLists {
  offsets: Uint32Array;
  ids: Uint32Array;
}

export interface Erc20Move {
  timestamp: number;
  from: number;
  to: number;
  value: bigint;
}

export interface TransactionActivity {
  /** Addresses in the from or to field of a transaction or of an ERC-20, ERC-721 or ERC-1155 transfer. */
  participants: BlockIdLists;
  /** Addresses in the from field of a transaction or of a transfer. */
  senders: BlockIdLists;
  /** The from field of each contract creation trace (CREATE, CREATE2, CREATE3) that was not reverted. */
  deployers: BlockIdLists;
  /** Contracts created per block. */
  contracts: Uint16Array;
  /** Per block, in wei: the sum of gas used times gas price, the sum and the largest of the gas prices. */
  fees: bigint[];
  gasPriceSum: bigint[];
  gasPriceMax: bigint[];
  /** ERC-20 transfers by token contract (lower case), oldest first. */
  erc20: Map<string, Erc20Move[]>;
}

/** Blocks read between two yields, so that a long scan does not hold up other requests. */
const BLOCKS_PER_SLICE = 25;

class IdListBuilder {
  private readonly offsets: number[] = [0];
  private readonly ids: number[] = [];
  /** Per id, the block it was last added in plus one (0: never), so that a block lists an id once. */
  private addedIn = new Uint32Array(1024);

  add(id: number): void {
    const block = this.offsets.length;
    if (id >= this.addedIn.length) {
      const grown = new Uint32Array(Math.max(2 * this.addedIn.length, id + 1));
      grown.set(this.addedIn);
      this.addedIn = grown;
    }
    if (this.addedIn[id] === block) return;
    this.addedIn[id] = block;
    this.ids.push(id);
  }

  endBlock(): void {
    this.offsets.push(this.ids.length);
  }

  build(): BlockIdLists {
    return { offsets: Uint32Array.from(this.offsets), ids: Uint32Array.from(this.ids) };
  }
}

export function blockIds(lists: BlockIdLists, block: number): Uint32Array {
  return lists.ids.subarray(lists.offsets[block]!, lists.offsets[block + 1]!);
}

export async function scanTransactions(
  chain: SimulatedChain,
  transactions: ChainTransactions,
  book: AddressBook,
  /** The blocks read, from genesis: the chain's when the scan starts, however it grows meanwhile. */
  count = chain.blocks.count,
): Promise<TransactionActivity> {
  const { blocks } = chain;
  const participants = new IdListBuilder();
  const senders = new IdListBuilder();
  const deployers = new IdListBuilder();
  const contracts = new Uint16Array(count);
  const fees: bigint[] = [];
  const gasPriceSum: bigint[] = [];
  const gasPriceMax: bigint[] = [];
  const erc20 = new Map<string, Erc20Move[]>();
  // Both sides of a transaction or transfer take part and its from side sends; mints come from the
  // zero address, which is nobody's.
  const parties = (from: string, to: string) => {
    if (from !== ZERO_ADDRESS) {
      const sender = book.id(from);
      participants.add(sender);
      senders.add(sender);
    }
    if (to !== ZERO_ADDRESS) participants.add(book.id(to));
  };

  for (let number = 0; number < count; number++) {
    if (number % BLOCKS_PER_SLICE === 0) await yieldToEventLoop();
    const timestamp = blocks.blockTimestamp(number);
    let blockFees = 0n;
    let priceSum = 0n;
    let priceMax = 0n;
    for (const transaction of transactions.blockSummaries(number)!) {
      parties(transaction.from, transaction.to);
      const price = transaction.gasPrice;
      blockFees += BigInt(transaction.gasUsed) * price;
      priceSum += price;
      if (price > priceMax) priceMax = price;
      for (const transfer of transaction.tokenTransfers) {
        parties(transfer.from, transfer.to);
        if (transfer.standard !== "ERC-20") continue;
        let moves = erc20.get(transfer.token);
        if (moves === undefined) erc20.set(transfer.token, (moves = []));
        moves.push({ timestamp, from: book.id(transfer.from), to: book.id(transfer.to), value: BigInt(transfer.value) });
      }
      for (const creation of transaction.contractCreations) {
        if (creation.reverted) continue;
        contracts[number]!++;
        deployers.add(book.id(creation.deployer));
      }
    }
    participants.endBlock();
    senders.endBlock();
    deployers.endBlock();
    fees.push(blockFees);
    gasPriceSum.push(priceSum);
    gasPriceMax.push(priceMax);
  }
  return {
    participants: participants.build(),
    senders: senders.build(),
    deployers: deployers.build(),
    contracts,
    fees,
    gasPriceSum,
    gasPriceMax,
    erc20,
  };
}
