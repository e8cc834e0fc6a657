/**
 * What is new upstream, pushed to every subscriber from one poller per distinct question (a
 * route and its arguments: a chain's blocks, an address's transactions, a metric's latest point).
 *
 * A poller reads the question's newest page at the route's interval, which grows while nothing
 * changes and returns to its base when something does. Items that arrived between two reads are
 * pushed each once, in order: the poller pages back to the last item it pushed, within
 * `maxCatchUp`; a longer gap is said with a `LIVE_GAP` event and the stream goes on from the
 * newest. A subscriber that passes `after` (the last block number it saw) first gets what came
 * after it, within the same bound, from reads of its own; then the shared stream, without repeats.
 *
 * With a relay (Redis), the pollers of one question on several gateways take turns: the one whose
 * turn it is reads and publishes the new items, the others push what it publishes, so that the
 * upstream sees one poller in all. Each gateway makes its own first read, which tells it where
 * each stream stands.
 *
 * Each upstream read costs every subscriber 1 (`ChargeRead`) before it is made, every page of an
 * interval's, and a catch-up's pages its subscriber alone: sharing a poller saves upstream calls,
 * not callers' budgets. A subscriber that falls more than `maxPending` events behind has its
 * stream ended with `SLOW_SUBSCRIBER`; a `PollerPool` bounds the pollers and shares them out.
 */
import { GatewayError } from "../execution/errors.ts";
import { isTransientForPollers } from "../upstream/outcomes.ts";
import type { CallOptions } from "../upstream/http.ts";
import { PollerPool, type PollerPoolLimits } from "./poller-pool.ts";
import type { PollerRelay, PollerTopic, Turn } from "./poller-relay.ts";
import { SharedPoller, SubscriberStream, type ChargeRead } from "./subscriber-stream.ts";

/** Where an item stands in its question's order. */
export interface Position {
  /** The sequence it belongs to: one chain's, when a question spans several. */
  stream: string;
  /** Its place in the stream: a block number (a transaction's block's), a metric point's time. */
  number: bigint;
  /** Unix seconds: orders the streams of one question among themselves. */
  time: number;
  /** Tells apart the items at one place: a hash; a metric point's value. */
  id: string;
}

export interface LivePage<Item> {
  items: Item[];
  nextPageToken?: string | undefined;
}

/** One question a poller asks the upstream over and over. */
export interface LiveQuestion<Item> {
  /** One poller per key, on every gateway: the route and its arguments, never an API key. */
  key: string;
  /** For messages: "chain 43114". */
  what: string;
  /** The route's largest page: the fewest reads to fill a gap. */
  pageSize: number;
  /**
   * The first read's page: it must hold every item at the newest place of each stream (a chain's
   * newest block: 1; an address's transactions in its newest block: a whole page), which are old.
   */
  firstPageSize: number;
  /** The interval between two reads while items arrive, and the longest, reached while none does. */
  intervalMs: number;
  maxIntervalMs: number;
  /** One page of the question's newest items, newest first. */
  read(pageSize: number, pageToken: string | undefined, call: CallOptions): Promise<LivePage<Item>>;
  /** Where an item stands; undefined for an item with no place in the order, which is never pushed. */
  position(item: Item): Position | undefined;
  /**
   * A value that changes (a metric's latest point) rather than a sequence that grows: the value
   * now is pushed to each subscriber when it comes, and a new value at the same place is new.
   */
  latestValue?: boolean;
  /** Restores what JSON loses (a record's origin) in an item another gateway's poller read. */
  revive?(item: Item): Item;
}

export type LiveEvent<Item> = Item | GatewayError;

export interface LiveFeedOptions extends PollerPoolLimits {
  /** How far back a poller pages to fill a gap, and a subscriber's `after` may reach, in items. */
  maxCatchUp: number;
  /** Events a subscriber may leave unread before its stream ends. */
  maxPending: number;
  /** How long one read may take. */
  readTimeoutMs: number;
}

/** What a leading poller publishes to the others: one read's new items, oldest first, and whether it left a gap. */
export interface LiveBatch {
  items: unknown[];
  gap: boolean;
}

/** Consecutive failed reads a poller rides out (outages, rate limits) before it ends the streams. */
const MAX_TRANSIENT_FAILURES = 5;
/**
 * Back-off: once nothing has arrived for the question's longest interval, each interval is
 * BACK_OFF times the last, up to the longest. A chain whose blocks come about as often as the
 * poller reads often gives an empty read; backing off then would delay its next block.
 */
