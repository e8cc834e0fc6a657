/**
 * One question's poller on this gateway: reads the newest page at the question's interval (or
 * follows the gateway whose turn it is), pages back to fill a gap within `maxCatchUp` items, and
 * hands each read's new items, in order, to its subscribers; see live-feed.ts for the whole design.
 */
import { GatewayError } from "../errors.ts";
import { isTransientForPollers } from "../upstream/outcomes.ts";
import type { CallOptions } from "../upstream/call-options.ts";
import type { LiveEvent, LiveQuestion, Position } from "./live-question.ts";
import { LiveSubscriber, type Delivery } from "./live-subscriber.ts";
import type { PollerTopic, TopicListener, Turn } from "./poller-relay.ts";
import { pageBack, type PagedBack, type PlaceInRead } from "./page-back.ts";
import type { ReadTurns } from "./read-budget.ts";
import { Heads, type Placed } from "./stream-heads.ts";
import { SharedPoller, type ChargeRead } from "./subscriber-stream.ts";

/** How a poller reads and how far its subscribers may fall behind. */
export interface LivePollerOptions {
  /** How far back a poller pages to fill a gap, and a subscriber's `after` may reach, in items. */
  maxCatchUp: number;
  /** Events of earlier reads a subscriber may leave unread as a read's events arrive; more ends its stream. */
  maxPending: number;
  /** How long one read may take. */
  readTimeoutMs: number;
  /** Each event's execution deadline (REQUEST_TIMEOUT_MS): a stream that takes no event for longer is held back by its client. */
  eventTimeoutMs: number;
}

/** What a leading poller publishes to the others: one read's new items, oldest first, and whether it left a gap. */
export interface LiveBatch {
  items: unknown[];
  gap: boolean;
  /** When the read began, epoch ms on the leader's clock: orders the reads of a value. Absent from an earlier version's gateway. */
  readAt?: number;
  /**
   * The reader's newest item time (Unix seconds) before this read: a gateway whose own is older
   * missed a read (a message lost while its subscriber connection was down, a read made while
   * Redis did not answer) and reads for itself. Absent from an earlier version's gateway.
   */
  since?: number;
}

/** Consecutive failed reads a poller rides out (outages, rate limits) before it ends the streams. */
const MAX_TRANSIENT_FAILURES = 5;
/**
 * Back-off: once nothing has arrived for the question's longest interval, each interval is
 * BACK_OFF times the last, up to the longest. A chain whose blocks come about as often as the
 * poller reads often gives an empty read; backing off then would delay its next block.
 */
const BACK_OFF = 1.5;

export class LivePoller<Item> extends SharedPoller<Item, LiveSubscriber<Item>, LiveBatch> {
  private readonly heads: Heads;
  /** The newest time seen, in Unix seconds: paging back stops at an item older than it. */
  private since: number | undefined;
  /** The newest time of the first read: a stream first seen later counts from it. */
  private firstSince: number | undefined;
  /** The value now, for a question of one value. */
  private latest: Item | undefined;
  private ticking = false;
  /** Whether a read is under way (or its interval waits for its turn, or is being paid for). */
  private reading = false;
  /** Whether this interval's read was paid for and left to the leader: a take-over makes it now. */
  private followed = false;
  /** When the newest read taken in began (epoch ms): a value read before it is older than the one pushed. */
  private newestReadAt = 0;
  /** Settles once the first read has told where the streams stand (it may take several ticks), or the poller stops. */
  private readonly headsKnown: Promise<void>;
  private settleHeadsKnown: () => void = () => {};
  private intervalMs: number;
  private tickStartedAt = 0;
  private quietSince = Date.now();
  private failures = 0;
  /** A read of this gateway's own is under way to fill what it missed hearing; `missedAgain`: another miss was heard meanwhile. */
  private filling = false;
  private missedAgain = false;

