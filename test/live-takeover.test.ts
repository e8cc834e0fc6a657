/**
 * Take-over within LIVE_TAKEOVER_MS plus one read (issue 26), for every kind of live question and
 * for an export job: two gateway processes (`src/server.ts`) on one real Redis, over one simulator
 * in this process, whose clock the test drives. Every question is asked on gateway A first, which
 * takes its lock; then on B, which follows. A is killed (SIGKILL), the clock moves on, and B's
 * subscribers must get the new items within the bound, though B's poll interval is longer.
 *
 * Measured on the shared 2-core test machine (load average ~10), in ms from the kill: when B held
 * the lock (Redis's view), then when its subscriber got the news; the lock was last renewed up to
 * a third of its time before the kill.
 *   LIVE_TAKEOVER_MS=1000, intervals 8 s (the old bound, three intervals, was 24 s):
 *     blocks 1,272 / 1,731, network blocks 715 / 1,648, address 1,272 / 2,374,
 *     P-Chain 726 / 1,285, metric 715 / 1,250, export 1,272 / 1,527;
 *   the default 10,000, intervals 15 s: blocks 8,904 / 8,956, network blocks 9,039 / 10,010,
 *     address 9,039 / 9,907, P-Chain 9,339 / 9,375, metric 9,339 / 9,382, export 7,926 / 7,954.
 * Each run prints its own figures.
 */
import { print } from "graphql";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator } from "../simulator/server.ts";
import { ExportTransactionsDocument, WatchExportOperationDocument } from "./generated/graphql.ts";
import { until, type Harness, type RunningSimulator } from "./support/harness.ts";
import { redisServerAvailable, startRedisServer, type RedisServer } from "./support/redis-server.ts";
import { startServerProcess, type ServerProcess } from "./support/server-process.ts";
import { subscribeSse } from "./support/subscriptions.ts";
import { numberedPosition, scriptedFeed, type NumberedItem } from "./support/scripted-feed.ts";
import type { LiveQuestion } from "../src/live/live-question.ts";

/** What a read may take on a loaded machine, beyond the lock's time: its pages, Redis, the event's way to the client. */
const READ_ALLOWANCE_MS = 4_000;
/** What taking the lock may take on a loaded machine, beyond the lock's time: timers, Redis, this process's polling. */
const TAKE_ALLOWANCE_MS = 1_000;
const DEFAULT_TAKEOVER_MS = 10_000;
const EXPORT_JOB_MS = 2_000;

const KINDS = {
  blocks: {
    query: `subscription { newBlocks(chainId: "43114") { blockNumber } }`,
    field: "newBlocks",
    topic: "chain-blocks:",
  },
  "network blocks": {
    query: `subscription { newNetworkBlocks(network: MAINNET) { chainId blockNumber } }`,
    field: "newNetworkBlocks",
    topic: "network-blocks:",
  },
  address: {
    query: `subscription { newAddressTransactions(chainId: "43114", address: "0xba8f6bc43ce667f26cb1ace5fe31a2cdc287159d") { transaction { txHash blockNumber } } }`,
    field: "newAddressTransactions",
    topic: "address-transactions:",
  },
  "P-Chain": {
    query: `subscription { newPrimaryNetworkTransactions(network: MAINNET, blockchainId: "p-chain") { txHash } }`,
    field: "newPrimaryNetworkTransactions",
    topic: "primary-network-transactions:",
  },
  metric: {
    query: `subscription { chainMetricUpdates(chainId: "43114", metric: TX_COUNT, interval: HOUR) { timestamp value } }`,
    field: "chainMetricUpdates",
    topic: "chain-metric:",
  },
} as const;
type Kind = keyof typeof KINDS | "export";

/** After the kill, in ms: when B held the question's lock (as Redis saw it), and when its subscriber got the news. */
interface TakeOver {
  took: number;
  pushed: number;
}

interface Arrival {
  item: Record<string, unknown>;
  at: number;
}

/** A subscription's items, each with when it came; a stream cut (its gateway killed) just ends. */
interface Followed {
  items: Arrival[];
  cancel(): Promise<void>;
}