const BACK_OFF = 1.5;

export class LiveFeed {
  private readonly pollers = new Map<string, LivePoller<unknown>>();

  constructor(
    private readonly options: LiveFeedOptions,
    private readonly relay?: PollerRelay<LiveBatch>,
    private readonly pool = new PollerPool(options),
  ) {}

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
      const created: LivePoller<Item> = new LivePoller(
        question,
        this.options,
        (deliver) => this.relay?.join(question.key, deliver, question.maxIntervalMs),
        () => {
          if (this.pollers.get(question.key) !== created) return;
          this.pollers.delete(question.key);
          this.pool.close(question.key);
        },
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

  /** Ends every stream and gives up every turn; for shutdown. */
  async close(): Promise<void> {
    await Promise.all([...this.pollers.values()].map((poller) => poller.finish()));
  }
}

/** The newest place of each stream, and the items at it. */
class Heads {
  private readonly heads = new Map<string, { number: bigint; ids: Set<string> }>();

  constructor(private readonly latestValue: boolean) {}

  number(stream: string): bigint | undefined {
    return this.heads.get(stream)?.number;
  }

  get empty(): boolean {
    return this.heads.size === 0;
  }

  /** Whether the item comes after everything noted of its stream; undefined for a stream not seen. */
  isAfter(position: Position): boolean | undefined {
    const head = this.heads.get(position.stream);
    if (head === undefined) return undefined;
    if (position.number !== head.number) return position.number > head.number;
    return !head.ids.has(position.id);
  }

  note(position: Position): void {
    const head = this.heads.get(position.stream);
    if (head === undefined || position.number > head.number) {
      this.heads.set(position.stream, { number: position.number, ids: new Set([position.id]) });
    } else if (position.number === head.number) {
      if (this.latestValue) head.ids = new Set([position.id]);
      else head.ids.add(position.id);
    }
  }
}

interface Placed<Item> {
  item: Item;
  position: Position;
}

/** Oldest first: by time, then stream, then place; items at one place keep the order they were read in. */
function inOrder<Item>(placed: Placed<Item>[]): Placed<Item>[] {
  return placed.sort(
    (a, b) =>
      a.position.time - b.position.time ||
      a.position.stream.localeCompare(b.position.stream) ||
      (a.position.number === b.position.number ? 0 : a.position.number < b.position.number ? -1 : 1),
  );
}

class LivePoller<Item> extends SharedPoller<Item, LiveSubscriber<Item>, LiveBatch> {
  private readonly heads: Heads;
  /** The newest time seen, in Unix seconds: paging back stops at an item older than it. */
  private since: number | undefined;
  /** The newest time of the first read: a stream first seen later counts from it. */
  private firstSince: number | undefined;
  /** The value now, for a question of one value. */
  private latest: Item | undefined;
  private ticking = false;
  /** Settles once the first read has told where the streams stand (it may take several ticks), or the poller stops. */
  private readonly headsKnown: Promise<void>;
  private settleHeadsKnown: () => void = () => {};
  private intervalMs: number;
  private tickStartedAt = 0;
  private quietSince = Date.now();
  private failures = 0;

  constructor(
    private readonly question: LiveQuestion<Item>,
    private readonly options: LiveFeedOptions,
    join: (deliver: (event: LiveBatch | GatewayError) => void) => PollerTopic<LiveBatch> | undefined,
    onStop: () => void,
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
    this.topic = join((event) => this.hear(event));
  }

  subscribe(
    after: bigint | undefined,
    call: CallOptions,
    chargeRead: ChargeRead | undefined,
    accepts: ((item: Item) => boolean) | undefined,
    ended: () => void,
  ): AsyncIterableIterator<LiveEvent<Item>> {
    const subscriber: LiveSubscriber<Item> = this.add(
      new LiveSubscriber<Item>(this.options.maxPending, this.question, chargeRead, accepts, ended, () => this.leave(subscriber)),
    );
    if (!this.ticking) {
      this.ticking = true;
      void this.tick();
    }
    if (this.latest !== undefined) subscriber.push(this.latest);
    if (after !== undefined) void this.catchUp(subscriber, after, call);
    return subscriber;
  }

