import { GatewayError } from "../errors.ts";
import type { LiveEvent, LiveQuestion, Position } from "./live-question.ts";
import { Heads } from "./stream-heads.ts";
import { SubscriberStream, type ChargeRead } from "./subscriber-stream.ts";

/** Unread events that end a stream however fast it is taking them, in `maxPending`s: above a catch-up's burst beside them. */
const UNREAD_IN_ALL = 4;

/** One event of a read, with its item's position when the poller knows it. */
export interface Delivery<Item> {
  event: LiveEvent<Item>;
  position?: Position | undefined;
}

/**
 * One subscriber's stream. Live events wait while its catch-up runs, then pass only when they
 * come after the last item it was given: each item once, in order.
 *
 * A read's events (a poll's, a catch-up's: up to `maxCatchUp` items and a `LIVE_GAP`) arrive
 * together. The stream is slow when, as a read's events arrive, more than `maxPending` events of
 * earlier reads are still unread (or held, during a catch-up) and it has taken none for
 * `stalledMs`. Each event's execution is bounded by its own deadline (REQUEST_TIMEOUT_MS), so a
 * stream that is served takes its next event within it, however busy the process and however
 * long the burst the gateway itself made: only a client that does not read (its transport holding
 * the results back) takes none for longer. Whatever the pace, more than `UNREAD_IN_ALL` ×
 * `maxPending` unread events end the stream.
 */
export class LiveSubscriber<Item> extends SubscriberStream<LiveEvent<Item>> {
  private held: Delivery<Item>[] | undefined;
  private readonly given: Heads;
  /** When the stream last took an event, or last had one to take after none. */
  private lastTakenAt = Date.now();

  constructor(
    private readonly maxPending: number,
    private readonly stalledMs: number,
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

  /** The live events held during the catch-up follow it, with it. */
  releaseLive(): void {
    const held = this.held ?? [];
    this.held = undefined;
    if (this.ended) return;
    for (const { event, position } of held) this.give(event, position);
  }

  /** Queues one event, a read of its own; false when the stream has ended (now or before). */
  override push(event: LiveEvent<Item>, live = true, known?: Position): boolean {
    return this.pushRead([{ event, position: known }], live);
  }

  /**
   * Queues one read's events, oldest first (a live read's are held during a catch-up); false
   * when the stream has ended (now or before). An error other than `LIVE_GAP` is the stream's
   * last event and always passes.
   */
  pushRead(events: readonly Delivery<Item>[], live = true): boolean {
    let arrived = false;
    for (const { event, position } of events) {
      if (this.ended) return false;
      if (event instanceof GatewayError && event.code !== "LIVE_GAP") {
        this.deliver(event);
        continue;
      }
      const held = live ? this.held : undefined;
      if (held === undefined && !this.wanted(event, position)) continue;
      if (!arrived && this.isSlow((held ?? this.queue).length)) return this.endSlow();
      arrived = true;
      if (held) held.push({ event, position });
      else this.deliver(event);
    }
    return !this.ended;
  }

  private give(event: LiveEvent<Item>, known: Position | undefined): void {
    if (event instanceof GatewayError || this.wanted(event, known)) this.deliver(event);
  }

  /** Whether the stream takes the item: one it was not given yet (now noted), that it asked for; an error always. */
  private wanted(event: LiveEvent<Item>, known: Position | undefined): boolean {
    if (event instanceof GatewayError) return true;
    const position = known ?? this.question.position(event);
    if (position === undefined || this.given.isAfter(position) === false) return false;
    this.given.note(position);
    return this.accepts === undefined || this.accepts(event);
  }

  override next(): Promise<IteratorResult<LiveEvent<Item>>> {
    this.lastTakenAt = Date.now();
    return super.next();
  }

  /**
   * An event handed to a reader waiting for one is taken now, and the first to wait in an empty
   * queue starts the clock: the time a stream had nothing to take is not held against its client.
   */
  protected override deliver(event: LiveEvent<Item>): number {
    const unread = super.deliver(event);
    if (unread <= 1) this.lastTakenAt = Date.now();
    return unread;
  }

  private isSlow(unread: number): boolean {
    if (unread <= this.maxPending) return false;
    return Date.now() - this.lastTakenAt > this.stalledMs || unread > UNREAD_IN_ALL * this.maxPending;
  }

  private endSlow(): false {
    this.queue.length = 0;
    this.held = undefined;
    this.queue.push(
      new GatewayError(
        `The stream left more than ${this.maxPending} events unread, taking none for ${this.stalledMs} ms, when more came, and was ended: read faster, or resubscribe with \`afterBlock\``,
        "SLOW_SUBSCRIBER",
      ),
    );
    this.end();
    this.onLeave();
    return false;
  }
}
