/**
 * Issue 16, rows 7, 11 and 15: every refusal is JSON with `extensions.code` and one status per
 * kind, whatever the `accept` header, over POST and GET; deeply nested JSON is refused, not a
 * 500 with a stack trace; with introspection off, no message suggests a name; an error thrown
 * in a plugin's HTTP hook is answered as JSON. Each refusal goes nowhere upstream and leaves the
 * gateway serving.
 *
 * Transports: each refusal of an operation is sent over HTTP (a POST to the gateway's listener,
 * with each `accept`), WebSocket (refused with an `error` message, whose errors carry the code)
 * and SSE (a POST asking for `text/event-stream`, refused with its status). HTTP only: GET query
 * strings, CSRF, malformed JSON bytes, bodies over the limit or without a length, unsupported
 * methods, media types and paths, and errors thrown in a plugin's HTTP hook: they are HTTP framing,
 * which a socket's frames and SSE's POSTs (HTTP's own listener) have no other form of.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Plugin } from "graphql-yoga";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { execute, metricsText, startHarness, upstreamCalls, type Harness } from "../support/harness.ts";
import { over, TRANSPORTS, useClient, type Transport, type TransportClient } from "../support/transports.ts";

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
  transport: Transport;
  /** None on a socket. */
  status: number | undefined;
  contentType: string | undefined;
  text: string;
  body: { data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] };
}