  private maxPages(): number {
    return Math.max(1, Math.ceil(this.options.maxCatchUp / this.question.pageSize));
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
        this.maxPages(),
        { apiKey: call.apiKey, requestId: call.requestId },
        (position) => position.number <= after,
        (position) => position.number <= head,
        async () => {
          // A client that left reads nothing more (undefined); each page is paid for.
          const refusal = subscriber.closed ? undefined : await subscriber.payForRead();
          if (refusal) throw refusal;
          return refusal === null;
        },
      );
      if (read === undefined) return;
      if (!read.complete) subscriber.push(this.gapError(`block ${after}`), false);
      for (const { item, position } of read.found) subscriber.push(item, false, position);
    } catch (error) {
      subscriber.push(asGatewayError(error, this.question.what), false);
      subscriber.end();
    } finally {
      subscriber.releaseLive();
    }
  }

  private async tick(): Promise<void> {
    this.tickStartedAt = Date.now();
    await this.chargeSubscribers();
    if (this.stopped) return;
    let turn: Turn = "alone";
    try {
      if (this.since === undefined) {
        await this.readFirst();
      } else {
        turn = this.topic ? await this.topic.turn() : "alone";
        if (this.stopped) return;
        if (turn !== "follow") await this.readNew(turn);
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
    }
    if (!this.stopped) this.schedule();
  }

  /** Learns where each stream stands; nothing is pushed but a value's value now. */
  private async readFirst(): Promise<void> {
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
    this.settleHeadsKnown();
    if (this.latest !== undefined) this.pushAll(this.latest);
  }

  /** Pages back to the last read's newest item, within the bound, and pushes what is new, in order. */
  private async readNew(turn: Turn): Promise<void> {
    const since = this.since ?? 0;
    const read = await this.pageBack(
      this.question.latestValue ? 1 : this.maxPages(),
      {},
      (position) => position.time < since,
      (position) => this.isNew(position),
      // The interval paid for its first page; each page after it is paid for too.
      async (page) => (page === 0 ? !this.stopped : this.chargeSubscribers()),
    );
    if (read === undefined || this.stopped) return;
    const gap = !read.complete && !this.question.latestValue;
    const items = read.found.map(({ item }) => item);
    if (turn === "lead" && (items.length > 0 || gap)) this.topic?.publish({ items, gap });
    this.accept(read.found, gap);
  }

  /**
   * Reads the question's pages, newest first, at most `pages` of them, until an item is older
   * than what is sought (`reachedOld`); keeps, oldest first, the items `sought` says.
   * `beforePage` may stop the reading before a page: then undefined.
   */
  private async pageBack(
    pages: number,
    call: CallOptions,
    reachedOld: (position: Position) => boolean,
    sought: (position: Position) => boolean,
    beforePage: (page: number) => Promise<boolean>,
  ): Promise<{ found: Placed<Item>[]; complete: boolean } | undefined> {
    const found: Placed<Item>[] = [];
    let pageToken: string | undefined;
    let complete = false;
    for (let page = 0; page < pages && !complete; page += 1) {
      if (!(await beforePage(page))) return undefined;
      const response = await this.question.read(this.question.pageSize, pageToken, { ...call, deadline: this.deadline() });
      for (const item of response.items) {
        const position = this.question.position(item);
        if (position === undefined) continue;
        if (reachedOld(position)) complete = true;
        else if (sought(position)) found.push({ item, position });
      }
      if (!response.nextPageToken) complete = true;
      pageToken = response.nextPageToken;
    }
    return { found: inOrder(found.reverse()), complete };
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
    const revive = this.question.revive ?? ((item: Item) => item);
    const placed: Placed<Item>[] = [];
    for (const heard of event.items as Item[]) {
      const item = revive(heard);
      const position = this.question.position(item);
      if (position !== undefined) placed.push({ item, position });
    }
    this.accept(placed, event.gap);
  }

  /** Pushes the items, oldest first, that are new here. */
  private accept(placed: Placed<Item>[], gap: boolean): void {
    if (gap) this.pushAll(this.gapError(`the read at ${this.since ?? 0}`));
    for (const { item, position } of placed) {
      if (!this.isNew(position)) continue;
      this.heads.note(position);
      this.since = Math.max(this.since ?? 0, position.time);
      if (this.question.latestValue) this.latest = item;
      this.quietSince = Date.now();
      this.pushAll(item, position);
    }
  }

  private isNew(position: Position): boolean {
    return this.heads.isAfter(position) ?? position.time > (this.firstSince ?? 0);
  }

  private gapError(since: string): GatewayError {
    return new GatewayError(
      `More than ${this.options.maxCatchUp} items of ${this.question.what} arrived after ${since}: those between are not pushed; the stream goes on from the newest`,
      "LIVE_GAP",
      { maxCatchUp: this.options.maxCatchUp },
    );
  }

  /** Hands an event to every subscriber; an item with its position, worked out once for them all. */
  private pushAll(event: LiveEvent<Item>, position?: Position): void {
    for (const subscriber of this.subscribers) {
      if (!subscriber.push(event, true, position)) this.subscribers.delete(subscriber);
    }
    if (this.subscribers.size === 0) this.stop();
  }

  /** The next tick, an interval after this one began (not after it ended: a read's time is not added to the delay). */
  private schedule(): void {
    const { intervalMs, maxIntervalMs } = this.question;
    const quiet = Date.now() - this.quietSince >= maxIntervalMs;
    this.intervalMs = quiet ? Math.min(maxIntervalMs, Math.round(this.intervalMs * BACK_OFF)) : intervalMs;
    const wait = Math.max(0, this.tickStartedAt + this.intervalMs - Date.now());
    this.timer = setTimeout(() => void this.tick(), wait);
    this.timer.unref();
  }
}

