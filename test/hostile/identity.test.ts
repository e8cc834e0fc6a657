/**
 * Row 4: an invented `x-glacier-api-key` buys no budget. Requests come over a real loopback
 * socket, so that the gateway sees their address (127.0.0.1).
 *
 * A caller is a caller however it is addressed: addresses rotated inside one IPv6 /64 buy no
 * budget and no streams. The machine has no /64 of its own to send from, so those requests come
 * through `yoga.fetch` with the socket address Node's listener would give (or through
 * X-Forwarded-For behind a trusted proxy); an IPv4-mapped address comes over a real socket.
 *
 * Transports: row 4, X-Forwarded-For's /64 (TRUST_PROXY) and the IPv4-mapped address run over
 * HTTP, WebSocket and SSE (a POST asking for `text/event-stream`), each over a real socket (the
 * upgrade request carries the caller's key and X-Forwarded-For); the stream cap across a /64 over
 * SSE and WebSocket. A socket's opening costs its caller (key and address) 1, so over WebSocket
 * each key or address that opens one has a unit less to run operations with: rotating them buys
 * even less there. HTTP only (SSE through `yoga.fetch`, for the streams): a /64 as the socket's
 * own address, which no real socket here can come from.
 *
 * Each test starts its own gateway, whose parse cache is empty: the first request's document is
 * new, and pays `NEW_DOCUMENT_COST` more (from its key and its address alike); every later
 * request of the same text, whoever sends it, finds it parsed.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { NEW_DOCUMENT_COST } from "../../src/limits/request-costs.ts";
import { execute, serveGateway, startHarness, upstreamCalls, type Harness, type ServedGateway } from "../support/harness.ts";
import { startExportJob, subscribeSse, type ExportSubscription } from "../support/subscriptions.ts";
import { over, TRANSPORTS, type Answer, type Stream, type Transport, type TransportClient } from "../support/transports.ts";

/** One upstream call. */
const COSTS_1 = "{ latestBlocks(first: 1) { nodes { blockHash } } }";
const BURST = 10;
const REQUESTS = 20;

/** What opening a caller's socket costs it: 1 on a WebSocket, nothing otherwise. */
const openingOf = (transport: Transport) => (transport === "websocket" ? 1 : 0);

/** `count` answers of which the first `served` were served, the rest refused. */
const firstServed = (served: number, count = REQUESTS) => Array.from({ length: count }, (_, index) => index < served);

/**
 * Served (200), or refused for its budget: 429 over HTTP and SSE (a refused upgrade too), an
 * `error` message on a socket, or the socket closed with 1013 once it kept sending while spent.
 */
function servedOrRateLimited(answer: Answer): boolean {
  if (answer.status !== undefined) expect(answer.status).toBe(answer.refused ? 429 : 200);
  if (!answer.refused) return true;
  const { code, closeCode } = answer.body.errors?.[0]?.extensions ?? {};
  if (answer.transport === "websocket" && code === "SOCKET_CLOSED") expect(closeCode).toBe(1013);
  else expect(code).toBe("RATE_LIMITED");
  return false;
}

interface Served {
  harness: Harness;
  /** Sends COSTS_1 from the loopback address: by POST or GET over HTTP, else over the transport; whether it was served. */
  send(method: "POST" | "GET", headers?: Record<string, string>, query?: string): Promise<boolean>;
  close(): Promise<void>;
}

let served: Served | undefined;
/** The gateway and client of the tests that start their own. */
let harness: Harness | undefined;
let client: TransportClient | undefined;

