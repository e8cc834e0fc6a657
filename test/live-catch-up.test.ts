/**
 * Falling behind once never ends a healthy stream: a poll (or a resume) that finds N new items
 * pushes them all, oldest first, when N ≤ LIVE_MAX_CATCH_UP (500), else one LIVE_GAP and the
 * newest 500; either way the stream goes on, and a client that reads its burst is not slow. With
 * the default live settings, on a simulator whose clock the tests drive; the poll interval is long
 * enough that every read can be told apart in the simulator's request log.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator } from "../simulator/server.ts";
import { subscribeSse, type ExportSubscription, type SseEvent } from "./support/subscriptions.ts";
import { over, type Stream } from "./support/transports.ts";
import { execute, startHarness, until, type Harness, type RunningSimulator } from "./support/harness.ts";
import type {
  AddressTransaction,
  EvmBlock,
  ListAddressTransactionsResponse,
  ListEvmBlocksResponse,
} from "../src/upstream/types.ts";

const C_CHAIN = "43114";
/** The sample network's busiest C-Chain address: it is in most new blocks. */
const BUSY_ADDRESS = "0xba8f6bc43ce667f26cb1ace5fe31a2cdc287159d";
const BLOCKS_ROUTE = "GET /v1/chains/{chainId}/blocks";
const ADDRESS_ROUTE = "GET /v1/chains/{chainId}/addresses/{address}/transactions";
const MAX_CATCH_UP = 500;
/** A gap of 500 or more: 501 items read, the last page sized to the one that tells "more than 500". */
const BOUNDED_READ = [100, 100, 100, 100, 100, 1];
const POLL_MS = "1000";
/** Each C-Chain block comes at least this long after the one before (the simulator's live rhythm). */
const MIN_BLOCK_INTERVAL_S = 1.5;
/** About how long the busy address takes to gain a transaction (some 2 a block), in simulator seconds, with room. */
const TX_SECONDS = 1.5;

const NEW_BLOCKS = `subscription NewBlocks($chainId: ID!, $after: BigInt) {
  newBlocks(chainId: $chainId, afterBlock: $after) { blockNumber blockHash }
}`;
const NEW_ADDRESS_TRANSACTIONS = `subscription AddressActivity($chainId: ID!, $address: EvmAddress!, $after: BigInt) {
  newAddressTransactions(chainId: $chainId, address: $address, afterBlock: $after) { transaction { txHash blockNumber } }
}`;

interface Payload {
  data?: {
    newBlocks?: { blockNumber: string; blockHash: string };
    newAddressTransactions?: { transaction: { txHash: string; blockNumber: string } };
  } | null;
  errors?: { message: string; extensions: { code: string; maxCatchUp?: number } }[];
}

type Events = Pick<ExportSubscription | Stream, "next">;

async function take(subscription: Events, count: number): Promise<Payload[]> {
  const events: Payload[] = [];
  for (let index = 0; index < count; index += 1) {
    const event: SseEvent | undefined = await subscription.next();
    expect(event?.event, `event ${index + 1} of ${count}`).toBe("next");
    events.push(JSON.parse(event!.data) as Payload);
  }
  return events;
}

/** The burst a read of `gap` new items gives: one LIVE_GAP beyond the bound, then the items (their ids), oldest first. */
function burst(events: Payload[], gap: number, id: (payload: Payload) => string): string[] {
  if (gap > MAX_CATCH_UP) {
    const [first] = events.splice(0, 1);
    expect(first!.errors?.[0]?.extensions).toEqual({ code: "LIVE_GAP", maxCatchUp: MAX_CATCH_UP });
  }
  expect(events.filter((event) => event.errors !== undefined)).toEqual([]);
  return events.map(id);
}

/** A GET straight to a simulator's Data API (not reset-neutral: the harness's counts it). */
async function get<T>(simulator: RunningSimulator, path: string): Promise<T> {
  const response = await fetch(simulator.dataUrl + path);
  if (!response.ok) throw new Error(`simulator ${path}: HTTP ${response.status}`);
  return (await response.json()) as T;
}

const blockHash = (payload: Payload) => payload.data!.newBlocks!.blockHash;
const txHash = (payload: Payload) => payload.data!.newAddressTransactions!.transaction.txHash;