  constructor(
    private readonly question: LiveQuestion<Item>,
    private readonly options: LivePollerOptions,
    join: (listener: TopicListener<LiveBatch>) => PollerTopic<LiveBatch> | undefined,
    onStop: () => void,
    /** The read budget's turns, which the question's reads take: a tick begins once it has one. */
    private readonly turns?: Pick<ReadTurns, "reserve" | "unreserve">,
  ) {
    super(() => {
      this.settleHeadsKnown();
      onStop();
    });
    this.headsKnown = new Promise((resolve) => {
      this.settleHeadsKnown = resolve;
    });
    this.heads = new Heads(question.latestValue === true);
    this.intervalMs = question.intervalMs;
    this.topic = join({ deliver: (event) => this.hear(event), lead: () => this.takeOver() });
  }

  subscribe(
    after: bigint | undefined,
    call: CallOptions,
    chargeRead: ChargeRead | undefined,
    accepts: ((item: Item) => boolean) | undefined,
    ended: () => void,
  ): AsyncIterableIterator<LiveEvent<Item>> {
    const subscriber: LiveSubscriber<Item> = this.add(
      new LiveSubscriber<Item>(
        this.options.maxPending,
        this.options.eventTimeoutMs,
        this.question,
        chargeRead,
        accepts,
        ended,
        () => this.leave(subscriber),
      ),
    );
    if (!this.ticking) {
      this.ticking = true;
      this.tickInTurn();
    }
    if (this.latest !== undefined) subscriber.push(this.latest);
    if (after !== undefined) void this.catchUp(subscriber, after, call);
    return subscriber;
  }

  private deadline(): number {
    return Date.now() + this.options.readTimeoutMs;
  }

  /** One stream's items after `after` up to the poller's head, read for this subscriber alone, then live. */
  private async catchUp(subscriber: LiveSubscriber<Item>, after: bigint, call: CallOptions): Promise<void> {
    subscriber.holdLive();
    try {
      await this.headsKnown;
      const head = this.heads.number("");
      if (head === undefined || after >= head) return;
      const read = await this.pageBack(
        { apiKey: call.apiKey, requestId: call.requestId },
        // What came after the poller's head comes live.
        (position) => (position.number <= after ? "old" : position.number <= head ? "sought" : "ahead"),
        async () => {
          // A client that left reads nothing more (undefined); each page is paid for.
          const refusal = subscriber.closed ? undefined : await subscriber.payForRead();
          if (refusal) throw refusal;
          return refusal === null;
        },
      );
      if (read === undefined) return;
      const events: Delivery<Item>[] = read.found.map(({ item, position }) => ({ event: item, position }));
      if (read.gap) events.unshift({ event: this.gapError(`block ${after}`) });
      subscriber.pushRead(events, false);
    } catch (error) {
      subscriber.push(asGatewayError(error, this.question.what), false);
      subscriber.end();
    } finally {
      subscriber.releaseLive();
    }
  }

  /**
   * The interval's tick, begun once the read budget gives it a turn: until then the poller waits
   * holding nothing of the read (see ReadTurns.reserve), and a take-over leaves the read to it.
   */
  private tickInTurn(): void {
    // The interval counts from when its read was due, not from when its turn came.
    this.tickStartedAt = Date.now();
    this.reading = true;
    if (this.turns) this.turns.reserve(() => void (this.stopped || this.tick()));
    else void this.tick();
  }

  private async tick(): Promise<void> {
    this.followed = false;
    try {
      await this.chargeSubscribers();
      if (this.stopped) return;
      await this.read();
    } finally {
      // An interval that read nothing (it followed, or was not paid for) gives its turn back.
      this.turns?.unreserve();
    }
  }

  /**
   * The leader's lock ran out and this gateway took it between two ticks: the interval's read,
   * paid for and left to the leader, is made now (not charged again), and the next tick comes
   * an interval after it.
   */
  private takeOver(): void {
    if (this.stopped || this.reading || !this.followed) return;
    clearTimeout(this.timer);
    this.tickStartedAt = Date.now();
    this.reading = true;
    this.followed = false;
    void this.read(true);
  }

