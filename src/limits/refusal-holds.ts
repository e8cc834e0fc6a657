/**
 * Refusals held back. A caller refused for its budget (or for holding too many sockets) gets its
 * answer after a delay, its connection unread meanwhile: a client that sends again as soon as it
 * is answered then gets at most one refusal per connection per hold, however fast it sends, and
 * the connection caps bound how many it holds. Answered at once, a refusal is cheap, but a flood
 * of them is not: the sender sets the rate, and every answer (and, after `connection: close`,
 * every new connection) is the gateway's CPU, taken from the callers within their budgets.
 */
import type { Duplex } from "node:stream";
import { LRUCache } from "lru-cache";
import type { RefusalHoldsConfig } from "../config.ts";

/** A repeated refusal's hold doubles this many times at most: up to 8 × the hold. */
const REPEATED_HOLD_DOUBLINGS = 3;
/** Callers whose repeated refusals are remembered; beyond, the least recent is forgotten. */
const REPEATS_REMEMBERED = 10_000;

export class RefusalHolds {
  private holding = 0;
  /**
   * Refusals per caller for a limit that no wait lifts (a socket cap), while they keep coming:
   * forgotten once twice the longest hold passes without one.
   */
  private readonly repeats: LRUCache<string, number>;

  constructor(
    private readonly config: RefusalHoldsConfig,
    /** Told of each refusal held, or answered at once because `maxHeld` were held. */
    private readonly observe: (outcome: "held" | "overflowed") => void = () => {},
  ) {
    this.repeats = new LRUCache({
      max: REPEATS_REMEMBERED,
      ttl: Math.max(1, 2 ** (REPEATED_HOLD_DOUBLINGS + 1) * config.holdMs),
    });
  }

  /** Refusals held now. */
  get held(): number {
    return this.holding;
  }

  /**
   * Calls `answer` after the hold (no longer than `boundMs`, e.g. until the caller's budget
   * refills), or at once when holding is off, `maxHeld` are held or there is no connection to
   * hold (an in-process request). When the connection closes first, `dropped` instead.
   */
  hold(socket: Duplex | undefined, boundMs: number, answer: () => void, dropped?: () => void): void {
    this.holdFor(socket, Math.min(this.config.holdMs, Math.max(0, boundMs)), answer, dropped);
  }

  /**
   * `hold` for a refusal that no wait lifts (a cap the caller is at), whose caller, named by
   * `caller`, may keep asking: each refusal of the same caller is held twice as long as the one
   * before, up to 8 × the hold, until 16 × the hold passes without one, so that the caller's
   * connections, however many the caps let it hold, bring it ever fewer refusals (each one an
   * accept, a request head and a close).
   */
  holdRepeated(caller: string, socket: Duplex | undefined, answer: () => void): void {
    const doublings = this.repeats.get(caller) ?? 0;
    this.repeats.set(caller, Math.min(doublings + 1, REPEATED_HOLD_DOUBLINGS));
    this.holdFor(socket, this.config.holdMs * 2 ** doublings, answer);
  }

  private holdFor(socket: Duplex | undefined, delay: number, answer: () => void, dropped?: () => void): void {
    if (delay <= 0 || socket === undefined) return answer();
    if (socket.destroyed) return dropped?.();
    if (this.holding >= this.config.maxHeld) {
      this.observe("overflowed");
      return answer();
    }
    this.holding += 1;
    this.observe("held");
    let over = false;
    const release = () => {
      if (over) return false;
      over = true;
      this.holding -= 1;
      clearTimeout(timer);
      socket.off("close", closed);
      return true;
    };
    const closed = () => {
      if (release()) dropped?.();
    };
    const timer = setTimeout(() => {
      if (!release()) return;
      if (socket.destroyed) dropped?.();
      else answer();
    }, delay);
    socket.once("close", closed);
  }

  /** `hold` as a promise: resolves when the answer may be sent (also when the connection closed first). */
  wait(socket: Duplex | undefined, boundMs: number): Promise<void> {
    return new Promise((resolve) => this.hold(socket, boundMs, resolve, resolve));
  }
}
