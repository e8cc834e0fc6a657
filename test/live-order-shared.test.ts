/**
 * Nothing goes backwards across gateways (issue 26): a gateway that joins a question, then takes
 * it over, after it has read newer than the read Redis keeps for latecomers, never pushes that
 * older read. Two gateways on one real Redis over one simulator whose clock the test drives: the
 * first reads seldom, so that the upstream moves on between its reads; every stream is checked
 * against the simulator's own answers.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startSimulator } from "../simulator/server.ts";
import { subscribeSse, type ExportSubscription } from "./support/subscriptions.ts";
import { startInstance, until, type Instance, type RunningSimulator } from "./support/harness.ts";
import { redisServerAvailable, startRedisServer, type RedisServer } from "./support/redis-server.ts";

const SLOW_MS = 1_500;
const FAST_MS = 100;
const KEYS = { slow: "slow-gateway-key", fast: "fast-gateway-key" } as const;
const METRIC = `subscription { chainMetricUpdates(chainId: "43114", metric: TX_COUNT, interval: HOUR) { timestamp value } }`;
const METRIC_PATH = "/v2/chains/43114/metrics/txCount?timeInterval=hour&pageSize=1";
const NEW_BLOCKS = `subscription { newBlocks(chainId: "43114") { blockNumber } }`;
const NETWORK_BLOCKS = `subscription { newNetworkBlocks(network: MAINNET) { chainId blockNumber } }`;

interface Followed<T> {
  items: T[];
  cancel(): Promise<void>;
}

/** Reads a subscription's items (`field` of each event's data) as they come; an event without one fails the test. */
function follow<T>(subscription: ExportSubscription, field: string): Followed<T> {
  const items: T[] = [];
  const reading = (async () => {
    for (let event = await subscription.next(); event; event = await subscription.next()) {
      const payload = JSON.parse(event.data) as { data?: Record<string, T> | null; errors?: unknown };
      expect(payload.errors).toBeUndefined();
      items.push(payload.data![field]!);
    }
  })();
  return {
    items,
    async cancel() {
      await subscription.cancel();
      await reading;
    },
  };
}

