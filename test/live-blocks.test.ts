/** `Subscription.newBlocks`: one poller per chain, each block once and in order, resumable, bounded. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { subscribeSse, type ExportSubscription, type SseEvent } from "./support/subscriptions.ts";
import { simulatorGet, startHarness, until, upstreamCalls, type Harness } from "./support/harness.ts";
import type { ListEvmBlocksResponse } from "../src/upstream/types.ts";

const NEW_BLOCKS = `subscription NewBlocks($chainId: ID!, $after: BigInt) {
  newBlocks(chainId: $chainId, afterBlock: $after) { blockNumber blockHash parentHash chain { chainId } }
}`;
const C_CHAIN = "43114";
/** Polls every 100 ms; more than 5 events unread and none taken for 1 s make a stream slow. */
const SLOW_READER_SETTINGS = {
  LIVE_BLOCKS_POLL_MS: "100",
  LIVE_BLOCKS_MAX_POLL_MS: "100",
  LIVE_MAX_PENDING_EVENTS: "5",
  REQUEST_TIMEOUT_MS: "1000",
  RATE_LIMIT_BURST: "100000",
};
const BLOCKS_ROUTE = "GET /v1/chains/{chainId}/blocks";

interface BlockEvent {
  data?: { newBlocks: { blockNumber: string; blockHash: string; parentHash: string; chain: { chainId: string } | null } | null };
  errors?: { message: string; extensions: { code: string } }[];
}

function payload(event: SseEvent | undefined): BlockEvent {
  expect(event?.event).toBe("next");
  return JSON.parse(event!.data) as BlockEvent;
}

async function take(subscription: ExportSubscription, count: number): Promise<BlockEvent[]> {
  const events: BlockEvent[] = [];
  for (let index = 0; index < count; index += 1) events.push(payload(await subscription.next()));
  return events;
}

