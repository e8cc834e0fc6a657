/**
 * Row 8 (and row 13's operation names): documents that fail validation, extra operations, and
 * long operation names are charged before any parsing, so the work done before a refusal is
 * bounded per caller. Callers are told apart by X-Forwarded-For (TRUST_PROXY).
 *
 * Transports: every test that sends operations runs over HTTP, WebSocket and SSE (a POST asking
 * for `text/event-stream` is charged by the same pipeline). Budgets are computed exactly; a
 * socket's opening costs its caller 1, and a socket's refusal carries no budget, so what it was
 * charged shows in the next answer's, or in the refusal's message. The lexer's counts are no
 * transport's.
 */
import { afterEach, describe, expect, it } from "vitest";
import { documentShape } from "../../src/limits/document-shape.ts";
import {
  CHARACTERS_PER_TOKEN,
  DOCUMENT_TOKENS_PER_CHARGE,
  FREE_DOCUMENT_TOKENS,
  NEW_DOCUMENT_COST,
  inputCost,
  newDocumentCost,
  valueCharacters,
} from "../../src/limits/request-costs.ts";
import { startHarness, upstreamCalls, type Harness } from "../support/harness.ts";
import { over, TRANSPORTS, type Answer, type Transport, type TransportClient } from "../support/transports.ts";

let harness: Harness | undefined;
let client: TransportClient | undefined;

async function start(transport: Transport, env: Record<string, string> = {}) {
  // Refills so slowly that no test sees a token come back.
  harness = await startHarness({ TRUST_PROXY: "true", RATE_LIMIT_RATE: "0.001", ...env });
  const opened = over(transport, harness);
  client = opened;
  const gateway = harness;
  /** What opening the caller's socket cost it: 1 on a WebSocket, nothing otherwise. */
  const opening = transport === "websocket" ? 1 : 0;
  const send = (address: string, query: string, operationName?: string) =>
    opened.send({ query, ...(operationName ? { operationName } : {}) }, from(address));
  return { gateway, send, opening };
}

afterEach(async () => {
  await client?.close();
  await harness?.close();
  client = undefined;
  harness = undefined;
});

const from = (address: string) => ({ "x-forwarded-for": address });

/**
 * The answer as its transport says it: HTTP and SSE by their status and RateLimit-Remaining; a
 * socket by an `error` message (a status of 400 or more) or by a result, whose
 * `extensions.rateLimit` has the budget (a refusal carries none).
 */
function expectAnswer(answer: Answer, status: number, remaining?: number): void {
  if (answer.transport === "websocket") expect(answer.refused).toBe(status >= 400);
  else expect(answer.status).toBe(status);
  if (remaining !== undefined && !(answer.transport === "websocket" && answer.refused)) expect(answer.remaining).toBe(remaining);
}

/** A document of ~4,985 `__typename` fields, unique by its operation name. */
const wide = (index: number) => `query Wide${index} { ${"__typename ".repeat(4_985)}}`;
/** `count` operations, each `{ __typename }`. */
const many = (count: number) => Array.from({ length: count }, (_, index) => `query O${index} { __typename }`).join(" ");

async function servesOthers(send: (address: string, query: string) => Promise<Answer>): Promise<void> {
  const other = await send("192.0.2.99", "{ __typename }");
  expectAnswer(other, 200);
  expect(other.result).toEqual({ data: { __typename: "Query" } });
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
      NEW_DOCUMENT_COST + Math.floor((4_989 - FREE_DOCUMENT_TOKENS) / DOCUMENT_TOKENS_PER_CHARGE) + perCharacters(wide(0)),
    );
    expect(newDocumentCost(many(1_000))).toBe(
      NEW_DOCUMENT_COST +
        Math.floor((5_000 - FREE_DOCUMENT_TOKENS) / DOCUMENT_TOKENS_PER_CHARGE) +
        perCharacters(many(1_000)) +
        999,
    );
    // Any new document costs NEW_DOCUMENT_COST, however small.
    expect(newDocumentCost("{ __typename }")).toBe(NEW_DOCUMENT_COST);
    // A long name is one token, and still read.
    expect(newDocumentCost(`query Q${"x".repeat(95_000)} { __typename }`)).toBe(NEW_DOCUMENT_COST + 95);
  });
});