async function answer(response: Response): Promise<Answer> {
  const text = await response.text();
  return {
    transport: "http",
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

/**
 * A request body sent as each transport sends it: over HTTP a POST to the listener with each
 * `accept`; over a WebSocket or SSE, once through `client` (the body's JSON text as it is).
 */
async function sendOver(client: TransportClient, body: string): Promise<Answer[]> {
  if (client.transport === "http") {
    const answers: Answer[] = [];
    for (const accept of ACCEPTS) answers.push(await post(body, accept));
    return answers;
  }
  const { transport, status, headers, body: result } = await client.send(body);
  return [
    { transport, status, contentType: headers?.get("content-type") ?? undefined, text: JSON.stringify(result), body: result },
  ];
}

/**
 * The shape every refusal has, on every transport (a socket has no status: its `error` message
 * refuses); the first error's code and message are returned for more checks. JSON is checked
 * over HTTP; SSE's is its own test.
 */
function expectRefusal(result: Answer, status: number, code: string): { message: string; extensions: Record<string, unknown> } {
  if (result.transport !== "websocket") expect(result.status).toBe(status);
  if (result.transport === "http" || result.transport === "http-socket")
    expect(result.contentType).toMatch(/^application\/(graphql-response\+)?json/);
  expect(result.body.data).toBeUndefined();
  expect(result.body.errors?.[0]?.extensions?.code).toBe(code);
  expect(result.text).not.toContain("/work/");
  expect(result.text).not.toMatch(/\bat .*\.(ts|js):\d+/);
  expect(result.text).not.toContain("originalError");
  expect(upstreamCalls(harness)).toEqual({});
  return { message: result.body.errors![0]!.message, extensions: result.body.errors![0]!.extensions! };
}

async function expectServing(client?: TransportClient): Promise<void> {
  const result = client
    ? (await client.send({ query: "{ __typename }" })).result
    : (await execute(harness, "{ __typename }")).body;
  expect(result).toEqual({ data: { __typename: "Query" } });
}

function refusalCount(text: string, reason: string): number {
  const line = text.split("\n").find((entry) => entry.startsWith(`gateway_refusals_total{reason="${reason}"}`));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

const nestedArray = (depth: number) => `${"[".repeat(depth)}1${"]".repeat(depth)}`;

// Over WebSocket such a frame is refused before graphql-ws takes it (src/server/websocket-frames.ts):
// the operation's body could not be written again for the pipeline.
describe.each(TRANSPORTS)("row 7: JSON nested deeper than MAX_NESTING_DEPTH, over %s", (transport) => {
  const client = useClient(transport, () => harness);

  it("row 7: the issue's body, 5,000 arrays deep in variables, is a 400 BAD_REQUEST, logged and counted", async () => {
    const before = refusalCount(await metricsText(harness), "nesting_too_deep");
    const results = await sendOver(client, `{"query":"{ __typename }","variables":{"x":${nestedArray(5_000)}}}`);
    for (const result of results) {
      const { message, extensions } = expectRefusal(result, 400, "BAD_REQUEST");
      expect(message).toBe("The variables nest deeper than the limit of 64");
      expect(extensions).toMatchObject({ argument: "variables", limit: "nesting", max: 64 });
    }
    expect(refusalCount(await metricsText(harness), "nesting_too_deep")).toBe(before + results.length);
    await expectServing(client);
  });

  it("row 7: deep extensions, and variables one level too deep; 64 levels are within the bound", async () => {
    for (const result of await sendOver(client, `{"query":"{ __typename }","extensions":{"x":${nestedArray(3_000)}}}`))
      expectRefusal(result, 400, "BAD_REQUEST");
    for (const result of await sendOver(client, `{"query":"{ __typename }","variables":{"x":${nestedArray(65)}}}`))
      expect(expectRefusal(result, 400, "BAD_REQUEST").extensions).toMatchObject({ argument: "variables", max: 64 });
    // 64 levels are within the bound.
    for (const within of await sendOver(client, `{"query":"{ __typename }","variables":{"x":${nestedArray(63)}}}`))
      expect(within.body).toMatchObject({ data: { __typename: "Query" } });
    if (transport !== "http") return;
    // HTTP also: through yoga.fetch as through the listener, and in a GET's query string.
    for (const accept of ACCEPTS) {
      const body = `{"query":"{ __typename }","extensions":{"x":${nestedArray(3_000)}}}`;
      expectRefusal(await post(body, accept, { overHttp: false }), 400, "BAD_REQUEST");
      const viaGet = await get({ query: "{ __typename }", variables: `{"x":${nestedArray(65)}}` }, accept);
      expect(expectRefusal(viaGet, 400, "BAD_REQUEST").extensions).toMatchObject({ argument: "variables", max: 64 });
    }
  });

  it("row 7: a document nesting brackets 10,000 deep is a 400 GRAPHQL_PARSE_FAILED, POST and GET", async () => {
    for (const document of [`{ __typename(x: ${nestedArray(10_000)}) }`, `{ ${"a { ".repeat(2_400)} b ${"}".repeat(2_400)} }`]) {
      for (const result of await sendOver(client, JSON.stringify({ query: document })))
        expect(expectRefusal(result, 400, "GRAPHQL_PARSE_FAILED").extensions).toMatchObject({ limit: "nesting", max: 64 });
      // HTTP also: in a GET's query string.
      if (transport === "http")
        for (const accept of ACCEPTS) expectRefusal(await get({ query: document }, accept), 400, "GRAPHQL_PARSE_FAILED");
    }
    await expectServing(client);
  });
});

describe.each(TRANSPORTS)("row 11: INTROSPECTION=false hides every suggestion, over %s", (transport) => {
  const client = useClient(transport, () => harness);

  const refusedWithoutSuggestion = async (query: string, variables: Record<string, unknown> | undefined, code: string) => {
    for (const result of await sendOver(client, JSON.stringify({ query, variables }))) {
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
    await expectServing(client);
  });

  it("row 11: introspection itself is refused, with no suggestion", async () => {
    await refusedWithoutSuggestion(`{ __schema { types { name } } }`, undefined, "GRAPHQL_VALIDATION_FAILED");
    await refusedWithoutSuggestion(`{ __type(name: "Query") { name } }`, undefined, "GRAPHQL_VALIDATION_FAILED");
    await expectServing(client);
  });

  it("row 11: with introspection on, suggestions stay", async () => {
    const open = await startHarness({});
    const openClient = over(transport, open);
    try {
      const result = await openClient.send({ query: `{ networkMetrics(scope: MAINNET, metric: TX_CONT) { __typename } }` });
      expect(result.body.errors?.[0]?.message).toContain('Did you mean the enum value "TX_COUNT"?');
    } finally {
      await openClient.close();
      await open.close();
    }
  });
});

describe.each(TRANSPORTS)("row 15: every refusal has a code and its status, over %s", (transport) => {
  const client = useClient(transport, () => harness);
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
      const results = await sendOver(client, JSON.stringify({ query, variables }));
      for (const result of results) {
        const viaPost = expectRefusal(result, 400, code);
        if (limit) expect(viaPost.extensions).toMatchObject({ limit, max: expect.any(Number) });
      }
      if (transport === "http") {
        // HTTP also: the same refusal in a GET's query string.
        const params: Record<string, string> = { query };
        if (variables) params.variables = JSON.stringify(variables);
        for (const [index, accept] of ACCEPTS.entries()) {
          const viaGet = expectRefusal(await get(params, accept), 400, code);
          expect(viaGet.message).toBe(results[index]!.body.errors![0]!.message);
        }
      }
      await expectServing(client);
    });
  }

  it("row 15: an unknown operation name is a 400 with a code, echoing nothing internal", async () => {
    for (const unknown of await sendOver(client, JSON.stringify({ query: "query A { __typename }", operationName: "B" }))) {
      expect(unknown.body.data).toBeUndefined();
      if (unknown.status !== undefined) expect(unknown.status).toBe(400);
      expect(unknown.body.errors?.[0]?.extensions?.code).toBeDefined();
      expect(unknown.text).not.toContain("/work/");
    }
    await expectServing(client);
  });

  it("row 15: each kind of refusal is counted under its reason", async () => {
    const before = await metricsText(harness);
    const sent = (await sendOver(client, JSON.stringify({ query: aliases }))).length;
    await sendOver(client, JSON.stringify({ query: "{ nope }" }));
    if (transport === "http") await get({ query: "{ __typename }" }, "application/json", {});
    const after = await metricsText(harness);
    for (const reason of ["over_limit", "validation_failed"])
      expect(refusalCount(after, reason)).toBe(refusalCount(before, reason) + sent);
    if (transport === "http") expect(refusalCount(after, "csrf")).toBe(refusalCount(before, "csrf") + 1);
  });
});