  /** This interval's read, paid for; `took`: this gateway has just taken the lead. */
  private async read(took = false): Promise<void> {
    let turn: Turn = "alone";
    try {
      if (this.since === undefined) {
        await this.readFirst();
      } else {
        turn = took ? "lead" : this.topic ? await this.topic.turn() : "alone";
        if (this.stopped) return;
        if (turn === "follow") this.followed = true;
        else await this.readNew(turn === "lead");
      }
      this.failures = 0;
    } catch (error) {
      if (this.stopped) return;
      this.failures += 1;
      if (!isTransientForPollers(error) || this.failures > MAX_TRANSIENT_FAILURES) {
        const ended = asGatewayError(error, this.question.what);
        if (turn === "lead") this.topic?.publish(ended);
        void this.finish(ended);
        return;
      }
    } finally {
      this.reading = false;
    }
    if (!this.stopped) this.schedule();
  }

  /** Learns where each stream stands; nothing is pushed but a value's value now. */
  private async readFirst(): Promise<void> {
    const readAt = Date.now();
    const response = await this.question.read(this.question.firstPageSize, undefined, { deadline: this.deadline() });
    if (this.stopped) return;
    let since = 0;
    for (const item of response.items) {
      const position = this.question.position(item);
      if (position === undefined) continue;
      this.heads.note(position);
      since = Math.max(since, position.time);
      if (this.question.latestValue && this.latest === undefined) this.latest = item;
    }
    this.since = since;
    this.firstSince = since;
    this.newestReadAt = readAt;
    this.settleHeadsKnown();
    if (this.latest !== undefined) this.pushAll(this.latest);
  }

  /**
   * Pages back to the last read's newest item, within the bound, and pushes what is new, in order;
   * `publishes`: this gateway leads, and the others hear the read. A read made alone (Redis did
   * not answer in time) is not published: were both gateways alone, each would find the other's
   * batch ahead of it and read again; a follower finds the items it missed by the next batch.
   */
  private async readNew(publishes: boolean): Promise<void> {
    // This gateway's reads follow one another: a clock set back does not make the next one older.
    const readAt = Math.max(Date.now(), this.newestReadAt);
    const since = this.since ?? 0;
    const read = await this.pageBack(
      {},
      (position) => (position.time < since || !this.isNew(position) ? "old" : "sought"),
      // The interval paid for its first page; each page after it is paid for too.
      async (page) => (page === 0 ? !this.stopped : this.chargeSubscribers()),
    );
    if (read === undefined || this.stopped) return;
    const gap = read.gap && !this.question.latestValue;
    const items = read.found.map(({ item }) => item);
    if (publishes && (items.length > 0 || gap)) this.topic?.publish({ items, gap, readAt, since });
    this.accept(read.found, gap, readAt);
  }

  private pageBack(
    call: CallOptions,
    classify: (position: Position) => PlaceInRead,
    beforePage: (page: number) => Promise<boolean>,
  ): Promise<PagedBack<Item> | undefined> {
    const read = (pageSize: number, pageToken: string | undefined) =>
      this.question.read(pageSize, pageToken, { ...call, deadline: this.deadline() });
    return pageBack(this.question, this.options.maxCatchUp, read, classify, beforePage);
  }

  /** What another gateway's poller read. */
  private hear(event: LiveBatch | GatewayError): void {
    if (this.stopped) return;
    if (event instanceof GatewayError) {
      void this.finish(event);
      return;
    }
    // Before this gateway's first read it does not know where the streams stand; that read will.
    if (this.since === undefined) return;
    if (!this.question.latestValue && (this.filling || (event.since !== undefined && event.since > this.since))) {
      void this.fillMissed();
      return;
    }
    const revive = this.question.revive ?? ((item: Item) => item);
    const placed: Placed<Item>[] = [];
    for (const heard of event.items as Item[]) {
      const item = revive(heard);
      const position = this.question.position(item);
      if (position !== undefined) placed.push({ item, position });
    }
    this.accept(placed, event.gap, event.readAt ?? this.newestReadAt);
  }

