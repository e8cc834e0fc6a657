/**
 * What a chain's transactions did, block by block: who took part and who sent (in transactions
 * and token transfers), which contracts were created and by whom, gas prices and fees, and every
 * ERC-20 transfer. Read once from the chain's own transaction records, the ones the Data API
 * serves, so that metrics and records always agree.
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

const CREATE_CALLS = new Set(["CREATE", "CREATE2", "CREATE3"]);
/** Blocks read between two yields, so that a long scan does not hold up other requests. */
const BLOCKS_PER_SLICE = 25;

class IdListBuilder {
  private readonly offsets: number[] = [0];
  private readonly ids: number[] = [];
  private readonly block = new Set<number>();

  add(id: number): void {
    this.block.add(id);
  }

  endBlock(): void {
    this.ids.push(...this.block);
    this.block.clear();
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
): Promise<TransactionActivity> {
  const { blocks } = chain;
  const participants = new IdListBuilder();
  const senders = new IdListBuilder();
  const deployers = new IdListBuilder();
  const contracts = new Uint16Array(blocks.count);
  const fees: bigint[] = [];
  const gasPriceSum: bigint[] = [];
  const gasPriceMax: bigint[] = [];
  const erc20 = new Map<string, Erc20Move[]>();
  // Mints come from the zero address, which is nobody's.
  const take = (list: IdListBuilder, address: string) => {
    if (address !== ZERO_ADDRESS) list.add(book.id(address));
  };

  for (let number = 0; number < blocks.count; number++) {
    if (number % BLOCKS_PER_SLICE === 0) await yieldToEventLoop();
    const list = transactions.blockTransactions(number)!;
    const timestamp = blocks.blockTimestamp(number);
    let blockFees = 0n;
    let priceSum = 0n;
    let priceMax = 0n;
    for (let index = 0; index < list.length; index++) {
      const native = list.at(index)!;
      take(participants, native.from.address);
      take(participants, native.to.address);
      take(senders, native.from.address);
      const price = BigInt(native.gasPrice);
      blockFees += BigInt(native.gasUsed) * price;
      priceSum += price;
      if (price > priceMax) priceMax = price;
      // A native transfer emits no logs and makes no calls: its record is all there is.
      if (native.method?.callType === "NATIVE_TRANSFER") continue;
      const view = transactions.transaction(native.txHash)!;
      for (const transfer of [...(view.erc20Transfers ?? []), ...(view.erc721Transfers ?? []), ...(view.erc1155Transfers ?? [])]) {
        take(participants, transfer.from.address);
        take(participants, transfer.to.address);
        take(senders, transfer.from.address);
      }
      for (const transfer of view.erc20Transfers ?? []) {
        const token = transfer.erc20Token.address.toLowerCase();
        let moves = erc20.get(token);
        if (moves === undefined) erc20.set(token, (moves = []));
        moves.push({ timestamp, from: book.id(transfer.from.address), to: book.id(transfer.to.address), value: BigInt(transfer.value) });
      }
      for (const call of view.internalTransactions ?? []) {
        if (!CREATE_CALLS.has(call.internalTxType) || call.isReverted) continue;
        contracts[number]!++;
        take(deployers, call.from.address);
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
