/**
 * Generates the history of one network's primary network, step by step in time: each step is
 * one transaction on the P-, X- or C-Chain that spends UTXOs and emits new ones, so that every
 * UTXO has a creating transaction, and a consuming one once spent. Cross-chain exports leave
 * UTXOs in shared memory that a later import on the destination consumes.
 *
 * The steps are spread over the 40 days up to the head time. The first transactions of each chain
 * work through a list of every transaction type of the contract (in an order that meets their
 * preconditions; a test checks that the default network gets through it); the rest are drawn at
 * random. A staking period is rewarded when it ends. The X-Chain starts as a DAG of vertices and
 * later moves to linear blocks; C-Chain atomic transactions sit in blocks of the simulated C-Chain,
 * so they happen in its time window. After the head time, the history grows live, one step at a time.
 */
import type { Asset, ChainKey, SimBlock, SimL1Validator, SimTransaction, SimUtxo, SimVertex, Wallet } from "../model.ts";
import { rewardStakers } from "./staking.ts";
import { HistoryState, type GenerationInput } from "./state.ts";
import { C_CHAIN_FIRST, genesis, P_CHAIN_FIRST, stepC, stepP, stepX, X_CHAIN_FIRST } from "./steps.ts";

export type { GenerationInput } from "./state.ts";
export { ADDRESS_HRP } from "./parameters.ts";

/** About this share of the steps are C-Chain atomic transactions, all in the C-Chain's time window. */
const C_CHAIN_SHARE = 0.09;
/** The least share of the steps that falls in the C-Chain's time window, however short it is. */
const MIN_C_WINDOW_SHARE = 0.3;
/**
 * After the head time, the time between two steps of the live network, in seconds (drawn
 * uniformly); each is a P- or an X-Chain transaction, as C-Chain atomic transactions need a block
 * of the C-Chain's history.
 */
const LIVE_STEP_SECONDS = { min: 5, max: 15 };
/** How far into the history the X-Chain moves from DAG vertices to linear blocks. */
const X_LINEAR_FROM = 0.35;

export interface PrimaryNetworkHistory {
  wallets: Wallet[];
  avax: Asset;
  /** Per chain, oldest first. */
  transactions: Record<ChainKey, SimTransaction[]>;
  /** P-Chain and linear X-Chain blocks by height. */
  blocks: Record<"P" | "X", SimBlock[]>;
  vertices: SimVertex[];
  utxos: SimUtxo[];
  l1Validators: SimL1Validator[];
  /**
   * Adds the steps due by a time (Unix seconds) after the head time, to the lists above; the same
   * steps whenever and in however many calls it gets there. Returns whether any were added.
   */
  extendTo(time: number): boolean;
}

export function generatePrimaryNetwork(input: GenerationInput): PrimaryNetworkHistory {
  const state = new HistoryState(input);
  generateHistory(state);
  const live = new LiveGrowth(state);
  return {
    wallets: state.wallets,
    avax: state.avax,
    transactions: state.transactions,
    blocks: state.blocks,
    vertices: state.vertices,
    utxos: state.utxos,
    l1Validators: state.l1Validators,
    extendTo: (time) => live.extendTo(time),
  };
}

/** The history up to the head time. */
function generateHistory(state: HistoryState): void {
  const { headTime, cBlocks } = state.input;
  const start = state.now;
  // After the genesis.
  const steps = state.network === "mainnet" ? 359 : 259;
  // C-Chain atomic transactions need a C-Chain block at or after their time, so the steps that
  // can make them fall from the C-Chain's first block (or the history's start) to the head time:
  // spread over the history as evenly as the window allows, yet never fewer than a share of all.
  const windowStart = Math.min(Math.max(start, cBlocks.blockTimestamp(0)), headTime);
  const windowShare = Math.max(MIN_C_WINDOW_SHARE, (headTime - windowStart) / (headTime - start));
  const windowSteps = Math.round(steps * windowShare);
  const earlySteps = steps - windowSteps;
  const cChance = (C_CHAIN_SHARE * steps) / windowSteps;
  state.xLinearFrom = start + Math.floor((headTime - start) * X_LINEAR_FROM);

  genesis(state);
  const queues = { P: [...P_CHAIN_FIRST], X: [...X_CHAIN_FIRST], C: [...C_CHAIN_FIRST] };
  for (let step = 0; step < steps; step++) {
    const inWindow = step >= earlySteps;
    // Each step at a random time within its own slot of its part of the history.
    const [from, to, slot, slots] = inWindow
      ? [windowStart, headTime, step - earlySteps, windowSteps]
      : [start, windowStart, step, earlySteps];
    const planned = from + Math.floor(((to - from) * (slot + state.random.next())) / slots);
    rewardStakers(state, planned);
    state.now = Math.max(state.now + 1, Math.min(planned, headTime));
    const chain: ChainKey = inWindow && state.random.chance(cChance) ? "C" : state.random.chance(0.6) ? "P" : "X";
    const made = chain === "C" ? stepC(state, queues.C) : chain === "X" ? stepX(state, queues.X) : false;
    if (!made) stepP(state, queues.P);
  }
  rewardStakers(state, headTime);
}

/** The history after the head time: a P- or X-Chain step every few seconds of the clock. */
class LiveGrowth {
  /** The time of the next step after the head time, once drawn. */
  private nextStep: number | undefined;

  constructor(private readonly state: HistoryState) {}

  extendTo(time: number): boolean {
    const { state } = this;
    let added = false;
    for (;;) {
      this.nextStep ??=
        Math.max(state.now, state.input.headTime) + state.random.int(LIVE_STEP_SECONDS.min, LIVE_STEP_SECONDS.max);
      const at = this.nextStep;
      if (at > time) return added;
      this.nextStep = undefined;
      rewardStakers(state, at);
      state.now = Math.max(state.now + 1, at);
      const made = state.random.chance(0.4) && stepX(state, []);
      if (!made) stepP(state, []);
      added = true;
    }
  }
}