function asGatewayError(error: unknown, what: string): GatewayError {
  return error instanceof GatewayError
    ? error
    : new GatewayError(`The newest items of ${what} could not be read`, "UPSTREAM_ERROR");
}

/**
 * One subscriber's stream. Live events wait while its catch-up runs, then pass only when they
 * come after the last item it was given: each item once, in order.
 */
class LiveSubscriber<Item> extends SubscriberStream<LiveEvent<Item>> {
  private held: { event: LiveEvent<Item>; position: Position | undefined }[] | undefined;
  private readonly given: Heads;

  constructor(
    private readonly maxPending: number,
    private readonly question: LiveQuestion<Item>,
    chargeRead: ChargeRead | undefined,
    private readonly accepts: ((item: Item) => boolean) | undefined,
    onEnded: () => void,
    onLeave: () => void,
  ) {
    super(chargeRead, onLeave, onEnded);
    this.given = new Heads(question.latestValue === true);
  }

  holdLive(): void {
    this.held = [];
  }

  releaseLive(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const { event, position } of held) this.push(event, true, position);
  }

  /** Queues an event (an item with its position, when known); false when the stream has ended (now or before). */
  override push(event: LiveEvent<Item>, live = true, known?: Position): boolean {
    if (this.ended) return false;
    if (live && this.held !== undefined && !(event instanceof GatewayError && event.code !== "LIVE_GAP")) {
      this.held.push({ event, position: known });
      return this.checkPending(this.held.length);
    }
    if (!(event instanceof GatewayError)) {
      const position = known ?? this.question.position(event);
      if (position === undefined || this.given.isAfter(position) === false) return true;
      this.given.note(position);
      if (this.accepts && !this.accepts(event)) return true;
    }
    return this.checkPending(this.deliver(event));
  }

  private checkPending(pending: number): boolean {
    if (pending <= this.maxPending) return true;
    this.queue.length = 0;
    this.held = undefined;
    this.queue.push(
      new GatewayError(
        `The stream fell more than ${this.maxPending} events behind and was ended: read faster, or resubscribe with \`after\``,
        "SLOW_SUBSCRIBER",
      ),
    );
    this.end();
    this.onLeave();
    return false;
  }
}

/** A subscription's resolver: the item, or the error its event carries. */
export function itemOrError<Item>(event: LiveEvent<Item>): Item {
  if (event instanceof GatewayError) throw event;
  return event;
}

/** What a live subscription's description says of its poller, its resume bound and its limits. */
export function liveTerms(route: { label: string }, intervalVariable: string, sharedBy: string): string {
  return `Subscribers of ${sharedBy} share one poller of \`${route.label}\` on every gateway (\`${intervalVariable}\`, longer while nothing changes); each upstream read (every page of an interval's, and of a resume's catch-up) costs every subscriber 1, and each event what its selection fetches. What arrives between two reads is all pushed, oldest first, within \`LIVE_MAX_CATCH_UP\` items; a longer gap is an event with a \`LIVE_GAP\` error, and the stream goes on from the newest. A client that falls more than \`LIVE_MAX_PENDING_EVENTS\` events behind has its stream ended with \`SLOW_SUBSCRIBER\`.`;
}