async function follow(
  gateway: ServerProcess,
  query: string,
  field: string,
  variables: Record<string, unknown> = {},
): Promise<Followed> {
  const url = `${gateway.url}/graphql`;
  const listener = { gateway: { yoga: { fetch: (_url: string, init: RequestInit) => fetch(url, init) } } };
  const subscription = await subscribeSse(listener as unknown as Harness, query, variables);
  expect(subscription.refusal).toBeUndefined();
  const items: Arrival[] = [];
  const reading = (async () => {
    for (let event = await subscription.next(); event; event = await subscription.next()) {
      const payload = JSON.parse(event.data) as { data?: Record<string, Record<string, unknown> | null> | null };
      // A LIVE_GAP event says more came than one read pages back; the newest items follow it.
      const item = payload.data?.[field];
      if (item) items.push({ item, at: Date.now() });
    }
  })().catch(() => undefined);
  return {
    items,
    async cancel() {
      await subscription.cancel().catch(() => undefined);
      await reading;
    },
  };
}

describe("a take-over between two ticks", () => {
  it("reads at once in the interval the subscribers paid for, and charges them no read more", async () => {
    let turns = 0;
    const { feed, listener } = scriptedFeed({ maxCatchUp: 10, maxPending: 10 }, async () => ((turns += 1), "follow"));
    let head = 100;
    let reads = 0;
    const question: LiveQuestion<NumberedItem> = {
      key: "test",
      what: "a test stream",
      pageSize: 10,
      firstPageSize: 1,
      intervalMs: 300,
      maxIntervalMs: 300,
      read: async () => ((reads += 1), { items: [{ n: head }] }),
      position: numberedPosition,
    };
    let charges = 0;
    const stream = feed.subscribe(question, { call: {}, chargeRead: async () => ((charges += 1), null) });
    try {
      // The first read, then a tick that follows the leader (charged 1).
      await until(() => turns === 1, "a tick that follows");
      expect({ reads, charges }).toEqual({ reads: 1, charges: 1 });
      head = 101;
      listener().lead();
      const next = await stream.next();
      expect(next.value).toEqual({ n: 101 });
      expect({ reads, charges, turns }).toEqual({ reads: 2, charges: 1, turns: 1 });
      // The next tick comes an interval after the take-over's read, and is charged as any.
      await until(() => turns === 2, "the next tick");
      expect(charges).toBe(2);
    } finally {
      await stream.return!();
      await feed.close();
    }
  });
});

/** B took over within the lock's time, and its subscribers had the news within one read more. */
function expectWithin(times: Record<Kind, TakeOver>, takeoverMs: number): void {
  for (const [kind, { took, pushed }] of Object.entries(times)) {
    expect(took, `${kind}: took`).toBeLessThanOrEqual(takeoverMs + TAKE_ALLOWANCE_MS);
    expect(pushed, `${kind}: pushed`).toBeLessThanOrEqual(takeoverMs + READ_ALLOWANCE_MS);
  }
}