describe.each(TRANSPORTS)("row 8: charges before parsing, over %s", (transport) => {
  it("row 8: 8 unique 4,985-field documents refused by a limit are each charged 1 and their reading, and a spent caller is refused before parsing", async () => {
    const per = 1 + newDocumentCost(wide(0));
    const burst = 8 * per + Math.floor(per / 2);
    const { gateway, send, opening } = await start(transport, { RATE_LIMIT_BURST: String(burst) });
    const attacker = "192.0.2.8";
    let expected = burst - opening;
    for (let index = 0; index < 8; index++) {
      const response = await send(attacker, wide(index));
      expected -= per;
      // Refused by the token limit as it is parsed, after it was charged.
      expectAnswer(response, 400, expected);
      expect(response.body.errors).toHaveLength(1);
      expect(response.body.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", limit: "tokens" });
    }
    expect(expected).toBe(Math.floor(per / 2) - opening);

    // Half a document's charge left: the next is refused before it is parsed (a document that
    // does not even parse gets RATE_LIMITED, not a syntax error); it keeps the 1 it took first,
    // and pays for the characters it made the gateway read.
    const unparsable = `${wide(9)} {{{ not graphql`;
    const refused = await send(attacker, unparsable);
    expectAnswer(refused, 429, expected - 1 - Math.floor(unparsable.length / CHARACTERS_PER_TOKEN));
    if (refused.headers) expect(refused.headers.get("retry-after")).not.toBeNull();
    expect(refused.body.errors).toHaveLength(1);
    const cost = 1 + newDocumentCost(unparsable);
    const read = Math.floor(unparsable.length / CHARACTERS_PER_TOKEN);
    expect(read).toBe(54);
    expect(refused.body.errors![0]!.extensions).toMatchObject({ code: "RATE_LIMITED", cost, retryAfter: expect.any(Number) });
    // What each transport was charged, said in the message.
    expect(refused.body.errors![0]!.message).toContain(
      `this request (1, and ${cost - 1} for its new document's 4994 tokens and 2 definitions) costs ${cost} and ${expected - 1 - read} of your ${burst} remain`,
    );
    expect(upstreamCalls(gateway)).toEqual({});
    await servesOthers(send);
  });

  it("row 8: a document that fails to parse is charged for its reading", async () => {
    const { gateway, send, opening } = await start(transport, { RATE_LIMIT_BURST: "500" });
    const broken = `{ ${"__typename ".repeat(1_500)}`;
    const response = await send("192.0.2.9", broken);
    expectAnswer(response, 400, 500 - 1 - newDocumentCost(broken));
    expect(response.body.errors![0]!.message).toMatch(/Syntax Error/);
    expect(response.body.errors![0]!.extensions).toMatchObject({ code: "GRAPHQL_PARSE_FAILED" });
    expect(newDocumentCost(broken)).toBe(
      NEW_DOCUMENT_COST +
        Math.floor((1_501 - FREE_DOCUMENT_TOKENS) / DOCUMENT_TOKENS_PER_CHARGE) +
        Math.floor(broken.length / CHARACTERS_PER_TOKEN),
    );
    // The caller's next request (1, and its new document's cost) sees the charge on every transport.
    const next = await send("192.0.2.9", "{ __typename }");
    expectAnswer(next, 200, 500 - opening - 1 - newDocumentCost(broken) - 1 - newDocumentCost("{ __typename }"));
    await servesOthers(send);
    expect(upstreamCalls(gateway)).toEqual({});
  });

  it("row 8: a 1,000-operation document is charged 1 per definition beyond the first, new or not", async () => {
    const { gateway, send, opening } = await start(transport, { RATE_LIMIT_BURST: "3000", MAX_QUERY_TOKENS: "10000" });
    const attacker = "192.0.2.10";
    const query = many(1_000);
    const response = await send(attacker, query, "O500");
    const first = 1 + newDocumentCost(query);
    expectAnswer(response, 200, 3_000 - opening - first);
    expect(response.result).toEqual({ data: { __typename: "Query" } });

    // Sent again, the parse cache holds it: 1 for the request, nothing for its reading, and 1 for each other operation again.
    const again = await send(attacker, query, "O7");
    expectAnswer(again, 200, 3_000 - opening - first - 1 - 999);
    expect(upstreamCalls(gateway)).toEqual({});
    await servesOthers(send);
  });

  it("row 8: with the default limits a 1,000-operation document is refused before it is parsed: reading it costs more than a full bucket", async () => {
    const { gateway, send, opening } = await start(transport, { RATE_LIMIT_BURST: "500" });
    const query = many(1_000);
    const response = await send("192.0.2.11", query, "O0");
    const cost = 1 + newDocumentCost(query);
    // It was read and measured: 1, and 1 per 1,000 characters of it.
    const read = 1 + Math.floor(query.length / CHARACTERS_PER_TOKEN);
    expectAnswer(response, 400, 500 - read);
    expect(response.body.errors![0]!.extensions).toEqual({
      code: "BAD_USER_INPUT",
      limit: "documentSize",
      max: 500,
      actual: cost,
    });
    expect(response.body.errors![0]!.message).toBe(
      `Reading this request (5000 tokens and 1000 definitions) costs ${cost}, more than the 500 that RATE_LIMIT_BURST allows at once, so it can never run; send a smaller document or smaller variables, one operation at a time`,
    );
    // Refused unparsed, it paid no NEW_DOCUMENT_COST; the next request, a new document, pays its own.
    const next = await send("192.0.2.11", "{ __typename }");
    expectAnswer(next, 200, 500 - opening - read - 1 - newDocumentCost("{ __typename }"));
    expect(upstreamCalls(gateway)).toEqual({});
    await servesOthers(send);
  });

  it("row 13: a request with a 95 kB unknown operationName is charged for it, every time", async () => {
    const { gateway, send, opening } = await start(transport, { RATE_LIMIT_BURST: "500" });
    const attacker = "192.0.2.13";
    const name = `Q${"x".repeat(95_000)}`;
    const costs = 1 + Math.floor(name.length / CHARACTERS_PER_TOKEN);
    const answers: Answer[] = [];
    // The first request's document is new (parsed and validated, then refused for the name); the
    // parse cache holds it for the others.
    const first = NEW_DOCUMENT_COST;
    expect(newDocumentCost("{ __typename }")).toBe(first);
    for (let index = 0; index < 6; index++) {
      const response = await send(attacker, "{ __typename }", name);
      answers.push(response);
      if (index < 5) {
        // Refused for its unknown name, and charged for it.
        expectAnswer(response, 400, 500 - opening - first - (index + 1) * costs);
        expect(response.body.errors![0]!.extensions!.code).not.toBe("RATE_LIMITED");
      }
    }
    // 500 pays for five of 96 (and the first one's new document), not a sixth.
    expectAnswer(answers[5]!, 429);
    expect(answers[5]!.body.errors![0]!.extensions).toMatchObject({ code: "RATE_LIMITED", cost: costs });
    // The sixth was read all the same: its 1 and its name's 95 characters' worth are paid, into
    // debt (19 - 1 - 95 over HTTP), so that even a request of cost 1 is refused now.
    const owing = await send(attacker, "{ __typename }");
    expectAnswer(owing, 429);
    expect(owing.body.errors![0]!.extensions).toMatchObject({ code: "RATE_LIMITED" });
    const retryAfter = owing.headers ? Number(owing.headers.get("retry-after")) : owing.body.errors![0]!.extensions!.retryAfter;
    expect(retryAfter).toBeGreaterThan(1_000);
    expect(upstreamCalls(gateway)).toEqual({});
    await servesOthers(send);
  });

  it("row 2: variables cost 1 per 1,000 of their characters on every request, answered or refused, whatever the document", async () => {
    const { gateway, opening } = await start(transport, { RATE_LIMIT_BURST: "500" });
    const attacker = { "x-forwarded-for": "192.0.2.14" };
    const query = "query($id: ID!) { node(id: $id) { id } }";
    // A 17 kB id the gateway refuses (BAD_USER_INPUT, nothing sent upstream): read, coerced and checked all the same.
    const variables = { id: Buffer.from(`EvmChain:${"A".repeat(17_000)}`).toString("base64") };
    const characters = JSON.stringify(variables).length;
    expect(valueCharacters(variables)).toBe(characters);
    const charged = inputCost(variables, undefined);
    expect(charged).toBe(Math.floor(characters / CHARACTERS_PER_TOKEN));
    expect(charged).toBe(22);
    let remaining = 500 - opening;
    for (const document of ["new", "parsed before"]) {
      const answer = await client!.send({ query, variables }, attacker);
      remaining -= 1 + charged + (document === "new" ? newDocumentCost(query) : 0);
      expectAnswer(answer, 200, remaining);
      expect(answer.body.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "id" });
    }
    // Small variables cost nothing beyond the 1.
    const smallQuery = "query($skip: Boolean!) { __typename @skip(if: $skip) }";
    const small = await client!.send({ query: smallQuery, variables: { skip: false } }, attacker);
    remaining -= 1 + newDocumentCost(smallQuery);
    expectAnswer(small, 200, remaining);
    expect(upstreamCalls(gateway)).toEqual({});
  });
});