async function serve(transport: Transport): Promise<Served> {
  // Refills so slowly that no test sees a token come back.
  const harness = await startHarness({ RATE_LIMIT_RATE: "0.001", RATE_LIMIT_BURST: String(BURST) });
  if (transport !== "http") {
    const client = over(transport, harness);
    return {
      harness,
      send: async (_method, headers = {}, query = COSTS_1) => servedOrRateLimited(await client.send({ query }, headers)),
      async close() {
        await client.close();
        await harness.close();
      },
    };
  }
  const server = createServer(harness.gateway.listener);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
  async function send(method: "POST" | "GET", headers: Record<string, string> = {}, query = COSTS_1): Promise<boolean> {
    const response =
      method === "POST"
        ? await fetch(base, {
            method,
            headers: { "content-type": "application/json", ...headers },
            body: JSON.stringify({ query }),
          })
        : await fetch(`${base}?query=${encodeURIComponent(query)}`, { headers: { "x-graphql-yoga-csrf": "1", ...headers } });
    const body = (await response.json()) as { errors?: { extensions: { code: string } }[] };
    expect([200, 429]).toContain(response.status);
    if (response.status === 429) expect(body.errors?.[0]?.extensions.code).toBe("RATE_LIMITED");
    return response.status === 200;
  }
  async function close(): Promise<void> {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await harness.close();
  }
  return { harness, send, close };
}

afterEach(async () => {
  await served?.close();
  await client?.close();
  await harness?.close();
  [served, client, harness] = [undefined, undefined, undefined];
});

const freshKey = () => ({ "x-glacier-api-key": `rot-${Math.random().toString(36).slice(2)}` });
const methodOf = (index: number) => (index % 2 === 0 ? "POST" : "GET");

async function verdicts(headersOf: (index: number) => Record<string, string>): Promise<boolean[]> {
  const verdicts: boolean[] = [];
  for (let index = 0; index < REQUESTS; index++) verdicts.push(await served!.send(methodOf(index), headersOf(index)));
  return verdicts;
}

describe.each(TRANSPORTS)("row 4: invented API keys, over %s", (transport) => {
  const opening = openingOf(transport);

  it("row 4: 20 requests each with a fresh key from one address run out of budget exactly as one key would", async () => {
    served = await serve(transport);
    const oneKey = freshKey();
    const withOneKey = await verdicts(() => oneKey);
    const oneKeyCalls = upstreamCalls(served.harness);
    // Each request pays 1 (over WebSocket, the key's one socket 1 as well), the first its new document too.
    expect(withOneKey).toEqual(firstServed(BURST - opening - NEW_DOCUMENT_COST));
    expect(oneKeyCalls).toEqual({ "GET /v1/blocks": BURST - opening - NEW_DOCUMENT_COST });

    await served.close();
    served = await serve(transport);
    const rotating = await verdicts(() => freshKey());
    // Each key pays the address's bucket as well (the first key its new document too); over
    // WebSocket each key's socket too, so that rotating keys buys less than one key's budget there.
    const rotated = Math.floor((BURST - NEW_DOCUMENT_COST) / (1 + opening));
    expect(rotating).toEqual(firstServed(rotated));
    expect(upstreamCalls(served.harness)).toEqual({ "GET /v1/blocks": rotated });
    if (opening === 0) {
      expect(rotating).toEqual(withOneKey);
      expect(upstreamCalls(served.harness)).toEqual(oneKeyCalls);
    }

    // The address is spent for requests without a key too; a caller elsewhere is served.
    served.harness.simulator.resetCounters();
    expect(await served.send("POST")).toBe(false);
    expect(await served.send("GET", freshKey(), "{ __typename }")).toBe(false);
    expect(upstreamCalls(served.harness)).toEqual({});
    const elsewhere = await execute(served.harness, "{ __typename }", {}, freshKey());
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.body).toEqual({ data: { __typename: "Query" } });
  });

  it("row 4: a key keeps one key's budget across addresses, and a keyed address's neighbours are not its keys", async () => {
    served = await serve(transport);
    const key = freshKey();
    // Half the key's budget from the socket's address (over WebSocket, its socket's opening is
    // part of it, and the first request's new document is), the other half in process (no address).
    for (let index = 0; index < BURST / 2 - opening - NEW_DOCUMENT_COST; index++) {
      expect(await served.send("POST", key)).toBe(true);
    }
    for (let index = 0; index < BURST / 2; index++) expect((await execute(served.harness, COSTS_1, {}, key)).status).toBe(200);
    served.harness.simulator.resetCounters();
    const spent = await execute(served.harness, COSTS_1, {}, key);
    expect(spent.status).toBe(429);
    expect(spent.body.errors![0]!.extensions).toMatchObject({ code: "RATE_LIMITED" });
    expect(upstreamCalls(served.harness)).toEqual({});
    // The address has half its budget left, for its other callers (over WebSocket, each new key's socket costs it 1 too).
    const others = Math.floor(BURST / 2 / (1 + opening));
    for (let index = 0; index < others; index++) expect(await served.send("POST", freshKey())).toBe(true);
    expect(await served.send("POST", freshKey())).toBe(false);
  });
});

