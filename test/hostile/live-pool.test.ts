/**
 * Row 17: live work is paid for, and the pool of live pollers is shared fairly. Callers are told
 * apart by X-Forwarded-For (TRUST_PROXY); the simulator's clock is driven, so that the blocks a
 * poll finds are the test's to choose.
 *
 * Transports: SSE (a POST asking for `text/event-stream` to the served port) and WebSocket
 * (graphql-ws frames): subscriptions are streams, which a plain HTTP POST has no form of. A
 * subscription refused before it starts is JSON with its status over SSE, an `error` message over
 * WebSocket; a socket's opening costs its caller 1, which the budgets below count; a caller's
 * follow-up query goes over the same transport, its budget read from what the answer carries.
 * Upstream calls are counted the same on both.
 */
import { afterEach, describe, expect, it } from "vitest";
import { newDocumentCost } from "../../src/limits/request-costs.ts";
import type { SseEvent } from "../support/subscriptions.ts";
import { startHarness, until, upstreamCalls, type Harness } from "../support/harness.ts";
import { over, type Stream, type TransportClient } from "../support/transports.ts";

const C_CHAIN = "43114";
const BLOCKS_ROUTE = "GET /v1/chains/{chainId}/blocks";
const ADDRESS_ROUTE = "GET /v1/chains/{chainId}/addresses/{address}/transactions";
/** A block's transactions, and each one's input: some 8 upstream calls per block. */
const COSTLY_BLOCKS = `subscription ($after: BigInt) {
  newBlocks(chainId: "${C_CHAIN}", afterBlock: $after) { blockNumber transactions { nodes { input } } }
}`;
/** Nothing beyond the block: the subscription is estimated at its first read, 1. */
const BLOCK_NUMBERS = `subscription { newBlocks(chainId: "${C_CHAIN}") { blockNumber } }`;

interface Payload {
  data?: { newBlocks?: { blockNumber: string } | null } | null;
  errors?: { message: string; extensions: Record<string, unknown> }[];
}

let harness: Harness | undefined;
let client: TransportClient | undefined;
afterEach(async () => {
  await client?.close();
  await harness?.close();
  client = undefined;
  harness = undefined;
});

const from = (address: string) => ({ "x-forwarded-for": address });

function head(chainId = C_CHAIN): bigint {
  return BigInt(harness!.simulator.clock().heads.find((chain) => chain.chainId === chainId)!.blockNumber);
}

function payloads(events: SseEvent[]): Payload[] {
  return events.filter((event) => event.event === "next").map((event) => JSON.parse(event.data) as Payload);
}

/** The calls of every route but the poller's: what the events' selections fetched (and the chain's look-up). */
function selectionCalls(): number {
  return Object.entries(upstreamCalls(harness!))
    .filter(([route]) => route !== BLOCKS_ROUTE)
    .reduce((sum, [, count]) => sum + count, 0);
}

/**
 * A gateway whose block pollers read every `pollMs`, for callers with a budget of `burst` that
 * hardly refills; and the test's client of it over `transport`.
 */
async function polling(
  transport: StreamTransport,
  pollMs: number,
  burst: number,
  env: Record<string, string> = {},
): Promise<Harness> {
  harness = await startHarness({
    TRUST_PROXY: "true",
    RATE_LIMIT_RATE: "0.001",
    RATE_LIMIT_BURST: String(burst),
    LIVE_BLOCKS_POLL_MS: String(pollMs),
    LIVE_BLOCKS_MAX_POLL_MS: String(pollMs),
    ...env,
  });
  client = over(transport, harness);
  return harness;
}

type StreamTransport = "sse" | "websocket";
/** What opening a caller's socket costs it: 1 on a WebSocket, nothing over SSE. */
const openingOf = (transport: StreamTransport) => (transport === "websocket" ? 1 : 0);

const subscribe = (query: string, headers: Record<string, string>, variables: Record<string, unknown> = {}) =>
  client!.subscribe({ query, variables }, headers);

/**
 * Subscribes as `address`, lets `seconds` of blocks arrive after the poller's first read, and
 * reads the stream until the caller's budget ends it; the head before, the blocks that arrived
 * and the events.
 */
