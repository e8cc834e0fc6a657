/**
 * Refusals held back (src/limits/refusal-holds.ts): a caller refused for its budget, or for the
 * sockets it holds, is answered after REFUSAL_HOLD_MS with its connection unread, so that a client
 * that sends again as soon as it is answered gets one refusal per connection per hold, not as
 * many as it can send (bench:hostile rows 2, 8, 13, 18, 23 and 25 are such floods); one that keeps
 * reconnecting to a socket cap waits longer each time. The harness
 * turns the holds off for the other tests; each test here turns them on.
 *
 * HTTP and WebSocket upgrades on the gateway's Node listener at a real port, callers told apart by
 * their socket addresses; SSE is HTTP here (its refusals are the same answers).
 */
import { afterEach, describe, expect, it } from "vitest";
import { NEW_DOCUMENT_COST } from "../../src/limits/request-costs.ts";
import { serveGateway, startHarness, upstreamCalls, type Harness, type ServedGateway } from "../support/harness.ts";
import { GraphqlWsSocket } from "../support/transports.ts";
import { exchange, graphqlRequest, openConnection, parseAnswer, type RawConnection } from "./raw-http.ts";

const HOLD_MS = 400;
const running: { harness: Harness; served: ServedGateway }[] = [];

async function serve(env: Record<string, string>) {
  // A bucket that barely refills: what is spent stays spent for the test.
  const harness = await startHarness({ RATE_LIMIT_RATE: "0.01", REFUSAL_HOLD_MS: String(HOLD_MS), ...env });
  const served = await serveGateway(harness);
  running.push({ harness, served });
  harness.simulator.resetCounters();
  return { harness, port: served.port };
}

afterEach(async () => {
  for (const { harness, served } of running.splice(0)) {
    await served.close();
    await harness.close();
  }
});

async function post(port: number, query: string, localAddress: string) {
  const began = performance.now();
  const answer = await exchange(await openConnection(port, localAddress), graphqlRequest(query));
  return { ...answer, ms: performance.now() - began };
}

const UPGRADE =
  `GET /graphql HTTP/1.1\r\nhost: gateway.test\r\nupgrade: websocket\r\nconnection: Upgrade\r\n` +
  `sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n` +
  `sec-websocket-protocol: graphql-transport-ws\r\n\r\n`;

async function untilAnswered(connection: RawConnection): Promise<string> {
  while (!connection.received().includes("\r\n\r\n") && !connection.closed) await new Promise((r) => setTimeout(r, 10));
  return connection.received();
}

async function metric(harness: Harness, line: RegExp): Promise<number> {
  return Number(line.exec(await harness.gateway.metrics.registry.metrics())?.[1] ?? 0);
}

