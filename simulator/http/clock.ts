import type { ChainHead, SampleNetwork } from "../network/index.ts";

/** The longest step one `advance` may take: a day of blocks takes a few seconds to generate and index. */
export const MAX_ADVANCE_SECONDS = 86_400;

export interface ClockState {
  /** The simulator's "now": the head time plus the time the clock has moved on, in Unix milliseconds. */
  nowMs: number;
  now: string;
  /** Whether the clock follows the wall clock (live mode) or moves only when told. */
  live: boolean;
  /** How far the clock has moved on from the head time, in seconds. */
  elapsedSeconds: number;
  heads: ChainHead[];
}

/**
 * The simulator's clock: the head time plus the seconds it was told to advance, plus, in live mode,
 * the wall-clock time since it started. The network catches up with it (`sync`) before each
 * answer, so that everything a request reads is as of one time.
 */
export class SimulatorClock {
  private readonly headTimeMs: number;
  private readonly startedAt = performance.now();
  private advancedMs = 0;

  constructor(
    private readonly network: SampleNetwork,
    readonly live: boolean,
  ) {
    this.headTimeMs = network.options.headTime * 1000;
  }

  nowMs(): number {
    const wallMs = this.live ? Math.floor(performance.now() - this.startedAt) : 0;
    return this.headTimeMs + this.advancedMs + wallMs;
  }

  /** Brings the network up to the clock; true when its data changed. */
  sync(): boolean {
    return this.network.advanceTo(this.nowMs());
  }

  /** @throws RangeError unless 0 < seconds <= MAX_ADVANCE_SECONDS. */
  advance(seconds: number): void {
    if (!Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_ADVANCE_SECONDS) {
      throw new RangeError(`advanceSeconds must be a number greater than 0 and at most ${MAX_ADVANCE_SECONDS}`);
    }
    this.advancedMs += Math.round(seconds * 1000);
  }

  state(): ClockState {
    const nowMs = this.nowMs();
    return {
      nowMs,
      now: new Date(nowMs).toISOString(),
      live: this.live,
      elapsedSeconds: (nowMs - this.headTimeMs) / 1000,
      heads: this.network.heads(),
    };
  }
}

/** The body of `POST /_simulator/clock`: `{"advanceSeconds": 30}`. @throws RangeError when it is not that. */
export function readAdvanceSeconds(body: unknown): number {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new RangeError('body must be a JSON object such as {"advanceSeconds": 30}');
  }
  const unknown = Object.keys(body).filter((key) => key !== "advanceSeconds");
  if (unknown.length > 0) throw new RangeError(`unknown field ${unknown[0]}; the only field is advanceSeconds`);
  const { advanceSeconds } = body as { advanceSeconds?: unknown };
  if (typeof advanceSeconds !== "number") throw new RangeError("advanceSeconds must be a number");
  return advanceSeconds;
}