async function untilSpent(query: string, address: string, seconds: number) {
  const subscription = await subscribe(query, from(address));
  await until(() => (upstreamCalls(harness!)[BLOCKS_ROUTE] ?? 0) >= 1, "the poller's first read");
  const before = head();
  harness!.simulator.advanceClock(seconds);
  const arrived = Number(head() - before);
  const events = payloads(await subscription.rest());
  expect(events.at(-1)!.errors?.[0]?.extensions).toMatchObject({ code: "RATE_LIMITED", cost: 1 });
  expect(events.at(-1)!.errors?.[0]?.message).toMatch(/each read of its poller for your subscription \(the stream ends\)/);
  await until(() => harness!.gateway.liveCounts().pollers === 0, "the poller to stop");
  return { before, arrived, events };
}

describe.each(["sse", "websocket"] as const)("row 17: live work is paid for, over %s", (transport) => {
  const opening = openingOf(transport);

  it("row 17: each event pays what its selection fetched, and a resume pays each page it reads", async () => {
    // No poll after the first read: the reads are the first and the resume's.
    harness = await polling(transport, 600_000, 1000);
    const missed = 30;
    const subscription = await subscribe(COSTLY_BLOCKS, from("198.51.100.1"), { after: String(head() - BigInt(missed)) });
    const events: Payload[] = [];
    for (let index = 0; index < missed; index += 1) events.push(...payloads([(await subscription.next())!]));
    expect(events.map((event) => event.data?.newBlocks?.blockNumber)).toEqual(
      Array.from({ length: missed }, (_, index) => String(head() - BigInt(missed) + 1n + BigInt(index))),
    );
    await subscription.cancel();

    const resumePages = upstreamCalls(harness)[BLOCKS_ROUTE]! - 1;
    const fetched = selectionCalls();
    expect(resumePages).toBe(1);
    expect(fetched).toBeGreaterThan(4 * missed);
    // Its first read came with the subscription's charge, which the selections' calls outgrew;
    // each page of the resume cost 1 (and a socket's opening 1). The follow-up costs 1. Both
    // documents are new to this gateway, and paid for that.
    const followUp = await client!.send({ query: "{ __typename }" }, from("198.51.100.1"));
    expect(followUp.refused).toBe(false);
    const documents = newDocumentCost(COSTLY_BLOCKS) + newDocumentCost("{ __typename }");
    expect(followUp.remaining).toBe(1000 - opening - documents - fetched - resumePages - 1);
  });

  it("row 17: a caller whose events' selections put it in debt has its stream ended by the next poll's charge", async () => {
    const burst = 150;
    harness = await polling(transport, 100, burst);
    // Some 30 blocks arrive, whose transactions' inputs cost more than the budget holds.
    const { arrived, events } = await untilSpent(COSTLY_BLOCKS, "198.51.100.2", 60);
    expect(events.filter((event) => event.data?.newBlocks)).toHaveLength(arrived);

    // It paid each read after the first and every call its events made (and a socket's opening,
    // and its new document): that many beyond its budget.
    const reads = upstreamCalls(harness)[BLOCKS_ROUTE]!;
    const debt = selectionCalls() + reads - 1 + opening + newDocumentCost(COSTLY_BLOCKS) - burst;
    expect(debt).toBeGreaterThan(0);
    const refused = await client!.send({ query: "{ __typename }" }, from("198.51.100.2"));
    expect(refused.refused).toBe(true);
    if (refused.status !== undefined) expect(refused.status).toBe(429);
    expect(refused.body.errors![0]!.extensions).toMatchObject({ code: "RATE_LIMITED" });
    // Until it holds 1 again, at 0.001 a second: its debt and 1 (Retry-After, or the socket's error's retryAfter).
    const retryAfter = refused.headers ? refused.headers.get("retry-after") : refused.body.errors![0]!.extensions!.retryAfter;
    expect(Math.round(Number(retryAfter) / 1_000)).toBe(debt + 1);
  });

  it("row 17: a poll that pages back several pages costs each subscriber every page", async () => {
    const burst = 40;
    harness = await polling(transport, 100, burst);
    // Some 300 blocks arrive before the next poll: it reads 100 a page, and pushes them all at once
    // (a poll's burst never makes a stream slow).
    const { before, arrived, events } = await untilSpent(BLOCK_NUMBERS, "198.51.100.3", 600);
    expect(arrived).toBeGreaterThan(200);
    expect(events.filter((event) => event.data?.newBlocks).map((event) => event.data!.newBlocks!.blockNumber)).toEqual(
      Array.from({ length: arrived }, (_, index) => String(before + 1n + BigInt(index))),
    );
    // The subscription paid its first read; every later read, each page of the long poll too, 1:
    // as many reads as the budget (less a socket's opening, and its new document's cost).
    expect(upstreamCalls(harness)[BLOCKS_ROUTE]).toBe(burst - opening - newDocumentCost(BLOCK_NUMBERS));
  });
});