describe("refusals held back", () => {
  it("a spent caller's request is answered 429 after the hold, unread; a flood on 4 connections gets one answer per connection per hold", async () => {
    const { harness, port } = await serve({ RATE_LIMIT_BURST: String(1 + NEW_DOCUMENT_COST) });
    expect((await post(port, "{ __typename }", "127.0.0.2")).status).toBe(200);

    const refused = await post(port, "{ __typename }", "127.0.0.2");
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body).errors[0].extensions).toMatchObject({ code: "RATE_LIMITED", retryAfter: expect.any(Number) });
    // A timer never fires early: the answer waited the hold.
    expect(refused.ms).toBeGreaterThanOrEqual(HOLD_MS - 5);

    // 4 clients that send again as soon as they are answered, for 3 holds' time.
    const answers: number[] = [];
    const until = performance.now() + 3 * HOLD_MS;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (performance.now() < until) answers.push((await post(port, "{ __typename }", "127.0.0.2")).status);
      }),
    );
    expect(answers.every((status) => status === 429)).toBe(true);
    // At most 4 connections × (3 holds + the one under way at the end); unheld, hundreds.
    expect(answers.length).toBeLessThanOrEqual(16);
    expect(await metric(harness, /^gateway_refusal_holds_total\{outcome="held"\} (\d+)$/m)).toBe(answers.length + 1);
    expect(harness.gateway.sockets.refusalHolds.held).toBe(0);
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("another caller is answered at once while a spent one is held", async () => {
    const { port } = await serve({ RATE_LIMIT_BURST: String(1 + NEW_DOCUMENT_COST) });
    await post(port, "{ __typename }", "127.0.0.2");
    const held = post(port, "{ __typename }", "127.0.0.2");
    const other = await post(port, "{ __typename }", "127.0.0.3");
    expect(other.status).toBe(200);
    expect((await held).status).toBe(429);
  });

  it("a query its caller can never pay for now (read and parsed) is held as long as an unread one", async () => {
    // 12: the first request and its new document pay 2, the second 2 as it comes; its 11 calls
    // (10 blocks, a call each for their transactions) are within a full bucket but not within 8.
    const { harness, port } = await serve({ RATE_LIMIT_BURST: "12" });
    expect((await post(port, "{ __typename }", "127.0.0.2")).status).toBe(200);
    const query = "{ latestBlocks(first: 10) { nodes { blockNumber transactions(first: 1) { nodes { txHash } } } } }";
    const costly = await post(port, query, "127.0.0.2");
    expect(costly.status).toBe(429);
    expect(costly.ms).toBeGreaterThanOrEqual(HOLD_MS - 5);
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("a client that leaves while held frees its hold, and nothing is written after", async () => {
    const { harness, port } = await serve({ RATE_LIMIT_BURST: String(1 + NEW_DOCUMENT_COST) });
    await post(port, "{ __typename }", "127.0.0.2");
    const connection = await openConnection(port, "127.0.0.2");
    connection.socket.write(graphqlRequest("{ __typename }"));
    while (harness.gateway.sockets.refusalHolds.held === 0) await new Promise((r) => setTimeout(r, 5));
    connection.socket.destroy();
    await connection.whenClosed;
    while (harness.gateway.sockets.refusalHolds.held > 0) await new Promise((r) => setTimeout(r, 5));
    expect(connection.received()).toBe("");
  });

  it("beyond REFUSAL_HOLD_MAX held at once, a refusal is answered at once", async () => {
    const { harness, port } = await serve({
      RATE_LIMIT_BURST: String(1 + NEW_DOCUMENT_COST),
      REFUSAL_HOLD_MS: "3000",
      REFUSAL_HOLD_MAX: "1",
    });
    await post(port, "{ __typename }", "127.0.0.2");
    const first = post(port, "{ __typename }", "127.0.0.2");
    // Once the first is held, the second finds the holds full.
    while ((await metric(harness, /^gateway_refusals_held (\d+)$/m)) === 0) await new Promise((r) => setTimeout(r, 5));
    const second = await post(port, "{ __typename }", "127.0.0.2");
    expect(second.status).toBe(429);
    expect(second.ms).toBeLessThan(3000);
    expect(await metric(harness, /^gateway_refusal_holds_total\{outcome="overflowed"\} (\d+)$/m)).toBe(1);
    const held = await first;
    expect(held.status).toBe(429);
    expect(held.ms).toBeGreaterThanOrEqual(3000 - 5);
  });

  it("a WebSocket upgrade beyond its address's socket cap is refused 429 after the hold; an origin refusal at once", async () => {
    const { harness, port } = await serve({ WS_MAX_CONNECTIONS_PER_ADDRESS: "1" });
    const open = await openConnection(port, "127.0.0.4");
    open.socket.write(UPGRADE);
    expect(await untilAnswered(open)).toMatch(/^HTTP\/1\.1 101 /);

    const refused = await openConnection(port, "127.0.0.4");
    const began = performance.now();
    refused.socket.write(UPGRADE);
    const answer = parseAnswer(await untilAnswered(refused));
    expect(answer.status).toBe(429);
    expect(performance.now() - began).toBeGreaterThanOrEqual(HOLD_MS - 5);
    expect(JSON.parse(answer.body).errors[0].extensions).toMatchObject({ code: "RATE_LIMITED", limit: "webSocketsPerAddress" });

    const heldSoFar = await metric(harness, /^gateway_refusal_holds_total\{outcome="held"\} (\d+)$/m);
    expect(heldSoFar).toBe(1);
    const foreign = await openConnection(port, "127.0.0.5");
    foreign.socket.write(UPGRADE.replace("\r\n\r\n", "\r\norigin: https://elsewhere.example\r\n\r\n"));
    expect(parseAnswer(await untilAnswered(foreign)).status).toBe(403);
    expect(await metric(harness, /^gateway_refusal_holds_total\{outcome="held"\} (\d+)$/m)).toBe(heldSoFar);
    open.socket.destroy();
  });
  it("a caller that keeps reconnecting to a socket cap it is at waits twice as long each time, up to 8 holds; another caller's first refusal is one hold", async () => {
    const holdMs = 150;
    const { port } = await serve({ WS_MAX_CONNECTIONS_PER_ADDRESS: "1", REFUSAL_HOLD_MS: String(holdMs) });
    const open = await GraphqlWsSocket.open(port, {}, "127.0.0.6");

    const refusedAfter = async (address: string) => {
      const connection = await openConnection(port, address);
      const began = performance.now();
      connection.socket.write(UPGRADE);
      expect(parseAnswer(await untilAnswered(connection)).status).toBe(429);
      return performance.now() - began;
    };
    const waits: number[] = [];
    for (let attempt = 0; attempt < 5; attempt += 1) waits.push(await refusedAfter("127.0.0.6"));
    // 1, 2, 4, 8, 8 holds.
    [1, 2, 4, 8, 8].forEach((holds, index) => {
      expect(waits[index]).toBeGreaterThanOrEqual(holds * holdMs - 5);
      expect(waits[index]).toBeLessThan((holds + 1) * holdMs);
    });

    // Another address at its cap starts again at one hold.
    const neighbour = await GraphqlWsSocket.open(port, {}, "127.0.0.7");
    const first = await refusedAfter("127.0.0.7");
    expect(first).toBeGreaterThanOrEqual(holdMs - 5);
    expect(first).toBeLessThan(2 * holdMs);
    open.socket.terminate();
    neighbour.socket.terminate();
  });
});
