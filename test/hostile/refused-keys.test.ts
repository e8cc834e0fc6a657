/**
 * Row 16: a key the upstream refuses never gets what another key loaded. A caller's key the
 * Data API has not accepted lately is not served from the shared caches (its calls go upstream,
 * which says whether it is good); once refused (401, 403), the gateway refuses it too, before
 * any cache, for REFUSED_KEY_TTL_MS.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { execute, startHarness, upstreamCalls, type Harness } from "../support/harness.ts";

const BLOCK_QUERY = '{ chain(id: "43114") { block(id: "500") { blockNumber blockHash } } }';
const OTHER_QUERY = '{ chain(id: "43114") { block(id: "501") { blockNumber } } }';

const started: Harness[] = [];
async function harnessWith(env: Record<string, string> = {}): Promise<Harness> {
  const harness = await startHarness(env);
  started.push(harness);
  harness.simulator.setKnobs({ apiKeys: ["key-a", "key-c"] });
  return harness;
}
afterEach(async () => {
  for (const harness of started.splice(0)) await harness.close();
});

const asKey = (key: string) => ({ "x-glacier-api-key": key });

async function expectRefusedAtTheDoor(harness: Harness, query: string, key: string) {
  const result = await execute(harness, query, undefined, asKey(key));
  expect(result.status).toBe(403);
  expect(result.headers.get("content-type")).toMatch(/^application\/json/);
  expect(result.body.data).toBeUndefined();
  expect(result.body.errors).toHaveLength(1);
  expect(result.body.errors![0]!.extensions).toMatchObject({ code: "FORBIDDEN", upstream: { status: 403 } });
  expect(result.body.errors![0]!.message).toMatch(/refused the key in x-glacier-api-key \(HTTP 403\).*60 s/);
  expect(JSON.stringify(result.body)).not.toContain(key);
}

async function expectStillServing(harness: Harness) {
  expect((await execute(harness, "{ __typename }")).body).toEqual({ data: { __typename: "Query" } });
}

describe("row 16: a refused key is not served from caches", () => {
  it("row 16: key B (refused) asks for a block key A loaded: refused, 1 upstream call for its first try, 0 after", async () => {
    const harness = await harnessWith();
    const loaded = await execute(harness, BLOCK_QUERY, undefined, asKey("key-a"));
    expect(loaded.body.errors).toBeUndefined();
    expect(loaded.body.data).toMatchObject({ chain: { block: { blockNumber: "500" } } });

    // First try: not served from the record cache; the Data API is asked, and refuses.
    harness.simulator.resetCounters();
    const first = await execute(harness, BLOCK_QUERY, undefined, asKey("key-b"));
    expect(JSON.stringify(first.body.data)).not.toContain("blockHash");
    expect(first.body.errors![0]!.extensions).toMatchObject({ code: "FORBIDDEN", upstream: { status: 403 } });
    const firstCalls = Object.values(upstreamCalls(harness)).reduce((sum, count) => sum + count, 0);
    expect(firstCalls).toBe(1);
    expect(new Set(harness.simulator.requests().map((request) => request.apiKey))).toEqual(new Set(["key-b"]));

    // After: refused at the door, whatever it asks, with no upstream call.
    harness.simulator.resetCounters();
    await expectRefusedAtTheDoor(harness, BLOCK_QUERY, "key-b");
    await expectRefusedAtTheDoor(harness, OTHER_QUERY, "key-b");
    await expectRefusedAtTheDoor(harness, "{ __typename }", "key-b");
    expect(upstreamCalls(harness)).toEqual({});

    // Key A, accepted, is still served from the cache; so is a caller without a key.
    const again = await execute(harness, BLOCK_QUERY, undefined, asKey("key-a"));
    expect(again.body).toEqual(loaded.body);
    expect(upstreamCalls(harness)).toEqual({});
    await expectStillServing(harness);
  });

  it("row 16: a refused key is refused before the response cache, which holds its earlier answer", async () => {
    const harness = await harnessWith({ RESPONSE_CACHE_TTL_MS: "60000" });
    const answered = await execute(harness, BLOCK_QUERY, undefined, asKey("key-c"));
    expect(answered.body.errors).toBeUndefined();
    expect((await execute(harness, BLOCK_QUERY, undefined, asKey("key-c"))).headers.get("x-response-cache")).toBe("hit");

    // The key is revoked upstream; the next call it makes is refused.
    harness.simulator.setKnobs({ apiKeys: ["key-a"] });
    harness.gateway.cache.clear();
    const refused = await execute(harness, OTHER_QUERY, undefined, asKey("key-c"));
    expect(refused.body.errors![0]!.extensions).toMatchObject({ code: "FORBIDDEN" });

    harness.simulator.resetCounters();
    await expectRefusedAtTheDoor(harness, BLOCK_QUERY, "key-c");
    expect(upstreamCalls(harness)).toEqual({});
    await expectStillServing(harness);
  });

  it("row 16: the refusal lasts REFUSED_KEY_TTL_MS, then the key is asked about again (one call)", async () => {
    const harness = await harnessWith({ REFUSED_KEY_TTL_MS: "200" });
    await execute(harness, BLOCK_QUERY, undefined, asKey("key-b"));
    harness.simulator.resetCounters();
    const atTheDoor = await execute(harness, BLOCK_QUERY, undefined, asKey("key-b"));
    expect(atTheDoor.status).toBe(403);
    expect(upstreamCalls(harness)).toEqual({});

    await sleep(250);
    const askedAgain = await execute(harness, BLOCK_QUERY, undefined, asKey("key-b"));
    expect(askedAgain.status).toBe(200);
    expect(askedAgain.body.errors![0]!.extensions).toMatchObject({ code: "FORBIDDEN" });
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/chains": 1 });
    await expectStillServing(harness);
  });

  it("row 16: invented keys cost a bounded number of remembered verdicts", async () => {
    const harness = await harnessWith({ API_KEY_VERDICT_MAX_ENTRIES: "3" });
    for (const key of ["rot-1", "rot-2", "rot-3", "rot-4"]) await execute(harness, BLOCK_QUERY, undefined, asKey(key));
    harness.simulator.resetCounters();
    // The three latest are remembered; the first was dropped, and is asked about again.
    for (const key of ["rot-2", "rot-3", "rot-4"])
      expect((await execute(harness, BLOCK_QUERY, undefined, asKey(key))).status).toBe(403);
    expect(upstreamCalls(harness)).toEqual({});
    expect((await execute(harness, BLOCK_QUERY, undefined, asKey("rot-1"))).status).toBe(200);
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/chains": 1 });
    await expectStillServing(harness);
  });
});
