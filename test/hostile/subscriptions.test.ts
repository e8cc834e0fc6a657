/**
 * Row 10: export subscriptions are capped per caller and pay for the polling they cause. Callers
 * are told apart by X-Forwarded-For (TRUST_PROXY); each test uses addresses of its own.
 */
import { print } from "graphql";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { newDocumentCost } from "../../src/plugins/rate-limit.ts";
import { operationsOf, startExportJob, subscribeExport, type ExportSubscription } from "../support/subscriptions.ts";
import { WatchExportOperationDocument } from "../generated/graphql.ts";
import { execute, startHarness, until, upstreamCalls, type Harness } from "../support/harness.ts";

const GET_ROUTE = "GET /v1/operations/{operationId}";
const BURST = 30;

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness({
    TRUST_PROXY: "true",
    EXPORT_POLL_INTERVAL_MS: "20",
    // Refills so slowly that no test sees a token come back.
    RATE_LIMIT_RATE: "0.001",
    RATE_LIMIT_BURST: String(BURST),
    MAX_SUBSCRIPTIONS_PER_CALLER: "10",
  });
});
afterAll(async () => {
  await harness.close();
});
beforeEach(() => {
  harness.simulator.setKnobs({ exportJobMs: 600_000, errorRate: 0, errorRoutes: [] });
  harness.simulator.resetCounters();
});

function from(address: string, extra: Record<string, string> = {}): Record<string, string> {
  return { "x-forwarded-for": address, ...extra };
}

async function refusal(address: string, id: string, extra: Record<string, string> = {}) {
  const response = await harness.gateway.yoga.fetch("http://gateway.test/graphql", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream", ...from(address, extra) },
    body: JSON.stringify({
      query: "subscription ($id: ID!) { exportOperation(id: $id) { operationStatus } }",
      variables: { id },
    }),
  });
  const text = await response.text();
  const data = text.split("\n").find((line) => line.startsWith("data:"));
  return {
    status: response.status,
    body: JSON.parse(data ? data.slice(5) : text) as { errors?: { message: string; extensions: Record<string, unknown> }[] },
  };
}

async function typename(address: string): Promise<number> {
  const result = await execute(harness, "{ __typename }", {}, from(address));
  expect(result.body).toEqual({ data: { __typename: "Query" } });
  return result.status;
}

