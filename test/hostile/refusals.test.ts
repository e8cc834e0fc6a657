/**
 * Issue 16, rows 7, 11 and 15: every refusal is JSON with `extensions.code` and one status per
 * kind, whatever the `accept` header, over POST and GET; deeply nested JSON is refused, not a
 * 500 with a stack trace; with introspection off, no message suggests a name; an error thrown
 * in a plugin's HTTP hook is answered as JSON. Each refusal goes nowhere upstream and leaves the
 * gateway serving.
 */
import { createServer, type Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import type { Plugin } from "graphql-yoga";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { execute, metricsText, startHarness, upstreamCalls, type Harness } from "../support/harness.ts";

let harness: Harness;
let server: Server;
let base: string;

beforeAll(async () => {
  // The response cache on: its key reads the whole body, which is where deep JSON used to overflow the stack.
  harness = await startHarness({ INTROSPECTION: "false", RESPONSE_CACHE_TTL_MS: "1000", RATE_LIMIT: "false" });
  server = createServer(harness.gateway.listener);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await harness.close();
});
beforeEach(() => harness.simulator.resetCounters());

const ACCEPTS = ["application/json", "application/graphql-response+json"] as const;
const CSRF = { "x-graphql-yoga-csrf": "1" };

interface Answer {
  status: number;
  contentType: string;
  text: string;
  body: { data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] };
}

async function answer(response: Response): Promise<Answer> {
  const text = await response.text();
  return {
    status: response.status,
    contentType: response.headers.get("content-type") ?? "",
    text,
    body: JSON.parse(text) as Answer["body"],
  };
}

/** A POST through the real HTTP listener (which parses JSON bodies ahead), or through yoga.fetch. */
async function post(body: string, accept: string, { overHttp = true, contentType = "application/json" } = {}): Promise<Answer> {
  const init = { method: "POST", headers: { "content-type": contentType, accept }, body };
  return answer(
    overHttp ? await fetch(`${base}/graphql`, init) : await harness.gateway.yoga.fetch("http://gateway.test/graphql", init),
  );
}

async function get(params: Record<string, string>, accept: string, headers: Record<string, string> = CSRF): Promise<Answer> {
  const query = new URLSearchParams(params).toString();
  return answer(await harness.gateway.yoga.fetch(`http://gateway.test/graphql?${query}`, { headers: { accept, ...headers } }));
}

/** The shape every refusal has; the first error's code and message are returned for more checks. */
function expectRefusal(result: Answer, status: number, code: string): { message: string; extensions: Record<string, unknown> } {
  expect(result.status).toBe(status);
  expect(result.contentType).toMatch(/^application\/(graphql-response\+)?json/);
  expect(result.body.data).toBeUndefined();
  expect(result.body.errors?.[0]?.extensions?.code).toBe(code);
  expect(result.text).not.toContain("/work/");
  expect(result.text).not.toMatch(/\bat .*\.(ts|js):\d+/);
  expect(result.text).not.toContain("originalError");
  expect(upstreamCalls(harness)).toEqual({});
  return { message: result.body.errors![0]!.message, extensions: result.body.errors![0]!.extensions! };
}

async function expectServing(): Promise<void> {
  const result = await execute(harness, "{ __typename }");
  expect(result.body).toEqual({ data: { __typename: "Query" } });
}

