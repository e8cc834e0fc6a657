/**
 * Watches export operations for subscribers. All subscribers of one operation (with the same API
 * key) share one poller, which reads the operation at a fixed interval, hands each subscriber
 * the operation whenever its status or metadata changes, and ends everyone's stream when the job
 * ends. A subscriber that leaves stops counting; the poller stops with the last one.
 *
 * Each interval is charged to every subscriber's caller, 1 each (`ChargeRead`), whether this
 * gateway reads or follows another's reads: sharing a poller saves the upstream reads, not the
 * callers' budgets, so that a caller pays the same for its streams whoever else watches the job
 * and on whichever gateway. A subscriber's first read is paid when it subscribes. A subscriber
 * that cannot pay has its stream ended with the refusal before the read; when none is left, the
 * read is not made.
 *
 * With a relay (Redis), the pollers of one operation on several gateways take turns: the one
 * whose turn it is reads the upstream and publishes what it read, the others follow what it
 * publishes, so that the upstream sees one poller in all.
 */
import { GatewayError } from "../errors.ts";
import { isTransientForPollers } from "../upstream/outcomes.ts";
import { apiKeyHash, type CallOptions } from "../upstream/call-options.ts";
import type { ExportOperation, ExportOperationStatus } from "../upstream/types.ts";
import { SharedPoller, SubscriberStream, type ChargeRead } from "./subscriber-stream.ts";
import type { PollerRelay, PollerTopic, Turn } from "./poller-relay.ts";

/** Reads one operation; null when it does not exist. */
export type ReadOperation = (operationId: string, options: CallOptions) => Promise<ExportOperation | null>;

/** What a subscriber receives: the operation, or the error that ends its stream. */
export type ExportEvent = ExportOperation | GatewayError;

/** The export pollers of several gateways; a topic is an operation and the hash of the API key that reads it. */
export type ExportRelay = PollerRelay<ExportOperation>;

const FINAL_STATUSES: ReadonlySet<ExportOperationStatus> = new Set(["COMPLETED", "COMPLETED_WITH_WARNING", "FAILED"]);
/** Consecutive failed reads a poller rides out (outages, rate limits) before it gives up. */
const MAX_TRANSIENT_FAILURES = 3;

export interface ExportWatchOptions {
  intervalMs: number;
  /** How long one read may take. */
  readTimeoutMs: number;
}

export class ExportWatch {
  private readonly pollers = new Map<string, Poller>();

  constructor(
    private readonly read: ReadOperation,
    private readonly options: ExportWatchOptions,
    private readonly relay?: ExportRelay,
  ) {}

  /** The operation's changes until the job ends; the caller's API key reads it, and `chargeRead` charges the caller for each read after the first. */
  watch(operationId: string, call: CallOptions, chargeRead?: ChargeRead): AsyncIterableIterator<ExportEvent> {
    const key = `${call.apiKey ? apiKeyHash(call.apiKey) : ""}:${operationId}`;
    let poller = this.pollers.get(key);
    if (poller === undefined) {
      const created = new Poller(
        operationId,
        call,
        this.read,
        this.options,
        this.relay?.join(
          key,
          { deliver: (event) => created.receive(event), lead: () => created.takeOver() },
          this.options.intervalMs,
        ),
        () => {
          if (this.pollers.get(key) === created) this.pollers.delete(key);
        },
      );
      this.pollers.set(key, created);
      poller = created;
    }
    return poller.subscribe(chargeRead);
  }

  /** Ends every stream and gives up every turn; for shutdown. */
  async close(): Promise<void> {
    await Promise.all([...this.pollers.values()].map((poller) => poller.finish()));
  }
}

class Poller extends SharedPoller<ExportOperation, SubscriberStream<ExportEvent>, ExportOperation> {
  private latest: ExportOperation | undefined;
  private latestKey: string | undefined;
  private failures = 0;
  /** Whether a read is under way (or its interval is being paid for). */
  private reading = false;
  /** Whether this interval's read was paid for and left to the leader: a take-over makes it now. */
  private followed = false;

  constructor(
    private readonly operationId: string,
    private readonly call: CallOptions,
    private readonly read: ReadOperation,
    private readonly options: ExportWatchOptions,
    topic: PollerTopic<ExportOperation> | undefined,
    onStop: () => void,
  ) {
    super(onStop);
    this.topic = topic;
    // After the first subscriber has joined, who pays for the first read.
    queueMicrotask(() => void this.tick());
  }

  subscribe(chargeRead?: ChargeRead): AsyncIterableIterator<ExportEvent> {
    const subscriber: SubscriberStream<ExportEvent> = this.add(
      new SubscriberStream<ExportEvent>(chargeRead, () => this.leave(subscriber)),
    );
    if (this.latest !== undefined) subscriber.push(this.latest);
    return subscriber;
  }

  /** What another gateway's poller read. */
  receive(event: ExportEvent): void {
    if (this.stopped) return;
    if (event instanceof GatewayError) void this.finish(event);
    else this.accept(event);
  }

  /** Hands on a change, and ends the streams when the job has ended. */
  private accept(operation: ExportOperation): void {
    const key = JSON.stringify([operation.operationStatus, operation.metadata ?? null]);
    if (key !== this.latestKey) {
      this.latest = operation;
      this.latestKey = key;
      for (const subscriber of this.subscribers) subscriber.push(operation);
    }
    if (FINAL_STATUSES.has(operation.operationStatus)) void this.finish();
  }

  /** The leader's lock ran out and this gateway took it: the interval's read, paid for and left to the leader, is made now. */
  takeOver(): void {
    if (this.stopped || this.reading || !this.followed) return;
    clearTimeout(this.timer);
    this.reading = true;
    this.followed = false;
    void this.readNow("lead").finally(() => (this.reading = false));
  }

  private async tick(): Promise<void> {
    this.reading = true;
    this.followed = false;
    try {
      // Charged whether this gateway reads or follows the one that does: a caller pays the same on any gateway.
      await this.chargeSubscribers();
      if (this.stopped) return;
      const turn = this.topic ? await this.topic.turn() : "alone";
      if (this.stopped) return;
      if (turn !== "follow") return await this.readNow(turn);
      this.followed = true;
      this.schedule();
    } finally {
      this.reading = false;
    }
  }

  private async readNow(turn: Turn): Promise<void> {
    let operation: ExportOperation | null;
    try {
      operation = await this.read(this.operationId, {
        apiKey: this.call.apiKey,
        requestId: this.call.requestId,
        deadline: Date.now() + this.options.readTimeoutMs,
      });
    } catch (error) {
      if (this.stopped) return;
      this.failures += 1;
      if (!isTransientForPollers(error) || this.failures > MAX_TRANSIENT_FAILURES) {
        return this.end(
          error instanceof GatewayError ? error : new GatewayError("The export operation could not be read", "UPSTREAM_ERROR"),
          turn,
        );
      }
      return this.schedule();
    }
    if (this.stopped) return;
    this.failures = 0;
    if (operation === null) {
      return this.end(new GatewayError(`No export operation has the id ${JSON.stringify(this.operationId)}`, "NOT_FOUND"), turn);
    }
    if (turn === "lead") this.topic?.publish(operation);
    this.accept(operation);
    if (!this.stopped) this.schedule();
  }

  /** Ends the streams with an error: the followers' too when this poller leads. */
  private end(error: GatewayError, turn: Turn): void {
    if (turn === "lead") this.topic?.publish(error);
    void this.finish(error);
  }

  private schedule(): void {
    this.timer = setTimeout(() => void this.tick(), this.options.intervalMs);
    this.timer.unref();
  }
}
