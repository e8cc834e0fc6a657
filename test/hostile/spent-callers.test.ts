/**
 * A caller over its budget that keeps sending: its requests are refused before their bodies are
 * read (a socket's frames before they are parsed), so a flood of refusals costs the gateway next
 * to nothing; and the endpoints beside /graphql (/ready, /metrics) are paid for like operations.
 *
 * Transports: the rules about operations run over HTTP, WebSocket and SSE, callers told apart by
 * X-Forwarded-For (TRUST_PROXY); a socket's opening costs its caller 1, and once its caller is
 * spent a socket's next upgrade is refused with an HTTP 429. HTTP only, on the gateway's Node
 * listener at a real port with callers told apart by their socket addresses: a body promised and
 * never sent (HTTP framing), and /ready and /metrics (HTTP endpoints, no GraphQL operation).
 *
 * Each test starts its own gateway, whose parse cache is empty: the first request of a document
 * pays `NEW_DOCUMENT_COST` more, which each burst here holds on top of the requests it counts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { NEW_DOCUMENT_COST, newDocumentCost } from "../../src/limits/request-costs.ts";
import { startHarness, upstreamCalls, type Harness } from "../support/harness.ts";
import { over, TRANSPORTS, type Answer, type Transport, type TransportClient } from "../support/transports.ts";
import { exchange, graphqlRequest, openConnection, parseAnswer, serveGateway, stopServed, type Served } from "./raw-http.ts";

const running: Served[] = [];
const clients: { harness: Harness; client: TransportClient }[] = [];

/** A bucket that barely refills, so that what is spent stays spent for the test. */
const SLOW_REFILL = { RATE_LIMIT_RATE: "0.01" };

async function serve(env: Record<string, string>): Promise<Served> {
  const served = await serveGateway({ ...SLOW_REFILL, ...env });
  running.push(served);
  return served;
}

async function clientOf(transport: Transport, env: Record<string, string>) {
  const harness = await startHarness({ ...SLOW_REFILL, TRUST_PROXY: "true", ...env });
  const client = over(transport, harness);
  clients.push({ harness, client });
  const send = (query: string, address = "192.0.2.1", headers: Record<string, string> = {}) =>
    client.send({ query }, { "x-forwarded-for": address, ...headers });
  /** A body as it is, JSON text the test wrote (JSON.stringify cannot write 5,000 levels). */
  const sendBody = (body: string) => client.send(body, { "x-forwarded-for": "192.0.2.1" });
  /** What opening the caller's socket cost it: 1 on a WebSocket, nothing otherwise. */
  const opening = transport === "websocket" ? 1 : 0;
  return { harness, send, sendBody, opening };
}

afterEach(async () => {
  for (const served of running.splice(0)) await stopServed(served);
  for (const { harness, client } of clients.splice(0)) {
    await client.close();
    await harness.close();
  }
});

async function send(port: number, request: string, localAddress = "127.0.0.1"): Promise<{ status: number; body: string }> {
  return exchange(await openConnection(port, localAddress), request);
}

function get(path: string): string {
  return `GET ${path} HTTP/1.1\r\nhost: gateway.test\r\nconnection: close\r\n\r\n`;
}

function refusedRateLimited(metrics: string): number {
  return Number(/^gateway_refusals_total\{reason="rate_limited"\} (\d+)$/m.exec(metrics)?.[1] ?? 0);
}

/** Refused for its budget: a 429 over HTTP and SSE (and a refused upgrade), an `error` message on a socket. */
function expectRateLimited(answer: Answer): void {
  expect(answer.refused).toBe(true);
  if (answer.status !== undefined) expect(answer.status).toBe(429);
  expect(answer.body.errors![0]!.extensions).toMatchObject({ code: "RATE_LIMITED", retryAfter: expect.any(Number) });
  expect(answer.body.errors![0]!.extensions!.retryAfter).toBeGreaterThan(0);
}