// Over SSE, a refusal the GraphQL pipeline makes (parse, validation, variables, limits) is JSON
// with its status, as the refusals made before the pipeline (429, 403) are, and as graphql-sse's
// own server answers one: not an event stream.
describe("row 15: a refusal over SSE is JSON", () => {
  const client = useClient("sse", () => harness);

  it("row 15: a document that does not validate, sent asking for text/event-stream, is JSON with its 400", async () => {
    const [result] = await sendOver(client, JSON.stringify({ query: "{ nope }" }));
    expect(result!.status).toBe(400);
    expect(result!.contentType).toMatch(/^application\/(graphql-response\+)?json/);
  });
});

describe.each(TRANSPORTS)("issue 25: the rules WebSocket skipped before, over %s", (transport) => {
  const client = useClient(transport, () => harness);

  it("issue 25: with PERSISTED_OPERATIONS_ONLY=true a plain query is refused, and a documentId runs", async () => {
    const document = `query ChainName { chain(id: "43114") { chainName } }`;
    const hash = createHash("sha256").update(document).digest("hex");
    const file = join(mkdtempSync(join(tmpdir(), "persisted-")), "documents.json");
    writeFileSync(file, JSON.stringify({ [`sha256:${hash}`]: document }));
    const locked = await startHarness({ PERSISTED_OPERATIONS_FILE: file, PERSISTED_OPERATIONS_ONLY: "true" });
    const lockedClient = over(transport, locked);
    try {
      const plain = await lockedClient.send({ query: document });
      expect(plain.refused).toBe(true);
      if (plain.status !== undefined) expect(plain.status).toBe(400);
      expect(plain.body.data).toBeUndefined();
      expect(plain.body.errors?.[0]?.extensions?.code).toBe("PERSISTED_QUERY_ONLY");
      const other = await lockedClient.send({ query: "{ __typename }" });
      expect(other.body.errors?.[0]?.extensions?.code).toBe("PERSISTED_QUERY_ONLY");
      expect(upstreamCalls(locked)).toEqual({});

      const known = await lockedClient.send({ documentId: `sha256:${hash}` });
      expect(known.refused).toBe(false);
      expect(known.result).toEqual({ data: { chain: { chainName: expect.any(String) } } });
      const unknown = await lockedClient.send({ documentId: `sha256:${"0".repeat(64)}` });
      expect(unknown.refused).toBe(true);
      expect(unknown.body.errors?.[0]?.extensions?.code).toBe("PERSISTED_QUERY_NOT_FOUND");
    } finally {
      await lockedClient.close();
      await locked.close();
    }
  });

  it("issue 25: with INTROSPECTION=false, { __schema { types { name } } } is refused, and no message says 'Did you mean'", async () => {
    const schema = await client.send({ query: "{ __schema { types { name } } }" });
    expect(schema.refused).toBe(true);
    expect(schema.body.data).toBeUndefined();
    expect(schema.body.errors?.[0]?.extensions?.code).toBe("GRAPHQL_VALIDATION_FAILED");
    expect(schema.body.errors?.[0]?.message).toMatch(/introspection/i);
    const typo = await client.send({ query: "{ latestBlock { nodes { blockHash } } }" });
    expect(typo.refused).toBe(true);
    expect(typo.body.errors?.[0]?.extensions?.code).toBe("GRAPHQL_VALIDATION_FAILED");
    expect(JSON.stringify([schema.body, typo.body])).not.toMatch(/did you mean/i);
    await expectServing(client);
  });

  it("issue 25: a variable that does not coerce is refused with extensions.code BAD_USER_INPUT", async () => {
    const result = await client.send({
      query: "query($n: Int!) { latestBlocks(first: $n) { nodes { blockHash } } }",
      variables: { n: "ten" },
    });
    expect(result.refused).toBe(true);
    if (result.status !== undefined) expect(result.status).toBe(400);
    expect(result.body.data).toBeUndefined();
    expect(result.body.errors).toHaveLength(1);
    expect(result.body.errors![0]!.extensions).not.toEqual({});
    expect(result.body.errors![0]!.extensions).toEqual({ code: "BAD_USER_INPUT" });
    expect(result.body.errors![0]!.message).toMatch(/\$n.*"ten"/);
    expect(upstreamCalls(harness)).toEqual({});
  });
});

