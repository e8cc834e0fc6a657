/**
 * Row 16: a key the upstream refuses never gets what another key loaded. A caller's key the
 * Data API has not accepted lately is not served from the shared caches (its calls go upstream,
 * which says whether it is good); once refused (401, 403), the gateway refuses it too, before
 * any cache, for REFUSED_KEY_TTL_MS.
 *
 * Transports: every test runs over HTTP, WebSocket (the key in the upgrade's header and the
 * connection params) and SSE (a POST asking for `text/event-stream` carries the key as HTTP
 * does). A refusal at the door is a 403 over HTTP and SSE, an `error` message over a socket.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { startHarness, upstreamCalls, type Harness } from "../support/harness.ts";
import { over, TRANSPORTS, type Answer, type Transport, type TransportClient } from "../support/transports.ts";

const BLOCK_QUERY = '{ chain(id: "43114") { block(id: "500") { blockNumber blockHash } } }';
const OTHER_QUERY = '{ chain(id: "43114") { block(id: "501") { blockNumber } } }';

const started: { harness: Harness; client: TransportClient }[] = [];
async function clientWith(transport: Transport, env: Record<string, string> = {}) {
  const harness = await startHarness(env);
  const client = over(transport, harness);
  started.push({ harness, client });
  harness.simulator.setKnobs({ apiKeys: ["key-a", "key-c"] });
  const ask = (query: string, key?: string) => client.send({ query }, key ? { "x-glacier-api-key": key } : {});
  return { harness, ask };
}
afterEach(async () => {
  for (const { harness, client } of started.splice(0)) {
    await client.close();
    await harness.close();
  }
});

/** Refused before it ran: a 403 over HTTP and SSE, an `error` message over a socket. */
function expectRefused(result: Answer, status = 403): void {
  expect(result.refused).toBe(true);
  if (result.transport !== "websocket") expect(result.status).toBe(status);
}

describe.each(TRANSPORTS)("row 16: a refused key is not served from caches, over %s", (transport) => {
  async function expectRefusedAtTheDoor(ask: (query: string, key?: string) => Promise<Answer>, query: string, key: string) {
    const result = await ask(query, key);
    expectRefused(result);
    if (result.headers) expect(result.headers.get("content-type")).toMatch(/^application\/json/);
    expect(result.body.data).toBeUndefined();
    expect(result.body.errors).toHaveLength(1);
    expect(result.body.errors![0]!.extensions).toMatchObject({ code: "FORBIDDEN", upstream: { status: 403 } });
    expect(result.body.errors![0]!.message).toMatch(/refused the key in x-glacier-api-key \(HTTP 403\).*60 s/);
    expect(JSON.stringify(result.body)).not.toContain(key);
  }

  async function expectStillServing(ask: (query: string) => Promise<Answer>) {
    expect((await ask("{ __typename }")).result).toEqual({ data: { __typename: "Query" } });
  }

  it("row 16: key B (refused) asks for a block key A loaded: refused, 1 upstream call for its first try, 0 after", async () => {
    const { harness, ask } = await clientWith(transport);
    const loaded = await ask(BLOCK_QUERY, "key-a");
    expect(loaded.body.errors).toBeUndefined();
    expect(loaded.body.data).toMatchObject({ chain: { block: { blockNumber: "500" } } });

    // First try: not served from the record cache; the Data API is asked, and refuses.
    harness.simulator.resetCounters();
    const first = await ask(BLOCK_QUERY, "key-b");
    expect(JSON.stringify(first.body.data)).not.toContain("blockHash");
    expect(first.body.errors![0]!.extensions).toMatchObject({ code: "FORBIDDEN", upstream: { status: 403 } });
    const firstCalls = Object.values(upstreamCalls(harness)).reduce((sum, count) => sum + count, 0);
    expect(firstCalls).toBe(1);
    expect(new Set(harness.simulator.requests().map((request) => request.apiKey))).toEqual(new Set(["key-b"]));

    // After: refused at the door, whatever it asks, with no upstream call.
    harness.simulator.resetCounters();
    await expectRefusedAtTheDoor(ask, BLOCK_QUERY, "key-b");
    await expectRefusedAtTheDoor(ask, OTHER_QUERY, "key-b");
    await expectRefusedAtTheDoor(ask, "{ __typename }", "key-b");
    expect(upstreamCalls(harness)).toEqual({});

    // Key A, accepted, is still served from the cache; so is a caller without a key.
    const again = await ask(BLOCK_QUERY, "key-a");
    expect(again.result).toEqual(loaded.result);
    expect(upstreamCalls(harness)).toEqual({});
    await expectStillServing(ask);
  });

  it("row 16: a refused key is refused before the response cache, which holds its earlier answer", async () => {
    const { harness, ask } = await clientWith(transport, { RESPONSE_CACHE_TTL_MS: "60000" });
    const answered = await ask(BLOCK_QUERY, "key-c");
    expect(answered.body.errors).toBeUndefined();
    const cached = await ask(BLOCK_QUERY, "key-c");
    // A socket has no headers: its answer from the cache is the same answer, with no upstream call.
    if (cached.headers) expect(cached.headers.get("x-response-cache")).toBe("hit");
    expect(cached.result).toEqual(answered.result);

    // The key is revoked upstream; the next call it makes is refused.
    harness.simulator.setKnobs({ apiKeys: ["key-a"] });
    harness.gateway.cache.clear();
    const refused = await ask(OTHER_QUERY, "key-c");
    expect(refused.body.errors![0]!.extensions).toMatchObject({ code: "FORBIDDEN" });

    harness.simulator.resetCounters();
    await expectRefusedAtTheDoor(ask, BLOCK_QUERY, "key-c");
    expect(upstreamCalls(harness)).toEqual({});
    await expectStillServing(ask);
  });

  it("row 16: the refusal lasts REFUSED_KEY_TTL_MS, then the key is asked about again (one call)", async () => {
    const { harness, ask } = await clientWith(transport, { REFUSED_KEY_TTL_MS: "200" });
    await ask(BLOCK_QUERY, "key-b");
    harness.simulator.resetCounters();
    expectRefused(await ask(BLOCK_QUERY, "key-b"));
    expect(upstreamCalls(harness)).toEqual({});

    await sleep(250);
    const askedAgain = await ask(BLOCK_QUERY, "key-b");
    expect(askedAgain.refused).toBe(false);
    if (askedAgain.status !== undefined) expect(askedAgain.status).toBe(200);
    expect(askedAgain.body.errors![0]!.extensions).toMatchObject({ code: "FORBIDDEN" });
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/chains": 1 });
    await expectStillServing(ask);
  });

  it("row 16: invented keys cost a bounded number of remembered verdicts", async () => {
    const { harness, ask } = await clientWith(transport, { API_KEY_VERDICT_MAX_ENTRIES: "3" });
    for (const key of ["rot-1", "rot-2", "rot-3", "rot-4"]) await ask(BLOCK_QUERY, key);
    harness.simulator.resetCounters();
    // The three latest are remembered; the first was dropped, and is asked about again.
    for (const key of ["rot-2", "rot-3", "rot-4"]) expectRefused(await ask(BLOCK_QUERY, key));
    expect(upstreamCalls(harness)).toEqual({});
    const dropped = await ask(BLOCK_QUERY, "rot-1");
    expect(dropped.refused).toBe(false);
    if (dropped.status !== undefined) expect(dropped.status).toBe(200);
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/chains": 1 });
    await expectStillServing(ask);
  });
});