describe("a caller over its budget, on the HTTP listener (HTTP only: a body left unread is HTTP framing)", () => {
  it("is refused before its body is read: a request that never sends its body is answered 429 at once, and the connection closed", async () => {
    const served = await serve({ RATE_LIMIT_BURST: String(3 + NEW_DOCUMENT_COST) });
    const typename = graphqlRequest("{ __typename }");
    const statuses = [];
    for (let sent = 0; sent < 4; sent++) statuses.push((await send(served.port, typename)).status);
    // Each request pays 1 (the first its new document too): three are served, the fourth finds the bucket empty.
    expect(statuses).toEqual([200, 200, 200, 429]);

    // Headers that promise 50 kB, and no body: only a refusal that does not wait for it answers.
    const connection = await openConnection(served.port);
    connection.socket.write(
      "POST /graphql HTTP/1.1\r\nhost: gateway.test\r\ncontent-type: application/json\r\ncontent-length: 50000\r\n\r\n",
    );
    await connection.whenClosed;
    const refused = parseAnswer(connection.received());
    expect(refused.status).toBe(429);
    expect(connection.received()).toMatch(/\r\nretry-after: \d+\r\n/i);
    expect(JSON.parse(refused.body)).toMatchObject({ errors: [{ extensions: { code: "RATE_LIMITED" } }] });
    expect(JSON.parse(refused.body).errors[0].extensions.retryAfter).toBeGreaterThan(0);

    // Another address has a budget of its own.
    expect(await send(served.port, typename, "127.0.0.2")).toEqual({
      status: 200,
      body: JSON.stringify({ data: { __typename: "Query" } }),
    });
    expect(upstreamCalls(served.harness)).toEqual({});
    // Read from the registry: a scrape would have to be paid for from a spent bucket.
    expect(refusedRateLimited(await served.harness.gateway.metrics.registry.metrics())).toBe(2);
  });

  it("with an invented key is refused unread all the same: the address's bucket is spent", async () => {
    // Two requests, the first with its new document.
    const served = await serve({ RATE_LIMIT_BURST: String(2 + NEW_DOCUMENT_COST) });
    const withKey = (key: string) =>
      graphqlRequest("{ __typename }").replace("\r\n\r\n", `\r\nx-glacier-api-key: ${key}\r\n\r\n`);
    const statuses = [];
    for (let sent = 0; sent < 5; sent++) statuses.push((await send(served.port, withKey(`invented-${sent}`))).status);
    expect(statuses).toEqual([200, 200, 429, 429, 429]);
    expect(upstreamCalls(served.harness)).toEqual({});
  });
});

