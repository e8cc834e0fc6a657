import { GatewayError } from "../execution/errors.ts";
import type { LiveEvent, LiveQuestion, Position } from "./live-question.ts";
import { Heads } from "./stream-heads.ts";
import { SubscriberStream, type ChargeRead } from "./subscriber-stream.ts";

/**
 * One subscriber's stream. Live events wait while its catch-up runs, then pass only when they
 * come after the last item it was given: each item once, in order.
 */
export class LiveSubscriber<Item> extends SubscriberStream<LiveEvent<Item>> {
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