/** A random address inside `prefix` (four groups: a /64). */
function inside(prefix: string): string {
  const group = () => Math.floor(Math.random() * 0x10000).toString(16);
  return `${prefix}:${group()}:${group()}:${group()}:${group()}`;
}

type Via = "socket" | "forwarded";

/**
 * A request from `address`: as Node's listener gives it a socket's address, or behind a trusted
 * proxy (whose socket is 10.0.0.1) as the hop the proxy appended.
 */
function from(via: Via, address: string): { headers: Record<string, string>; serverContext: Record<string, never> } {
  const socket = (remoteAddress: string) => ({ req: { socket: { remoteAddress } } }) as unknown as Record<string, never>;
  return via === "socket"
    ? { headers: {}, serverContext: socket(address) }
    : { headers: { "x-forwarded-for": address }, serverContext: socket("10.0.0.1") };
}

/** POSTs `query` in process as if from `address`; the response. */
async function postFrom(
  harness: Harness,
  via: Via,
  address: string,
  query: string,
  accept = "application/json",
): Promise<Response> {
  const { headers, serverContext } = from(via, address);
  return harness.gateway.yoga.fetch(
    "http://gateway.test/graphql",
    { method: "POST", headers: { "content-type": "application/json", accept, ...headers }, body: JSON.stringify({ query }) },
    serverContext,
  );
}

/** COSTS_1 as if from `address`; the HTTP status. */
async function statusFrom(harness: Harness, via: Via, address: string): Promise<number> {
  const response = await postFrom(harness, via, address, COSTS_1);
  await response.arrayBuffer();
  return response.status;
}

const ROTATIONS = 40;
const EXPORT_WATCH = (id: string) => `subscription { exportOperation(id: "${id}") { operationStatus } }`;