  /**
   * The reader of a batch heard had taken in items this gateway did not: this gateway reads for
   * itself from its own newest item (bounded as any read), rather than take in the batch after a
   * hole. Batches heard meanwhile are covered by one more read.
   */
  private async fillMissed(): Promise<void> {
    if (this.filling) {
      this.missedAgain = true;
      return;
    }
    this.filling = true;
    try {
      do {
        this.missedAgain = false;
        await this.readNew(false);
      } while (this.missedAgain && !this.stopped);
    } catch {
      // The next batch heard finds this gateway still behind and reads again; a take-over reads too.
    } finally {
      this.filling = false;
    }
  }

  /**
   * Pushes the items, oldest first, that are new here: the subscribers get them as one read. A
   * sequence's items are ordered by their place; a value's are not (a new value at the same place
   * replaces the old), so a read of a value that began before the newest taken in (the latest kept
   * in Redis, heard by a gateway that has read since; a leader's last read, heard after a newer
   * one) is left out.
   */
  private accept(placed: Placed<Item>[], gap: boolean, readAt: number): void {
    if (this.question.latestValue && readAt < this.newestReadAt) return;
    this.newestReadAt = Math.max(this.newestReadAt, readAt);
    const skips = gap && this.skipsHere(placed);
    const events: Delivery<Item>[] = skips ? [{ event: this.gapError(`the read at ${this.since ?? 0}`) }] : [];
    for (const { item, position } of placed) {
      if (!this.isNew(position)) continue;
      this.heads.note(position);
      this.since = Math.max(this.since ?? 0, position.time);
      if (this.question.latestValue) this.latest = item;
      this.quietSince = Date.now();
      events.push({ event: item, position });
    }
    if (events.length > 0) this.pushRead(events);
  }

  /**
   * Whether a read that left a gap skips items here: the oldest of its items of some stream is
   * new here. A gateway that already has them (it read for itself meanwhile) skipped nothing.
   */
  private skipsHere(placed: Placed<Item>[]): boolean {
    const streams = new Set<string>();
    for (const { position } of placed) {
      if (streams.has(position.stream)) continue;
      streams.add(position.stream);
      if (this.isNew(position)) return true;
    }
    return placed.length === 0;
  }

  private isNew(position: Position): boolean {
    return this.heads.isAfter(position) ?? position.time > (this.firstSince ?? 0);
  }

  private gapError(since: string): GatewayError {
    const { maxCatchUp } = this.options;
    return new GatewayError(
      `More than ${maxCatchUp} items of ${this.question.what} arrived after ${since}: the newest ${maxCatchUp} follow, those before them are not pushed`,
      "LIVE_GAP",
      { maxCatchUp },
    );
  }

  /** Hands an event to every subscriber. */
  private pushAll(event: LiveEvent<Item>): void {
    this.pushRead([{ event }]);
  }

  /** Hands one read's events to every subscriber, who takes them together. */
  private pushRead(events: Delivery<Item>[]): void {
    for (const subscriber of this.subscribers) {
      if (!subscriber.pushRead(events)) this.subscribers.delete(subscriber);
    }
    if (this.subscribers.size === 0) this.stop();
  }

  /** The next tick, an interval after this one began (not after it ended: a read's time is not added to the delay). */
  private schedule(): void {
    const { intervalMs, maxIntervalMs } = this.question;
    const quiet = Date.now() - this.quietSince >= maxIntervalMs;
    this.intervalMs = quiet ? Math.min(maxIntervalMs, Math.round(this.intervalMs * BACK_OFF)) : intervalMs;
    const wait = Math.max(0, this.tickStartedAt + this.intervalMs - Date.now());
    this.timer = setTimeout(() => this.tickInTurn(), wait);
    this.timer.unref();
  }
}

function asGatewayError(error: unknown, what: string): GatewayError {
  return error instanceof GatewayError
    ? error
    : new GatewayError(`The newest items of ${what} could not be read`, "UPSTREAM_ERROR");
}
