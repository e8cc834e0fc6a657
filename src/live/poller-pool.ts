/**
 * Who holds a gateway's live pollers, so that no caller takes the pool whole. A poller is held
 * alone by a caller when every one of its subscribers is that caller's (its address, or an IPv6
 * address's /64); a poller that several callers subscribe to is everyone's and no one's.
 *
 * Subscribing to a question already polled adds no poller and is never refused. A new question
 * is refused to a caller that already holds `maxPollersPerCaller` pollers alone; when the pool is full
 * (`maxPollers`), a caller that holds fewer pollers alone than the largest holder takes one of
 * the largest holder's lone pollers, whose streams end with LIVE_CAPACITY; anyone else is refused.
 * Subscribers without a caller (no rate limiter to name them) hold nothing alone.
 */
import { GatewayError } from "../errors.ts";

export interface PollerPoolLimits {
  /** Questions a gateway polls at once (LIVE_MAX_POLLERS). */
  maxPollers: number;
  /** Pollers one caller may hold alone (LIVE_MAX_POLLERS_PER_CALLER). */
  maxPollersPerCaller: number;
}

/** A poller's subscribers per caller; `undefined` counts those without one. */
type Holders = Map<string | undefined, number>;

export class PollerPool {
  private readonly holders = new Map<string, Holders>();
  /** The keys of the pollers each caller holds alone. */
  private readonly lone = new Map<string, Set<string>>();
  /** How many pollers each caller subscribes to, alone or not. */
  private readonly subscribed = new Map<string, number>();

  constructor(private readonly limits: PollerPoolLimits) {}

  /**
   * Makes room for a new poller of question `key` for `caller`, or throws the LIVE_CAPACITY
   * refusal; `reclaim` is handed the poller taken for it, if one is, and the error that ends its
   * streams. The poller then counts from its first subscriber (`join`).
   */
  admit(key: string, caller: string | undefined, reclaim: (key: string, why: GatewayError) => void): void {
    const { maxPollers, maxPollersPerCaller } = this.limits;
    const held = caller === undefined ? 0 : (this.lone.get(caller)?.size ?? 0);
    if (held >= maxPollersPerCaller) {
      throw new GatewayError(
        `You are the only subscriber of ${held} live questions, the most LIVE_MAX_POLLERS_PER_CALLER allows: close one, or subscribe to a question already asked (such as a chain's blocks)`,
        "LIVE_CAPACITY",
        // Refused before the stream starts: over SSE the answer's status says it is the caller's share.
        { maxPollers, maxPollersPerCaller, http: { status: 429 } },
      );
    }
    if (this.holders.size >= maxPollers) {
      const largest = this.largestLoneHolding();
      if (largest.size <= held) {
        throw new GatewayError(
          `The gateway polls ${maxPollers} live questions already, the most LIVE_MAX_POLLERS allows, and no caller holds more of them alone than you: subscribe to one already asked (such as a chain's blocks), or try later`,
          "LIVE_CAPACITY",
          { maxPollers, http: { status: 503, headers: { "Retry-After": "30" } } },
        );
      }
      const [taken] = largest;
      reclaim(
        taken!,
        new GatewayError(
          `The gateway polls ${maxPollers} live questions, the most LIVE_MAX_POLLERS allows, and you were the only subscriber of ${largest.size} of them, more than any other caller: this one was ended to make room for a caller who holds fewer; subscribe again later, or to a question already asked`,
          "LIVE_CAPACITY",
          { maxPollers, reclaimed: true },
        ),
      );
      this.close(taken!);
    }
    this.holders.set(key, new Map());
  }

  /** A subscriber of `caller` on question `key`'s poller (admitted before); the function that counts it gone (once). */
  join(key: string, caller: string | undefined): () => void {
    const holders = this.holders.get(key)!;
    if (!holders.has(caller)) this.countSubscribed(caller, 1);
    this.recount(key, holders, () => holders.set(caller, (holders.get(caller) ?? 0) + 1));
    let counted = true;
    return () => {
      // A poller stopped and started again is another poller: its subscribers are not this one's.
      if (!counted || this.holders.get(key) !== holders) return;
      counted = false;
      this.recount(key, holders, () => {
        const left = (holders.get(caller) ?? 1) - 1;
        if (left > 0) holders.set(caller, left);
        else if (holders.delete(caller)) this.countSubscribed(caller, -1);
      });
    };
  }

  /** Question `key`'s poller stopped. */
  close(key: string): void {
    const holders = this.holders.get(key);
    if (holders === undefined) return;
    for (const caller of holders.keys()) this.countSubscribed(caller, -1);
    this.recount(key, holders, () => holders.clear());
    this.holders.delete(key);
  }

  /**
   * When question `key`'s reads go when the read budget is short, lowest first: the number of
   * pollers the lightest caller subscribing to it subscribes to; 0 when a subscriber has no caller.
   */
  rank(key: string): number {
    let lightest = Number.POSITIVE_INFINITY;
    for (const caller of this.holders.get(key)?.keys() ?? []) {
      lightest = Math.min(lightest, caller === undefined ? 0 : (this.subscribed.get(caller) ?? 0));
      if (lightest <= 1) break;
    }
    return Number.isFinite(lightest) ? lightest : 0;
  }

  private countSubscribed(caller: string | undefined, change: 1 | -1): void {
    if (caller === undefined) return;
    const count = (this.subscribed.get(caller) ?? 0) + change;
    if (count > 0) this.subscribed.set(caller, count);
    else this.subscribed.delete(caller);
  }

  /** Changes a poller's subscribers, and which caller it counts as held alone by. */
  private recount(key: string, holders: Holders, change: () => void): void {
    const before = loneHolder(holders);
    change();
    const after = loneHolder(holders);
    if (before === after) return;
    if (before !== undefined) {
      const keys = this.lone.get(before)!;
      keys.delete(key);
      if (keys.size === 0) this.lone.delete(before);
    }
    if (after !== undefined) {
      const keys = this.lone.get(after) ?? new Set<string>();
      this.lone.set(after, keys.add(key));
    }
  }

  /** The keys of the pollers held alone by the caller who holds most; none when no one holds one alone. */
  private largestLoneHolding(): ReadonlySet<string> {
    let largest: ReadonlySet<string> = new Set();
    for (const keys of this.lone.values()) if (keys.size > largest.size) largest = keys;
    return largest;
  }
}

/** The one caller all of a poller's subscribers are, if it is so. */
function loneHolder(holders: Holders): string | undefined {
  if (holders.size !== 1) return undefined;
  const [caller] = holders.keys();
  return caller;
}