describe("a poll or a resume that finds many new items, with the default live settings", () => {
  let harness: Harness;
  /** A second simulator of the same seed, ahead of the first: where the address's next transactions fall. */
  let preview: RunningSimulator;
  beforeAll(async () => {
    harness = await startHarness({
      LIVE_BLOCKS_POLL_MS: POLL_MS,
      LIVE_BLOCKS_MAX_POLL_MS: POLL_MS,
      LIVE_ADDRESS_POLL_MS: POLL_MS,
      LIVE_ADDRESS_MAX_POLL_MS: POLL_MS,
      RATE_LIMIT_BURST: "1000000",
    });
    expect([harness.config.live.maxCatchUp, harness.config.live.maxPendingEvents]).toEqual([500, 256]);
    // The chain list a subscription checks its chain against is fetched once a process: now, so that tests count reads only.
    expect((await execute(harness, `{ chain(id: "${C_CHAIN}") { chainId } }`)).body.errors).toBeUndefined();
    preview = await startSimulator({ dataPort: 0, metricsPort: 0 });
  });
  afterAll(async () => {
    await harness.close();
    await preview.close();
  });

  function cChainHead(): bigint {
    return BigInt(harness.simulator.clock().heads.find((head) => head.chainId === C_CHAIN)!.blockNumber);
  }

  /** Moves the clock on until the C-Chain's head is `target`, never past it. */
  function advanceBlocksTo(target: bigint): void {
    for (let remaining = Number(target - cChainHead()); remaining > 0; remaining = Number(target - cChainHead())) {
      // At most one block is due at once, then one every MIN_BLOCK_INTERVAL_S at most.
      harness.simulator.advanceClock(remaining > 1 ? (remaining - 1) * MIN_BLOCK_INTERVAL_S : 0.5);
    }
    expect(cChainHead()).toBe(target);
  }

  /** Moves a simulator's clock on to a time (Unix milliseconds), in steps the clock allows. */
  function advanceTo(simulator: RunningSimulator, timeMs: number): void {
    for (let left = timeMs - simulator.clock().nowMs; left > 0; left = timeMs - simulator.clock().nowMs) {
      simulator.advanceClock(Math.min(left, 86_400_000) / 1000);
    }
  }

  /** The gateway's reads of a route since the counters were reset: the page sizes each asked, its first page without a token. */
  function readsOf(route: string): number[][] {
    const reads: number[][] = [];
    for (const { route: key, query } of harness.simulator.requests()) {
      if (key !== route) continue;
      if (query.pageToken === undefined) reads.push([Number(query.pageSize)]);
      else reads.at(-1)!.push(Number(query.pageSize));
    }
    return reads;
  }

  /**
   * The reads: the poller's first (`first`), then the one that found the gap (`gapRead`, as many
   * calls as pages) and one-page reads: the live item's, and polls that found nothing. One-page
   * reads cannot be told from one another; the test says how many there were.
   */
  function expectReads(route: string, first: number[], gapRead: number[]): number {
    const [firstRead, ...later] = readsOf(route);
    expect(firstRead).toEqual(first);
    expect(later.filter((read) => read.length > 1)).toEqual(gapRead.length > 1 ? [gapRead] : []);
    expect(later.filter((read) => read.length === 1).every(([size]) => size === 100)).toBe(true);
    expect(later.length).toBeGreaterThanOrEqual(2);
    return later.length;
  }

  async function blocksBetween(after: bigint, upTo: bigint): Promise<EvmBlock[]> {
    const blocks: EvmBlock[] = [];
    let pageToken = "";
    do {
      const page = await get<ListEvmBlocksResponse>(
        harness.simulator,
        `/v1/chains/${C_CHAIN}/blocks?pageSize=100${pageToken && `&pageToken=${pageToken}`}`,
      );
      blocks.push(...page.blocks.filter((block) => BigInt(block.blockNumber) <= upTo));
      pageToken = page.nextPageToken ?? "";
      if (page.blocks.some((block) => BigInt(block.blockNumber) <= after)) break;
    } while (pageToken);
    return blocks.filter((block) => BigInt(block.blockNumber) > after).reverse();
  }

  /** The address's transactions in blocks `from` to `to` (both included), oldest first, as a simulator lists them. */
  async function transactionsIn(simulator: RunningSimulator, from: bigint, to?: bigint): Promise<AddressTransaction[]> {
    const range = `sortOrder=asc&startBlock=${from}${to === undefined ? "" : `&endBlock=${to + 1n}`}`;
    const transactions: AddressTransaction[] = [];
    let pageToken = "";
    do {
      const page = await get<ListAddressTransactionsResponse>(
        simulator,
        `/v1/chains/${C_CHAIN}/addresses/${BUSY_ADDRESS}/transactions?${range}&pageSize=100${pageToken && `&pageToken=${pageToken}`}`,
      );
      transactions.push(...page.transactions);
      pageToken = page.nextPageToken ?? "";
    } while (pageToken);
    return transactions;
  }

  /** The address's `count` newest transactions, newest first. */
  async function newestTransactions(count: number): Promise<AddressTransaction[]> {
    const transactions: AddressTransaction[] = [];
    let pageToken = "";
    do {
      const page = await get<ListAddressTransactionsResponse>(
        harness.simulator,
        `/v1/chains/${C_CHAIN}/addresses/${BUSY_ADDRESS}/transactions?pageSize=100${pageToken && `&pageToken=${pageToken}`}`,
      );
      transactions.push(...page.transactions);
      pageToken = page.nextPageToken ?? "";
    } while (pageToken && transactions.length < count);
    return transactions.slice(0, count);
  }

  async function blockTimeMs(simulator: RunningSimulator, blockNumber: string): Promise<number> {
    const block = await get<EvmBlock>(simulator, `/v1/chains/${C_CHAIN}/blocks/${blockNumber}`);
    return block.blockTimestampMilliseconds!;
  }

  const numberOf = (tx: AddressTransaction) => BigInt(tx.nativeTransaction.blockNumber);

  /**
   * Where `gap` transactions of the address arrive whole blocks at a time, from the preview: the
   * transaction that ends the blocks already there (none: from the head), the gap's, and the
   * first after it, with the rest of its block.
   */
  async function planAddressGap(gap: number): Promise<{
    start: AddressTransaction | undefined;
    gap: AddressTransaction[];
    next: AddressTransaction[];
  }> {
    const headNow = cChainHead();
    advanceTo(preview, harness.simulator.clock().nowMs);
    for (;;) {
      const ahead = await transactionsIn(preview, headNow + 1n);
      // The gap starts and ends between two blocks (a block's transactions come together), and a block follows it.
      for (let start = 0; start + gap < ahead.length; start += 1) {
        if (start > 0 && numberOf(ahead[start - 1]!) === numberOf(ahead[start]!)) continue;
        if (numberOf(ahead[start + gap - 1]!) === numberOf(ahead[start + gap]!)) continue;
        const next = ahead.slice(start + gap).filter((tx) => numberOf(tx) === numberOf(ahead[start + gap]!));
        return { start: ahead[start - 1], gap: ahead.slice(start, start + gap), next };
      }
      preview.advanceClock(Math.min(86_400, TX_SECONDS * (gap + 20)));
    }
  }

  async function endStream(subscription: { cancel(): Promise<void> }): Promise<void> {
    await subscription.cancel();
    await until(() => harness.gateway.liveCounts().pollers === 0, "the stream to leave its poller");
  }

  it.each([
    [1, [100]],
    [256, [100, 100, 100]],
    [257, [100, 100, 100]],
    [500, BOUNDED_READ],
    [501, BOUNDED_READ],
    [5_000, BOUNDED_READ],
  ])(
    "a poll that finds %i new blocks pushes them all or one LIVE_GAP and the newest 500, and the stream goes on",
    async (gap, gapRead) => {
      harness.simulator.resetCounters();
      const subscription = await subscribeSse(harness, NEW_BLOCKS, { chainId: C_CHAIN });
      try {
        await until(() => readsOf(BLOCKS_ROUTE).length === 1, "the poller's first read");
        await new Promise((resolve) => setTimeout(resolve, 50));
        const before = cChainHead();
        advanceBlocksTo(before + BigInt(gap));
        const pushed = Math.min(gap, MAX_CATCH_UP);
        const hashes = burst(await take(subscription, pushed + (gap > MAX_CATCH_UP ? 1 : 0)), gap, blockHash);
        advanceBlocksTo(before + BigInt(gap) + 1n);
        const [live] = await take(subscription, 1);
        expect(live!.data?.newBlocks?.blockNumber).toBe(String(before + BigInt(gap) + 1n));
        const reads = expectReads(BLOCKS_ROUTE, [1], gapRead);
        expect(harness.simulator.counters()).toEqual({ [BLOCKS_ROUTE]: 1 + gapRead.length + reads - 1 });
        const expected = await blocksBetween(before + BigInt(gap - pushed), before + BigInt(gap));
        expect(expected).toHaveLength(pushed);
        expect(hashes).toEqual(expected.map((block) => block.blockHash));
        expect(harness.gateway.liveCounts()).toEqual({ pollers: 1, subscribers: 1 });
      } finally {
        await endStream(subscription);
      }
    },
  );

  it.each([
    [1, [100]],
    [256, [100, 100, 100]],
    [257, [100, 100, 100]],
    [500, BOUNDED_READ],
    [501, BOUNDED_READ],
    [5_000, BOUNDED_READ],
  ])(
    "a poll that finds %i new transactions of an address pushes them all or one LIVE_GAP and the newest 500, and the stream goes on",
    async (gap, gapRead) => {
      const plan = await planAddressGap(gap);
      if (plan.start) advanceTo(harness.simulator, await blockTimeMs(preview, plan.start.nativeTransaction.blockNumber));
      harness.simulator.resetCounters();
      const subscription = await subscribeSse(harness, NEW_ADDRESS_TRANSACTIONS, { chainId: C_CHAIN, address: BUSY_ADDRESS });
      try {
        await until(() => readsOf(ADDRESS_ROUTE).length === 1, "the poller's first read");
        await new Promise((resolve) => setTimeout(resolve, 50));
        const last = plan.gap.at(-1)!.nativeTransaction.blockNumber;
        advanceTo(harness.simulator, await blockTimeMs(preview, last));
        const pushed = Math.min(gap, MAX_CATCH_UP);
        const hashes = burst(await take(subscription, pushed + (gap > MAX_CATCH_UP ? 1 : 0)), gap, txHash);
        advanceTo(harness.simulator, await blockTimeMs(preview, plan.next[0]!.nativeTransaction.blockNumber));
        const live = await take(subscription, plan.next.length);
        expect(live.map(txHash)).toEqual(plan.next.map((tx) => tx.nativeTransaction.txHash));
        const reads = expectReads(ADDRESS_ROUTE, [100], gapRead);
        expect(harness.simulator.counters()).toEqual({ [ADDRESS_ROUTE]: 1 + gapRead.length + reads - 1 });
        // The simulator's own answers now: the gap's transactions, of which the newest 500 were pushed.
        const first = plan.start ? numberOf(plan.start) + 1n : numberOf(plan.gap[0]!);
        const expected = await transactionsIn(harness.simulator, first, BigInt(last));
        expect(expected.map((tx) => tx.nativeTransaction.txHash)).toEqual(plan.gap.map((tx) => tx.nativeTransaction.txHash));
        expect(hashes).toEqual(expected.slice(-pushed).map((tx) => tx.nativeTransaction.txHash));
        expect(harness.gateway.liveCounts()).toEqual({ pollers: 1, subscribers: 1 });
      } finally {
        await endStream(subscription);
      }
    },
    // Some thousands of the address's transactions to generate, index and list, twice (the preview's, the simulator's).
    60_000,
  );

  /** The address's transactions of the C-Chain's next block that has some, from the preview. */
  async function upcoming(): Promise<AddressTransaction[]> {
    const head = cChainHead();
    advanceTo(preview, harness.simulator.clock().nowMs);
    for (;;) {
      const ahead = await transactionsIn(preview, head + 1n, head + 100n);
      if (ahead.length > 0) return ahead.filter((tx) => numberOf(tx) === numberOf(ahead[0]!));
      preview.advanceClock(60);
    }
  }

  it("a resume 501 blocks back gives one LIVE_GAP and the newest 500, then the live blocks", async () => {
    harness.simulator.resetCounters();
    const head = cChainHead();
    const subscription = await subscribeSse(harness, NEW_BLOCKS, { chainId: C_CHAIN, after: String(head - 501n) });
    try {
      const hashes = burst(await take(subscription, 501), 501, blockHash);
      advanceBlocksTo(head + 1n);
      const [live] = await take(subscription, 1);
      expect(live!.data?.newBlocks?.blockNumber).toBe(String(head + 1n));
      const reads = expectReads(BLOCKS_ROUTE, [1], BOUNDED_READ);
      expect(harness.simulator.counters()).toEqual({ [BLOCKS_ROUTE]: 1 + BOUNDED_READ.length + reads - 1 });
      expect(hashes).toEqual((await blocksBetween(head - 500n, head)).map((block) => block.blockHash));
    } finally {
      await endStream(subscription);
    }
  });

  it("a resume 501 transactions back gives one LIVE_GAP and the newest 500, then the live transactions", async () => {
    // `after` is a block: the one before the address's 501 newest transactions, once they begin a block.
    let newest: AddressTransaction[] = [];
    for (;;) {
      newest = (await newestTransactions(502)).reverse();
      if (numberOf(newest[0]!) !== numberOf(newest[1]!)) break;
      harness.simulator.advanceClock(2);
    }
    const next = await upcoming();
    harness.simulator.resetCounters();
    const variables = { chainId: C_CHAIN, address: BUSY_ADDRESS, after: String(numberOf(newest[0]!)) };
    const subscription = await subscribeSse(harness, NEW_ADDRESS_TRANSACTIONS, variables);
    try {
      const hashes = burst(await take(subscription, 501), 501, txHash);
      expect(hashes).toEqual(newest.slice(-500).map((tx) => tx.nativeTransaction.txHash));
      advanceTo(harness.simulator, await blockTimeMs(preview, next[0]!.nativeTransaction.blockNumber));
      const live = await take(subscription, next.length);
      expect(live.map(txHash)).toEqual(next.map((tx) => tx.nativeTransaction.txHash));
      const reads = expectReads(ADDRESS_ROUTE, [100], BOUNDED_READ);
      expect(harness.simulator.counters()).toEqual({ [ADDRESS_ROUTE]: 1 + BOUNDED_READ.length + reads - 1 });
    } finally {
      await endStream(subscription);
    }
  }, 60_000);

  it("a poll that finds 501 new blocks reaches a WebSocket client whole: one LIVE_GAP, the newest 500, then live", async () => {
    const client = over("websocket", harness);
    harness.simulator.resetCounters();
    const stream = await client.subscribe({ query: NEW_BLOCKS, variables: { chainId: C_CHAIN } });
    try {
      await until(() => readsOf(BLOCKS_ROUTE).length === 1, "the poller's first read");
      await new Promise((resolve) => setTimeout(resolve, 50));
      const before = cChainHead();
      advanceBlocksTo(before + 501n);
      const hashes = burst(await take(stream, 501), 501, blockHash);
      advanceBlocksTo(before + 502n);
      const [live] = await take(stream, 1);
      expect(live!.data?.newBlocks?.blockNumber).toBe(String(before + 502n));
      expectReads(BLOCKS_ROUTE, [1], BOUNDED_READ);
      expect(hashes).toEqual((await blocksBetween(before + 1n, before + 501n)).map((block) => block.blockHash));
    } finally {
      await stream.cancel();
      await until(() => harness.gateway.liveCounts().pollers === 0, "the stream to leave its poller");
      await client.close();
    }
  });
});

