/**
 * Row 10: export subscriptions are capped per caller and pay for the polling they cause. Callers
 * are told apart by X-Forwarded-For (TRUST_PROXY); each test uses addresses of its own.
 *
 * Transports: SSE (a POST asking for `text/event-stream` to the served port) and WebSocket
 * (graphql-ws frames): a subscription is a stream, which a plain HTTP POST has no form of. A
 * subscription refused before it starts is JSON with its status over SSE, an `error` message over
 * WebSocket; a socket's opening costs its caller 1, so over WebSocket each bucket holds one read
 * fewer. Upstream calls are counted the same on both.
 */
import { print } from "graphql";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { NEW_DOCUMENT_COST, newDocumentCost } from "../../src/limits/request-costs.ts";
import { operationsOf, startExportJob } from "../support/subscriptions.ts";
import { WatchExportOperationDocument } from "../generated/graphql.ts";
import { startHarness, until, upstreamCalls, type Harness } from "../support/harness.ts";
import { over, useClient, type Refusal, type Stream, type TransportClient } from "../support/transports.ts";

const GET_ROUTE = "GET /v1/operations/{operationId}";
const BURST = 30;
const WATCH = print(WatchExportOperationDocument);

function from(address: string, extra: Record<string, string> = {}): Record<string, string> {
  return { "x-forwarded-for": address, ...extra };
}

/** `Subscription.exportOperation` as `headers`' caller. */
function subscribeExport(client: TransportClient, id: string, headers: Record<string, string>): Promise<Stream> {
  return client.subscribe({ query: WATCH, variables: { id } }, headers);
}

/** A subscription that is refused before it starts: its status over SSE, and its errors. */
async function refusal(
  client: TransportClient,
  address: string,
  id: string,
  extra: Record<string, string> = {},
): Promise<Refusal> {
  const stream = await client.subscribe(
    { query: "subscription ($id: ID!) { exportOperation(id: $id) { operationStatus } }", variables: { id } },
    from(address, extra),
  );
  const refused = await stream.refusal();
  expect(refused).toBeDefined();
  return refused!;
}

/** Refused for its caller's budget or streams: a 429 over SSE, an `error` message (no status) over WebSocket. */
function expectRateLimited(refused: Refusal | { status: number | undefined; refused: boolean }): void {
  if ("refused" in refused) expect(refused.refused).toBe(true);
  if (refused.status !== undefined) expect(refused.status).toBe(429);
}

async function expectServed(client: TransportClient, address: string): Promise<void> {
  const answer = await client.send({ query: "{ __typename }" }, from(address));
  expect(answer.refused).toBe(false);
  expect(answer.result).toEqual({ data: { __typename: "Query" } });
}