describe.each(TRANSPORTS)("a caller over its budget, over %s", (transport) => {
  it("is refused before its operation is parsed, and another address has a budget of its own", async () => {
    const { harness, send, opening } = await clientOf(transport, { RATE_LIMIT_BURST: String(3 + NEW_DOCUMENT_COST) });
    // Each operation pays 1 (the first its new document too, and the socket's opening 1): the
    // rest is served, then the bucket is empty.
    for (let sent = 0; sent < 3 - opening; sent++) {
      const served = await send("{ __typename }");
      expect(served.result).toEqual({ data: { __typename: "Query" } });
      expect(served.remaining).toBe(3 - opening - sent - 1);
    }
    expectRateLimited(await send("{ __typename }"));
    // Refused before it is parsed: not a syntax error.
    expectRateLimited(await send("{ __typename {{{ not graphql"));

    const other = await send("{ __typename }", "192.0.2.2");
    expect(other.refused).toBe(false);
    expect(other.result).toEqual({ data: { __typename: "Query" } });
    expect(upstreamCalls(harness)).toEqual({});
  });

  it('counts each refusal in gateway_refusals_total{reason="rate_limited"}', async () => {
    // The first request pays for its new document too.
    const { harness, send, opening } = await clientOf(transport, { RATE_LIMIT_BURST: String(2 + NEW_DOCUMENT_COST) });
    const before = refusedRateLimited(await harness.gateway.metrics.registry.metrics());
    for (let sent = 0; sent < 2 - opening; sent++) expect((await send("{ __typename }")).refused).toBe(false);
    for (let sent = 0; sent < 3; sent++) expectRateLimited(await send("{ __typename }"));
    // Read from the registry: a scrape would have to be paid for from a spent bucket.
    expect(refusedRateLimited(await harness.gateway.metrics.registry.metrics())).toBe(before + 3);
  });

  it("with an invented key is refused all the same: the address's bucket is spent", async () => {
    // The first request pays for its new document too, to its key and its address.
    const { harness, send, opening } = await clientOf(transport, { RATE_LIMIT_BURST: String(2 + NEW_DOCUMENT_COST) });
    // Each key is a caller of its own (a socket each, whose opening the address pays too).
    const servedKeys = Math.floor(2 / (1 + opening));
    for (let sent = 0; sent < 5; sent++) {
      const answer = await send("{ __typename }", "192.0.2.1", { "x-glacier-api-key": `invented-${sent}` });
      if (sent < servedKeys) expect(answer.result).toEqual({ data: { __typename: "Query" } });
      else expectRateLimited(answer);
    }
    expect(upstreamCalls(harness)).toEqual({});
  });
});

describe("a body the gateway read but cannot use, over HTTP (on the listener, which reads HTTP bodies: yoga.fetch has none)", () => {
  it("row 7: pays its characters: a 10 kB body nested 5,000 deep costs 1 and 10, and the caller's next request sees it", async () => {
    const served = await serve({ RATE_LIMIT_BURST: "100" });
    const body = `{"query":"{ __typename }","variables":{"x":${"[".repeat(5_000)}1${"]".repeat(5_000)}}}`;
    const deep = `POST /graphql HTTP/1.1\r\nhost: gateway.test\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`;
    const refused = await send(served.port, deep);
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.body)).toMatchObject({ errors: [{ extensions: { code: "BAD_REQUEST", limit: "nesting" } }] });
    // 100, less the deep request's 1, its 10,046 characters' 10 and its new document's cost (paid
    // as it was read, before the nesting was refused), less this request's 1 and its document's
    // cost again (the deep request's was never parsed, so it is still new).
    const next = await openConnection(served.port);
    next.socket.write(graphqlRequest("{ __typename }"));
    await next.whenClosed;
    expect(next.received()).toMatch(
      new RegExp(`\\r\\nratelimit-remaining: ${88 - 2 * newDocumentCost("{ __typename }")}\\r\\n`, "i"),
    );
    expect(upstreamCalls(served.harness)).toEqual({});
  });
});

// A socket's frame nested too deep is refused before graphql-ws takes it, and pays 1 and its
// characters as such an HTTP body does on the listener (src/server/json-body-listener.ts).
describe.each(["websocket", "sse"] as const)("a body the gateway read but cannot use, over %s", (transport) => {
  const nested = (depth: number) => `${"[".repeat(depth)}1${"]".repeat(depth)}`;

  it("row 7: the issue's body, 5,000 arrays deep, is refused BAD_REQUEST, and its caller served after", async () => {
    const { harness, send, sendBody } = await clientOf(transport, { RATE_LIMIT_BURST: "100" });
    const refused = await sendBody(`{"query":"{ __typename }","variables":{"x":${nested(5_000)}}}`);
    expect(refused.refused).toBe(true);
    if (refused.status !== undefined) expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ errors: [{ extensions: { code: "BAD_REQUEST", limit: "nesting" } }] });
    expect((await send("{ __typename }")).result).toEqual({ data: { __typename: "Query" } });
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("row 7: pays its characters: a 10 kB body nested 1,000 deep costs 1 and 10, and the caller's next request sees it", async () => {
    const { harness, send, sendBody, opening } = await clientOf(transport, { RATE_LIMIT_BURST: "100" });
    const unpadded = `{"query":"{ __typename }","variables":{"x":${nested(1_000)},"pad":""}}`;
    const body = unpadded.replace('"pad":""', `"pad":"${"p".repeat(10_046 - unpadded.length)}"`);
    expect(body).toHaveLength(10_046);
    const refused = await sendBody(body);
    expect(refused.refused).toBe(true);
    expect(refused.body).toMatchObject({ errors: [{ extensions: { code: "BAD_REQUEST", limit: "nesting" } }] });
    // 100, less the deep request's 1 and its 10,046 characters' 10, less this request's 1 and its
    // new document's cost (and a socket's opening). Over SSE the deep request's new document was
    // paid for too, as it was read, before its nesting was refused (and it is still new after);
    // a socket's frame gate refuses it before any document is read.
    const documents = transport === "sse" ? 2 : 1;
    expect((await send("{ __typename }")).remaining).toBe(88 - opening - documents * newDocumentCost("{ __typename }"));
    expect(upstreamCalls(harness)).toEqual({});
  });
});