/** The EVM address numbered `index`: each a question of its own. */
const numberedAddress = (index: number) => `0x${index.toString(16).padStart(40, "0")}`;

/** A subscription to an address's new transactions: a question of its own, one poller. */
function addressQuestion(index: number): string {
  return `subscription { newAddressTransactions(chainId: "${C_CHAIN}", address: "${numberedAddress(index)}") { transaction { txHash } } }`;
}

/**
 * The errors of a stream that has ended: of its events, or of its refusal when it was refused
 * before it started (JSON with its status over SSE, an `error` message over WebSocket).
 */
async function errorsOf(subscription: Stream): Promise<Payload["errors"]> {
  const refusal = await subscription.refusal();
  if (refusal) return refusal.errors as Payload["errors"];
  return payloads(await subscription.rest()).flatMap((event) => event.errors ?? []);
}

describe.each(["sse", "websocket"] as const)("row 17: the pool of live pollers is shared fairly, over %s", (transport) => {
  it("row 17: no caller holds more than its share; at capacity a question already asked is joined, and a newcomer takes a poller from the largest holder, never a shared one", async () => {
    // No poll after the first reads: the pollers only count.
    harness = await polling(transport, 600_000, 100_000, {
      LIVE_MAX_POLLERS: "4",
      LIVE_MAX_POLLERS_PER_CALLER: "2",
      LIVE_ADDRESS_POLL_MS: "600000",
      LIVE_ADDRESS_MAX_POLL_MS: "600000",
    });
    const live = () => harness!.gateway.liveCounts();
    const started = (pollers: number, subscribers: number) =>
      until(
        () => live().pollers === pollers && live().subscribers === subscribers,
        `${pollers} pollers, ${subscribers} subscribers`,
      );
    // One caller, however it rotates its addresses inside its /64.
    const greedy = (index: number) => from(`2001:db8:7:7::${index + 1}`);

    const held = [await subscribe(addressQuestion(0), greedy(0)), await subscribe(addressQuestion(1), greedy(1))];
    await started(2, 2);
    await until(() => upstreamCalls(harness!)[ADDRESS_ROUTE] === 2, "the two pollers' first reads");
    harness.simulator.resetCounters();
    const third = await errorsOf(await subscribe(addressQuestion(2), greedy(2)));
    expect(third?.[0]?.extensions).toEqual({ code: "LIVE_CAPACITY", maxPollers: 4, maxPollersPerCaller: 2 });
    expect(third?.[0]?.message).toMatch(/only subscriber of 2 live questions, the most LIVE_MAX_POLLERS_PER_CALLER allows/);
    expect(upstreamCalls(harness)).toEqual({});

    // Two callers share the blocks of a chain; a fourth question fills the pool.
    const shared = [await subscribe(BLOCK_NUMBERS, from("198.51.100.10")), await subscribe(BLOCK_NUMBERS, from("198.51.100.11"))];
    const fourth = await subscribe(addressQuestion(3), from("198.51.100.12"));
    await started(4, 5);
    // A question already asked is joined at capacity, by a new caller and by the largest holder alike: no poller is added.
    const joined = [await subscribe(BLOCK_NUMBERS, from("198.51.100.13")), await subscribe(addressQuestion(0), greedy(3))];
    await started(4, 7);

    // A newcomer asks a new question: the caller holding most alone (2) gives one up.
    const newcomer = await subscribe(addressQuestion(4), from("198.51.100.14"));
    const reclaimed = await errorsOf(held[0]!);
    expect(reclaimed?.[0]?.extensions).toEqual({ code: "LIVE_CAPACITY", maxPollers: 4, reclaimed: true });
    expect(reclaimed?.[0]?.message).toMatch(/you were the only subscriber of 2 of them, more than any other caller/);
    expect(await errorsOf(joined[1]!)).toEqual(reclaimed);
    await started(4, 6);

    // Now each of three callers holds one poller alone, and the fourth is shared: nobody holds more than a newcomer's next question would take.
    // The fourth's and the newcomer's pollers have made their first reads: a stream may start before its poller's first read.
    await until(() => upstreamCalls(harness!)[ADDRESS_ROUTE] === 2, "the fourth's and the newcomer's first reads");
    harness.simulator.resetCounters();
    const refused = await errorsOf(await subscribe(addressQuestion(5), from("198.51.100.14")));
    expect(refused?.[0]?.extensions).toEqual({ code: "LIVE_CAPACITY", maxPollers: 4 });
    expect(refused?.[0]?.message).toMatch(/no caller holds more of them alone than you/);
    expect(upstreamCalls(harness)).toEqual({});
    // The shared poller was never taken: its three subscribers, and the three lone holders', still stream.
    expect(live()).toEqual({ pollers: 4, subscribers: 6 });
    for (const subscription of [...shared, joined[0]!, held[1]!, fourth, newcomer]) await subscription.cancel();
  });
});