describe("a caller is a caller however it is addressed (the socket's own address: HTTP only, a /64 no real socket here comes from)", () => {
  it("40 addresses rotated inside one IPv6 /64 (the socket's) get one address's budget", async () => {
    const env = { RATE_LIMIT_RATE: "0.001", RATE_LIMIT_BURST: String(BURST) };
    const statusesOf = async (addressOf: () => string, count = ROTATIONS) => {
      const statuses: number[] = [];
      for (let index = 0; index < count; index++) statuses.push(await statusFrom(harness!, "socket", addressOf()));
      return statuses;
    };
    harness = await startHarness(env);
    const oneAddress = await statusesOf(() => "2001:db8:1:1::7");
    // The first request's document is new: it pays NEW_DOCUMENT_COST more.
    expect(oneAddress.filter((status) => status === 200)).toHaveLength(BURST - NEW_DOCUMENT_COST);
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/blocks": BURST - NEW_DOCUMENT_COST });
    await harness.close();

    harness = await startHarness(env);
    const rotating = await statusesOf(() => inside("2001:db8:1:2"));
    expect(rotating).toEqual(oneAddress);
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/blocks": BURST - NEW_DOCUMENT_COST });
    // The next /64 is another caller (whose document is parsed already).
    expect(await statusesOf(() => inside("2001:db8:1:3"), BURST)).toEqual(Array<number>(BURST).fill(200));
  });

  it("streams are capped at MAX_SUBSCRIPTIONS_PER_CALLER across one /64 (the socket's; SSE through yoga.fetch)", async () => {
    harness = await startHarness({ EXPORT_POLL_INTERVAL_MS: "600000", MAX_SUBSCRIPTIONS_PER_CALLER: "10" });
    const id = await startExportJob(harness);
    const subscribe = async (address: string) => {
      const { headers, serverContext } = from("socket", address);
      const subscription = await subscribeSse(harness!, EXPORT_WATCH(id), {}, headers, serverContext);
      expect(await subscription.next()).toMatchObject({ event: "next" });
      return subscription;
    };
    const open: ExportSubscription[] = [];
    for (let index = 0; index < 10; index++) open.push(await subscribe(inside("2001:db8:2:2")));
    harness.simulator.resetCounters();
    const eleventh = await postFrom(harness, "socket", inside("2001:db8:2:2"), EXPORT_WATCH(id), "text/event-stream");
    expect(eleventh.status).toBe(429);
    expect(JSON.parse(sseData(await eleventh.text()))).toMatchObject({
      errors: [{ extensions: { code: "RATE_LIMITED", limit: "subscriptions", max: 10 } }],
    });
    expect(upstreamCalls(harness)).toEqual({});
    // Another /64 is another caller.
    open.push(await subscribe(inside("2001:db8:2:3")));
    for (const subscription of open) await subscription.cancel();
  });
});

describe.each(TRANSPORTS)("a caller is a caller however it is addressed, over %s", (transport) => {
  const opening = openingOf(transport);

  it("40 addresses rotated inside one IPv6 /64 (X-Forwarded-For, TRUST_PROXY) get one address's budget", async () => {
    const env = { RATE_LIMIT_RATE: "0.001", RATE_LIMIT_BURST: String(BURST), TRUST_PROXY: "true" };
    /** COSTS_1 from each address in turn: over HTTP in process from the proxy's socket, else over the transport; whether each was served. */
    const verdictsOf = async (addressOf: () => string, count = ROTATIONS) => {
      const verdicts: boolean[] = [];
      for (let index = 0; index < count; index++) {
        const address = addressOf();
        if (transport === "http") {
          const status = await statusFrom(harness!, "forwarded", address);
          expect([200, 429]).toContain(status);
          verdicts.push(status === 200);
        } else {
          verdicts.push(servedOrRateLimited(await client!.send({ query: COSTS_1 }, { "x-forwarded-for": address })));
        }
      }
      return verdicts;
    };
    harness = await startHarness(env);
    client = over(transport, harness);
    const oneAddress = await verdictsOf(() => "2001:db8:1:1::7");
    // Over WebSocket the address's one socket costs 1 as well; the first request's new document NEW_DOCUMENT_COST.
    expect(oneAddress).toEqual(firstServed(BURST - opening - NEW_DOCUMENT_COST, ROTATIONS));
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/blocks": BURST - opening - NEW_DOCUMENT_COST });
    await client.close();
    await harness.close();

    harness = await startHarness(env);
    client = over(transport, harness);
    const rotating = await verdictsOf(() => inside("2001:db8:1:2"));
    // Over WebSocket each address is a socket of its own, which the /64 pays for too.
    const rotated = Math.floor((BURST - NEW_DOCUMENT_COST) / (1 + opening));
    expect(rotating).toEqual(firstServed(rotated, ROTATIONS));
    if (opening === 0) expect(rotating).toEqual(oneAddress);
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/blocks": rotated });
    // The next /64 is another caller (whose document is parsed already).
    expect(await verdictsOf(() => inside("2001:db8:1:3"), BURST)).toEqual(firstServed(BURST / (1 + opening), BURST));
  });

  it("an IPv4-mapped IPv6 socket address is its IPv4 address", async () => {
    harness = await startHarness({ RATE_LIMIT_RATE: "0.001", RATE_LIMIT_BURST: String(BURST) });
    // A dual-stack listener sees an IPv4 client as ::ffff:127.0.0.1.
    if (transport === "http") {
      const server = createServer(harness.gateway.listener);
      await new Promise<void>((resolve) => server.listen(0, "::", resolve));
      try {
        const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
        // The first request's document is new: it pays NEW_DOCUMENT_COST more.
        for (let index = 0; index < BURST - NEW_DOCUMENT_COST; index++) {
          const response = await fetch(base, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ query: COSTS_1 }),
          });
          expect(response.status).toBe(200);
          await response.arrayBuffer();
        }
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    } else {
      client = over(transport, harness, serveDualStack);
      // Over WebSocket, the socket's opening is the first unit; the first request's new document costs NEW_DOCUMENT_COST.
      for (let index = 0; index < BURST - opening - NEW_DOCUMENT_COST; index++) {
        expect(servedOrRateLimited(await client.send({ query: COSTS_1 }))).toBe(true);
      }
      await client.close();
    }
    expect(await statusFrom(harness, "socket", "127.0.0.1")).toBe(429);
    expect(await statusFrom(harness, "socket", "::ffff:127.0.0.1")).toBe(429);
    expect(await statusFrom(harness, "socket", "127.0.0.2")).toBe(200);
  });
});