describe("row 10: export subscriptions", () => {
  it("row 10: caps one caller's open streams at 10, by address however many keys it sends, and frees a slot when a client leaves", async () => {
    // Polls once per stream here: the cap, not the budget, is what this test meets.
    const main = harness;
    harness = await startHarness({ TRUST_PROXY: "true", EXPORT_POLL_INTERVAL_MS: "600000", MAX_SUBSCRIPTIONS_PER_CALLER: "10" });
    try {
      await capped();
    } finally {
      await harness.close();
      harness = main;
    }
  });

  async function capped(): Promise<void> {
    harness.simulator.setKnobs({ exportJobMs: 600_000 });
    const id = await startExportJob(harness);
    const address = "198.51.100.10";
    const open: ExportSubscription[] = [];
    for (let index = 0; index < 10; index++) {
      const subscription = await subscribeExport(
        harness,
        id,
        from(address, { "x-glacier-api-key": `rotating-${index}-${Math.random()}` }),
      );
      expect(await subscription.next()).toMatchObject({ event: "next" });
      open.push(subscription);
    }
    harness.simulator.resetCounters();
    const eleventh = await refusal(address, id, { "x-glacier-api-key": `rotating-11-${Math.random()}` });
    expect(eleventh.status).toBe(429);
    expect(eleventh.body.errors).toHaveLength(1);
    expect(eleventh.body.errors![0]!.extensions).toEqual({ code: "RATE_LIMITED", limit: "subscriptions", max: 10 });
    expect(eleventh.body.errors![0]!.message).toMatch(/you have 10 open, the most MAX_SUBSCRIPTIONS_PER_CALLER allows/);
    const unkeyed = await refusal(address, id);
    expect(unkeyed.status).toBe(429);
    // The refusals made no upstream call: the reads counted are the ten streams' pollers'.
    expect(upstreamCalls(harness)).toEqual({});

    // Another caller still subscribes, and the gateway still serves.
    const neighbour = await subscribeExport(harness, id, from("198.51.100.11"));
    expect(await neighbour.next()).toMatchObject({ event: "next" });
    expect(await typename(address)).toBe(200);

    // A client that leaves frees its slot: one more stream opens, and only one.
    await open.pop()!.cancel();
    let reopened: ExportSubscription | undefined;
    await until(async () => {
      const attempt = await subscribeExport(harness, id, from(address)).catch(() => undefined);
      if (attempt && (await attempt.next())?.event === "next") reopened = attempt;
      return reopened !== undefined;
    }, "a slot to be freed");
    expect((await refusal(address, id)).status).toBe(429);
    for (const subscription of [...open, reopened!, neighbour]) await subscription.cancel();
  }

  it("row 10: charges each read of the poller to the stream's caller, and ends the stream with RATE_LIMITED when its budget is spent", async () => {
    const id = await startExportJob(harness);
    harness.simulator.resetCounters();
    const address = "198.51.100.20";
    const subscription = await subscribeExport(harness, id, from(address));
    const events = await subscription.rest();
    // The request paid 1, and the reading of its new document (its fragment is a second
    // definition); its first read came with that, each later read costs 1, until the bucket of 30 is spent.
    const reading = newDocumentCost(print(WatchExportOperationDocument));
    expect(reading).toBe(1);
    expect(upstreamCalls(harness)).toEqual({ [GET_ROUTE]: BURST - reading });
    expect(operationsOf(events.slice(0, 1)).map((operation) => operation.operationStatus)).toEqual(["RUNNING"]);
    expect(events.map((event) => event.event)).toEqual(["next", "next", "complete"]);
    const ended = JSON.parse(events[1]!.data) as { errors: { message: string; extensions: Record<string, unknown> }[] };
    expect(ended.errors[0]!.extensions).toMatchObject({ code: "RATE_LIMITED", cost: 1 });
    expect(ended.errors[0]!.message).toMatch(
      /each read of its poller for your subscription \(the stream ends\) costs 1 and 0 of your 30 remain/,
    );

    // The caller is spent; another is served.
    harness.simulator.resetCounters();
    const spent = await execute(harness, "{ __typename }", {}, from(address));
    expect(spent.status).toBe(429);
    expect(spent.body.errors![0]!.extensions).toMatchObject({ code: "RATE_LIMITED" });
    expect(await typename("198.51.100.21")).toBe(200);
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("row 10: charges every subscriber of a shared poller for each read", async () => {
    const id = await startExportJob(harness);
    harness.simulator.resetCounters();
    // Two callers without a key share one poller; the second has spent half its bucket first.
    const halfSpent = "198.51.100.31";
    for (let index = 0; index < BURST / 2; index++) expect(await typename(halfSpent)).toBe(200);
    const first = await subscribeExport(harness, id, from("198.51.100.30"));
    expect(await first.next()).toMatchObject({ event: "next" });
    const second = await subscribeExport(harness, id, from(halfSpent));
    const secondEvents = await second.rest();
    expect(secondEvents.map((event) => event.event)).toEqual(["next", "next", "complete"]);
    expect(JSON.parse(secondEvents[1]!.data)).toMatchObject({ errors: [{ extensions: { code: "RATE_LIMITED" } }] });
    const firstEvents = await first.rest();
    expect(firstEvents.map((event) => event.event)).toEqual(["next", "complete"]);
    expect(JSON.parse(firstEvents[0]!.data)).toMatchObject({ errors: [{ extensions: { code: "RATE_LIMITED" } }] });
    // The first paid for every read (1 + 29 in its bucket of 30), the second for some: one poller, 30 reads.
    expect(upstreamCalls(harness)).toEqual({ [GET_ROUTE]: BURST });
    expect(await typename("198.51.100.32")).toBe(200);
  });
});
