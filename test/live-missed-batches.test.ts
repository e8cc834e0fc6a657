/**
 * A follower that missed a batch (its message lost while its subscriber connection was down, or
 * read by a leader while Redis did not answer, and so never published) reads for itself when the
 * next batch it hears says its reader had taken in more: its subscribers get every item, in order,
 * with no hole. The relay here is scripted (which batches the follower hears); the poller, its
 * subscribers and the reads are the project's own.
 */
import { describe, expect, it } from "vitest";
import type { LiveBatch } from "../src/live/live-poller.ts";
import type { LiveQuestion } from "../src/live/live-question.ts";
import { until } from "./support/harness.ts";
import { numberedPosition, scriptedFeed, type NumberedItem } from "./support/scripted-feed.ts";

function setUp() {
  const chain = { head: 100, reads: 0 };
  const question: LiveQuestion<NumberedItem> = {
    key: "blocks",
    what: "a test chain",
    pageSize: 10,
    firstPageSize: 1,
    intervalMs: 60_000,
    maxIntervalMs: 60_000,
    // Newest first, pages of `pageSize` back from the head.
    read: async (pageSize, pageToken) => {
      chain.reads += 1;
      const top = pageToken === undefined ? chain.head : Number(pageToken);
      const items = Array.from({ length: Math.min(pageSize, top) }, (_, index) => ({ n: top - index }));
      const next = top - pageSize;
      return { items, nextPageToken: next > 0 ? String(next) : undefined };
    },
    position: numberedPosition,
  };
  const { feed, listener } = scriptedFeed({ maxCatchUp: 50, maxPending: 100 }, async () => "follow");
  const batch = (from: number, to: number, since: number | undefined): LiveBatch => ({
    items: Array.from({ length: to - from + 1 }, (_, index) => ({ n: from + index })),
    gap: false,
    readAt: Date.now(),
    ...(since === undefined ? {} : { since }),
  });
  return { feed, question, chain, batch, hear: (event: LiveBatch) => listener().deliver(event) };
}

async function take(stream: AsyncIterator<unknown>, count: number): Promise<number[]> {
  const numbers: number[] = [];
  for (let index = 0; index < count; index += 1) {
    const { value } = await stream.next();
    if (value instanceof Error) throw value;
    numbers.push((value as NumberedItem).n);
  }
  return numbers;
}

describe("a follower that missed a batch", () => {
  it("reads for itself when the next batch's reader had taken in more, and pushes every item once, in order", async () => {
    const { feed, question, chain, batch, hear } = setUp();
    const stream = feed.subscribe(question, { call: {}, chargeRead: async () => null });
    try {
      await until(() => chain.reads === 1, "the first read");
      // Heard: 101-102 (its reader had 100). Missed: 103-105. Heard: 106-107, its reader having had 105.
      chain.head = 102;
      hear(batch(101, 102, 100));
      expect(await take(stream, 2)).toEqual([101, 102]);
      chain.head = 107;
      hear(batch(106, 107, 105));
      expect(await take(stream, 5)).toEqual([103, 104, 105, 106, 107]);
      // One read of its own, one page: from its newest item (102) to the head.
      expect(chain.reads).toBe(2);
      // Then in step again: a batch from where it stands is taken in as heard, with no read.
      chain.head = 108;
      hear(batch(108, 108, 107));
      expect(await take(stream, 1)).toEqual([108]);
      expect(chain.reads).toBe(2);
    } finally {
      await stream.return!();
      await feed.close();
    }
  });

  it("pushes no LIVE_GAP for a batch that left a gap it already filled, only the items that are new", async () => {
    const { feed, question, chain, batch, hear } = setUp();
    const stream = feed.subscribe(question, { call: {}, chargeRead: async () => null });
    try {
      await until(() => chain.reads === 1, "the first read");
      chain.head = 180;
      hear(batch(101, 180, 100));
      expect(await take(stream, 80)).toEqual(Array.from({ length: 80 }, (_, index) => 101 + index));
      // Another reader's read found more than 50 (the bound) since its last and kept the newest 50:
      // here, where 151-180 are had already, nothing was skipped.
      chain.head = 200;
      hear({ ...batch(151, 200, 150), gap: true });
      const next = await take(stream, 20);
      expect(next).toEqual(Array.from({ length: 20 }, (_, index) => 181 + index));
      expect(chain.reads).toBe(1);
    } finally {
      await stream.return!();
      await feed.close();
    }
  });

  it("takes in a batch from a gateway of an earlier version (no `since`) as heard", async () => {
    const { feed, question, chain, batch, hear } = setUp();
    const stream = feed.subscribe(question, { call: {}, chargeRead: async () => null });
    try {
      await until(() => chain.reads === 1, "the first read");
      chain.head = 103;
      hear(batch(101, 103, undefined));
      expect(await take(stream, 3)).toEqual([101, 102, 103]);
      expect(chain.reads).toBe(1);
    } finally {
      await stream.return!();
      await feed.close();
    }
  });
});
