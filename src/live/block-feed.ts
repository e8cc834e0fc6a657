/**
 * New blocks of one EVM chain, pushed to every subscriber from one upstream poller per chain.
 *
 * The poller reads the chain's newest page (`GET /v1/chains/{chainId}/blocks`) at an interval
 * that grows while nothing changes and returns to its base when a block arrives. Blocks that
 * arrived between two reads are pushed each once, oldest first: the poller pages back to the last
 * block it pushed, within `maxCatchUpBlocks`; a longer gap is said with a `LIVE_GAP` event and
 * the stream goes on from the newest block. A subscriber that passes `after` (the last block
 * number it saw) first gets the blocks since then, within the same bound, from reads of its own;
 * then the shared stream, without repeats.
 *
 * Each read costs every subscriber 1 (`ChargeRead`), as the export poller does: sharing a poller
 * saves upstream calls, not callers' budgets. A subscriber that falls more than `maxPending`
 * events behind has its stream ended with `SLOW_SUBSCRIBER`, so no client holds memory without
 * bound.
 */
import { GatewayError } from "../execution/errors.ts";
import { isTransientForPollers } from "../upstream/outcomes.ts";
import { SubscriberStream, chargeForRead, type ChargeRead } from "./subscriber-stream.ts";
import type { CallOptions } from "../upstream/http.ts";
import type { EvmBlock, ListEvmBlocksResponse, UpstreamNetwork } from "../upstream/types.ts";

/** One page of a chain's newest blocks, newest first. */
export type ReadNewestBlocks = (
  chainId: string,
  pageSize: number,
  pageToken: string | undefined,
  call: CallOptions,
) => Promise<ListEvmBlocksResponse>;

/** One page of the newest blocks of every chain of a network (`GET /v1/blocks`), newest first. */
export type ReadNetworkBlocks = (
  network: UpstreamNetwork,
  pageSize: number,
  pageToken: string | undefined,
  call: CallOptions,
) => Promise<ListEvmBlocksResponse>;

/** What a poller reads: one page of its question's newest blocks. */
type ReadPage = (pageSize: number, pageToken: string | undefined, call: CallOptions) => Promise<ListEvmBlocksResponse>;

export type BlockEvent = EvmBlock | GatewayError;

export interface BlockFeedOptions {
  /** The interval between two reads while blocks arrive. */
  intervalMs: number;
  /** The longest interval, reached while nothing arrives. */
  maxIntervalMs: number;
  /** How far back a poller pages to fill a gap, and a subscriber's `after` may reach. */
  maxCatchUpBlocks: number;
  /** Events a subscriber may leave unread before its stream ends. */
  maxPending: number;
  /** How long one read may take. */
  readTimeoutMs: number;
}

/** The route's largest page: the fewest reads to fill a gap. */
const PAGE_SIZE = 100;
/** Consecutive failed reads a poller rides out (outages, rate limits) before it ends the streams. */
const MAX_TRANSIENT_FAILURES = 5;
/**
 * After this many reads in a row that find nothing new, each further one waits BACK_OFF times
 * longer, up to `maxIntervalMs`. One empty read is the common case on a chain whose blocks come
 * about as often as the poller reads; backing off then would delay the next block by half an
 * interval.
 */
const EMPTY_READS_BEFORE_BACK_OFF = 2;
const BACK_OFF = 1.5;

export class BlockFeed {
  private readonly pollers = new Map<string, BlockPoller>();

  constructor(
    private readonly readChain: ReadNewestBlocks,
    private readonly readNetwork: ReadNetworkBlocks,
    private readonly options: BlockFeedOptions,
  ) {}

  /** The chain's new blocks from now, or from just after block `after`. */
  subscribe(
    chainId: string,
    after: bigint | undefined,
    call: CallOptions,
    chargeRead?: ChargeRead,
  ): AsyncIterableIterator<BlockEvent> {
    const poller = this.poller(
      `chain:${chainId}`,
      `chain ${chainId}`,
      (pageSize, pageToken, options) => this.readChain(chainId, pageSize, pageToken, options),
      1,
    );
    return poller.subscribe(after, call, chargeRead);
  }

  /** The new blocks of every chain of a network from now, each chain's in order. */
  subscribeNetwork(network: UpstreamNetwork, chargeRead?: ChargeRead): AsyncIterableIterator<BlockEvent> {
    const poller = this.poller(
      `network:${network}`,
      `the ${network} network`,
      (pageSize, pageToken, options) => this.readNetwork(network, pageSize, pageToken, options),
      PAGE_SIZE,
    );
    return poller.subscribe(undefined, {}, chargeRead);
  }

