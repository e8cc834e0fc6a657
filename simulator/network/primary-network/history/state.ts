/**
 * What the generation of a primary network's history has made so far and draws from: the seeded
 * random source, the wallets, the records of each chain, the unspent UTXOs, the stakers, subnets
 * and L1 validators, and the history's clock. Every part of the generation reads and extends it.
 */
import type { ChainBlocks } from "../../blocks.ts";
import type { NetworkName } from "../../chains.ts";
import { encodeCb58, sha256 } from "../../ids.ts";
import { createRandom, type Random } from "../../random.ts";
import { encodeBech32 } from "../../../../src/upstream/bech32.ts";
import type {
  Asset,
  ChainKey,
  PTransaction,
  SimBlock,
  SimL1Validator,
  SimTransaction,
  SimUtxo,
  SimVertex,
  Wallet,
} from "../model.ts";
import { ADDRESS_HRP, AVAX_ASSET_IDS, DAY, INITIAL_SUPPLY } from "./parameters.ts";

const WALLETS = 12;
/** How far back the history starts. */
const HISTORY_DAYS = 40;

export interface GenerationInput {
  seed: string;
  network: NetworkName;
  headTime: number;
  chainIds: Record<ChainKey, string>;
  /** The simulated C-Chain, whose blocks hold the atomic transactions. */
  cBlocks: ChainBlocks;
}

export interface Staker {
  tx: PTransaction;
  nodeId: string;
  owner: Wallet;
  start: number;
  end: number;
  stake: SimUtxo[];
  amount: bigint;
  /** The validator a delegation is made to. */
  validator?: Staker;
  rewarded: boolean;
}

export interface Subnet {
  subnetId: string;
  owner: Wallet;
  chains: string[];
  converted: boolean;
  transformed: boolean;
  validators: { nodeId: string; end: number; removed: boolean }[];
}

/** Where an X-Chain transaction sits: a linear block, or a vertex of the DAG before it. */
export interface XPlace {
  block?: SimBlock;
  vertex?: SimVertex;
}

/** A step's transaction, ready to be made once the step has its block, vertex or C-Chain block number. */
export type Plan<Place> = (place: Place) => SimTransaction;

export class HistoryState {
  readonly random: Random;
  readonly wallets: Wallet[];
  readonly avax: Asset;
  readonly assets: Asset[] = [];
  readonly transactions: Record<ChainKey, SimTransaction[]> = { P: [], X: [], C: [] };
  readonly blocks: Record<"P" | "X", SimBlock[]> = { P: [], X: [] };
  readonly vertices: SimVertex[] = [];
  readonly utxos: SimUtxo[] = [];
  /** Unspent UTXOs by the chain they can be spent on, then by owner. */
  readonly unspent: Record<ChainKey, Map<string, Set<SimUtxo>>> = { P: new Map(), X: new Map(), C: new Map() };
  readonly stakers: Staker[] = [];
  readonly subnets: Subnet[] = [];
  readonly l1Validators: SimL1Validator[] = [];
  readonly genesisNodeIds: string[];
  /** The history's clock, in Unix seconds: the time of the step being made. */
  now: number;
  /** Counts the transactions made, for their ids. */
  sequence = 0;
  supply = INITIAL_SUPPLY;
  accruedL1Fees = 0;
  /** When the X-Chain moves from DAG vertices to linear blocks. */
  xLinearFrom = 0;

  constructor(readonly input: GenerationInput) {
    const { seed, network } = input;
    this.random = createRandom(seed, `primary-network:${network}`);
    this.now = input.headTime - HISTORY_DAYS * DAY;
    this.avax = { assetId: AVAX_ASSET_IDS[network], name: "Avalanche", symbol: "AVAX", denomination: 9, type: "secp256k1" };
    this.assets.push(this.avax);
    this.wallets = Array.from({ length: WALLETS }, (_, index) => {
      const key = this.digest(`wallet:${index}`);
      return {
        address: encodeBech32(ADDRESS_HRP[network], key.subarray(0, 20)),
        evmAddress: `0x${this.digest(`wallet-evm:${index}`).subarray(0, 20).toString("hex")}`,
        publicKey: `0x02${key.toString("hex")}`,
      };
    });
    this.genesisNodeIds = Array.from({ length: 5 }, (_, index) => this.nodeId(`genesis:${index}`));
  }

  get network(): NetworkName {
    return this.input.network;
  }

  /** The wallet of an address of the sample. */
  wallet(address: string): Wallet {
    return this.wallets.find((wallet) => wallet.address === address)!;
  }

  credential(wallet: Wallet, label: string) {
    return {
      signature: `0x${this.digest(`signature:${label}`).toString("hex")}${this.digest(`signature2:${label}`).toString("hex")}00`,
      publicKey: wallet.publicKey,
    };
  }

  nodeId(label: string): string {
    return `NodeID-${encodeCb58(this.digest(`node:${label}`).subarray(0, 20))}`;
  }

  id(label: string): string {
    return encodeCb58(this.digest(label));
  }

  digest(label: string): Buffer {
    return sha256(`${this.input.seed}\0${this.input.network}\0${label}`);
  }

  pick<T>(items: readonly T[]): T | undefined {
    return items.length === 0 ? undefined : items[this.random.int(0, items.length - 1)];
  }
}
