/**
 * A caller over its budget that keeps sending: its requests are refused before their bodies are
 * read, so a flood of refusals costs the gateway next to nothing; and the endpoints beside
 * /graphql (/ready, /metrics) are paid for like operations. Served on a real port, so that the
 * gateway's Node listener runs and callers are told apart by their socket addresses.
 */
import { afterEach, describe, expect, it } from "vitest";
import { upstreamCalls } from "../support/harness.ts";
import { exchange, graphqlRequest, openConnection, parseAnswer, serveGateway, stopServed, type Served } from "./raw-http.ts";

const running: Served[] = [];

async function serve(env: Record<string, string>): Promise<Served> {
  // A bucket that barely refills, so that what is spent stays spent for the test.
  const served = await serveGateway({ RATE_LIMIT_RATE: "0.01", ...env });
  running.push(served);
  return served;
}

afterEach(async () => {
  for (const served of running.splice(0)) await stopServed(served);
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

describe("a caller over its budget", () => {
  it("is refused before its body is read: a request that never sends its body is answered 429 at once, and the connection closed", async () => {
    const served = await serve({ RATE_LIMIT_BURST: "3" });
    const typename = graphqlRequest("{ __typename }");
    const statuses = [];
    for (let sent = 0; sent < 4; sent++) statuses.push((await send(served.port, typename)).status);
    // Each request pays 1: three are served, the fourth finds the bucket empty.
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
    const served = await serve({ RATE_LIMIT_BURST: "2" });
    const withKey = (key: string) =>
      graphqlRequest("{ __typename }").replace("\r\n\r\n", `\r\nx-glacier-api-key: ${key}\r\n\r\n`);
    const statuses = [];
    for (let sent = 0; sent < 5; sent++) statuses.push((await send(served.port, withKey(`invented-${sent}`))).status);
    expect(statuses).toEqual([200, 200, 429, 429, 429]);
    expect(upstreamCalls(served.harness)).toEqual({});
  });
});

describe("a body the gateway read but cannot use", () => {
  it("row 7: pays its characters: a 10 kB body nested 5,000 deep costs 1 and 10, and the caller's next request sees it", async () => {
    const served = await serve({ RATE_LIMIT_BURST: "100" });
    const body = `{"query":"{ __typename }","variables":{"x":${"[".repeat(5_000)}1${"]".repeat(5_000)}}}`;
    const deep = `POST /graphql HTTP/1.1\r\nhost: gateway.test\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`;
    const refused = await send(served.port, deep);
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.body)).toMatchObject({ errors: [{ extensions: { code: "BAD_REQUEST", limit: "nesting" } }] });
    // 100, less the deep request's 1 and its 10,046 characters' 10, less this request's 1.
    const next = await openConnection(served.port);
    next.socket.write(graphqlRequest("{ __typename }"));
    await next.whenClosed;
    expect(next.received()).toMatch(/\r\nratelimit-remaining: 88\r\n/i);
    expect(upstreamCalls(served.harness)).toEqual({});
  });
});

describe("answers from the response cache", () => {
  it("cost 1 like any request: a caller replaying a cached query runs out of budget too", async () => {
    const served = await serve({ RATE_LIMIT_BURST: "3", RESPONSE_CACHE_TTL_MS: "60000" });
    const ask = () =>
      served.harness.gateway.yoga.fetch("http://gateway.test/graphql", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "{ chains { chainId } }" }),
      });
    const answers = [];
    for (let sent = 0; sent < 4; sent++) answers.push(await ask());
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 429]);
    expect(answers.map((answer) => answer.headers.get("x-response-cache"))).toEqual([null, "hit", "hit", null]);
    expect(await answers[3]!.json()).toMatchObject({ errors: [{ extensions: { code: "RATE_LIMITED", cost: 1 } }] });
    expect(upstreamCalls(served.harness)).toEqual({ "GET /v1/chains": 1 });
  });
});

describe("the endpoints beside /graphql", () => {
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
