/**
 * Row 9: connections that never finish sending, and more connections than a client may hold.
 * The gateway is served on a real port by the server the process uses (src/server/http-server.ts).
 *
 * Transports: HTTP only: these are the HTTP listener's own bounds on connections (a socket counts
 * against them as the connection it is; its own caps are in websocket.test.ts).
 */
import { afterEach, describe, expect, it } from "vitest";
import { callerAddress } from "../../src/limits/caller-address.ts";
import { ExportTransactionsDocument } from "../generated/graphql.ts";
import { execute, metricsText, until, upstreamCalls } from "../support/harness.ts";
import {
  exchange,
  graphqlRequest,
  openConnection,
  parseAnswer,
  serveGateway,
  stopServed,
  type RawConnection,
  type Served,
} from "./raw-http.ts";

const running: Served[] = [];
const connections: RawConnection[] = [];

async function serve(env: Record<string, string>): Promise<Served> {
  const served = await serveGateway(env);
  running.push(served);
  return served;
}

async function open(port: number, localAddress?: string): Promise<RawConnection> {
  const connection = await openConnection(port, localAddress);
  connections.push(connection);
  return connection;
}

function openOnServer(served: Served): Promise<number> {
  return new Promise((resolve, reject) =>
    served.server.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );
}

function refused(metrics: string, reason: string): number {
  return Number(new RegExp(`^gateway_connections_refused_total\\{reason="${reason}"\\} (\\d+)$`, "m").exec(metrics)?.[1] ?? 0);
}

/** `{ __typename }` on a connection of its own: the gateway still serves. */
async function stillServes(port: number): Promise<void> {
  const answer = await exchange(await open(port), graphqlRequest("{ __typename }"));
  expect(answer.status).toBe(200);
  expect(JSON.parse(answer.body)).toEqual({ data: { __typename: "Query" } });
}

afterEach(async () => {
  for (const connection of connections.splice(0)) connection.socket.destroy();
  for (const served of running.splice(0)) await stopServed(served);
});

