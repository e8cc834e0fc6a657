/**
 * Row 8 (and row 13's operation names): documents that fail validation, extra operations, and
 * long operation names are charged before any parsing, so the work done before a refusal is
 * bounded per caller. Callers are told apart by X-Forwarded-For (TRUST_PROXY).
 */
import { afterEach, describe, expect, it } from "vitest";
import { documentShape } from "../../src/limits/document-shape.ts";
import {
  CHARACTERS_PER_TOKEN,
  DOCUMENT_TOKENS_PER_CHARGE,
  FREE_DOCUMENT_TOKENS,
  newDocumentCost,
} from "../../src/plugins/rate-limit.ts";
import { execute, startHarness, upstreamCalls, type Harness } from "../support/harness.ts";

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
  it("counts a document's tokens and definitions from its text as a GraphQL lexer would", () => {
    expect(documentShape("query Wide0 { __typename __typename }", Infinity)).toEqual({
      tooDeep: false,
      depth: 1,
      definitions: 1,
      tokens: 6,
    });
    // Strings, comments and commas are no tokens of their own; fragments are definitions too.
    expect(documentShape('# a comment { { {\n{ a(b: "}}}", c: 1) ...F } fragment F on Query { d }', Infinity)).toEqual({
      tooDeep: false,
      depth: 2,
      definitions: 2,
      tokens: 20,
    });
    expect(documentShape("{ a { b { c } } }", 2).tooDeep).toBe(true);
    // 4,989 tokens: the first 200 are free, then 1 per 20; and 1 per 1,000 characters.
    const perCharacters = (text: string) => Math.floor(text.length / CHARACTERS_PER_TOKEN);
    expect(newDocumentCost(wide(0))).toBe(
      Math.floor((4_989 - FREE_DOCUMENT_TOKENS) / DOCUMENT_TOKENS_PER_CHARGE) + perCharacters(wide(0)),
    );
    expect(newDocumentCost(many(1_000))).toBe(
      Math.floor((5_000 - FREE_DOCUMENT_TOKENS) / DOCUMENT_TOKENS_PER_CHARGE) + perCharacters(many(1_000)) + 999,
    );
    expect(newDocumentCost("{ __typename }")).toBe(0);
    // A long name is one token, and still read.
    expect(newDocumentCost(`query Q${"x".repeat(95_000)} { __typename }`)).toBe(95);
  });

  it("row 8: 8 unique 4,985-field documents refused by a limit are each charged 1 and their reading, and a spent caller is refused before parsing", async () => {
    const per = 1 + newDocumentCost(wide(0));
    const burst = 8 * per + Math.floor(per / 2);
    const gateway = await start({ RATE_LIMIT_BURST: String(burst) });
    const attacker = from("192.0.2.8");
    let expected = burst;
    for (let index = 0; index < 8; index++) {
      const response = await execute(gateway, wide(index), {}, attacker);
      expected -= per;
      // Refused by the token limit as it is parsed, after it was charged.
      expect(response.status).toBe(400);
      expect(response.body.errors).toHaveLength(1);
      expect(remaining(response)).toBe(expected);
    }
    expect(expected).toBe(Math.floor(per / 2));

    // Half a document's charge left: the next is refused before it is parsed (a document that
    // does not even parse gets RATE_LIMITED, not a syntax error); it keeps the 1 it took first,
    // and pays for the characters it made the gateway read.
    const unparsable = `${wide(9)} {{{ not graphql`;
    const refused = await execute(gateway, unparsable, {}, attacker);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).not.toBeNull();
    expect(refused.body.errors).toHaveLength(1);
    const cost = 1 + newDocumentCost(unparsable);
    const read = Math.floor(unparsable.length / CHARACTERS_PER_TOKEN);
    expect(read).toBe(54);
    expect(refused.body.errors![0]!.extensions).toMatchObject({ code: "RATE_LIMITED", cost });
    expect(refused.body.errors![0]!.message).toContain(
      `this request (1, and ${cost - 1} for its new document's 4994 tokens and 2 definitions) costs ${cost} and ${expected - 1 - read} of your ${burst} remain`,
    );
    expect(remaining(refused)).toBe(expected - 1 - read);
    expect(upstreamCalls(gateway)).toEqual({});
    await servesOthers(gateway);
  });

  it("row 8: a document that fails to parse is charged for its reading", async () => {
    const gateway = await start({ RATE_LIMIT_BURST: "500" });
    const broken = `{ ${"__typename ".repeat(1_500)}`;
    const response = await execute(gateway, broken, {}, from("192.0.2.9"));
    expect(response.status).toBe(400);
    expect(response.body.errors![0]!.message).toMatch(/Syntax Error/);
    expect(newDocumentCost(broken)).toBe(
      Math.floor((1_501 - FREE_DOCUMENT_TOKENS) / DOCUMENT_TOKENS_PER_CHARGE) + Math.floor(broken.length / CHARACTERS_PER_TOKEN),
    );
    expect(remaining(response)).toBe(500 - 1 - newDocumentCost(broken));
    await servesOthers(gateway);
  });

  it("row 8: a 1,000-operation document is charged 1 per definition beyond the first, new or not", async () => {
    const gateway = await start({ RATE_LIMIT_BURST: "3000", MAX_QUERY_TOKENS: "10000" });
    const attacker = from("192.0.2.10");
    const query = many(1_000);
    const response = await execute(gateway, query, {}, attacker, "O500");
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: { __typename: "Query" } });
    const first = 1 + newDocumentCost(query);
    expect(remaining(response)).toBe(3_000 - first);

    // Sent again, the parse cache holds it: 1 for the request, nothing for its reading, and 1 for each other operation again.
    const again = await execute(gateway, query, {}, attacker, "O7");
    expect(again.status).toBe(200);
    expect(remaining(again)).toBe(3_000 - first - 1 - 999);
    expect(upstreamCalls(gateway)).toEqual({});
    await servesOthers(gateway);
  });

  it("row 8: with the default limits a 1,000-operation document is refused before it is parsed: reading it costs more than a full bucket", async () => {
    const gateway = await start({ RATE_LIMIT_BURST: "500" });
    const query = many(1_000);
    const response = await execute(gateway, query, {}, from("192.0.2.11"), "O0");
    expect(response.status).toBe(400);
    const cost = 1 + newDocumentCost(query);
    expect(response.body.errors![0]!.extensions).toEqual({
      code: "BAD_USER_INPUT",
      limit: "documentSize",
      max: 500,
      actual: cost,
    });
    expect(response.body.errors![0]!.message).toBe(
      `Reading this request (5000 tokens and 1000 definitions) costs ${cost}, more than the 500 that RATE_LIMIT_BURST allows at once, so it can never run; send a smaller document, one operation at a time`,
    );
    // It was read and measured: 1, and 1 per 1,000 characters of it.
    expect(remaining(response)).toBe(499 - Math.floor(query.length / CHARACTERS_PER_TOKEN));
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
      if (response.status === 429)
        expect(response.body.errors![0]!.extensions).toMatchObject({ code: "RATE_LIMITED", cost: costs });
      else expect(remaining(response)).toBe(500 - (index + 1) * costs);
    }
    // 500 pays for five of 96, not a sixth.
    expect(statuses.slice(0, 5).every((status) => status !== 429)).toBe(true);
    expect(statuses[5]).toBe(429);
    // The sixth was read all the same: its 1 and its name's 95 characters' worth are paid, into
    // debt (20 - 1 - 95), so that even a request of cost 1 is refused now.
    const owing = await execute(gateway, "{ __typename }", {}, attacker);
    expect(owing.status).toBe(429);
    expect(Number(owing.headers.get("retry-after"))).toBeGreaterThan(1_000);
    expect(upstreamCalls(gateway)).toEqual({});
    await servesOthers(gateway);
  });
});