describe.each(["sse", "websocket"] as const)("streams of one /64, over %s", (transport) => {
  it("streams are capped at MAX_SUBSCRIPTIONS_PER_CALLER across one /64 (X-Forwarded-For, TRUST_PROXY)", async () => {
    harness = await startHarness({ TRUST_PROXY: "true", EXPORT_POLL_INTERVAL_MS: "600000", MAX_SUBSCRIPTIONS_PER_CALLER: "10" });
    client = over(transport, harness);
    const id = await startExportJob(harness);
    const watch = (address: string) => client!.subscribe({ query: EXPORT_WATCH(id) }, { "x-forwarded-for": address });
    const subscribe = async (address: string) => {
      const subscription = await watch(address);
      expect(await subscription.next()).toMatchObject({ event: "next" });
      return subscription;
    };
    const open: Stream[] = [];
    for (let index = 0; index < 10; index++) open.push(await subscribe(inside("2001:db8:2:2")));
    harness.simulator.resetCounters();
    // Refused before it starts: JSON with its 429 over SSE, an `error` message over WebSocket.
    const eleventh = await (await watch(inside("2001:db8:2:2"))).refusal();
    if (transport === "sse") expect(eleventh?.status).toBe(429);
    expect(eleventh).toMatchObject({
      errors: [{ extensions: { code: "RATE_LIMITED", limit: "subscriptions", max: 10 } }],
    });
    expect(upstreamCalls(harness)).toEqual({});
    // Another /64 is another caller.
    open.push(await subscribe(inside("2001:db8:2:3")));
    for (const subscription of open) await subscription.cancel();
  });
});

/**
 * The harness's gateway served as the process serves it, but on a dual-stack listener ("::"),
 * where a client from 127.0.0.1 has the socket address ::ffff:127.0.0.1.
 */
async function serveDualStack(harness: Harness): Promise<ServedGateway> {
  const served = await serveGateway(harness);
  const { server } = served.server;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await new Promise<void>((resolve) => server.listen(0, "::", resolve));
  return { ...served, port: (server.address() as AddressInfo).port };
}

/** The first event's data of an SSE answer, or the answer itself when it is not a stream. */
function sseData(text: string): string {
  const data = text.split("\n").find((line) => line.startsWith("data:"));
  return data ? data.slice(5) : text;
}