  private poller(key: string, what: string, read: ReadPage, firstPageSize: number): BlockPoller {
    let poller = this.pollers.get(key);
    if (poller === undefined) {
      const created = new BlockPoller(what, read, firstPageSize, this.options, () => {
        if (this.pollers.get(key) === created) this.pollers.delete(key);
      });
      this.pollers.set(key, created);
      poller = created;
    }
    return poller;
  }

  /** The pollers running now: one per question that has subscribers. */
  get activePollers(): number {
    return this.pollers.size;
  }

  /** Ends every stream; for shutdown. */
  close(): void {
    for (const poller of [...this.pollers.values()]) poller.finish();
  }
}

/**
 * Reads one question (a chain, or every chain of a network) and pushes what is new. A block is
 * new when its number is above the newest its chain had at the last read; a chain first seen now
 * counts from the time of the newest block of the first read. Paging back stops at the first
 * block older than the newest block of the last read: everything past it was read before.
 */
class BlockPoller {
  private readonly subscribers = new Set<BlockSubscriber>();
  /** Each chain's newest block number pushed (or seen at the first read). */
  private readonly heads = new Map<string, bigint>();
  /** The newest block time seen, in Unix seconds. */
  private since: number | undefined;
  /** The newest time seen at the first read: a chain first seen later counts from it. */
  private firstSince: number | undefined;
  private firstRead: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private intervalMs: number;
  private emptyReads = 0;
  private failures = 0;
  private stopped = false;

  constructor(
    private readonly what: string,
    private readonly read: ReadPage,
    private readonly firstPageSize: number,
    private readonly options: BlockFeedOptions,
    private readonly onStop: () => void,
  ) {
    this.intervalMs = options.intervalMs;
  }

  subscribe(after: bigint | undefined, call: CallOptions, chargeRead?: ChargeRead): AsyncIterableIterator<BlockEvent> {
    const subscriber = new BlockSubscriber(this.options.maxPending, chargeRead, () => {
      this.subscribers.delete(subscriber);
      if (this.subscribers.size === 0) this.stop();
    });
    this.subscribers.add(subscriber);
    this.firstRead ??= this.tick();
    if (after !== undefined) void this.catchUp(subscriber, after, call);
    return subscriber;
  }