function refusalCount(text: string, reason: string): number {
  const line = text.split("\n").find((entry) => entry.startsWith(`gateway_refusals_total{reason="${reason}"}`));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

const nestedArray = (depth: number) => `${"[".repeat(depth)}1${"]".repeat(depth)}`;

describe("row 7: JSON nested deeper than MAX_NESTING_DEPTH", () => {
  it("row 7: the issue's body, 5,000 arrays deep in variables, is a 400 BAD_REQUEST over HTTP, logged and counted", async () => {
    const before = refusalCount(await metricsText(harness), "nesting_too_deep");
    for (const accept of ACCEPTS) {
      const result = await post(`{"query":"{ __typename }","variables":{"x":${nestedArray(5_000)}}}`, accept);
      const { message, extensions } = expectRefusal(result, 400, "BAD_REQUEST");
      expect(message).toBe("The variables nest deeper than the limit of 64");
      expect(extensions).toMatchObject({ argument: "variables", limit: "nesting", max: 64 });
    }
    expect(refusalCount(await metricsText(harness), "nesting_too_deep")).toBe(before + 2);
    await expectServing();
  });

  it("row 7: deep extensions, through yoga.fetch and over HTTP, and deep variables in a GET query string", async () => {
    for (const accept of ACCEPTS) {
      const body = `{"query":"{ __typename }","extensions":{"x":${nestedArray(3_000)}}}`;
      expectRefusal(await post(body, accept), 400, "BAD_REQUEST");
      expectRefusal(await post(body, accept, { overHttp: false }), 400, "BAD_REQUEST");
      const viaGet = await get({ query: "{ __typename }", variables: `{"x":${nestedArray(65)}}` }, accept);
      expect(expectRefusal(viaGet, 400, "BAD_REQUEST").extensions).toMatchObject({ argument: "variables", max: 64 });
    }
    // 64 levels are within the bound.
    const within = await post(`{"query":"{ __typename }","variables":{"x":${nestedArray(63)}}}`, "application/json");
    expect(within.body).toEqual({ data: { __typename: "Query" } });
  });

  it("row 7: a document nesting brackets 10,000 deep is a 400 GRAPHQL_PARSE_FAILED, POST and GET", async () => {
    for (const accept of ACCEPTS) {
      for (const document of [
        `{ __typename(x: ${nestedArray(10_000)}) }`,
        `{ ${"a { ".repeat(2_400)} b ${"}".repeat(2_400)} }`,
      ]) {
        const viaPost = expectRefusal(await post(JSON.stringify({ query: document }), accept), 400, "GRAPHQL_PARSE_FAILED");
        expect(viaPost.extensions).toMatchObject({ limit: "nesting", max: 64 });
        expectRefusal(await get({ query: document }, accept), 400, "GRAPHQL_PARSE_FAILED");
      }
    }
    await expectServing();
  });
});

describe("row 11: INTROSPECTION=false hides every suggestion", () => {
  const refusedWithoutSuggestion = async (query: string, variables: Record<string, unknown> | undefined, code: string) => {
    for (const accept of ACCEPTS) {
      const result = await post(JSON.stringify({ query, variables }), accept);
      expectRefusal(result, 400, code);
      expect(result.text).not.toMatch(/did you mean/i);
      expect(result.text).not.toContain("TX_COUNT");
    }
  };

  it("row 11: enum values, inline and through variables", async () => {
    await refusedWithoutSuggestion(
      `{ networkMetrics(scope: MAINNET, metric: TX_CONT) { __typename } }`,
      undefined,
      "GRAPHQL_VALIDATION_FAILED",
    );
    await refusedWithoutSuggestion(
      `query($metric: ChainMetric!) { networkMetrics(scope: MAINNET, metric: $metric) { __typename } }`,
      { metric: "TX_CONT" },
      "BAD_USER_INPUT",
    );
  });

  it("row 11: input object fields, inline and through variables", async () => {
    await refusedWithoutSuggestion(
      `mutation { exportTransactions(input: { evmm: { addresses: [], includeChains: [] } }) { id } }`,
      undefined,
      "GRAPHQL_VALIDATION_FAILED",
    );
    await refusedWithoutSuggestion(
      `mutation($input: ExportTransactionsInput!) { exportTransactions(input: $input) { id } }`,
      { input: { evmm: { addresses: [], includeChains: [] } } },
      "BAD_USER_INPUT",
    );
  });

  it("row 11: field names, argument names and type names", async () => {
    await refusedWithoutSuggestion(`{ latestBlock { nodes { blockHash } } }`, undefined, "GRAPHQL_VALIDATION_FAILED");
    await refusedWithoutSuggestion(`{ latestBlocks(frist: 1) { nodes { blockHash } } }`, undefined, "GRAPHQL_VALIDATION_FAILED");
    await refusedWithoutSuggestion(
      `query($n: Itn) { latestBlocks(first: $n) { nodes { blockHash } } }`,
      undefined,
      "GRAPHQL_VALIDATION_FAILED",
    );
    await expectServing();
  });

  it("row 11: with introspection on, suggestions stay", async () => {
    const open = await startHarness({});
    try {
      const result = await execute(open, `{ networkMetrics(scope: MAINNET, metric: TX_CONT) { __typename } }`);
      expect(result.body.errors?.[0]?.message).toContain('Did you mean the enum value "TX_COUNT"?');
    } finally {
      await open.close();
    }
  });
});

describe("row 15: every refusal is JSON with a code and its status, POST and GET alike", () => {
  const aliases = `{ ${Array.from({ length: 51 }, (_, index) => `a${index}: chain(id: "43114") { chainName }`).join(" ")} }`;
  const cases: [name: string, query: string, variables: Record<string, unknown> | undefined, code: string, limit?: string][] = [
    ["a document that does not parse", "{ __typename ", undefined, "GRAPHQL_PARSE_FAILED"],
    ["a document that does not validate", "{ nope }", undefined, "GRAPHQL_VALIDATION_FAILED"],
    ['"Validation aborted." (too many errors)', `{ ${"nope ".repeat(1_990)}}`, undefined, "GRAPHQL_VALIDATION_FAILED"],
    ["51 aliases", aliases, undefined, "BAD_USER_INPUT", "aliases"],
    [
      "51 aliases of __typename",
      `{ ${Array.from({ length: 51 }, (_, index) => `t${index}: __typename`).join(" ")} }`,
      undefined,
      "BAD_USER_INPUT",
      "aliases",
    ],
    ["51 directives", `{ __typename ${"@skip(if: false) ".repeat(51)}}`, undefined, "BAD_USER_INPUT", "directives"],
    ["2,001 tokens", `{ ${"__typename ".repeat(2_001)}}`, undefined, "BAD_USER_INPUT", "tokens"],
    [
      "a variable that does not coerce",
      "query($n: Int!) { latestBlocks(first: $n) { nodes { blockHash } } }",
      { n: "ten" },
      "BAD_USER_INPUT",
    ],
    ["a missing variable", "query($n: Int!) { latestBlocks(first: $n) { nodes { blockHash } } }", {}, "BAD_USER_INPUT"],
  ];

  for (const [name, query, variables, code, limit] of cases) {
    it(`row 15: ${name} is a 400 ${code}`, async () => {
      for (const accept of ACCEPTS) {
        const viaPost = expectRefusal(await post(JSON.stringify({ query, variables }), accept), 400, code);
        if (limit) expect(viaPost.extensions).toMatchObject({ limit, max: expect.any(Number) });
        const params: Record<string, string> = { query };
        if (variables) params.variables = JSON.stringify(variables);
        const viaGet = expectRefusal(await get(params, accept), 400, code);
        expect(viaGet.message).toBe(viaPost.message);
      }
      await expectServing();
    });
  }

  it("row 15: a CSRF-refused request (a GET, or a simple POST, without a preflight header) is a 400 BAD_REQUEST", async () => {
    for (const accept of ACCEPTS) {
      const viaGet = expectRefusal(await get({ query: "{ __typename }" }, accept, {}), 400, "BAD_REQUEST");
      expect(viaGet.message).toMatch(/CSRF/);
      expectRefusal(
        await post(JSON.stringify({ query: "{ __typename }" }), accept, { contentType: "text/plain" }),
        400,
        "BAD_REQUEST",
      );
    }
    await expectServing();
  });

  it("row 15: malformed JSON, a JSON array and an unknown operation name are 400 BAD_REQUEST, echoing nothing internal", async () => {
    for (const accept of ACCEPTS) {
      for (const overHttp of [true, false]) {
        const malformed = expectRefusal(await post(`{ not json ${"x".repeat(2_000)}`, accept, { overHttp }), 400, "BAD_REQUEST");
        expect(malformed.message).toBe("POST body sent invalid JSON.");
        expectRefusal(await post("[]", accept, { overHttp }), 400, "BAD_REQUEST");
      }
      const unknown = await post(JSON.stringify({ query: "query A { __typename }", operationName: "B" }), accept);
      expect(unknown.status).toBe(400);
      expect(unknown.body.errors?.[0]?.extensions?.code).toBeDefined();
    }
    await expectServing();
  });

  it("row 15: bodies over the limit are 413 PAYLOAD_TOO_LARGE, bodies without a length 411 LENGTH_REQUIRED", async () => {
    const over = await post(
      JSON.stringify({ query: "{ __typename }", variables: { padding: "x".repeat(120_000) } }),
      "application/json",
    );
    expect(expectRefusal(over, 413, "PAYLOAD_TOO_LARGE").message).toMatch(/over the limit of 100000 bytes/);
    const chunk = JSON.stringify({ query: "{ __typename }" });
    const chunked = await new Promise<string>((resolve, reject) => {
      const socket = connect((server.address() as AddressInfo).port, "127.0.0.1", () =>
        socket.end(
          "POST /graphql HTTP/1.1\r\nhost: gateway\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n" +
            `${chunk.length.toString(16)}\r\n${chunk}\r\n0\r\n\r\n`,
        ),
      );
      let received = "";
      socket.on("data", (data) => (received += data.toString()));
      socket.on("end", () => resolve(received));
      socket.on("error", reject);
    });
    expect(chunked).toMatch(/^HTTP\/1\.1 411/);
    expect(chunked).toMatch(/content-type: application\/json/i);
    expect(chunked).toContain('"code":"LENGTH_REQUIRED"');
    expect(upstreamCalls(harness)).toEqual({});
    await expectServing();
  });

  it("row 15: an unsupported method, media type or path is JSON with its HTTP status", async () => {
    const put = await answer(
      await fetch(`${base}/graphql`, { method: "PUT", headers: { "content-type": "application/json" }, body: "{}" }),
    );
    expectRefusal(put, 405, "BAD_REQUEST");
    const xml = await answer(
      await fetch(`${base}/graphql`, { method: "POST", headers: { "content-type": "application/xml" }, body: "<query/>" }),
    );
    expectRefusal(xml, 415, "BAD_REQUEST");
    const elsewhere = await answer(await fetch(`${base}/nowhere`));
    expectRefusal(elsewhere, 404, "NOT_FOUND");
    await expectServing();
  });

  it("row 15: each kind of refusal is counted under its reason", async () => {
    const before = await metricsText(harness);
    await post(JSON.stringify({ query: aliases }), "application/json");
    await post(JSON.stringify({ query: "{ nope }" }), "application/json");
    await get({ query: "{ __typename }" }, "application/json", {});
    const after = await metricsText(harness);
    for (const reason of ["over_limit", "validation_failed", "csrf"])
      expect(refusalCount(after, reason)).toBe(refusalCount(before, reason) + 1);
  });
});

describe("no stack trace ever reaches a client", () => {
  it("row 15: an error thrown in a plugin's HTTP hook is a JSON 500 without a stack, over HTTP too", async () => {
    const throwing: Plugin = {
      onRequest({ url }) {
        if (url.pathname === "/throw-on-request") throw new RangeError("Maximum call stack size exceeded");
        if (url.pathname === "/reject-on-request") return Promise.reject(new Error("rejected at /work/main/src/nowhere.ts:1:1"));
      },
      onResponse({ request }) {
        if (request.url.endsWith("/throw-on-response")) throw new Error("thrown at /work/main/src/nowhere.ts:2:2");
      },
    };
    const faulty = await startHarness({}, { plugins: [throwing] });
    const faultyServer = createServer(faulty.gateway.listener);
    await new Promise<void>((resolve) => faultyServer.listen(0, "127.0.0.1", resolve));
    try {
      const port = (faultyServer.address() as AddressInfo).port;
      for (const path of ["/throw-on-request", "/reject-on-request", "/throw-on-response"]) {
        for (const response of [
          await fetch(`http://127.0.0.1:${port}${path}`),
          await faulty.gateway.yoga.fetch(`http://gateway.test${path}`),
        ]) {
          const result = await answer(response);
          expect(result.status).toBe(500);
          expect(result.contentType).toMatch(/^application\/json/);
          expect(result.body.errors?.[0]).toEqual({
            message: "Unexpected error.",
            extensions: { code: "INTERNAL_SERVER_ERROR" },
          });
          expect(result.text).not.toContain("/work/");
        }
      }
      const still = await execute(faulty, "{ __typename }");
      expect(still.body).toEqual({ data: { __typename: "Query" } });
    } finally {
      await new Promise((resolve) => faultyServer.close(resolve));
      await faulty.close();
    }
  });
});
