/**
 * Export-job subscriptions on two gateways over one simulator: one upstream poller in all when
 * they share a Redis (a real redis-server on loopback), one per gateway without it or while it
 * is down. Each gateway has its own GLACIER_API_KEY and the subscribers send none, so that the
 * simulator's request log tells which gateway polled.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startSimulator } from "../simulator/server.ts";
import { operationsOf, subscribeExport, type SseEvent } from "./support/subscriptions.ts";
import { ExportTransactionsDocument } from "./generated/graphql.ts";
import { execute, metricsText, startInstance, until, type Instance, type RunningSimulator } from "./support/harness.ts";
import { redisServerAvailable, startRedisServer, type RedisServer } from "./support/redis-server.ts";

const GET_ROUTE = "GET /v1/operations/{operationId}";
const POLL_MS = 200;
const KEYS = ["gateway-a-key", "gateway-b-key"] as const;

describe.skipIf(!redisServerAvailable)("export subscriptions across gateways", () => {
  let simulator: RunningSimulator;
  let redis: RedisServer;
  const instances: Instance[] = [];

  beforeAll(async () => {
    [simulator, redis] = await Promise.all([startSimulator({ dataPort: 0, metricsPort: 0 }), startRedisServer()]);
  });
  beforeEach(() => {
    simulator.setKnobs({ exportJobMs: 1_500 });
  });
  afterEach(async () => {
    await Promise.all(instances.splice(0).map((instance) => instance.close()));
  });
  afterAll(async () => {
    await Promise.all([simulator?.close(), redis?.stop()]);
  });

  /** Two gateways, with Redis or without. */
  async function pair(shared: boolean): Promise<[Instance, Instance]> {
    const started = await Promise.all(
      KEYS.map((key) =>
        startInstance(simulator, {
          GLACIER_API_KEY: key,
          EXPORT_POLL_INTERVAL_MS: String(POLL_MS),
          ...(shared ? { REDIS_URL: redis.url } : {}),
        }),
      ),
    );
    instances.push(...started);
    return started as [Instance, Instance];
  }

  async function startExport(gateway: Instance): Promise<string> {
    const result = await execute(gateway, ExportTransactionsDocument, {
      input: { primaryNetwork: { includeChains: ["p-chain", "x-chain"] } },
    });
    expect(result.body.errors).toBeUndefined();
    return result.body.data!.exportTransactions!.operationId;
  }

  /** The keys of the gateways that read the operation, in the order they did. */
  function pollers(operationId: string): string[] {
    return simulator
      .requests()
      .filter((request) => request.route === GET_ROUTE && request.path.endsWith(operationId))
      .map((request) => request.apiKey ?? "none");
  }

  function statuses(events: SseEvent[]): string[] {
    return operationsOf(events).map((operation) => operation.operationStatus);
  }

  it("polls the job once in all for subscribers on both gateways, and the late one starts from the latest read", async () => {
    const [a, b] = await pair(true);
    const operationId = await startExport(a);
    const began = Date.now();
    const first = await subscribeExport(a, operationId);
    await expect(first.next()).resolves.toMatchObject({ event: "next" });
    await sleep(2 * POLL_MS);
    const late = await subscribeExport(b, operationId);
    const [firstEvents, lateEvents] = await Promise.all([first.rest(), late.rest()]);
    const elapsed = Date.now() - began;

    expect(statuses(firstEvents)).toEqual(["COMPLETED"]);
    expect(statuses(lateEvents)).toEqual(["RUNNING", "COMPLETED"]);
    expect(lateEvents.at(-1)?.event).toBe("complete");
    const polls = pollers(operationId);
    expect(new Set(polls)).toEqual(new Set([KEYS[0]]));
    expect(polls.length).toBeLessThanOrEqual(Math.ceil(elapsed / POLL_MS) + 1);
  });

  it("polls once in all when subscribers on both gateways come at the same time", async () => {
    const [a, b] = await pair(true);
    const operationId = await startExport(a);
    const subscriptions = await Promise.all([subscribeExport(a, operationId), subscribeExport(b, operationId)]);
    const events = await Promise.all(subscriptions.map((subscription) => subscription.rest()));
    for (const stream of events) {
      expect(statuses(stream)).toEqual(["RUNNING", "COMPLETED"]);
      expect(stream.at(-1)?.event).toBe("complete");
    }
    expect(new Set(pollers(operationId)).size).toBe(1);
  });

  it("polls once per gateway without Redis", async () => {
    const [a, b] = await pair(false);
    const operationId = await startExport(a);
    const subscriptions = await Promise.all([subscribeExport(a, operationId), subscribeExport(b, operationId)]);
    const events = await Promise.all(subscriptions.map((subscription) => subscription.rest()));
    for (const stream of events) expect(statuses(stream)).toEqual(["RUNNING", "COMPLETED"]);
    expect(new Set(pollers(operationId))).toEqual(new Set(KEYS));
  });

  it("hands the polling on when the polling gateway's last subscriber leaves", async () => {
    const [a, b] = await pair(true);
    const operationId = await startExport(a);
    const leaving = await subscribeExport(a, operationId);
    await expect(leaving.next()).resolves.toMatchObject({ event: "next" });
    const staying = await subscribeExport(b, operationId);
    await expect(staying.next()).resolves.toMatchObject({ event: "next" });
    await sleep(2 * POLL_MS);
    expect(new Set(pollers(operationId))).toEqual(new Set([KEYS[0]]));

    await leaving.cancel();
    const rest = await staying.rest();
    expect(statuses(rest)).toEqual(["COMPLETED"]);
    const polls = pollers(operationId);
    const handedOver = polls.indexOf(KEYS[1]);
    expect(handedOver).toBeGreaterThan(0);
    // The second gateway alone from then on.
    expect(polls.slice(handedOver).every((key) => key === KEYS[1])).toBe(true);
  });

  it("replaces a poller whose gateway lost Redis within a few intervals, and ends with the job", async () => {
    const [a, b] = await pair(true);
    simulator.setKnobs({ exportJobMs: 2_500 });
    const operationId = await startExport(a);
    const polling = await subscribeExport(a, operationId);
    await expect(polling.next()).resolves.toMatchObject({ event: "next" });
    const following = await subscribeExport(b, operationId);
    await expect(following.next()).resolves.toMatchObject({ event: "next" });
    expect(new Set(pollers(operationId))).toEqual(new Set([KEYS[0]]));

    // The polling gateway's link goes away without releasing its lock, as in a crash.
    await a.redis!.close();
    const lost = Date.now();
    await until(() => pollers(operationId).includes(KEYS[1]), "the second gateway to take over");
    expect(Date.now() - lost).toBeLessThan(6 * POLL_MS + 500);
    const [pollingEvents, followingEvents] = await Promise.all([polling.rest(), following.rest()]);
    expect(statuses(pollingEvents)).toEqual(["COMPLETED"]);
    expect(statuses(followingEvents)).toEqual(["COMPLETED"]);
  });

  it("falls back to a poller per gateway while Redis is down, losing no stream", async () => {
    const [a, b] = await pair(true);
    simulator.setKnobs({ exportJobMs: 2_500 });
    const operationId = await startExport(a);
    const subscriptions = await Promise.all([subscribeExport(a, operationId), subscribeExport(b, operationId)]);
    const events = subscriptions.map((subscription) => subscription.rest());
    await sleep(3 * POLL_MS);
    expect(new Set(pollers(operationId)).size).toBe(1);

    await redis.kill();
    await until(() => new Set(pollers(operationId)).size === 2, "both gateways to poll");
    for (const stream of await Promise.all(events)) {
      expect(statuses(stream)).toEqual(["RUNNING", "COMPLETED"]);
      expect(stream.at(-1)?.event).toBe("complete");
    }
    for (const gateway of [a, b]) {
      expect(await metricsText(gateway)).toMatch(/^gateway_redis_fallbacks_total\{operation="export-lock"\} [1-9]/m);
    }

    // Back, Redis is shared again: the next job has one poller in all.
    await redis.restart();
    for (const gateway of [a, b]) await until(() => gateway.redis!.up, "the gateway to see Redis again");
    simulator.setKnobs({ exportJobMs: 1_000 });
    const next = await startExport(a);
    const again = await Promise.all([subscribeExport(a, next), subscribeExport(b, next)]);
    for (const stream of await Promise.all(again.map((subscription) => subscription.rest()))) {
      expect(statuses(stream)).toEqual(["RUNNING", "COMPLETED"]);
    }
    expect(new Set(pollers(next)).size).toBe(1);
  });
});