describe("newBlocks", () => {
  let harness: Harness;
  let head: bigint;
  beforeAll(async () => {
    // A poll interval longer than any test: the only reads are the first and the catch-ups.
    harness = await startHarness({
      LIVE_BLOCKS_POLL_MS: "600000",
      LIVE_BLOCKS_MAX_POLL_MS: "600000",
      LIVE_MAX_CATCH_UP: "100",
      RATE_LIMIT_BURST: "100000",
    });
    const newest = await simulatorGet<ListEvmBlocksResponse>(harness, "data", `/v1/chains/${C_CHAIN}/blocks?pageSize=1`);
    head = BigInt(newest.blocks[0]!.blockNumber);
  });
  afterAll(async () => {
    await harness.close();
  });

  it("resumes after a block: the blocks since then come first, oldest first, each once, with their links", async () => {
    const subscription = await subscribeSse(harness, NEW_BLOCKS, { chainId: C_CHAIN, after: String(head - 3n) });
    try {
      const events = await take(subscription, 3);
      const blocks = events.map((event) => event.data!.newBlocks!);
      expect(blocks.map((block) => block.blockNumber)).toEqual([head - 2n, head - 1n, head].map(String));
      expect(blocks[1]!.parentHash).toBe(blocks[0]!.blockHash);
      expect(blocks[2]!.parentHash).toBe(blocks[1]!.blockHash);
      expect(blocks.every((block) => block.chain?.chainId === C_CHAIN)).toBe(true);
    } finally {
      await subscription.cancel();
    }
  });

  it("resumes through the deprecated name after too; both names at once, or a negative block, are refused naming the argument", async () => {
    const deprecated = `subscription ($after: BigInt) { newBlocks(chainId: "${C_CHAIN}", after: $after) { blockNumber } }`;
    const subscription = await subscribeSse(harness, deprecated, { after: String(head - 2n) });
    try {
      const events = await take(subscription, 2);
      expect(events.map((event) => (event.data!.newBlocks as { blockNumber: string }).blockNumber)).toEqual(
        [head - 1n, head].map(String),
      );
    } finally {
      await subscription.cancel();
    }
    harness.simulator.resetCounters();
    for (const [args, argument] of [
      [`afterBlock: "${head}", after: "${head}"`, "after"],
      [`afterBlock: "-1"`, "afterBlock"],
      [`after: "-1"`, "after"],
    ] as const) {
      const refused = await subscribeSse(
        harness,
        `subscription { newBlocks(chainId: "${C_CHAIN}", ${args}) { blockNumber } }`,
        {},
      );
      expect(refused.refusal?.status).toBe(400);
      expect(refused.refusal?.errors[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument });
    }
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("says when a resume point lies beyond the bound, then goes on from the newest blocks", async () => {
    const subscription = await subscribeSse(harness, NEW_BLOCKS, { chainId: C_CHAIN, after: String(head - 250n) });
    try {
      const [gap, ...rest] = await take(subscription, 101);
      expect(gap!.errors?.[0]?.extensions.code).toBe("LIVE_GAP");
      const numbers = rest.map((event) => BigInt(event.data!.newBlocks!.blockNumber));
      expect(numbers[0]).toBe(head - 99n);
      expect(numbers.at(-1)).toBe(head);
      expect(numbers.every((number, index) => index === 0 || number === numbers[index - 1]! + 1n)).toBe(true);
    } finally {
      await subscription.cancel();
    }
  });

  it.each([
    [100, 0],
    [101, 1],
    [150, 1],
  ])(
    "bounds a resume %i blocks back at LIVE_MAX_CATCH_UP (100) blocks exactly, not whole pages: %i LIVE_GAP, then 100 blocks",
    async (missed, gaps) => {
      await until(() => harness.gateway.liveCounts().pollers === 0, "the last test's poller to stop");
      harness.simulator.resetCounters();
      const subscription = await subscribeSse(harness, NEW_BLOCKS, { chainId: C_CHAIN, after: String(head - BigInt(missed)) });
      try {
        const events = await take(subscription, gaps + 100);
        if (gaps > 0) expect(events.shift()!.errors?.[0]?.extensions.code).toBe("LIVE_GAP");
        const numbers = events.map((event) => BigInt(event.data!.newBlocks!.blockNumber));
        expect(numbers).toEqual(Array.from({ length: 100 }, (_, index) => head - 99n + BigInt(index)));
        // The poller's first read, then the resume's: 101 blocks, in pages of 100 and 1.
        expect(upstreamCalls(harness)).toEqual({ [BLOCKS_ROUTE]: 3 });
        expect(harness.simulator.requests().map((request) => request.query.pageSize)).toEqual(["1", "100", "1"]);
      } finally {
        await subscription.cancel();
      }
    },
  );

  it("has subscribers of one chain share one poller: five streams, one upstream read", async () => {
    harness.simulator.resetCounters();
    const subscriptions = await Promise.all(
      Array.from({ length: 5 }, () => subscribeSse(harness, NEW_BLOCKS, { chainId: C_CHAIN })),
    );
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(upstreamCalls(harness)[BLOCKS_ROUTE]).toBe(1);
    } finally {
      await Promise.all(subscriptions.map((subscription) => subscription.cancel()));
    }
  });

  it("has subscribers of one network share one poller of the latest blocks", async () => {
    harness.simulator.resetCounters();
    const query = "subscription { newNetworkBlocks(network: MAINNET) { chainId blockNumber } }";
    const subscriptions = await Promise.all(Array.from({ length: 3 }, () => subscribeSse(harness, query, {})));
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(upstreamCalls(harness)).toEqual({ "GET /v1/blocks": 1 });
    } finally {
      await Promise.all(subscriptions.map((subscription) => subscription.cancel()));
    }
  });

  it.each([
    ["a chain id that is not a number", { chainId: "c-chain" }, "BAD_USER_INPUT"],
    ["a negative resume point", { chainId: C_CHAIN, after: "-1" }, "BAD_USER_INPUT"],
    ["a chain the Data API does not index", { chainId: "999999" }, "NOT_FOUND"],
  ])("refuses %s before any block read", async (_, variables, code) => {
    harness.simulator.resetCounters();
    const subscription = await subscribeSse(harness, NEW_BLOCKS, variables);
    expect(subscription.refusal?.status).toBe(400);
    expect(subscription.refusal?.errors[0]?.extensions?.code).toBe(code);
    expect(upstreamCalls(harness)[BLOCKS_ROUTE]).toBeUndefined();
  });
});