describe("row 9: slow senders", () => {
  it("row 9: connections that declare 99 kB and send 90 kB are answered 408 and closed by the server at the request timeout", async () => {
    const served = await serve({ SERVER_HEADERS_TIMEOUT_MS: "500", SERVER_REQUEST_TIMEOUT_MS: "500" });
    const slow = await Promise.all(Array.from({ length: 40 }, () => open(served.port)));
    const head = `POST /graphql HTTP/1.1\r\nhost: gateway.test\r\ncontent-type: application/json\r\ncontent-length: 99000\r\n\r\n`;
    for (const connection of slow) connection.socket.write(head + `{"query":"${"x".repeat(90_000)}`);
    await until(() => slow.every((connection) => connection.closed), "the server to close every slow sender");
    for (const connection of slow) {
      const answer = parseAnswer(connection.received());
      expect(answer.status).toBe(408);
      expect(JSON.parse(answer.body)).toEqual({
        errors: [
          {
            message: "The request was not received in time: headers within 500 ms, the whole request within 500 ms",
            extensions: { code: "REQUEST_TIMEOUT", headersTimeoutMs: 500, requestTimeoutMs: 500 },
          },
        ],
      });
    }
    expect(refused(await metricsText(served.harness), "request_timeout")).toBe(40);
    expect(await openOnServer(served)).toBe(0);
    expect(upstreamCalls(served.harness)).toEqual({});
    await stillServes(served.port);
  });

  it("row 9: connections whose headers never end are closed at the headers timeout, GET as well as POST", async () => {
    const served = await serve({ SERVER_HEADERS_TIMEOUT_MS: "300", SERVER_REQUEST_TIMEOUT_MS: "5000" });
    const slow = await Promise.all(Array.from({ length: 20 }, () => open(served.port)));
    slow.forEach((connection, index) =>
      connection.socket.write(
        `${index % 2 ? "GET /graphql?query=%7B__typename%7D" : "POST /graphql"} HTTP/1.1\r\nhost: gateway.test\r\nx-slow: `,
      ),
    );
    // A connection that sends nothing at all is dropped too.
    slow.push(await open(served.port));
    await until(() => slow.every((connection) => connection.closed), "the server to close every slow header sender");
    for (const connection of slow) expect(parseAnswer(connection.received()).status).toBe(408);
    expect(refused(await metricsText(served.harness), "request_timeout")).toBe(21);
    expect(upstreamCalls(served.harness)).toEqual({});
    await stillServes(served.port);
  });

  it("row 9: an answer that streams longer than the request timeout (a subscription) is not cut", async () => {
    const served = await serve({
      SERVER_HEADERS_TIMEOUT_MS: "200",
      SERVER_REQUEST_TIMEOUT_MS: "200",
      EXPORT_POLL_INTERVAL_MS: "50",
    });
    served.harness.simulator.setKnobs({ exportJobMs: 1_500 });
    const started = await execute(served.harness, ExportTransactionsDocument, {
      input: { evm: { addresses: [`0x${"1".repeat(40)}`], includeChains: ["43114"] } },
    });
    expect(started.body.errors).toBeUndefined();
    const id = started.body.data!.exportTransactions!.operationId;
    const body = JSON.stringify({
      query: `subscription($id: ID!) { exportOperation(id: $id) { operationStatus } }`,
      variables: { id },
    });
    const stream = await open(served.port);
    stream.socket.write(
      `POST /graphql HTTP/1.1\r\nhost: gateway.test\r\naccept: text/event-stream\r\ncontent-type: application/json\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await until(() => stream.received().includes("event: complete"), "the stream to complete when the job ends");
    expect(stream.received()).toMatch(/^HTTP\/1\.1 200/);
    expect(stream.received()).toContain('"operationStatus":"COMPLETED"');
    expect(stream.closed).toBe(false);
    expect(refused(await metricsText(served.harness), "request_timeout")).toBe(0);
  });
});

describe("row 9: connection caps", () => {
  it("row 9: the 65th connection from one address is closed at once, while the first 64 stay open and are served", async () => {
    const served = await serve({ SERVER_HEADERS_TIMEOUT_MS: "60000", SERVER_REQUEST_TIMEOUT_MS: "60000" });
    expect(served.harness.config.server.maxConnectionsPerAddress).toBe(64);
    const allowed = await Promise.all(Array.from({ length: 64 }, () => open(served.port)));
    await until(async () => (await openOnServer(served)) === 64, "64 connections open on the server");
    const over = await open(served.port);
    await over.whenClosed;
    expect(over.received()).toBe("");
    expect(allowed.filter((connection) => connection.closed)).toEqual([]);
    expect(refused(await metricsText(served.harness), "max_connections_per_address")).toBe(1);

    // Another address is not held to this one's cap.
    const neighbour = await exchange(await open(served.port, "127.0.0.2"), graphqlRequest("{ __typename }"));
    expect(neighbour.status).toBe(200);

    // A request on an allowed connection is served; once it is closed, its place is free again.
    const answer = await exchange(allowed[0]!, graphqlRequest("{ __typename }"));
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ data: { __typename: "Query" } });
    await until(async () => (await openOnServer(served)) === 63, "the server to count the closed connection");
    await stillServes(served.port);
    expect(refused(await metricsText(served.harness), "max_connections_per_address")).toBe(1);
    expect(upstreamCalls(served.harness)).toEqual({});
  });

  it("row 9: beyond MAX_CONNECTIONS, the oldest idle or slow connection makes room for a new caller", async () => {
    const served = await serve({
      MAX_CONNECTIONS: "8",
      MAX_CONNECTIONS_PER_ADDRESS: "0",
      SERVER_HEADERS_TIMEOUT_MS: "60000",
      SERVER_REQUEST_TIMEOUT_MS: "60000",
    });
    // 8 connections that send nothing (or half a request line) hold every slot.
    const held: RawConnection[] = [];
    for (let index = 0; index < 8; index += 1) {
      held.push(await open(served.port, `127.0.0.${index + 1}`));
      if (index % 2 === 1) held.at(-1)!.socket.write("POST /graphql HTTP/1.1\r\nhost: gate");
      await until(async () => (await openOnServer(served)) === index + 1, `${index + 1} connections open on the server`);
    }
    // A new caller is served: the connection held longest is closed for it, and no other.
    const answer = await exchange(await open(served.port, "127.0.0.9"), graphqlRequest("{ __typename }"));
    expect(answer.status).toBe(200);
    await held[0]!.whenClosed;
    expect(held[0]!.received()).toBe("");
    expect(held.slice(1).every((connection) => !connection.closed)).toBe(true);
    expect(refused(await metricsText(served.harness), "reclaimed")).toBe(1);
    expect(refused(await metricsText(served.harness), "max_connections")).toBe(0);
    expect(upstreamCalls(served.harness)).toEqual({});
  });

  it("row 19: slow-header connections from one address that fill the process are refused, not traded for its own or another caller's", async () => {
    const served = await serve({
      MAX_CONNECTIONS: "8",
      MAX_CONNECTIONS_PER_ADDRESS: "16",
      SERVER_HEADERS_TIMEOUT_MS: "60000",
      SERVER_REQUEST_TIMEOUT_MS: "60000",
      SERVER_KEEPALIVE_TIMEOUT_MS: "60000",
    });
    // The legitimate caller's keep-alive connection, the oldest, served once and idle since.
    const caller = await open(served.port, "127.0.0.2");
    expect((await keepAliveExchange(caller, "{ __typename }")).status).toBe(200);
    // An attacker fills every other slot, each connection sending a header line and never ending it.
    const slow: RawConnection[] = [];
    for (let index = 0; index < 7; index += 1) {
      const connection = await open(served.port, "127.0.0.3");
      connection.socket.write(`GET /graphql HTTP/1.1\r\nhost: gateway.test\r\nx-slow-${index}: a\r\n`);
      slow.push(connection);
      await until(async () => (await openOnServer(served)) === index + 2, "the attacker's connection counted");
    }
    // Its reconnects past the cap are closed at once: none takes one of its own (churn the gateway
    // would pay for at the rate the attacker reconnects), nor the caller's.
    const over: RawConnection[] = [];
    for (let index = 0; index < 12; index += 1) over.push(await open(served.port, "127.0.0.3"));
    await Promise.all(over.map((connection) => connection.whenClosed));
    expect(over.map((connection) => connection.received())).toEqual(Array.from({ length: 12 }, () => ""));
    expect(slow.filter((connection) => connection.closed)).toEqual([]);
    expect(caller.closed).toBe(false);
    expect(refused(await metricsText(served.harness), "max_connections")).toBe(12);
    expect(refused(await metricsText(served.harness), "reclaimed")).toBe(0);

    // The caller's next request on its connection is answered; a newcomer from a third address
    // gets in, in place of the attacker's connection held longest.
    expect(await keepAliveExchange(caller, "{ __typename }")).toEqual({ status: 200, body: '{"data":{"__typename":"Query"}}' });
    const newcomer = await exchange(await open(served.port, "127.0.0.4"), graphqlRequest("{ __typename }"));
    expect(newcomer.status).toBe(200);
    await slow[0]!.whenClosed;
    expect(slow.slice(1).filter((connection) => connection.closed)).toEqual([]);
    expect(caller.closed).toBe(false);
    expect(refused(await metricsText(served.harness), "reclaimed")).toBe(1);
    expect(upstreamCalls(served.harness)).toEqual({});
  });

  it("row 19: a caller that holds one fewer than the fullest address is refused rather than trading places with it", async () => {
    const served = await serve({
      MAX_CONNECTIONS: "5",
      MAX_CONNECTIONS_PER_ADDRESS: "0",
      SERVER_HEADERS_TIMEOUT_MS: "60000",
      SERVER_REQUEST_TIMEOUT_MS: "60000",
    });
    // Two attacker addresses, 3 and 2 silent connections: full.
    const held: RawConnection[] = [];
    for (const address of ["127.0.0.3", "127.0.0.3", "127.0.0.3", "127.0.0.4", "127.0.0.4"]) {
      held.push(await open(served.port, address));
      await until(async () => (await openOnServer(served)) === held.length, "the connection counted");
    }
    // The one holding 2 would take the third of the one holding 3, and the two would trade forever.
    const swap = await open(served.port, "127.0.0.4");
    await swap.whenClosed;
    expect(held.filter((connection) => connection.closed)).toEqual([]);
    expect(refused(await metricsText(served.harness), "max_connections")).toBe(1);
    // A caller holding none takes the fullest address's connection held longest.
    expect((await exchange(await open(served.port, "127.0.0.5"), graphqlRequest("{ __typename }"))).status).toBe(200);
    await held[0]!.whenClosed;
    expect(held.slice(1).filter((connection) => connection.closed)).toEqual([]);
    expect(refused(await metricsText(served.harness), "reclaimed")).toBe(1);
  });

  it("row 19: when every address holds as many, a connection still sending its request head goes before an idle served one", async () => {
    const served = await serve({
      MAX_CONNECTIONS: "4",
      MAX_CONNECTIONS_PER_ADDRESS: "0",
      SERVER_HEADERS_TIMEOUT_MS: "60000",
      SERVER_REQUEST_TIMEOUT_MS: "60000",
      SERVER_KEEPALIVE_TIMEOUT_MS: "60000",
    });
    const callers = [await open(served.port, "127.0.0.2"), await open(served.port, "127.0.0.3")];
    for (const caller of callers) expect((await keepAliveExchange(caller, "{ __typename }")).status).toBe(200);
    const silent = [await open(served.port, "127.0.0.4"), await open(served.port, "127.0.0.5")];
    await until(async () => (await openOnServer(served)) === 4, "4 connections open on the server");
    expect((await exchange(await open(served.port, "127.0.0.6"), graphqlRequest("{ __typename }"))).status).toBe(200);
    await silent[0]!.whenClosed;
    expect([silent[1]!.closed, ...callers.map((caller) => caller.closed)]).toEqual([false, false, false]);
  });

  it("row 9: beyond MAX_CONNECTIONS with every connection busy, a new one is closed at once", async () => {
    const served = await serve({
      MAX_CONNECTIONS: "4",
      MAX_CONNECTIONS_PER_ADDRESS: "0",
      SERVER_HEADERS_TIMEOUT_MS: "60000",
      SERVER_REQUEST_TIMEOUT_MS: "60000",
    });
    // 4 answers in flight: a block whose upstream answers in 1.5 s.
    served.harness.simulator.setKnobs({ latencyMs: 1_500 });
    const busy = await Promise.all(Array.from({ length: 4 }, (_, index) => open(served.port, `127.0.0.${index + 1}`)));
    const answers = busy.map((connection, index) =>
      exchange(connection, graphqlRequest(`{ chain(id: "43114") { block(id: "${index + 1}") { blockNumber } } }`)),
    );
    await until(() => served.harness.simulator.requests().length >= 4, "4 upstream calls in flight");
    const over = await open(served.port, "127.0.0.9");
    await over.whenClosed;
    expect(over.received()).toBe("");
    expect(refused(await metricsText(served.harness), "max_connections")).toBe(1);
    expect(refused(await metricsText(served.harness), "reclaimed")).toBe(0);
    // The busy ones are answered.
    for (const answer of await Promise.all(answers)) expect(answer.status).toBe(200);
    served.harness.simulator.setKnobs({ latencyMs: 0 });
    await stillServes(served.port);
  });

  it("row 9: connections count against an IPv4 address, or an IPv6 address's /64", () => {
    expect(callerAddress("203.0.113.7")).toBe("203.0.113.7");
    expect(callerAddress("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(callerAddress("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(callerAddress("2001:db8:1:2:ffff:ffff:ffff:ffff")).toBe("2001:db8:1:2::/64");
    expect(callerAddress("2001:0db8::5")).toBe("2001:db8:0:0::/64");
    expect(callerAddress("::1")).toBe("0:0:0:0::/64");
    expect(callerAddress("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
  });
});

describe("row 15: what Node refuses before the gateway reads a request is JSON too", () => {
  it("row 15: a request that is not HTTP is a 400 BAD_REQUEST, headers over Node's bound a 431; nothing goes upstream", async () => {
    const served = await serve({});
    const garbage = parseAnswer(await sendRaw(served.port, "NOT HTTP AT ALL\r\n\r\n"));
    expect(garbage.status).toBe(400);
    expect(JSON.parse(garbage.body)).toEqual({
      errors: [{ message: "The request is not valid HTTP/1.1", extensions: { code: "BAD_REQUEST" } }],
    });

    const hugeHeaders = `GET /graphql?query=%7B__typename%7D HTTP/1.1\r\nhost: gateway.test\r\nx-padding: ${"a".repeat(20_000)}\r\n\r\n`;
    const tooLarge = parseAnswer(await sendRaw(served.port, hugeHeaders));
    expect(tooLarge.status).toBe(431);
    expect(JSON.parse(tooLarge.body)).toMatchObject({ errors: [{ extensions: { code: "BAD_USER_INPUT", limit: "headers" } }] });
    expect(upstreamCalls(served.harness)).toEqual({});
    await stillServes(served.port);
  });
});

async function sendRaw(port: number, bytes: string): Promise<string> {
  const connection = await open(port);
  connection.socket.write(bytes);
  await connection.whenClosed;
  return connection.received();
}

/** A request on a keep-alive connection: the answer's status and body once it has all arrived; the connection stays open. */
async function keepAliveExchange(connection: RawConnection, query: string): Promise<{ status: number; body: string }> {
  const before = connection.received().length;
  const body = JSON.stringify({ query });
  connection.socket.write(
    `POST /graphql HTTP/1.1\r\nhost: gateway.test\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  const answered = () => {
    const text = connection.received().slice(before);
    const head = text.indexOf("\r\n\r\n");
    const length = /\r\ncontent-length: (\d+)\r\n/i.exec(text.slice(0, head))?.[1];
    if (head < 0) return false;
    return length === undefined ? text.endsWith("0\r\n\r\n") : text.length - head - 4 >= Number(length);
  };
  await until(() => answered() || connection.closed, "the answer on the keep-alive connection");
  return parseAnswer(connection.received().slice(before));
}