  finish(error?: GatewayError): void {
    for (const subscriber of this.subscribers) {
      if (error) subscriber.push(error);
      subscriber.end();
    }
    this.subscribers.clear();
    this.stop();
  }

  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.timer);
    this.onStop();
  }

  /** One chain's blocks after `after` up to the poller's head, read for this subscriber alone, then live. */
  private async catchUp(subscriber: BlockSubscriber, after: bigint, call: CallOptions): Promise<void> {
    subscriber.holdLive();
    try {
      await this.firstRead;
      const [head] = [...this.heads.values()];
      if (head === undefined || after >= head) return;
      const found: EvmBlock[] = [];
      let pageToken: string | undefined;
      let complete = false;
      for (let page = 0; page < this.maxPages() && !complete; page += 1) {
        if (page > 0) {
          const refusal = await subscriber.payForRead();
          if (refusal) throw refusal;
        }
        const response = await this.read(PAGE_SIZE, pageToken, {
          apiKey: call.apiKey,
          requestId: call.requestId,
          deadline: Date.now() + this.options.readTimeoutMs,
        });
        for (const block of response.blocks) {
          const number = BigInt(block.blockNumber);
          if (number <= after) complete = true;
          else if (number <= head) found.push(block);
        }
        if (!response.nextPageToken) complete = true;
        pageToken = response.nextPageToken;
      }
      if (!complete) subscriber.push(gapError(this.what, `block ${after}`, this.options.maxCatchUpBlocks), false);
      for (const block of inChainOrder(found)) subscriber.push(block, false);
    } catch (error) {
      subscriber.push(asGatewayError(error), false);
      subscriber.end();
    } finally {
      subscriber.releaseLive();
    }
  }

  private maxPages(): number {
    return Math.max(1, Math.ceil(this.options.maxCatchUpBlocks / PAGE_SIZE));
  }

  private async tick(): Promise<void> {
    await this.chargeSubscribers();
    if (this.stopped) return;
    try {
      if (this.since === undefined) await this.readFirst();
      else await this.readNew(this.since);
      this.failures = 0;
    } catch (error) {
      if (this.stopped) return;
      this.failures += 1;
      if (!isTransientForPollers(error) || this.failures > MAX_TRANSIENT_FAILURES) return this.finish(asGatewayError(error));
    }
    if (!this.stopped) this.schedule();
  }

  /** Learns each chain's newest block; nothing is pushed. */
  private async readFirst(): Promise<void> {
    const response = await this.read(this.firstPageSize, undefined, { deadline: Date.now() + this.options.readTimeoutMs });
    let since = 0;
    for (const block of response.blocks) {
      this.note(block);
      since = Math.max(since, block.blockTimestamp);
    }
    this.since = since;
    this.firstSince = since;
  }

  /** Pages back to the last read's newest block, within the bound, and pushes what is new, in order. */
  private async readNew(since: number): Promise<void> {
    const found: EvmBlock[] = [];
    let pageToken: string | undefined;
    let complete = false;
    for (let page = 0; page < this.maxPages() && !complete; page += 1) {
      const response = await this.read(PAGE_SIZE, pageToken, { deadline: Date.now() + this.options.readTimeoutMs });
      if (this.stopped) return;
      for (const block of response.blocks) {
        if (block.blockTimestamp < since) complete = true;
        else if (this.isNew(block)) found.push(block);
      }
      if (!response.nextPageToken) complete = true;
      pageToken = response.nextPageToken;
    }
    if (!complete) this.pushAll(gapError(this.what, `the read at ${since}`, this.options.maxCatchUpBlocks));
    for (const block of inChainOrder(found)) {
      this.note(block);
      this.since = Math.max(this.since ?? 0, block.blockTimestamp);
      this.pushAll(block);
    }
    this.emptyReads = found.length > 0 ? 0 : this.emptyReads + 1;
    this.intervalMs =
      this.emptyReads < EMPTY_READS_BEFORE_BACK_OFF
        ? this.options.intervalMs
        : Math.min(this.options.maxIntervalMs, Math.round(this.intervalMs * BACK_OFF));
  }

  private isNew(block: EvmBlock): boolean {
    const head = this.heads.get(block.chainId);
    return head === undefined ? block.blockTimestamp > (this.firstSince ?? 0) : BigInt(block.blockNumber) > head;
  }

  private note(block: EvmBlock): void {
    const number = BigInt(block.blockNumber);
    const head = this.heads.get(block.chainId);
    if (head === undefined || number > head) this.heads.set(block.chainId, number);
  }

  private pushAll(event: BlockEvent): void {
    for (const subscriber of this.subscribers) {
      if (!subscriber.push(event)) this.subscribers.delete(subscriber);
    }
    if (this.subscribers.size === 0) this.stop();
  }

  /** Has every subscriber pay for the read about to be made; ends the streams of those who cannot. */
  private async chargeSubscribers(): Promise<void> {
    await chargeForRead(this.subscribers, (refusal) => refusal);
    if (this.subscribers.size === 0) this.stop();
  }

  private schedule(): void {
    this.timer = setTimeout(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }
}

/** Oldest first by time; within a chain by number, so each chain's blocks come in order. */
function inChainOrder(blocks: EvmBlock[]): EvmBlock[] {
  return blocks.sort(
    (a, b) =>
      a.blockTimestamp - b.blockTimestamp ||
      a.chainId.localeCompare(b.chainId) ||
      (BigInt(a.blockNumber) < BigInt(b.blockNumber) ? -1 : 1),
  );
}

function gapError(what: string, since: string, bound: number): GatewayError {
  return new GatewayError(
    `More than ${bound} blocks of ${what} arrived after ${since}: the blocks between are not pushed; the stream goes on from the newest`,
    "LIVE_GAP",
    { maxCatchUpBlocks: bound },
  );
}

function asGatewayError(error: unknown): GatewayError {
  return error instanceof GatewayError ? error : new GatewayError("The chain's blocks could not be read", "UPSTREAM_ERROR");
}

/**
 * One subscriber's stream. Live events wait while its catch-up runs, then pass only when newer
 * than the last block it was given: each block once, in order.
 */
class BlockSubscriber extends SubscriberStream<BlockEvent> {
  private held: BlockEvent[] | undefined;
  /** The newest block number given, per chain. */
  private readonly given = new Map<string, bigint>();

  constructor(
    private readonly maxPending: number,
    chargeRead: ChargeRead | undefined,
    onLeave: () => void,
  ) {
    super(chargeRead, onLeave);
  }

  holdLive(): void {
    this.held = [];
  }

  releaseLive(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const event of held) this.push(event);
  }

  /** Queues an event; false when the stream has ended (now or before). */
  override push(event: BlockEvent, live = true): boolean {
    if (this.ended) return false;
    if (live && this.held !== undefined && !(event instanceof GatewayError && event.code !== "LIVE_GAP")) {
      this.held.push(event);
      return this.checkPending(this.held.length);
    }
    if (!(event instanceof GatewayError)) {
      const number = BigInt(event.blockNumber);
      const given = this.given.get(event.chainId);
      if (given !== undefined && number <= given) return true;
      this.given.set(event.chainId, number);
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