describe.skipIf(!redisServerAvailable)("take-over of a killed gateway's questions", () => {
  let simulator: RunningSimulator;
  let redis: RedisServer;
  let inspector: Redis;
  const started: ServerProcess[] = [];

  beforeAll(async () => {
    [simulator, redis] = await Promise.all([startSimulator({ dataPort: 0, metricsPort: 0 }), startRedisServer()]);
    inspector = new Redis(redis.url);
  });
  afterAll(async () => {
    for (const gateway of started)
      if (gateway.child.exitCode === null && gateway.child.signalCode === null) gateway.child.kill("SIGKILL");
    inspector?.disconnect();
    await Promise.all([simulator?.close(), redis?.stop()]);
  });

  async function gateway(key: string, prefix: string, pollMs: number, takeoverMs: number | undefined): Promise<ServerProcess> {
    const interval = String(pollMs);
    const intervals = Object.fromEntries(
      ["LIVE_BLOCKS", "LIVE_ADDRESS", "LIVE_PRIMARY_NETWORK", "LIVE_METRICS"].flatMap((setting) => [
        [`${setting}_POLL_MS`, interval],
        [`${setting}_MAX_POLL_MS`, interval],
      ]),
    );
    const child = await startServerProcess(
      {
        DATA_API_URL: simulator.dataUrl,
        METRICS_API_URL: simulator.metricsUrl,
        GLACIER_API_KEY: key,
        REDIS_URL: redis.url,
        REDIS_KEY_PREFIX: prefix,
        EXPORT_POLL_INTERVAL_MS: interval,
        RATE_LIMIT_BURST: "100000000",
        ...intervals,
        ...(takeoverMs === undefined ? {} : { LIVE_TAKEOVER_MS: String(takeoverMs) }),
      },
      ["WORKERS", "REDIS_CACHE_URL", "LIVE_TAKEOVER_MS", "RATE_LIMIT_RATE", "RATE_LIMIT_ADDRESS_RATE"],
    );
    started.push(child);
    await child.line((line) => line.msg === "gateway listening");
    return child;
  }

  /** The lock holder of each question of a namespace, by channel. */
  async function locks(prefix: string, namespace: string): Promise<Map<string, string | null>> {
    const keys = await inspector.keys(`${prefix}${namespace}:*:lock`);
    const values = await Promise.all(keys.map((key) => inspector.get(key)));
    return new Map(keys.map((key, index) => [key.slice(0, -":lock".length), values[index]!]));
  }

  async function listeners(channel: string): Promise<number> {
    const [, count] = (await inspector.pubsub("NUMSUB", channel)) as [string, number];
    return Number(count);
  }

  /** Every kind asked on A, then on B; A killed; B's times to its first read and its first new item of each kind. */
  async function measure(takeoverMs: number | undefined, pollMs: number): Promise<Record<Kind, TakeOver>> {
    const prefix = `takeover-${takeoverMs ?? "default"}:`;
    const setup = 3 * pollMs + 10_000;
    const [a, b] = await Promise.all([
      gateway("gateway-a-key", prefix, pollMs, takeoverMs),
      gateway("gateway-b-key", prefix, pollMs, takeoverMs),
    ]);
    const kinds = Object.entries(KINDS);
    const streams: Followed[] = [];
    let monitor: Redis | undefined;
    try {
      // A asks every question first: its first turns take every lock.
      streams.push(...(await Promise.all(kinds.map(([, kind]) => follow(a, kind.query, kind.field)))));
      await until(async () => (await locks(prefix, "live")).size === kinds.length, "A to take every lock", setup);
      const held = await locks(prefix, "live");
      const reader = [...held.values()][0]!;
      expect(new Set(held.values())).toEqual(new Set([reader]));
      // Then B, which follows.
      const followers = await Promise.all(kinds.map(([, kind]) => follow(b, kind.query, kind.field)));
      streams.push(...followers);
      await until(
        async () => (await Promise.all([...held.keys()].map(listeners))).every((count) => count === 2),
        "B to follow every question",
        setup,
      );
      expect(await locks(prefix, "live")).toEqual(held);

      // An export job that ends while A, its reader, is between two reads.
      simulator.setKnobs({ exportJobMs: EXPORT_JOB_MS });
      const created = await fetch(`${a.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          query: print(ExportTransactionsDocument),
          variables: { input: { primaryNetwork: { includeChains: ["p-chain"] } } },
        }),
      });
      const createdAt = Date.now();
      const { data } = (await created.json()) as { data: { exportTransactions: { operationId: string } } };
      const watch = print(WatchExportOperationDocument);
      const variables = { id: data.exportTransactions.operationId };
      streams.push(await follow(a, watch, "exportOperation", variables));
      await until(async () => (await locks(prefix, "export")).size === 1, "A to take the export job's lock");
      const exportFollower = await follow(b, watch, "exportOperation", variables);
      streams.push(exportFollower);
      const [exportChannel] = [...(await locks(prefix, "export")).keys()];
      await until(async () => (await listeners(exportChannel!)) === 2, "B to follow the export job");
      await until(() => exportFollower.items.length > 0, "the job's first status on B");
      // What B has before the kill: a metric's value now, the job's first status.
      const before = followers.map((stream) => stream.items.length);
      const exportBefore = exportFollower.items.length;
      const blocksHead = BigInt(simulator.clock().heads.find((head) => head.chainId === "43114")!.blockNumber);

      await new Promise((resolve) => setTimeout(resolve, Math.max(0, createdAt + EXPORT_JOB_MS + 100 - Date.now())));
      // Each kind's lock, and who holds it: A.
      const lockKeys = new Map<Kind, string>([
        ...kinds.map(
          ([name, kind]) =>
            [name as Kind, [...held.keys()].find((channel) => channel.startsWith(`${prefix}live:${kind.topic}`))!] as const,
        ),
        ["export", exportChannel!],
      ]);
      const exportReader = (await locks(prefix, "export")).get(exportChannel!);
      const readers = new Map<Kind, string | null | undefined>(
        [...lockKeys.keys()].map((kind) => [kind, kind === "export" ? exportReader : reader]),
      );
      // When another gateway set each lock, as Redis ran it: a lock B takes and releases at once
      // (a job that ends at its first read) is seen, however late this process polls.
      const took = new Map<Kind, number>();
      const kindOfLock = new Map([...lockKeys].map(([kind, channel]) => [`${channel}:lock`, kind]));
      monitor = await inspector.monitor();
      const killedAt = Date.now();
      monitor.on("monitor", (time: string, args: string[]) => {
        const kind = args[0]?.toLowerCase() === "set" ? kindOfLock.get(args[1] ?? "") : undefined;
        if (kind !== undefined && !took.has(kind) && args[2] !== readers.get(kind))
          took.set(kind, Math.round(Number(time) * 1000) - killedAt);
      });
      a.child.kill("SIGKILL");
      await a.exit;
      simulator.advanceClock(300);
      const news = (stream: Followed, from: number) => stream.items.slice(from).filter((arrival) => arrival.at >= killedAt);
      const bound = (takeoverMs ?? DEFAULT_TAKEOVER_MS) + READ_ALLOWANCE_MS;
      // What is still missing when the wait runs out, so that a failure says which kind was late.
      const missing = () => [
        ...[...lockKeys.keys()].filter((kind) => !took.has(kind)).map((kind) => `${kind}: lock not taken`),
        ...kinds.flatMap(([name], index) =>
          news(followers[index]!, before[index]!).length > 0 ? [] : [`${name}: nothing after the kill`],
        ),
        ...(news(exportFollower, exportBefore).some((arrival) => arrival.item.operationStatus === "COMPLETED")
          ? []
          : ["export: not COMPLETED"]),
      ];
      await until(
        () => {
          return (
            took.size === lockKeys.size &&
            followers.every((stream, index) => news(stream, before[index]!).length > 0) &&
            news(exportFollower, exportBefore).some((arrival) => arrival.item.operationStatus === "COMPLETED")
          );
        },
        "B's subscribers to get what came after the kill",
        2 * bound,
      ).catch((error: Error) => {
        const redisLines = b.lines.filter((line) => /redis/i.test(String(line.msg))).map((line) => line.msg);
        throw new Error(
          `${error.message} (${Math.round((Date.now() - killedAt) / 1000)} s): ${missing().join("; ")}; B's redis log: ${JSON.stringify(redisLines)}`,
        );
      });

      const pushed = new Map<Kind, number>(
        kinds.map(([name], index) => [name as Kind, news(followers[index]!, before[index]!)[0]!.at - killedAt]),
      );
      const completed = news(exportFollower, exportBefore).find((arrival) => arrival.item.operationStatus === "COMPLETED")!;
      pushed.set("export", completed.at - killedAt);
      const times = Object.fromEntries(
        [...lockKeys.keys()].map((kind) => [kind, { took: took.get(kind)!, pushed: pushed.get(kind)! }]),
      ) as Record<Kind, TakeOver>;
      console.log(
        `take-over, LIVE_TAKEOVER_MS=${takeoverMs ?? `${DEFAULT_TAKEOVER_MS} (default)`}, intervals ${pollMs} ms:`,
        times,
      );

      // From where the last read stopped; the metric's value as the simulator has it.
      expect(news(followers[0]!, before[0]!)[0]!.item.blockNumber).toBe(String(blocksHead + 1n));
      const point = (await (
        await fetch(`${simulator.metricsUrl}/v2/chains/43114/metrics/txCount?timeInterval=hour&pageSize=1`)
      ).json()) as {
        results: unknown[];
      };
      expect(news(followers[4]!, before[4]!).at(-1)!.item).toEqual(point.results[0]);
      // B holds every lock now.
      const taken = await locks(prefix, "live");
      expect([...taken.values()].every((holder) => holder !== null && holder !== reader)).toBe(true);
      return times;
    } finally {
      monitor?.disconnect();
      await Promise.all(streams.map((stream) => stream.cancel()));
      for (const gateway of [a, b])
        if (gateway.child.exitCode === null && gateway.child.signalCode === null) gateway.child.kill("SIGTERM");
      await Promise.all([a.exit, b.exit]);
    }
  }

  it("replaces a killed reader within LIVE_TAKEOVER_MS plus one read, for every kind, though the interval is eight times longer", async () => {
    const takeoverMs = 1_000;
    expectWithin(await measure(takeoverMs, 8_000), takeoverMs);
  }, 120_000);

  it("replaces it within the default LIVE_TAKEOVER_MS plus one read, the intervals being longer still", async () => {
    expectWithin(await measure(undefined, 15_000), DEFAULT_TAKEOVER_MS);
  }, 180_000);
});