describe.each(["sse", "websocket"] as const)(
  "row 27: the pollers' reads share LIVE_MAX_READS_PER_SECOND, over %s",
  (transport) => {
    it("row 27: a caller holding many pollers waits; a chain's shared blocks and a light caller's question keep their intervals, and the upstream sees the budget", async () => {
      harness = await polling(transport, 500, 100_000, {
        LIVE_MAX_READS_PER_SECOND: "10",
        MAX_SUBSCRIPTIONS_PER_CALLER: "30",
        LIVE_ADDRESS_POLL_MS: "250",
        LIVE_ADDRESS_MAX_POLL_MS: "250",
      });
      // 30 questions of one caller (3 addresses of its /64) ask 120 reads a second; a light caller's
      // question 4, and the blocks two callers share 2: far more than the budget.
      for (let index = 0; index < 30; index += 1)
        await subscribe(addressQuestion(100 + index), from(`2001:db8:9:9::${(index % 3) + 1}`));
      const light = await subscribe(addressQuestion(200), from("198.51.100.21"));
      const shared = [
        await subscribe(BLOCK_NUMBERS, from("198.51.100.22")),
        await subscribe(BLOCK_NUMBERS, from("198.51.100.23")),
      ];
      await until(() => harness!.gateway.liveCounts().pollers === 32, "32 pollers");
      // Past the first reads, which wait their turn too.
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      harness.simulator.resetCounters();
      const began = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      const calls = upstreamCalls(harness);
      const seconds = (performance.now() - began) / 1000;
      const lightAddress = numberedAddress(200);
      const lightReads = harness.simulator.requests().filter((request) => request.path.includes(lightAddress)).length;

      const total = Object.values(calls).reduce((sum, count) => sum + count, 0);
      expect(total).toBeLessThanOrEqual(Math.ceil(10 * seconds) + 2);
      // The budget is used, not left idle: the heavy caller's pollers read what is left.
      expect(total).toBeGreaterThanOrEqual(Math.floor(8 * seconds));
      expect(calls[BLOCKS_ROUTE]).toBeGreaterThanOrEqual(Math.floor(seconds / 0.5) - 1);
      expect(lightReads).toBeGreaterThanOrEqual(Math.floor(seconds / 0.25) - 2);
      expect(calls[ADDRESS_ROUTE]! - lightReads).toBeGreaterThan(0);
      await light.cancel();
      for (const subscription of shared) await subscription.cancel();
    });

    it("row 27: the turns of pollers that stop leave the queue at once, and the pollers left keep reading", async () => {
      harness = await polling(transport, 500, 100_000, {
        LIVE_MAX_READS_PER_SECOND: "2",
        MAX_SUBSCRIPTIONS_PER_CALLER: "100",
        LIVE_MAX_POLLERS_PER_CALLER: "100",
        LIVE_ADDRESS_POLL_MS: "250",
        LIVE_ADDRESS_MAX_POLL_MS: "250",
      });
      const subscriptions: Stream[] = [];
      for (let index = 0; index < 80; index += 1)
        subscriptions.push(await subscribe(addressQuestion(300 + index), from(`198.51.100.${30 + (index % 8)}`)));
      // 80 pollers at 4 reads a second each share 2: nearly all of them wait for a turn.
      await until(() => harness!.gateway.liveReadsWaiting() >= 70, "70 reads waiting");
      for (const subscription of subscriptions.slice(5)) await subscription.cancel();
      await until(() => harness!.gateway.liveCounts().pollers === 5, "5 pollers left");
      // The 75 stopped pollers' turns are no longer counted, nor kept: what waits is the 5 left's.
      expect(harness.gateway.liveReadsWaiting()).toBeLessThanOrEqual(5);
      harness.simulator.resetCounters();
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const left = subscriptions.slice(0, 5).map((_, index) => numberedAddress(300 + index));
      const reads = harness.simulator.requests().filter((request) => left.some((address) => request.path.includes(address)));
      // The budget goes to the pollers left, not to the husks of those that stopped.
      expect(reads.length).toBeGreaterThanOrEqual(3);
      for (const subscription of subscriptions.slice(0, 5)) await subscription.cancel();
    });
  },
);