describe("row 15: framing only HTTP has (HTTP only)", () => {
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

  it("row 15: malformed JSON and a JSON array are 400 BAD_REQUEST, echoing nothing internal", async () => {
    for (const accept of ACCEPTS) {
      for (const overHttp of [true, false]) {
        const malformed = expectRefusal(await post(`{ not json ${"x".repeat(2_000)}`, accept, { overHttp }), 400, "BAD_REQUEST");
        expect(malformed.message).toBe("POST body sent invalid JSON.");
        expectRefusal(await post("[]", accept, { overHttp }), 400, "BAD_REQUEST");
      }
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
    // PUT reserves a graphql-sse event stream (test/graphql-sse.test.ts); DELETE without its token is no request of that mode.
    for (const method of ["PATCH", "DELETE"]) {
      const unsupported = await answer(
        await fetch(`${base}/graphql`, { method, headers: { "content-type": "application/json" }, body: "{}" }),
      );
      expectRefusal(unsupported, 405, "BAD_REQUEST");
    }
    const xml = await answer(
      await fetch(`${base}/graphql`, { method: "POST", headers: { "content-type": "application/xml" }, body: "<query/>" }),
    );
    expectRefusal(xml, 415, "BAD_REQUEST");
    const elsewhere = await answer(await fetch(`${base}/nowhere`));
    expectRefusal(elsewhere, 404, "NOT_FOUND");
    await expectServing();
  });
});

// HTTP only: the hooks throw on HTTP paths of their own, not on an operation.
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
