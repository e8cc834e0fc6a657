/**
 * One subscriber's stream of a shared poller (export jobs, new blocks): events queue until the
 * client asks for them, and the subscriber pays for each read the poller makes after its first.
 */
import type { GatewayError } from "../errors.ts";
import type { PollerTopic } from "./poller-relay.ts";

/** Charges a subscriber's caller for one read: null when paid, else the error that ends its stream. */
export type ChargeRead = () => Promise<GatewayError | null>;

export class SubscriberStream<T> implements AsyncIterableIterator<T> {
  protected readonly queue: T[] = [];
  protected ended = false;
  private waiting: ((result: IteratorResult<T>) => void) | undefined;
  /** Reads paid for ahead: the first, when it subscribed. */
  private paidReads = 1;

  constructor(
    private readonly chargeRead: ChargeRead | undefined,
    protected readonly onLeave: () => void,
    /** Told once when the stream ends, whichever way. */
    private readonly onEnded: () => void = () => {},
  ) {}

  /** Whether the stream has ended: the client left, or it was given its last event. */
  get closed(): boolean {
    return this.ended;
  }

  /** Pays for one read; the refusal when the caller cannot. */
  async payForRead(): Promise<GatewayError | null> {
    if (this.paidReads > 0) {
      this.paidReads -= 1;
      return null;
    }
    return this.chargeRead ? this.chargeRead() : null;
  }

  push(event: T): void {
    if (!this.ended) this.deliver(event);
  }

  /** Hands the event to a waiting reader, else queues it; how many events wait unread. */
  protected deliver(event: T): number {
    if (this.waiting) {
      this.waiting({ value: event, done: false });
      this.waiting = undefined;
      return 0;
    }
    this.queue.push(event);
    return this.queue.length;
  }

  /** No more events; those queued are still delivered. */
  end(): void {
    if (!this.ended) this.onEnded();
    this.ended = true;
    if (this.waiting && this.queue.length === 0) {
      this.waiting({ value: undefined, done: true });
      this.waiting = undefined;
    }
  }

  next(): Promise<IteratorResult<T>> {
    const event = this.queue.shift();
    if (event !== undefined) return Promise.resolve({ value: event, done: false });
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  /** The subscriber left (the client disconnected or the stream completed). */
  return(): Promise<IteratorResult<T>> {
    if (!this.ended) {
      this.ended = true;
      this.onEnded();
      this.queue.length = 0;
      this.onLeave();
    }
    this.waiting?.({ value: undefined, done: true });
    this.waiting = undefined;
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }
}

/**
 * Has every subscriber pay for the read about to be made; those who cannot get the refusal as
 * their last event and leave `subscribers`.
 */
export async function chargeForRead<T>(
  subscribers: Set<SubscriberStream<T>>,
  asEvent: (refusal: GatewayError) => T,
): Promise<void> {
  const paying = [...subscribers];
  const refusals = await Promise.all(paying.map((subscriber) => subscriber.payForRead()));
  refusals.forEach((refusal, index) => {
    const subscriber = paying[index]!;
    if (!refusal || !subscribers.delete(subscriber)) return;
    subscriber.push(asEvent(refusal));
    subscriber.end();
  });
}

/**
 * What every shared poller has: its subscribers, its timer, and its turn among the gateways
 * (`topic`, with a relay); it stops with its last subscriber.
 */
export abstract class SharedPoller<Event, Subscriber extends SubscriberStream<Event | GatewayError>, Published> {
  protected readonly subscribers = new Set<Subscriber>();
  protected topic: PollerTopic<Published> | undefined;
  protected timer: NodeJS.Timeout | undefined;
  protected stopped = false;
  private left: Promise<void> = Promise.resolve();

  constructor(private readonly onStop: () => void) {}

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  /** Ends every subscriber's stream, after an error if there is one, and stops polling. */
  finish(error?: GatewayError): Promise<void> {
    for (const subscriber of this.subscribers) {
      if (error) subscriber.push(error);
      subscriber.end();
    }
    this.subscribers.clear();
    this.stop();
    return this.left;
  }

  /** Adds a subscriber, whose leaving may stop the poller. */
  protected add(subscriber: Subscriber): Subscriber {
    this.subscribers.add(subscriber);
    return subscriber;
  }

  /** A subscriber left: the last one stops the poller. */
  protected leave(subscriber: Subscriber): void {
    this.subscribers.delete(subscriber);
    if (this.subscribers.size === 0) this.stop();
  }

  protected stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.topic) this.left = this.topic.leave();
    this.onStop();
  }

  /** Has every subscriber pay for the read about to be made; ends the streams of those who cannot. Whether the poller goes on. */
  protected async chargeSubscribers(): Promise<boolean> {
    await chargeForRead(this.subscribers as Set<SubscriberStream<Event | GatewayError>>, (refusal) => refusal);
    if (this.subscribers.size === 0) this.stop();
    return !this.stopped;
  }
}
