/**
 * A live feed whose relay the test scripts: every turn is what `turn` says, and the test hears
 * for the other gateways through `listener()`. The feed, its pollers and subscribers are the
 * project's own; only what Redis would carry is the test's.
 */
import { LiveFeed } from "../../src/live/live-feed.ts";
import type { LiveBatch } from "../../src/live/live-poller.ts";
import type { Position } from "../../src/live/live-question.ts";
import type { PollerRelay, TopicListener, Turn } from "../../src/live/poller-relay.ts";

/** An item of a one-stream test chain: its number is its place and its time. */
export interface NumberedItem {
  n: number;
}

export const numberedPosition = ({ n }: NumberedItem): Position => ({ stream: "", number: BigInt(n), time: n, id: String(n) });

export function scriptedFeed(
  limits: { maxCatchUp: number; maxPending: number },
  turn: () => Promise<Turn>,
): { feed: LiveFeed; listener: () => TopicListener<LiveBatch> } {
  let listener: TopicListener<LiveBatch> | undefined;
  const relay: PollerRelay<LiveBatch> = {
    join(_topic, joined) {
      listener = joined;
      return { turn, publish: () => {}, leave: async () => {} };
    },
  };
  const feed = new LiveFeed(
    { ...limits, readTimeoutMs: 1_000, eventTimeoutMs: 1_000, maxPollers: 10, maxPollersPerCaller: 10, maxReadsPerSecond: 100 },
    relay,
  );
  return {
    feed,
    listener: () => {
      if (listener === undefined) throw new Error("no poller has joined the relay yet");
      return listener;
    },
  };
}