describe.each(TRANSPORTS)("answers from the response cache, over %s", (transport) => {
  it("cost 1 like any request: a caller replaying a cached query runs out of budget too", async () => {
    // The first request pays for its new document too; the others find it parsed (and their answer cached).
    const { harness, send, opening } = await clientOf(transport, {
      RATE_LIMIT_BURST: String(3 + NEW_DOCUMENT_COST),
      RESPONSE_CACHE_TTL_MS: "60000",
    });
    const answers = [];
    for (let sent = 0; sent < 4 - opening; sent++) answers.push(await send("{ chains { chainId } }"));
    const [first, ...cached] = answers.slice(0, -1);
    expect(first!.refused).toBe(false);
    for (const hit of cached) expect(hit.result).toEqual(first!.result);
    // HTTP and SSE say where an answer came from; a socket's answer is the same, and made no upstream call.
    if (transport !== "websocket") {
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 429]);
      expect(answers.map((answer) => answer.headers!.get("x-response-cache"))).toEqual([null, "hit", "hit", null]);
    }
    const refused = answers.at(-1)!;
    expectRateLimited(refused);
    // Through yoga.fetch the pipeline says what it would have cost; over a socket or the listener
    // (SSE) a spent caller is refused before its operation is read, with nothing to cost.
    if (transport === "http") expect(refused.body.errors![0]!.extensions).toMatchObject({ cost: 1 });
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/chains": 1 });
  });
});

describe("the endpoints beside /graphql (HTTP only: no GraphQL operation)", () => {
  it("/ready costs 1: a flood of health checks runs out of budget like any other, and makes one upstream check", async () => {
    const served = await serve({ RATE_LIMIT_BURST: "5" });
    const statuses = [];
    for (let sent = 0; sent < 7; sent++) statuses.push((await send(served.port, get("/ready"))).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    expect(upstreamCalls(served.harness)).toEqual({ "GET /v1/health-check": 1, "GET /v2/health-check": 1 });
  });

  it("/metrics costs 10: scrapes are paid for, and a refused scrape is JSON with its code", async () => {
    const served = await serve({ RATE_LIMIT_BURST: "25" });
    const first = await send(served.port, get("/metrics"));
    const second = await send(served.port, get("/metrics"));
    const third = await send(served.port, get("/metrics"));
    expect([first.status, second.status, third.status]).toEqual([200, 200, 429]);
    expect(first.body).toContain("gateway_refusals_total");
    expect(JSON.parse(third.body)).toMatchObject({ errors: [{ extensions: { code: "RATE_LIMITED", cost: 10 } }] });
    expect(JSON.parse(third.body).errors[0].extensions.http).toBeUndefined();
    // A Prometheus server elsewhere scrapes on.
    expect((await send(served.port, get("/metrics"), "127.0.0.3")).status).toBe(200);
  });
});
