/** The shapes shared by the bench of `npm run bench:hostile`, its attacker processes and their rows. */
import type { Pool } from "undici";
import type { Tally } from "./client.ts";

/** What the bench reads from the simulator before the attacks (bench/hostile/fixtures.ts). */
export interface Fixtures {
  /** A RegisterL1ValidatorTx on FUJI: its Warp message has a BLS signature to verify. */
  registerL1ValidatorTxHash: string;
  /** An address with C-Chain transactions on `exportDay`, for export jobs. */
  evmAddress: string;
  exportDay: string;
  /** Blocks the legitimate load loads (latest-blocks' page and their parents). */
  cachedBlocks: { chainId: string; hash: string }[];
  /** The latest-blocks reference operation: a costly query that legitimate callers send. */
  costlyQuery: { query: string; variables: Record<string, unknown> };
}

export interface AttackPlan {
  row: number;
  gatewayUrl: string;
  seconds: number;
  fixtures: Fixtures;
}

export interface AttackReport {
  row: number;
  /** Answers (or socket failures) by outcome: status and `extensions.code`. */
  outcomes: Record<string, number>;
  /** Figures particular to the attack. */
  figures: Record<string, number | string>;
  /**
   * Failures of what a legitimate caller did from the attacker's process (a fresh caller's
   * subscription once the attacker holds the pool), by outcome: the bench counts them as
   * legitimate errors.
   */
  legitErrors?: Record<string, number>;
}

export interface AttackContext {
  row: number;
  origin: string;
  path: string;
  address: string;
  seconds: number;
  /** `performance.now()` time at which every loop stops. */
  deadline: number;
  fixtures: Fixtures;
  tally: Tally;
  figures: Record<string, number | string>;
  /** A pool of `connections` from the attacker's address (or `address`); closed when the attack ends. */
  pool(connections: number, address?: string): Pool;
  /** Failures of a legitimate caller's work done from the attacker's process (AttackReport.legitErrors). */
  legitErrors: Tally;
  /** Called when the attack ends (at the deadline, or when it fails): closes what the attack holds open. */
  onEnd(cleanup: () => void): void;
}

export interface Attack {
  row: number;
  title: string;
  /** Gateway settings the row's scenario needs (beside the defaults). */
  gatewayEnv?: Record<string, string>;
  /**
   * The row's phase gets a simulator of its own started with this environment (such as
   * SIM_LIVE=true, so that subscriptions get events), instead of the run's frozen one.
   */
  simulatorEnv?: Record<string, string>;
  /** Simulator knobs the row's scenario needs during its phase. */
  knobs?: (seconds: number) => Record<string, unknown>;
  /** Work before the measured window (e.g. starting export jobs); its answers are counted too. */
  prepare?(context: AttackContext): Promise<unknown>;
  run(context: AttackContext, prepared: unknown): Promise<void>;
}