describe("a stream that leaves a burst unread, with the default LIVE_MAX_PENDING_EVENTS and REQUEST_TIMEOUT_MS 1.5 s", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({
      LIVE_BLOCKS_POLL_MS: POLL_MS,
      LIVE_BLOCKS_MAX_POLL_MS: POLL_MS,
      REQUEST_TIMEOUT_MS: "1500",
      RATE_LIMIT_BURST: "1000000",
    });
    expect(harness.config.live.maxPendingEvents).toBe(256);
  });
  afterAll(async () => {
    await harness.close();
  });

  const cChainHead = () => BigInt(harness.simulator.clock().heads.find((head) => head.chainId === C_CHAIN)!.blockNumber);
  const blockReads = () =>
    harness.simulator.requests().filter(({ route, query }) => route === BLOCKS_ROUTE && !query.pageToken).length;

  it("is not ended for the burst, nor for polls while it takes none for less than the deadline; then is, with SLOW_SUBSCRIBER", async () => {
    harness.simulator.resetCounters();
    const subscription = await subscribeSse(harness, NEW_BLOCKS, { chainId: C_CHAIN });
    try {
      await until(() => blockReads() === 1, "the poller's first read");
      const before = cChainHead();
      harness.simulator.advanceClock(300 * 2.5);
      const burstSize = Number(cChainHead() - before);
      expect(burstSize).toBeGreaterThan(256);
      await until(() => blockReads() === 2, "the poll that finds the burst");
      // The client reads none of them; the next poll brings one more within the deadline.
      harness.simulator.advanceClock(MIN_BLOCK_INTERVAL_S);
      await until(() => blockReads() === 3, "the poll after the burst");
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(harness.gateway.liveCounts()).toEqual({ pollers: 1, subscribers: 1 });
      // Taking none for longer than REQUEST_TIMEOUT_MS, it is ended by the next poll that brings more.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      harness.simulator.advanceClock(MIN_BLOCK_INTERVAL_S);
      await until(() => harness.gateway.liveCounts().subscribers === 0, "the slow stream to be ended");
      const events = await subscription.rest();
      const payloads = events.filter((event) => event.event === "next").map((event) => JSON.parse(event.data) as Payload);
      expect(payloads.at(-1)?.errors?.[0]?.extensions.code).toBe("SLOW_SUBSCRIBER");
      expect(payloads.length).toBeLessThan(burstSize - 256);
      expect(events.at(-1)?.event).toBe("complete");
    } finally {
      await subscription.cancel();
    }
  });
});