describe.each(["sse", "websocket"] as const)("row 10: export subscriptions, over %s", (transport) => {
  /** What opening a caller's socket costs it: 1 on a WebSocket, nothing over SSE. */
  const opening = transport === "websocket" ? 1 : 0;
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
  const client = useClient(transport, () => harness);

  it("row 10: caps one caller's open streams at 10, by address however many keys it sends, and frees a slot when a client leaves", async () => {
    // Polls once per stream here: the cap, not the budget, is what this test meets.
    const capping = await startHarness({
      TRUST_PROXY: "true",
      EXPORT_POLL_INTERVAL_MS: "600000",
      MAX_SUBSCRIPTIONS_PER_CALLER: "10",
    });
    const capped = over(transport, capping);
    try {
      await cappedStreams(capping, capped);
    } finally {
      await capped.close();
      await capping.close();
    }
  });

  async function cappedStreams(harness: Harness, client: TransportClient): Promise<void> {
    harness.simulator.setKnobs({ exportJobMs: 600_000 });
    const id = await startExportJob(harness);
    const address = "198.51.100.10";
    const open: Stream[] = [];
    for (let index = 0; index < 10; index++) {
      // Over WebSocket, each key is a socket of its own.
      const subscription = await subscribeExport(
        client,
        id,
        from(address, { "x-glacier-api-key": `rotating-${index}-${Math.random()}` }),
      );
      expect(await subscription.next()).toMatchObject({ event: "next" });
      open.push(subscription);
    }
    harness.simulator.resetCounters();
    const eleventh = await refusal(client, address, id, { "x-glacier-api-key": `rotating-11-${Math.random()}` });
    expectRateLimited(eleventh);
    expect(eleventh.errors).toHaveLength(1);
    expect(eleventh.errors[0]!.extensions).toEqual({ code: "RATE_LIMITED", limit: "subscriptions", max: 10 });
    expect(eleventh.errors[0]!.message).toMatch(/you have 10 open, the most MAX_SUBSCRIPTIONS_PER_CALLER allows/);
    const unkeyed = await refusal(client, address, id);
    expectRateLimited(unkeyed);
    expect(unkeyed.errors[0]!.extensions).toMatchObject({ code: "RATE_LIMITED", limit: "subscriptions" });
    // The refusals made no upstream call: the reads counted are the ten streams' pollers'.
    expect(upstreamCalls(harness)).toEqual({});

    // Another caller still subscribes, and the gateway still serves.
    const neighbour = await subscribeExport(client, id, from("198.51.100.11"));
    expect(await neighbour.next()).toMatchObject({ event: "next" });
    await expectServed(client, address);

    // A client that leaves frees its slot: one more stream opens, and only one.
    await open.pop()!.cancel();
    let reopened: Stream | undefined;
    await until(async () => {
      const attempt = await subscribeExport(client, id, from(address)).catch(() => undefined);
      if (attempt && (await attempt.next())?.event === "next") reopened = attempt;
      return reopened !== undefined;
    }, "a slot to be freed");
    const twelfth = await refusal(client, address, id);
    expectRateLimited(twelfth);
    expect(twelfth.errors[0]!.extensions).toMatchObject({ code: "RATE_LIMITED", limit: "subscriptions" });
    for (const subscription of [...open, reopened!, neighbour]) await subscription.cancel();
  }

  it("row 10: charges each read of the poller to the stream's caller, and ends the stream with RATE_LIMITED when its budget is spent", async () => {
    const id = await startExportJob(harness);
    harness.simulator.resetCounters();
    const address = "198.51.100.20";
    const subscription = await subscribeExport(client, id, from(address));
    const events = await subscription.rest();
    // The request paid 1, and the reading of its new document (the first in this gateway to send
    // it): NEW_DOCUMENT_COST, and 1 for its fragment, a second definition; its first read came
    // with that, each later read costs 1, until the bucket of 30 (less a socket's opening) is spent.
    const reading = newDocumentCost(WATCH);
    expect(reading).toBe(NEW_DOCUMENT_COST + 1);
    expect(upstreamCalls(harness)).toEqual({ [GET_ROUTE]: BURST - opening - reading });
    expect(operationsOf(events.slice(0, 1)).map((operation) => operation.operationStatus)).toEqual(["RUNNING"]);
    expect(events.map((event) => event.event)).toEqual(["next", "next", "complete"]);
    const ended = JSON.parse(events[1]!.data) as { errors: { message: string; extensions: Record<string, unknown> }[] };
    expect(ended.errors[0]!.extensions).toMatchObject({ code: "RATE_LIMITED", cost: 1 });
    expect(ended.errors[0]!.message).toMatch(
      /each read of its poller for your subscription \(the stream ends\) costs 1 and 0 of your 30 remain/,
    );

    // The caller is spent; another is served.
    harness.simulator.resetCounters();
    const spent = await client.send({ query: "{ __typename }" }, from(address));
    expectRateLimited(spent);
    expect(spent.body.errors![0]!.extensions).toMatchObject({ code: "RATE_LIMITED" });
    await expectServed(client, "198.51.100.21");
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("row 10: charges every subscriber of a shared poller for each read", async () => {
    const id = await startExportJob(harness);
    harness.simulator.resetCounters();
    // Two callers without a key share one poller; the second has spent half its bucket first.
    const halfSpent = "198.51.100.31";
    for (let index = 0; index < BURST / 2; index++) await expectServed(client, halfSpent);
    const first = await subscribeExport(client, id, from("198.51.100.30"));
    expect(await first.next()).toMatchObject({ event: "next" });
    const second = await subscribeExport(client, id, from(halfSpent));
    const secondEvents = await second.rest();
    expect(secondEvents.map((event) => event.event)).toEqual(["next", "next", "complete"]);
    expect(JSON.parse(secondEvents[1]!.data)).toMatchObject({ errors: [{ extensions: { code: "RATE_LIMITED" } }] });
    const firstEvents = await first.rest();
    expect(firstEvents.map((event) => event.event)).toEqual(["next", "complete"]);
    expect(JSON.parse(firstEvents[0]!.data)).toMatchObject({ errors: [{ extensions: { code: "RATE_LIMITED" } }] });
    // The first paid for every read (1 + 29 in its bucket of 30, less a socket's opening: the
    // previous test had the gateway parse WATCH, so no new document's cost), the second for some:
    // one poller, as many reads.
    expect(upstreamCalls(harness)).toEqual({ [GET_ROUTE]: BURST - opening });
    await expectServed(client, "198.51.100.32");
  });
});