describe.skipIf(!redisServerAvailable)("live streams never go backwards across gateways", () => {
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

  async function gateway(key: string, pollMs: number): Promise<Instance> {
    const interval = String(pollMs);
    const instance = await startInstance(simulator, {
      GLACIER_API_KEY: key,
      LIVE_BLOCKS_POLL_MS: interval,
      LIVE_BLOCKS_MAX_POLL_MS: interval,
      LIVE_METRICS_POLL_MS: interval,
      LIVE_METRICS_MAX_POLL_MS: interval,
      LIVE_TAKEOVER_MS: "600",
      RATE_LIMIT_BURST: "100000",
      REDIS_URL: redis.url,
    });
    instances.push(instance);
    return instance;
  }

  /** Whether the gateway of `key` has read `route` since request `since`. */
  function hasRead(key: string, route: string, since: number): boolean {
    return simulator
      .requests()
      .slice(since)
      .some((request) => request.route === route && request.apiKey === key);
  }

  /** The metric's point now, as the simulator answers it, added to `history` when it changed. */
  async function observe(history: string[]): Promise<void> {
    const response = await fetch(simulator.metricsUrl + METRIC_PATH);
    const { results } = (await response.json()) as { results: { timestamp: number; value: number }[] };
    const point = JSON.stringify({ timestamp: results[0]!.timestamp, value: results[0]!.value });
    if (history.at(-1) !== point) history.push(point);
  }

  it("pushes a metric's values in the order the simulator had them, on the gateway that joins and then takes over", async () => {
    type Point = { timestamp: number; value: number };
    const history: string[] = [];
    await observe(history);
    const slow = await gateway(KEYS.slow, SLOW_MS);
    const first = follow<Point>(await subscribeSse(slow, METRIC, {}), "chainMetricUpdates");
    let second: Followed<Point> | undefined;
    try {
      await until(() => first.items.length === 1, "the value now");
      simulator.advanceClock(60);
      await observe(history);
      // The slow gateway leads: its next read publishes the new value, which Redis keeps.
      await until(() => first.items.length === 2, "the slow gateway's next read");
      simulator.advanceClock(60);
      await observe(history);
      const newestAtJoin = history.length - 1;
      // The fast gateway's first read has a newer value than the one Redis keeps, which its first turn finds.
      const fast = await gateway(KEYS.fast, FAST_MS);
      second = follow<Point>(await subscribeSse(fast, METRIC, {}), "chainMetricUpdates");
      await until(() => second!.items.length >= 1, "the fast gateway's first read");
      await sleep(4 * FAST_MS);
      // The slow gateway leaves: the fast one takes over, and finds the same older read kept.
      await first.cancel();
      await sleep(1_000);
      simulator.advanceClock(60);
      await observe(history);
      await until(() => JSON.stringify(second!.items.at(-1)) === history.at(-1), "the newest value on the fast gateway");
      await sleep(4 * FAST_MS);

      for (const [name, items] of [
        ["slow", first.items],
        ["fast", second.items],
      ] as const) {
        const places = items.map((item) => history.indexOf(JSON.stringify(item)));
        expect(
          places.every((place) => place >= 0),
          `${name}: every value is one the simulator had`,
        ).toBe(true);
        expect(
          places.every((place, index) => index === 0 || place > places[index - 1]!),
          `${name}: ${JSON.stringify(items)} against ${JSON.stringify(history)}`,
        ).toBe(true);
      }
      expect(history.indexOf(JSON.stringify(second.items[0]))).toBe(newestAtJoin);
    } finally {
      await Promise.all([first.cancel(), second?.cancel()]);
    }
  });

  it("pushes each chain's blocks in order, once, on the gateway that joins and then takes over", async () => {
    type Block = { chainId?: string; blockNumber: string };
    const heads = () => new Map(simulator.clock().heads.map((head) => [head.chainId, BigInt(head.blockNumber)]));
    const slow = await gateway(KEYS.slow, SLOW_MS);
    const since = simulator.requests().length;
    const first = follow<Block>(await subscribeSse(slow, NEW_BLOCKS, {}), "newBlocks");
    const firstNetwork = follow<Block>(await subscribeSse(slow, NETWORK_BLOCKS, {}), "newNetworkBlocks");
    const followed = [first, firstNetwork];
    try {
      await until(
        () => hasRead(KEYS.slow, "GET /v1/chains/{chainId}/blocks", since) && hasRead(KEYS.slow, "GET /v1/blocks", since),
        "the slow gateway's first reads",
      );
      simulator.advanceClock(10);
      const published = heads().get("43114")!;
      await until(() => first.items.at(-1)?.blockNumber === String(published), "the slow gateway's next read", 5_000);
      simulator.advanceClock(10);
      const fast = await gateway(KEYS.fast, FAST_MS);
      const joinedAt = heads();
      const second = follow<Block>(await subscribeSse(fast, NEW_BLOCKS, {}), "newBlocks");
      const secondNetwork = follow<Block>(await subscribeSse(fast, NETWORK_BLOCKS, {}), "newNetworkBlocks");
      followed.push(second, secondNetwork);
      await sleep(4 * FAST_MS);
      await Promise.all([first.cancel(), firstNetwork.cancel()]);
      await sleep(1_000);
      simulator.advanceClock(10);
      const end = heads();
      await until(() => second.items.at(-1)?.blockNumber === String(end.get("43114")), "the fast gateway's blocks");
      await sleep(4 * FAST_MS);

      const numbers = second.items.map((block) => BigInt(block.blockNumber));
      const start = joinedAt.get("43114")!;
      expect(numbers).toEqual(
        Array.from({ length: Number(end.get("43114")! - start) }, (_, index) => start + 1n + BigInt(index)),
      );
      for (const [name, stream] of [
        ["slow", firstNetwork],
        ["fast", secondNetwork],
      ] as const) {
        const byChain = new Map<string, bigint[]>();
        for (const block of stream.items)
          byChain.set(block.chainId!, [...(byChain.get(block.chainId!) ?? []), BigInt(block.blockNumber)]);
        expect(byChain.size, name).toBeGreaterThan(0);
        for (const [chainId, chain] of byChain) {
          expect(
            chain.every((number, index) => index === 0 || number === chain[index - 1]! + 1n),
            `${name}, chain ${chainId}: ${chain.join(" ")}`,
          ).toBe(true);
          expect(chain.at(-1)! <= end.get(chainId)!).toBe(true);
        }
      }
    } finally {
      await Promise.all(followed.map((stream) => stream.cancel()));
    }
  });
});
