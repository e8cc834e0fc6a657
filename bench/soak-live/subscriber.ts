/**
 * A subscriber of the soak: one client holding one stream open for the whole run, as a client
 * would: when its stream ends or its connection drops, it subscribes again, with `after` = the
 * last block it saw when the subscription takes it, so that the new stream continues the old.
 */
import type { FormattedExecutionResult, GraphQLFormattedError } from "graphql";
import { causeOf, type Kind, type SeenItem } from "./kinds.ts";
import { openStream, type OpenStream, type StreamEnd, type TransportName } from "./transports.ts";

/** One event as the subscriber got it. */
export interface Received {
  /** Milliseconds since the run began. */
  atMs: number;
  /** Which subscription of this subscriber (0, then 1 after its first resubscription, …). */
  segment: number;
  /** Its item; shared with every subscriber that got the same answer. */
  item: SeenItem | undefined;
  /** Its errors, by where they point: "" for the root field (LIVE_GAP, SLOW_SUBSCRIBER), else the link's path. */
  errors: { path: string; code: string; cause: string; upstreamFailed: boolean }[];
  /** Null links that no upstream failure in the same event explains. */
  unexplainedNullLinks: string[];
}

export interface Segment {
  startedAtMs: number;
  /** The `after` it was resumed with, if any. */
  after: number | undefined;
  end?: StreamEnd & { atMs: number };
}

/** Items by their answer: the same answer to many subscribers is read once. */
const answers = new Map<string, SeenItem>();

export function distinctItems(): number {
  return answers.size;
}

/** The first message of each kind of error, by kind of subscription, path and cause. */
export const errorSamples = new Map<string, string>();

/**
 * After this many SLOW_SUBSCRIBER endings in a row, the client gives up its `after` and starts
 * from now: a catch-up longer than LIVE_MAX_PENDING_EVENTS ends each resumed stream again.
 */
const STUCK_RESUMES = 3;

export class Subscriber {
  readonly received: Received[] = [];
  readonly segments: Segment[] = [];
  private current: OpenStream | undefined;
  private stopped = false;
  private lastNumber: number | undefined;
  private itemsInSegment = 0;
  /** Subscriptions in a row that ended before an item (a gateway down, an error at once): the back-off grows. */
  private failedAttempts = 0;
  private slowEndingsInARow = 0;

  constructor(
    readonly index: number,
    readonly kind: Kind,
    readonly transport: TransportName,
    /** The gateway it belongs to: "A" or "B"; it resubscribes there. */
    readonly gatewayName: string,
    private readonly gatewayUrl: string,
    readonly forwardedFor: string,
    readonly address: string | undefined,
    private readonly clock: () => number,
  ) {}

  get question(): string {
    return this.kind.question(this.address);
  }

  /** Subscribes, and again each time the stream ends, until `stop`. */
  async run(): Promise<void> {
    while (!this.stopped) {
      const stuck = this.slowEndingsInARow >= STUCK_RESUMES;
      if (stuck) this.slowEndingsInARow = 0;
      const after = this.kind.resumable && !stuck ? this.lastNumber : undefined;
      const segment: Segment = { startedAtMs: this.clock(), after };
      this.segments.push(segment);
      const number = this.segments.length - 1;
      this.itemsInSegment = 0;
      this.current = openStream(this.transport, {
        url: this.gatewayUrl,
        forwardedFor: this.forwardedFor,
        query: this.kind.query,
        variables: { ...this.kind.variables(this.address), ...(after === undefined ? {} : { after: String(after) }) },
        onResult: (result) => this.record(result, number),
      });
      const end = await this.current.ended;
      segment.end = { ...end, atMs: this.clock() };
      if (this.stopped) break;
      const slow =
        this.received.at(-1)?.segment === number &&
        this.received.at(-1)!.errors.some((error) => error.code === "SLOW_SUBSCRIBER");
      this.slowEndingsInARow = slow ? this.slowEndingsInARow + 1 : 0;
      // A client's back-off: at once after a stream that delivered, longer while subscriptions fail before an item.
      this.failedAttempts = this.itemsInSegment > 0 ? 0 : this.failedAttempts + 1;
      const wait = this.failedAttempts === 0 ? 200 : Math.min(4_000, 250 * 2 ** this.failedAttempts);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  stop(): void {
    this.stopped = true;
    this.current?.close();
  }

  private record(result: FormattedExecutionResult, segment: number): void {
    const errors = (result.errors ?? []).map((error: GraphQLFormattedError) => {
      const path = (error.path ?? []).slice(1).join(".");
      const { cause, upstreamFailed } = causeOf(error);
      const sample = `${this.kind.name} ${path || "(root)"} ${cause}`;
      if (!errorSamples.has(sample) && errorSamples.size < 100) errorSamples.set(sample, error.message);
      return { path, code: String(error.extensions?.code ?? "NONE"), cause, upstreamFailed };
    });
    const value = (result.data as Record<string, unknown> | null | undefined)?.[this.kind.field] as
      Record<string, unknown> | null | undefined;
    let item: SeenItem | undefined;
    if (value) {
      const text = JSON.stringify(value);
      const key = `${this.question}\n${text}`;
      item = answers.get(key);
      if (item === undefined) {
        item = this.kind.read(value);
        answers.set(key, item);
      }
      this.lastNumber = Math.max(this.lastNumber ?? item.number, item.number);
      this.itemsInSegment += 1;
    }
    const explained = (link: string) =>
      errors.some((error) => error.upstreamFailed && (error.path === link || error.path.startsWith(`${link}.`)));
    this.received.push({
      atMs: this.clock(),
      segment,
      item,
      errors,
      unexplainedNullLinks: item ? item.nullLinks.filter((link) => !explained(link)) : [],
    });
  }
}
