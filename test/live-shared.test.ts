/**
 * Live block subscriptions on two gateways over one simulator whose clock the test drives: one
 * upstream poller in all when they share a Redis (a real redis-server on loopback), handed on when
 * the polling gateway's subscribers leave; each gateway's subscribers get every block once, in
 * order. Each gateway has its own GLACIER_API_KEY, so the simulator's request log tells which
 * gateway read.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startSimulator } from "../simulator/server.ts";
import { subscribeSse, type ExportSubscription } from "./support/subscriptions.ts";
import { startInstance, until, type Instance, type RunningSimulator } from "./support/harness.ts";
import { redisServerAvailable, startRedisServer, type RedisServer } from "./support/redis-server.ts";

const BLOCKS_ROUTE = "GET /v1/chains/{chainId}/blocks";
const POLL_MS = 100;
const KEYS = ["gateway-a-key", "gateway-b-key"] as const;
const C_CHAIN = "43114";
const NEW_BLOCKS = `subscription NewBlocks($after: BigInt) { newBlocks(chainId: "43114", afterBlock: $after) { blockNumber blockHash } }`;

describe.skipIf(!redisServerAvailable)("live subscriptions across gateways", () => {
  let simulator: RunningSimulator;
  let redis: RedisServer;
  const instances: Instance[] = [];

  beforeAll(async () => {
    [simulator, redis] = await Promise.all([startSimulator({ dataPort: 0, metricsPort: 0 }), startRedisServer()]);
  });
  afterEach(async () => {
    await Promise.all(instances.splice(0).map((instance) => instance.close()));
  });
  afterAll(async () => {
    await Promise.all([simulator?.close(), redis?.stop()]);
  });

  async function pair(): Promise<[Instance, Instance]> {
    const started = await Promise.all(
      KEYS.map((key) =>
        startInstance(simulator, {
          GLACIER_API_KEY: key,
          LIVE_BLOCKS_POLL_MS: String(POLL_MS),
          LIVE_BLOCKS_MAX_POLL_MS: String(POLL_MS),
          RATE_LIMIT_BURST: "100000",
          REDIS_URL: redis.url,
        }),
      ),
    );
    instances.push(...started);
    return started as [Instance, Instance];
  }

  function head(): bigint {
    return BigInt(simulator.clock().heads.find((chain) => chain.chainId === C_CHAIN)!.blockNumber);
  }

  /** The keys of the gateways that read the chain's newest blocks since `since` (a request count). */
  function readers(since: number): string[] {
    return simulator
      .requests()
      .slice(since)
      .filter((request) => request.route === BLOCKS_ROUTE)
      .map((request) => request.apiKey ?? "none");
  }

  async function blocks(subscription: ExportSubscription, count: number): Promise<bigint[]> {
    const numbers: bigint[] = [];
    for (let index = 0; index < count; index += 1) {
      const event = await subscription.next();
      expect(event?.event).toBe("next");
      const payload = JSON.parse(event!.data) as { data: { newBlocks: { blockNumber: string } } };
      numbers.push(BigInt(payload.data.newBlocks.blockNumber));
    }
    return numbers;
  }

  const range = (from: bigint, to: bigint) => Array.from({ length: Number(to - from) }, (_, index) => from + 1n + BigInt(index));

  /** Both gateways' streams, subscribed from block `start`. */
  const bothFrom = (a: Instance, b: Instance, start: bigint) =>
    Promise.all([subscribeSse(a, NEW_BLOCKS, { after: String(start) }), subscribeSse(b, NEW_BLOCKS, { after: String(start) })]);

  /** Each stream's next blocks are every block after `from` up to `to`, once, in order. */
  async function expectEveryBlock(subscriptions: ExportSubscription[], from: bigint, to: bigint): Promise<void> {
    for (const subscription of subscriptions) expect(await blocks(subscription, Number(to - from))).toEqual(range(from, to));
  }

  it("reads the chain once in all for subscribers on both gateways, each of which gets every block once, in order", async () => {
    const [a, b] = await pair();
    const start = head();
    const subscriptions = await bothFrom(a, b, start);
    try {
      simulator.advanceClock(10);
      const first = head();
      await expectEveryBlock(subscriptions, start, first);
      // Both gateways have read once for themselves; from now on one of them reads for both.
      const since = simulator.requests().length;
      await sleep(5 * POLL_MS);
      simulator.advanceClock(10);
      const second = head();
      await expectEveryBlock(subscriptions, first, second);
      const reads = readers(since);
      expect(reads.length).toBeGreaterThanOrEqual(1);
      expect(new Set(reads).size).toBe(1);
    } finally {
      await Promise.all(subscriptions.map((subscription) => subscription.cancel()));
    }
  });

  it("hands the polling on when the polling gateway's subscribers leave, and the other's stream has no gap", async () => {
    const [a, b] = await pair();
    const start = head();
    const subscriptions = [await subscribeSse(a, NEW_BLOCKS, { after: String(start) })];
    simulator.advanceClock(4);
    expect((await blocks(subscriptions[0]!, Number(head() - start))).at(-1)).toBe(head());
    // a leads (it was alone); b follows from its first read on.
    subscriptions.push(await subscribeSse(b, NEW_BLOCKS, { after: String(head()) }));
    await sleep(3 * POLL_MS);
    const since = simulator.requests().length;
    await sleep(3 * POLL_MS);
    expect(new Set(readers(since))).toEqual(new Set([KEYS[0]]));

    await subscriptions[0]!.cancel();
    const handed = head();
    simulator.advanceClock(10);
    const after = head();
    const following = subscriptions[1]!;
    try {
      expect(await blocks(following, Number(after - handed))).toEqual(range(handed, after));
      await until(() => readers(since).includes(KEYS[1]), "the second gateway to take over");
      const reads = readers(since);
      expect(reads.slice(reads.indexOf(KEYS[1])).every((key) => key === KEYS[1])).toBe(true);
    } finally {
      await following.cancel();
    }
  });

  it("goes on through a Redis restart: each gateway listens again, and both streams get every block once, in order", async () => {
    const [a, b] = await pair();
    const start = head();
    const subscriptions = await bothFrom(a, b, start);
    try {
      simulator.advanceClock(4);
      const before = head();
      await expectEveryBlock(subscriptions, start, before);
      // Empty when it comes back: no lock, no channel; the follower hears the leader only if it subscribed again.
      await redis.restart();
      await until(
        async () => (await a.redis?.whenReady(100)) === true && (await b.redis?.whenReady(100)) === true,
        "both links back",
      );
      await sleep(10 * POLL_MS);
      const since = simulator.requests().length;
      await sleep(5 * POLL_MS);
      simulator.advanceClock(10);
      const after = head();
      await expectEveryBlock(subscriptions, before, after);
      expect(new Set(readers(since)).size).toBe(1);
    } finally {
      await Promise.all(subscriptions.map((subscription) => subscription.cancel()));
    }
  });
});
