/**
 * Row 8 (and row 13's operation names): documents that fail validation, extra operations, and
 * long operation names are charged before any parsing, so the work done before a refusal is
 * bounded per caller. Callers are told apart by X-Forwarded-For (TRUST_PROXY).
 */
import { afterEach, describe, expect, it } from "vitest";
import { CHARACTERS_PER_TOKEN } from "../../src/rate-limit.ts";
import { execute, startHarness, upstreamCalls, type Harness } from "../helpers.ts";

let harness: Harness | undefined;

async function start(env: Record<string, string> = {}): Promise<Harness> {
  // Refills so slowly that no test sees a token come back.
  harness = await startHarness({ TRUST_PROXY: "true", RATE_LIMIT_RATE: "0.001", ...env });
  return harness;
}

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const from = (address: string) => ({ "x-forwarded-for": address });
const remaining = (response: { headers: Headers }) => Number(response.headers.get("ratelimit-remaining"));

/** A document of ~4,985 `__typename` fields, unique by its operation name. */
const wide = (index: number) => `query Wide${index} { ${"__typename ".repeat(4_985)}}`;
/** `count` operations, each `{ __typename }`. */
const many = (count: number) => Array.from({ length: count }, (_, index) => `query O${index} { __typename }`).join(" ");

async function servesOthers(gateway: Harness): Promise<void> {
  const other = await execute(gateway, "{ __typename }", {}, from("192.0.2.99"));
  expect(other.status).toBe(200);
  expect(other.body).toEqual({ data: { __typename: "Query" } });
}

describe("row 8: charges before parsing", () => {
  it("row 8: 8 unique 4,985-field documents refused by a limit are each charged 1 and their size, and a spent caller is refused before parsing", async () => {
    const gateway = await start({ RATE_LIMIT_BURST: "500" });
    const attacker = from("192.0.2.8");
    let expected = 500;
    for (let index = 0; index < 8; index++) {
      const query = wide(index);
      const response = await execute(gateway, query, {}, attacker);
      expected -= 1 + Math.floor(query.length / CHARACTERS_PER_TOKEN);
      // Refused by a limit (validation aborts on so many fields), after it was charged.
      expect(response.status).toBe(400);
      expect(response.body.errors).toHaveLength(1);
      expect(remaining(response)).toBe(expected);
    }
    expect(expected).toBe(500 - 8 * 55);

    // 60 left; the next document costs 55 and may still go, the one after is refused before it is parsed:
    // a document that does not even parse gets RATE_LIMITED, not a syntax error.
    expect(remaining(await execute(gateway, wide(8), {}, attacker))).toBe(5);
    const refused = await execute(gateway, `${wide(9)} {{{ not graphql`, {}, attacker);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).not.toBeNull();
    expect(refused.body.errors).toHaveLength(1);
    expect(refused.body.errors![0]!.extensions).toMatchObject({ code: "RATE_LIMITED", cost: 55 });
    // It keeps the 1 it took before it found the size unaffordable: sending what cannot be paid runs the bucket dry.
    expect(refused.body.errors![0]!.message).toMatch(/this request \(1, and 54 for its 548\d\d characters of new document and operation name\) costs 55 and 4 of your 500 remain/);
    expect(upstreamCalls(gateway)).toEqual({});
    await servesOthers(gateway);
  });

  it("row 8: a document that fails to parse is charged for its size", async () => {
    const gateway = await start({ RATE_LIMIT_BURST: "500" });
    const broken = `{ ${"__typename ".repeat(2_000)}`;
    const response = await execute(gateway, broken, {}, from("192.0.2.9"));
    expect(response.status).toBe(400);
    expect(response.body.errors![0]!.message).toMatch(/Syntax Error/);
    expect(remaining(response)).toBe(500 - 1 - Math.floor(broken.length / CHARACTERS_PER_TOKEN));
    await servesOthers(gateway);
  });

  it("row 8: a 1,000-operation document is charged 1 per operation beyond the one that runs, besides its size", async () => {
    const gateway = await start({ RATE_LIMIT_BURST: "3000", MAX_QUERY_TOKENS: "10000" });
    const attacker = from("192.0.2.10");
    const query = many(1_000);
    const response = await execute(gateway, query, {}, attacker, "O500");
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: { __typename: "Query" } });
    const size = Math.floor((query.length + "O500".length) / CHARACTERS_PER_TOKEN);
    expect(remaining(response)).toBe(3_000 - 1 - size - 999);

    // Sent again, the parse cache holds it: 1 for the request, nothing for its size, and its other operations again.
    const again = await execute(gateway, query, {}, attacker, "O7");
    expect(again.status).toBe(200);
    expect(remaining(again)).toBe(3_000 - 1 - size - 999 - 1 - 999);
    expect(upstreamCalls(gateway)).toEqual({});
    await servesOthers(gateway);
  });

  it("row 8: with the default limits a 1,000-operation document is charged for its size and refused as over a limit: its operations cost more than a full bucket", async () => {
    const gateway = await start({ RATE_LIMIT_BURST: "500" });
    const query = many(1_000);
    const response = await execute(gateway, query, {}, from("192.0.2.11"), "O0");
    expect(response.status).toBe(400);
    expect(response.body.errors![0]!.extensions).toEqual({ code: "BAD_USER_INPUT", limit: "upstreamCalls", max: 500, actual: 1_000 });
    expect(response.body.errors![0]!.message).toMatch(/estimated 1 upstream calls and 999 for the document's other operations, 1000 in all, more than the 500/);
    expect(remaining(response)).toBe(500 - 1 - Math.floor((query.length + 2) / CHARACTERS_PER_TOKEN));
    expect(upstreamCalls(gateway)).toEqual({});
    await servesOthers(gateway);
  });

  it("row 13: a request with a 95 kB unknown operationName is charged for it, every time", async () => {
    const gateway = await start({ RATE_LIMIT_BURST: "500" });
    const attacker = from("192.0.2.13");
    const name = `Q${"x".repeat(95_000)}`;
    const costs = 1 + Math.floor(name.length / CHARACTERS_PER_TOKEN);
    const statuses: number[] = [];
    for (let index = 0; index < 6; index++) {
      const response = await execute(gateway, "{ __typename }", {}, attacker, name);
      statuses.push(response.status);
      if (response.status === 429) expect(response.body.errors![0]!.extensions).toMatchObject({ code: "RATE_LIMITED", cost: costs });
      else expect(remaining(response)).toBe(500 - (index + 1) * costs);
    }
    // 500 pays for five of 96, not a sixth.
    expect(statuses.slice(0, 5).every((status) => status !== 429)).toBe(true);
    expect(statuses[5]).toBe(429);
    expect(upstreamCalls(gateway)).toEqual({});
    await servesOthers(gateway);
  });
});