describe("newBlocks on a chain that moves (the simulator's clock driven)", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({ LIVE_BLOCKS_POLL_MS: "100", LIVE_BLOCKS_MAX_POLL_MS: "100", RATE_LIMIT_BURST: "100000" });
  });
  afterAll(async () => {
    await harness.close();
  });

  function headOf(chainId: string): bigint {
    return BigInt(harness.simulator.clock().heads.find((head) => head.chainId === chainId)!.blockNumber);
  }

  it("pushes every block that arrived between two polls once, in order, with no gap", async () => {
    const before = headOf(C_CHAIN);
    const subscription = await subscribeSse(harness, NEW_BLOCKS, { chainId: C_CHAIN });
    try {
      await until(() => (upstreamCalls(harness)[BLOCKS_ROUTE] ?? 0) >= 1, "the poller's first read");
      // Some 15 blocks arrive before the next poll reads them.
      harness.simulator.advanceClock(30);
      const after = headOf(C_CHAIN);
      expect(after - before).toBeGreaterThan(5n);
      const events = await take(subscription, Number(after - before));
      expect(events.map((event) => event.data!.newBlocks!.blockNumber)).toEqual(
        Array.from({ length: Number(after - before) }, (_, index) => String(before + 1n + BigInt(index))),
      );
      const blocks = events.map((event) => event.data!.newBlocks!);
      expect(blocks.every((block, index) => index === 0 || block.parentHash === blocks[index - 1]!.blockHash)).toBe(true);
    } finally {
      await subscription.cancel();
    }
  });

  it("pushes the new blocks of every chain of a network, each chain's in order", async () => {
    const query = "subscription { newNetworkBlocks(network: MAINNET) { chainId blockNumber } }";
    const subscription = await subscribeSse(harness, query, {});
    try {
      harness.simulator.resetCounters();
      await until(() => (upstreamCalls(harness)["GET /v1/blocks"] ?? 0) >= 1, "the poller's first read");
      const mainnet = harness.simulator.clock().heads.filter((head) => head.network === "mainnet");
      const before = new Map(mainnet.map((head) => [head.chainId, BigInt(head.blockNumber)]));
      harness.simulator.advanceClock(10);
      const expected = harness.simulator
        .clock()
        .heads.filter((head) => head.network === "mainnet")
        .reduce((sum, head) => sum + Number(BigInt(head.blockNumber) - before.get(head.chainId)!), 0);
      expect(expected).toBeGreaterThan(2);
      const events = await take(subscription, expected);
      const seen = new Map<string, bigint[]>();
      for (const event of events) {
        const block = (event.data as unknown as { newNetworkBlocks: { chainId: string; blockNumber: string } }).newNetworkBlocks;
        seen.set(block.chainId, [...(seen.get(block.chainId) ?? []), BigInt(block.blockNumber)]);
      }
      for (const [chainId, numbers] of seen) {
        expect(numbers, chainId).toEqual(numbers.map((_, index) => before.get(chainId)! + 1n + BigInt(index)));
      }
    } finally {
      await subscription.cancel();
    }
  });

  it("ends the stream of a subscriber that stops reading with SLOW_SUBSCRIBER once a poll brings more while LIVE_MAX_PENDING_EVENTS are unread and none was taken for REQUEST_TIMEOUT_MS", async () => {
    const slow = await startHarness(SLOW_READER_SETTINGS);
    try {
      const before = BigInt(slow.simulator.clock().heads.find((head) => head.chainId === C_CHAIN)!.blockNumber);
      const subscription = await subscribeSse(slow, NEW_BLOCKS, { chainId: C_CHAIN, after: String(before) });
      // Some 3 blocks a poll arrive; the client reads none of them until the gateway has given up on
      // it: a poll's blocks alone never end a stream, a poll that finds more than 5 unread does.
      for (let step = 0; step < 30 && slow.gateway.liveCounts().subscribers > 0; step += 1) {
        slow.simulator.advanceClock(6);
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
      await until(() => slow.gateway.liveCounts().subscribers === 0, "the slow stream to be ended");
      const events = await subscription.rest();
      const payloads = events.filter((event) => event.event === "next").map((event) => JSON.parse(event.data) as BlockEvent);
      expect(payloads.at(-1)?.errors?.[0]?.extensions.code).toBe("SLOW_SUBSCRIBER");
      expect(payloads.length).toBeLessThanOrEqual(7);
      expect(events.at(-1)?.event).toBe("complete");
      expect(slow.gateway.liveCounts()).toEqual({ pollers: 0, subscribers: 0 });
    } finally {
      await slow.close();
    }
  });

  it("keeps the stream of a subscriber that takes fewer events than the polls bring, more than LIVE_MAX_PENDING_EVENTS waiting, as long as it takes one within REQUEST_TIMEOUT_MS", async () => {
    const slow = await startHarness(SLOW_READER_SETTINGS);
    const head = () => BigInt(slow.simulator.clock().heads.find((chain) => chain.chainId === C_CHAIN)!.blockNumber);
    try {
      const before = head();
      const subscription = await subscribeSse(slow, NEW_BLOCKS, { chainId: C_CHAIN, after: String(before) });
      const numbers: string[] = [];
      const takeOne = async () => {
        const event = payload(await subscription.next());
        expect(event.errors).toBeUndefined();
        numbers.push(event.data!.newBlocks!.blockNumber);
      };
      // A backlog above 5, then two polls with new blocks between any two events the client takes:
      // polls keep finding more than 5 unread and nothing taken since the poll before.
      slow.simulator.advanceClock(12);
      for (let step = 0; step < 8; step += 1) {
        for (const _poll of [1, 2]) {
          slow.simulator.advanceClock(2);
          await new Promise((resolve) => setTimeout(resolve, 150));
        }
        await takeOne();
      }
      expect(head() - before - BigInt(numbers.length)).toBeGreaterThan(5n);
      expect(slow.gateway.liveCounts()).toEqual({ pollers: 1, subscribers: 1 });
      const last = head();
      while (BigInt(numbers.at(-1)!) < last) await takeOne();
      expect(numbers).toEqual(Array.from({ length: Number(last - before) }, (_, index) => String(before + 1n + BigInt(index))));
      await subscription.cancel();
    } finally {
      await slow.close();
    }
  });

  it("charges each subscriber 1 a poll, from its own budget: a caller that runs out has its stream ended, the others go on", async () => {
    const budgeted = await startHarness({
      LIVE_BLOCKS_POLL_MS: "100",
      LIVE_BLOCKS_MAX_POLL_MS: "100",
      RATE_LIMIT_RATE: "0.1",
      RATE_LIMIT_BURST: "12",
      // Both callers come from one address here: only their keys' budgets are tried.
      RATE_LIMIT_ADDRESS_RATE: "1000",
      RATE_LIMIT_ADDRESS_BURST: "100000",
    });
    const poor = { "x-glacier-api-key": "poor-caller" };
    const rich = { "x-glacier-api-key": "rich-caller" };
    try {
      const spending = await subscribeSse(budgeted, NEW_BLOCKS, { chainId: C_CHAIN }, poor);
      const events = spending.rest();
      const began = Date.now();
      // Another caller on the same poller, later: its budget is its own.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const other = await subscribeSse(budgeted, NEW_BLOCKS, { chainId: C_CHAIN }, rich);
      const ended = (await events).filter((event) => event.event === "next").map((event) => JSON.parse(event.data) as BlockEvent);
      expect(ended.at(-1)?.errors?.[0]?.extensions.code).toBe("RATE_LIMITED");
      // 12 in the bucket, 2 spent on the request and NEW_DOCUMENT_COST on its new document: some 9 polls of 100 ms.
      expect(Date.now() - began).toBeGreaterThan(600);
      expect(Date.now() - began).toBeLessThan(6_000);
      expect(budgeted.gateway.liveCounts()).toEqual({ pollers: 1, subscribers: 1 });
      await other.cancel();
    } finally {
      await budgeted.close();
    }
  });
});
