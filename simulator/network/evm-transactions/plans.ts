/**
 * What each transaction does, drawn from a small integer PRNG seeded by (chain salt, block,
 * index). Cheap enough to redraw every transaction of a chain when the address index is built,
 * and again whenever a record is served, so nothing but the index is stored.
 */
import type { components } from "../../../src/upstream/contract/data-api.ts";
import { ZERO_ADDRESS, type ChainCatalog, type Erc20Contract, type NftCollection } from "./catalog.ts";

type Schemas = components["schemas"];
export type CallType = Schemas["TransactionMethodType"];
export type InternalCallType = Schemas["InternalTransactionOpCall"];
export type IcmDirection = Schemas["TransactionDirectionType"];

export const NATIVE_TRANSFER_GAS = 21_000;

export function mix32(value: number): number {
  let h = value | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return h >>> 0;
}

/** mulberry32, seeded from the chain salt and the transaction's place; a class, so that the one made per transaction shares its methods. */
export class TxRandom {
  private state: number;

  constructor(salt: number, block: number, index: number, stream = 0) {
    this.state = mix32(salt ^ mix32(block + mix32(index * 4 + stream + 0x9e3779b9)));
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = Math.imul(this.state ^ (this.state >>> 15), this.state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** `bytes` random bytes as lowercase hex, without 0x. */
  hex(bytes: number): string {
    let text = "";
    for (let i = 0; i < bytes; i += 4) text += (Math.floor(this.next() * 4294967296) >>> 0).toString(16).padStart(8, "0");
    return text.slice(0, bytes * 2);
  }
}

export interface Method {
  callType: CallType;
  methodHash: string;
  methodName: string;
}

export interface Erc20Move {
  token: Erc20Contract;
  from: string;
  to: string;
  value: string;
}

export interface Erc721Move {
  collection: NftCollection;
  from: string;
  to: string;
  tokenId: number;
}

export interface Erc1155Move {
  collection: NftCollection;
  from: string;
  to: string;
  tokenId: number;
  value: string;
}

export interface InternalCall {
  type: InternalCallType;
  from: string;
  to: string;
  value: string;
  reverted: boolean;
  /** Share of the transaction's gas used by this call. */
  gasShare: number;
}

export interface IcmMessage {
  direction: IcmDirection;
  messageId: string;
  /** Index into the chain's peers: the other side of the message. */
  peer: number;
}

export type TxKind = "native" | "erc20" | "swap" | "erc721" | "erc1155" | "batch" | "wrap" | "create" | "icm";

export interface TxPlan {
  kind: TxKind;
  failed: boolean;
  from: string;
  to: string;
  /** Native value in wei, decimal. */
  value: string;
  method: Method;
  erc20: Erc20Move[];
  erc721: Erc721Move[];
  erc1155: Erc1155Move[];
  internal: InternalCall[];
  icm: IcmMessage | undefined;
  /** Relative share of the block's gas above the 21,000 every transaction pays; 0 for plain transfers. */
  gasWeight: number;
  /** gasLimit = gasUsed × this. */
  gasLimitFactor: number;
  /** Type 0 (legacy gas price) instead of type 2 (EIP-1559). */
  legacy: boolean;
  tipGwei: number;
  /** Seeds the call data words. */
  inputSeed: number;
}

const METHODS = {
  nativeTransfer: { callType: "NATIVE_TRANSFER", methodHash: "", methodName: "Native Transfer" },
  creation: { callType: "CONTRACT_CREATION", methodHash: "", methodName: "Contract Created" },
  transfer: call("0xa9059cbb", "transfer(address,uint256)"),
  transferFrom: call("0x23b872dd", "transferFrom(address,address,uint256)"),
  swapTokens: call("0x38ed1739", "swapExactTokensForTokens(uint256,uint256,address[],address,uint256)"),
  swapNativeIn: call("0xa2a1623d", "swapExactAVAXForTokens(uint256,address[],address,uint256)"),
  swapNativeOut: call("0x676528d1", "swapExactTokensForAVAX(uint256,uint256,address[],address,uint256)"),
  safeMint: call("0xa1448194", "safeMint(address,uint256)"),
  safeTransfer721: call("0x42842e0e", "safeTransferFrom(address,address,uint256)"),
  safeTransfer1155: call("0xf242432a", "safeTransferFrom(address,address,uint256,uint256,bytes)"),
  safeBatchTransfer1155: call("0x2eb2c2d6", "safeBatchTransferFrom(address,address,uint256[],uint256[],bytes)"),
  aggregate3: call("0x82ad56cb", "aggregate3((address,bool,bytes)[])"),
  deposit: call("0xd0e30db0", "deposit()"),
  withdraw: call("0x2e1a7d4d", "withdraw(uint256)"),
  deploy: call("0xcdcb760a", "deploy(bytes32,bytes)"),
  sendMessage: call("0x62448850", "sendCrossChainMessage((bytes32,address,(address,uint256),uint256,address[],bytes))"),
  receiveMessage: call("0xccb5f809", "receiveCrossChainMessage(uint32,address)"),
} satisfies Record<string, Method>;

function call(methodHash: string, methodName: string): Method {
  return { callType: "CONTRACT_CALL", methodHash, methodName };
}

/** Cumulative shares of the kinds of transaction, in draw order. */
const KIND_SHARES: readonly [TxKind, number][] = [
  ["native", 0.3],
  ["erc20", 0.52],
  ["swap", 0.66],
  ["erc721", 0.75],
  ["erc1155", 0.82],
  ["batch", 0.9],
  ["wrap", 0.95],
  ["create", 0.98],
  ["icm", 1],
];

function kindOf(draw: number): TxKind {
  for (const [kind, upTo] of KIND_SHARES) if (draw < upTo) return kind;
  return "icm";
}

const GAS_WEIGHTS: Record<TxKind, number> = {
  native: 0,
  erc20: 1,
  swap: 3,
  erc721: 2,
  erc1155: 2,
  batch: 3,
  wrap: 0.6,
  create: 5,
  icm: 4,
};

export interface PlannerOptions {
  catalog: ChainCatalog;
  /** Interchain messages are drawn only on chains with the teleporter feature. */
  interchain: boolean;
  /** How many other chains a message can come from or go to. */
  peerCount: number;
}

export class Planner {
  constructor(
    private readonly salt: number,
    private readonly options: PlannerOptions,
  ) {}

  /**
   * The plans of a block's transactions. The block's gas above 21,000 per transaction must go
   * to some contract call, so a block of plain transfers with gas left over gets a deposit
   * to the wrapped native token as its last transaction.
   */
  block(number: number, txCount: number, gasUsed: number): TxPlan[] {
    const plans: TxPlan[] = [];
    for (let index = 0; index < txCount; index++) plans.push(this.plan(new TxRandom(this.salt, number, index)));
    const spare = gasUsed - NATIVE_TRANSFER_GAS * txCount;
    if (txCount > 0 && spare > 0 && plans.every((plan) => plan.gasWeight === 0)) {
      plans[txCount - 1] = this.plan(new TxRandom(this.salt, number, txCount - 1, 1), "wrap");
    }
    return plans;
  }

  private plan(random: TxRandom, forced?: TxKind): TxPlan {
    const draw = random.next();
    let kind = forced ?? kindOf(draw);
    if (kind === "icm" && (!this.options.interchain || this.options.peerCount === 0)) kind = "erc20";
    const from = this.account(random);
    const plan: TxPlan = {
      kind,
      failed: false,
      from,
      to: from,
      value: "0",
      method: METHODS.nativeTransfer,
      erc20: [],
      erc721: [],
      erc1155: [],
      internal: [],
      icm: undefined,
      gasWeight: GAS_WEIGHTS[kind] * (0.5 + random.next()),
      gasLimitFactor: 1.05 + random.next() * 0.55,
      legacy: random.chance(0.2),
      tipGwei: random.int(0, 3),
      inputSeed: random.int(0, 0x7fffffff),
    };
    this.fill(plan, random);
    if (kind !== "native" && kind !== "create" && random.chance(0.05)) {
      // A reverted transaction emits no logs; every call it made is reverted with it.
      plan.failed = true;
      plan.erc20 = [];
      plan.erc721 = [];
      plan.erc1155 = [];
      plan.icm = undefined;
      if (plan.internal.length === 0) plan.internal.push(internal(random, "CALL", plan.from, plan.to, "0"));
      for (const item of plan.internal) item.reverted = true;
      if (random.chance(0.3)) plan.gasLimitFactor = 1;
    }
    return plan;
  }

  private fill(plan: TxPlan, random: TxRandom): void {
    const { catalog } = this.options;
    const from = plan.from;
    switch (plan.kind) {
      case "native":
        plan.to = this.otherAccount(random, from);
        plan.value = amount(random, 18);
        return;
      case "erc20": {
        const token = this.token(random);
        plan.to = token.address;
        if (random.chance(0.15)) {
          // A spender moves someone else's tokens.
          plan.method = METHODS.transferFrom;
          const owner = this.otherAccount(random, from);
          plan.erc20.push({ token, from: owner, to: this.otherAccount(random, owner), value: amount(random, token.decimals) });
        } else {
          plan.method = METHODS.transfer;
          plan.erc20.push({ token, from, to: this.otherAccount(random, from), value: amount(random, token.decimals) });
        }
        return;
      }
      case "swap": {
        const pair = random.pick(catalog.pairs);
        const router = catalog.router;
        const wrapped = catalog.wrappedNative;
        plan.to = router;
        const variant = random.int(0, 2);
        if (variant === 0) {
          const tokenIn = this.token(random);
          const tokenOut = this.otherToken(random, tokenIn);
          plan.method = METHODS.swapTokens;
          plan.erc20.push({ token: tokenIn, from, to: pair, value: amount(random, tokenIn.decimals) });
          plan.erc20.push({ token: tokenOut, from: pair, to: from, value: amount(random, tokenOut.decimals) });
          plan.internal.push(internal(random, "STATICCALL", router, pair, "0"), internal(random, "CALL", router, pair, "0"));
        } else if (variant === 1) {
          const tokenOut = this.otherToken(random, wrapped);
          plan.method = METHODS.swapNativeIn;
          plan.value = amount(random, 18);
          plan.erc20.push({ token: wrapped, from: router, to: pair, value: plan.value });
          plan.erc20.push({ token: tokenOut, from: pair, to: from, value: amount(random, tokenOut.decimals) });
          plan.internal.push(
            internal(random, "CALL", router, wrapped.address, plan.value),
            internal(random, "CALL", router, pair, "0"),
          );
        } else {
          const tokenIn = this.otherToken(random, wrapped);
          const out = amount(random, 18);
          plan.method = METHODS.swapNativeOut;
          plan.erc20.push({ token: tokenIn, from, to: pair, value: amount(random, tokenIn.decimals) });
          plan.erc20.push({ token: wrapped, from: pair, to: router, value: out });
          plan.internal.push(
            internal(random, "CALL", router, pair, "0"),
            internal(random, "CALL", router, wrapped.address, "0"),
            internal(random, "CALL", wrapped.address, router, out),
            internal(random, "CALL", router, from, out),
          );
        }
        return;
      }
      case "erc721": {
        const collection = random.pick(catalog.erc721);
        const tokenId = random.int(1, collection.supply);
        plan.to = collection.address;
        if (random.chance(0.25)) {
          plan.method = METHODS.safeMint;
          plan.erc721.push({ collection, from: ZERO_ADDRESS, to: from, tokenId });
        } else {
          plan.method = METHODS.safeTransfer721;
          plan.erc721.push({ collection, from, to: this.otherAccount(random, from), tokenId });
        }
        return;
      }
      case "erc1155": {
        const collection = random.pick(catalog.erc1155);
        const recipient = this.otherAccount(random, from);
        plan.to = collection.address;
        const items = random.chance(0.7) ? 1 : random.int(2, 3);
        plan.method = items === 1 ? METHODS.safeTransfer1155 : METHODS.safeBatchTransfer1155;
        for (let item = 0; item < items; item++) {
          plan.erc1155.push({
            collection,
            from,
            to: recipient,
            tokenId: random.int(1, collection.supply),
            value: String(random.int(1, 20)),
          });
        }
        return;
      }
      case "batch": {
        plan.to = catalog.multicall;
        plan.method = METHODS.aggregate3;
        let total = 0n;
        const payouts = random.int(2, 4);
        for (let item = 0; item < payouts; item++) {
          const value = amount(random, 18);
          const payout = internal(random, "CALL", catalog.multicall, this.otherAccount(random, from), value);
          // aggregate3 lets a sub-call fail without failing the batch.
          payout.reverted = random.chance(0.2);
          plan.internal.push(payout);
          total += BigInt(value);
        }
        plan.value = total.toString();
        plan.internal.push(internal(random, "STATICCALL", catalog.multicall, this.token(random).address, "0"));
        if (random.chance(0.3)) plan.internal.push(internal(random, "DELEGATECALL", catalog.multicall, catalog.factory, "0"));
        if (random.chance(0.05)) plan.internal.push(internal(random, "CALLCODE", catalog.multicall, catalog.router, "0"));
        return;
      }
      case "wrap": {
        const wrapped = catalog.wrappedNative.address;
        plan.to = wrapped;
        if (random.chance(0.6)) {
          plan.method = METHODS.deposit;
          plan.value = amount(random, 18);
        } else {
          plan.method = METHODS.withdraw;
          plan.internal.push(internal(random, "CALL", wrapped, from, amount(random, 18)));
        }
        return;
      }
      case "create": {
        const created = `0x${random.hex(20)}`;
        if (random.chance(0.5)) {
          plan.method = METHODS.creation;
          plan.to = created;
          plan.internal.push(internal(random, "CREATE", from, created, "0"));
        } else {
          plan.method = METHODS.deploy;
          plan.to = catalog.factory;
          plan.internal.push(internal(random, random.chance(0.5) ? "CREATE2" : "CREATE3", catalog.factory, created, "0"));
        }
        return;
      }
      case "icm": {
        plan.to = catalog.teleporter;
        const sending = random.chance(0.6);
        plan.method = sending ? METHODS.sendMessage : METHODS.receiveMessage;
        plan.icm = {
          direction: sending ? "SOURCE_TRANSACTION" : "DESTINATION_TRANSACTION",
          messageId: `0x${random.hex(32)}`,
          peer: random.int(0, this.options.peerCount - 1),
        };
        if (!sending) plan.internal.push(internal(random, "CALL", catalog.teleporter, this.otherAccount(random, from), "0"));
        return;
      }
    }
  }

  /** An account, skewed towards the first ones of the pool. */
  private account(random: TxRandom): string {
    const { accounts } = this.options.catalog;
    return accounts[Math.floor(accounts.length * random.next() ** 2)]!;
  }

  private otherAccount(random: TxRandom, not: string): string {
    const first = this.account(random);
    if (first !== not) return first;
    const { accounts } = this.options.catalog;
    return accounts[(accounts.indexOf(not) + 1 + random.int(0, accounts.length - 2)) % accounts.length]!;
  }

  private token(random: TxRandom): Erc20Contract {
    const { erc20 } = this.options.catalog;
    let draw = random.next() * erc20.reduce((total, token) => total + token.weight, 0);
    for (const token of erc20) {
      draw -= token.weight;
      if (draw < 0) return token;
    }
    return erc20[erc20.length - 1]!;
  }

  private otherToken(random: TxRandom, not: Erc20Contract): Erc20Contract {
    const token = this.token(random);
    if (token !== not) return token;
    const { erc20 } = this.options.catalog;
    return erc20[(erc20.indexOf(not) + 1) % erc20.length]!;
  }
}

function internal(random: TxRandom, type: InternalCallType, from: string, to: string, value: string): InternalCall {
  return { type, from, to, value, reverted: false, gasShare: 0.05 + random.next() * 0.3 };
}

/** An amount in base units: 1 to 99,999 units of a small power of ten below one token. */
function amount(random: TxRandom, decimals: number): string {
  const mantissa = random.int(1, 99_999);
  const exponent = random.int(Math.max(0, decimals - 7), Math.max(0, decimals - 1));
  return `${mantissa}${"0".repeat(exponent)}`;
}

/** Every address a transaction touches: its sender and receiver and both sides of each transfer and call. */
export function participants(plan: TxPlan): string[] {
  const found = [plan.from];
  if (plan.to !== plan.from) found.push(plan.to);
  for (const list of [plan.erc20, plan.erc721, plan.erc1155, plan.internal]) {
    for (const item of list) {
      if (!found.includes(item.from)) found.push(item.from);
      if (!found.includes(item.to)) found.push(item.to);
    }
  }
  // Mints come from the zero address, which is nobody's.
  const zero = found.indexOf(ZERO_ADDRESS);
  if (zero >= 0) found.splice(zero, 1);
  return found;
}

/** True when the address is the sender or receiver of the item: the address-scoped list's filter. */
export function touches(item: { from: string; to: string }, address: string): boolean {
  return item.from === address || item.to === address;
}
