/**
 * What is new upstream, pushed to every subscriber from one poller per distinct question (a
 * route and its arguments: a chain's blocks, an address's transactions, a metric's latest point).
 *
 * A poller reads the question's newest page at the route's interval, which grows while nothing
 * changes and returns to its base when something does. Items that arrived between two reads are
 * pushed each once, in order: the poller pages back to the last item it pushed, reading at most
 * `maxCatchUp` + 1 items; a longer gap is said with one `LIVE_GAP` event, then come the newest
 * `maxCatchUp` items and the stream goes on. A subscriber that passes `after` (the last block
 * number it saw) first gets what came after it, within the same bound, from reads of its own;
 * then the shared stream, without repeats.
 *
 * With a relay (Redis), the pollers of one question on several gateways take turns: the one whose
 * turn it is reads and publishes the new items, the others push what it publishes, so that the
 * upstream sees one poller in all. Each gateway makes its own first read, which tells it where
 * each stream stands. When the reading gateway dies, another takes its turn as soon as the relay
 * lets it (redis-poller-relay.ts: when the lock runs out) and reads at once, in the interval its
 * subscribers already paid for. A value's reads (a metric's latest point) are ordered by when
 * they began, so that a read older than one pushed, from whichever gateway, is never pushed.
 *
 * Each upstream read costs every subscriber 1 (`ChargeRead`) before it is made, every page of an
 * interval's, and a catch-up's pages its subscriber alone: sharing a poller saves upstream calls,
 * not callers' budgets. A read's events reach a subscriber together, however many: its stream
 * ends with `SLOW_SUBSCRIBER` only when more than `maxPending` events of earlier reads are still
 * unread as they arrive and it took none for an event's deadline (see live-subscriber.ts); a
 * `PollerPool` bounds the pollers and shares them out, and a `ReadBudget` the reads they make a
 * second together, each waiting its turn.
 */
import { GatewayError } from "../errors.ts";
import type { CallOptions } from "../upstream/call-options.ts";
import type { LiveEvent, LiveQuestion } from "./live-question.ts";
import { LivePoller, type LiveBatch, type LivePollerOptions } from "./live-poller.ts";
import { PollerPool, type PollerPoolLimits } from "./poller-pool.ts";
import type { PollerRelay } from "./poller-relay.ts";
import { ReadBudget, type ReadTurns } from "./read-budget.ts";
import type { ChargeRead } from "./subscriber-stream.ts";

export interface LiveFeedOptions extends PollerPoolLimits, LivePollerOptions {
  /** Upstream reads all the pollers may make per second together (LIVE_MAX_READS_PER_SECOND). */
  maxReadsPerSecond: number;
}

export class LiveFeed {
  private readonly pollers = new Map<string, LivePoller<unknown>>();
  private readonly budget: ReadBudget;

  constructor(
    private readonly options: LiveFeedOptions,
    private readonly relay?: PollerRelay<LiveBatch>,
    private readonly pool = new PollerPool(options),
  ) {
    this.budget = new ReadBudget(options.maxReadsPerSecond);
  }

  /**
   * The question's new items from now, or from just after block `after` (a question of one
   * stream only); `accepts` leaves out items this subscriber did not ask for (a filter the route
   * does not have), without a poller of its own; `caller` is who the pool counts it against.
   */
  subscribe<Item>(
    question: LiveQuestion<Item>,
    options: {
      after?: bigint | undefined;
      call: CallOptions;
      chargeRead?: ChargeRead | undefined;
      accepts?: (item: Item) => boolean;
      caller?: string | undefined;
    },
  ): AsyncIterableIterator<LiveEvent<Item>> {
    let poller = this.pollers.get(question.key) as LivePoller<Item> | undefined;
    if (poller === undefined) {
      this.pool.admit(question.key, options.caller, (key, why) => void this.pollers.get(key)?.finish(why));
      const turns = this.budget.turns(() => this.pool.rank(question.key));
      const created: LivePoller<Item> = new LivePoller(
        budgeted(question, turns),
        this.options,
        (listener) => this.relay?.join(question.key, listener, question.maxIntervalMs),
        () => {
          turns.close();
          if (this.pollers.get(question.key) !== created) return;
          this.pollers.delete(question.key);
          this.pool.close(question.key);
        },
        turns,
      );
      this.pollers.set(question.key, created as LivePoller<unknown>);
      poller = created;
    }
    const leave = this.pool.join(question.key, options.caller);
    return poller.subscribe(options.after, options.call, options.chargeRead, options.accepts, leave);
  }

  /** The questions polled now (one per question that has subscribers), and their subscribers. */
  counts(): { pollers: number; subscribers: number } {
    let subscribers = 0;
    for (const poller of this.pollers.values()) subscribers += poller.subscriberCount;
    return { pollers: this.pollers.size, subscribers };
  }

  /** The pollers' reads waiting for their turn of the read budget. */
  readsWaiting(): number {
    return this.budget.waitingCount;
  }

  /** Ends every stream and gives up every turn; for shutdown. */
  async close(): Promise<void> {
    await Promise.all([...this.pollers.values()].map((poller) => poller.finish()));
  }
}

/**
 * The question, each of whose reads (the poller's and its subscribers' catch-ups) waits for its
 * turn of the read budget first; the read's deadline counts from when it goes.
 */
function budgeted<Item>(question: LiveQuestion<Item>, turns: ReadTurns): LiveQuestion<Item> {
  return {
    ...question,
    read: async (pageSize, pageToken, call) => {
      const waitedMs = await turns.take();
      const deadline = call.deadline === undefined ? undefined : call.deadline + waitedMs;
      return question.read(pageSize, pageToken, { ...call, deadline });
    },
  };
}

/** A subscription's resolver: the item, or the error its event carries. */
export function itemOrError<Item>(event: LiveEvent<Item>): Item {
  if (event instanceof GatewayError) throw event;
  return event;
}

/** What a live subscription's description says of its poller, its resume bound and its limits. */
export function liveTerms(route: { label: string }, intervalVariable: string, sharedBy: string): string {
  return `Subscribers of ${sharedBy} share one poller of \`${route.label}\` on every gateway (\`${intervalVariable}\`, longer while nothing changes); each upstream read (every page of an interval's, and of a resume's catch-up) costs every subscriber 1, and each event what its selection fetches. What arrives between two reads is all pushed, oldest first, up to \`LIVE_MAX_CATCH_UP\` items; a longer gap is one event with a \`LIVE_GAP\` error, then the newest \`LIVE_MAX_CATCH_UP\` items, and the stream goes on. A read's events come together; a client that still has more than \`LIVE_MAX_PENDING_EVENTS\` events of earlier reads unread when a read's events come, and took none since the last read, has its stream ended with \`SLOW_SUBSCRIBER\` (as does one with more than 4 × that unread).`;
}
