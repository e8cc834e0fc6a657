/**
 * Row 17: live work is paid for, and the pool of live pollers is shared fairly. Callers are told
 * apart by X-Forwarded-For (TRUST_PROXY); the simulator's clock is driven, so that the blocks a
 * poll finds are the test's to choose.
 */
import { afterEach, describe, expect, it } from "vitest";
import { subscribeSse, type SseEvent } from "../support/subscriptions.ts";
import { execute, startHarness, until, upstreamCalls, type Harness } from "../support/harness.ts";

const C_CHAIN = "43114";
const BLOCKS_ROUTE = "GET /v1/chains/{chainId}/blocks";
/** A block's transactions, and each one's input: some 8 upstream calls per block. */
const COSTLY_BLOCKS = `subscription ($after: BigInt) {
  newBlocks(chainId: "${C_CHAIN}", after: $after) { blockNumber transactions { nodes { input } } }
}`;
/** Nothing beyond the block: the subscription is estimated at its first read, 1. */
const BLOCK_NUMBERS = `subscription { newBlocks(chainId: "${C_CHAIN}") { blockNumber } }`;

interface Payload {
  data?: { newBlocks?: { blockNumber: string } | null } | null;
  errors?: { message: string; extensions: Record<string, unknown> }[];
}

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
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

describe("row 17: live work is paid for", () => {
  it("row 17: each event pays what its selection fetched, and a resume pays each page it reads", async () => {
    // No poll after the first read: the reads are the first and the resume's.
    harness = await startHarness({
      TRUST_PROXY: "true",
      RATE_LIMIT_RATE: "0.001",
      RATE_LIMIT_BURST: "1000",
      LIVE_BLOCKS_POLL_MS: "600000",
      LIVE_BLOCKS_MAX_POLL_MS: "600000",
    });
    const missed = 30;
    const subscription = await subscribeSse(
      harness,
      COSTLY_BLOCKS,
      { after: String(head() - BigInt(missed)) },
      from("198.51.100.1"),
    );
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
    // each page of the resume cost 1. The follow-up costs 1.
    const followUp = await execute(harness, "{ __typename }", {}, from("198.51.100.1"));
    expect(Number(followUp.headers.get("ratelimit-remaining"))).toBe(1000 - fetched - resumePages - 1);
  });

  it("row 17: a caller whose events' selections put it in debt has its stream ended by the next poll's charge", async () => {
    const burst = 150;
    harness = await startHarness({
      TRUST_PROXY: "true",
      RATE_LIMIT_RATE: "0.001",
      RATE_LIMIT_BURST: String(burst),
      LIVE_BLOCKS_POLL_MS: "100",
      LIVE_BLOCKS_MAX_POLL_MS: "100",
    });
    const subscription = await subscribeSse(harness, COSTLY_BLOCKS, {}, from("198.51.100.2"));
    await until(() => (upstreamCalls(harness!)[BLOCKS_ROUTE] ?? 0) >= 1, "the poller's first read");
    // Some 30 blocks arrive, whose transactions' inputs cost more than the budget holds.
    const before = head();
    harness.simulator.advanceClock(60);
    const events = payloads(await subscription.rest());
    const blocks = events.filter((event) => event.data?.newBlocks);
    expect(blocks.length).toBe(Number(head() - before));
    expect(events.at(-1)!.errors?.[0]?.extensions).toMatchObject({ code: "RATE_LIMITED", cost: 1 });
    expect(events.at(-1)!.errors?.[0]?.message).toMatch(/each read of its poller for your subscription \(the stream ends\)/);
    await until(() => harness!.gateway.liveCounts().pollers === 0, "the poller to stop");

    // It paid each read after the first and every call its events made: that many beyond its budget.
    const reads = upstreamCalls(harness)[BLOCKS_ROUTE]!;
    const debt = selectionCalls() + reads - 1 - burst;
    expect(debt).toBeGreaterThan(0);
    const refused = await execute(harness, "{ __typename }", {}, from("198.51.100.2"));
    expect(refused.status).toBe(429);
    // Until it holds 1 again, at 0.001 a second: its debt and 1.
    expect(Math.round(Number(refused.headers.get("retry-after")) / 1_000)).toBe(debt + 1);
  });

  it("row 17: a poll that pages back several pages costs each subscriber every page", async () => {
    const burst = 40;
    harness = await startHarness({
      TRUST_PROXY: "true",
      RATE_LIMIT_RATE: "0.001",
      RATE_LIMIT_BURST: String(burst),
      LIVE_BLOCKS_POLL_MS: "100",
      LIVE_BLOCKS_MAX_POLL_MS: "100",
      LIVE_MAX_PENDING_EVENTS: "1000",
    });
    const subscription = await subscribeSse(harness, BLOCK_NUMBERS, {}, from("198.51.100.3"));
    await until(() => (upstreamCalls(harness!)[BLOCKS_ROUTE] ?? 0) >= 1, "the poller's first read");
    // Some 300 blocks arrive before the next poll: it reads 100 a page.
    const before = head();
    harness.simulator.advanceClock(600);
    const arrived = Number(head() - before);
    expect(arrived).toBeGreaterThan(200);
    const events = payloads(await subscription.rest());
    expect(events.filter((event) => event.data?.newBlocks).map((event) => event.data!.newBlocks!.blockNumber)).toEqual(
      Array.from({ length: arrived }, (_, index) => String(before + 1n + BigInt(index))),
    );
    expect(events.at(-1)!.errors?.[0]?.extensions).toMatchObject({ code: "RATE_LIMITED" });
    await until(() => harness!.gateway.liveCounts().pollers === 0, "the poller to stop");
    // The subscription paid its first read; every later read, each page of the long poll too, 1:
    // as many reads as the budget.
    expect(upstreamCalls(harness)[BLOCKS_ROUTE]).toBe(burst);
  });
});
