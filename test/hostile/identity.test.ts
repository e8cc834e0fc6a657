/**
 * Row 4: an invented `x-glacier-api-key` buys no budget. Requests come over a real loopback
 * socket, so that the gateway sees their address (127.0.0.1).
 *
 * A caller is a caller however it is addressed: addresses rotated inside one IPv6 /64 buy no
 * budget and no streams. The machine has no /64 of its own to send from, so those requests come
 * through `yoga.fetch` with the socket address Node's listener would give (or through
 * X-Forwarded-For behind a trusted proxy); an IPv4-mapped address comes over a real socket.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { execute, startHarness, upstreamCalls, type Harness } from "../support/harness.ts";
import { startExportJob, subscribeSse, type ExportSubscription } from "../support/subscriptions.ts";

/** One upstream call. */
const COSTS_1 = "{ latestBlocks(first: 1) { nodes { blockHash } } }";
const BURST = 10;
const REQUESTS = 20;

interface Served {
  harness: Harness;
  server: Server;
  /** Sends COSTS_1 by POST or GET; the HTTP status. */
  send(method: "POST" | "GET", headers?: Record<string, string>, query?: string): Promise<number>;
}

let served: Served | undefined;

async function serve(): Promise<Served> {
  // Refills so slowly that no test sees a token come back.
  const harness = await startHarness({ RATE_LIMIT_RATE: "0.001", RATE_LIMIT_BURST: String(BURST) });
  const server = createServer(harness.gateway.listener);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
  async function send(method: "POST" | "GET", headers: Record<string, string> = {}, query = COSTS_1): Promise<number> {
    const response =
      method === "POST"
        ? await fetch(base, {
            method,
            headers: { "content-type": "application/json", ...headers },
            body: JSON.stringify({ query }),
          })
        : await fetch(`${base}?query=${encodeURIComponent(query)}`, { headers: { "x-graphql-yoga-csrf": "1", ...headers } });
    const body = (await response.json()) as { errors?: { extensions: { code: string } }[] };
    if (response.status === 429) expect(body.errors?.[0]?.extensions.code).toBe("RATE_LIMITED");
    return response.status;
  }
  return { harness, server, send };
}

afterEach(async () => {
  if (!served) return;
  served.server.closeAllConnections();
  await new Promise((resolve) => served!.server.close(resolve));
  await served.harness.close();
  served = undefined;
});

const freshKey = () => ({ "x-glacier-api-key": `rot-${Math.random().toString(36).slice(2)}` });
const methodOf = (index: number) => (index % 2 === 0 ? "POST" : "GET");

async function statuses(headersOf: (index: number) => Record<string, string>): Promise<number[]> {
  const statuses: number[] = [];
  for (let index = 0; index < REQUESTS; index++) statuses.push(await served!.send(methodOf(index), headersOf(index)));
  return statuses;
}

describe("row 4: invented API keys", () => {
  it("row 4: 20 requests each with a fresh key from one address run out of budget exactly as one key would", async () => {
    served = await serve();
    const oneKey = freshKey();
    const withOneKey = await statuses(() => oneKey);
    const oneKeyCalls = upstreamCalls(served.harness);
    expect(withOneKey.filter((status) => status === 200)).toHaveLength(BURST);
    expect(withOneKey.filter((status) => status === 429)).toHaveLength(REQUESTS - BURST);
    expect(oneKeyCalls).toEqual({ "GET /v1/blocks": BURST });

    served.server.closeAllConnections();
    await new Promise((resolve) => served!.server.close(resolve));
    await served.harness.close();
    served = await serve();
    const rotating = await statuses(() => freshKey());
    expect(rotating).toEqual(withOneKey);
    expect(upstreamCalls(served.harness)).toEqual(oneKeyCalls);

    // The address is spent for requests without a key too; a caller elsewhere is served.
    served.harness.simulator.resetCounters();
    expect(await served.send("POST")).toBe(429);
    expect(await served.send("GET", freshKey(), "{ __typename }")).toBe(429);
    expect(upstreamCalls(served.harness)).toEqual({});
    const elsewhere = await execute(served.harness, "{ __typename }", {}, freshKey());
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.body).toEqual({ data: { __typename: "Query" } });
  });

  it("row 4: a key keeps one key's budget across addresses, and a keyed address's neighbours are not its keys", async () => {
    served = await serve();
    const key = freshKey();
    // Half the key's budget from the socket's address, the other half in process (no address).
    for (let index = 0; index < BURST / 2; index++) expect(await served.send("POST", key)).toBe(200);
    for (let index = 0; index < BURST / 2; index++) expect((await execute(served.harness, COSTS_1, {}, key)).status).toBe(200);
    served.harness.simulator.resetCounters();
    const spent = await execute(served.harness, COSTS_1, {}, key);
    expect(spent.status).toBe(429);
    expect(spent.body.errors![0]!.extensions).toMatchObject({ code: "RATE_LIMITED" });
    expect(upstreamCalls(served.harness)).toEqual({});
    // The address has half its budget left, for its other callers.
    for (let index = 0; index < BURST / 2; index++) expect(await served.send("POST", freshKey())).toBe(200);
    expect(await served.send("POST", freshKey())).toBe(429);
  });
});

/** A random address inside `prefix` (four groups: a /64). */
function inside(prefix: string): string {
  const group = () => Math.floor(Math.random() * 0x10000).toString(16);
  return `${prefix}:${group()}:${group()}:${group()}:${group()}`;
}

type Via = "socket" | "forwarded";
const viaName = (via: Via) => (via === "socket" ? "the socket's" : "X-Forwarded-For, TRUST_PROXY");

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

describe("a caller is a caller however it is addressed", () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  async function statusesOf(via: Via, addressOf: () => string, count = ROTATIONS): Promise<number[]> {
    const statuses: number[] = [];
    for (let index = 0; index < count; index++) statuses.push(await statusFrom(harness!, via, addressOf()));
    return statuses;
  }

  for (const via of ["socket", "forwarded"] as const) {
    it(`40 addresses rotated inside one IPv6 /64 (${viaName(via)}) get one address's budget`, async () => {
      const env = { RATE_LIMIT_RATE: "0.001", RATE_LIMIT_BURST: String(BURST), TRUST_PROXY: String(via === "forwarded") };
      harness = await startHarness(env);
      const oneAddress = await statusesOf(via, () => "2001:db8:1:1::7");
      expect(oneAddress.filter((status) => status === 200)).toHaveLength(BURST);
      expect(upstreamCalls(harness)).toEqual({ "GET /v1/blocks": BURST });
      await harness.close();

      harness = await startHarness(env);
      const rotating = await statusesOf(via, () => inside("2001:db8:1:2"));
      expect(rotating).toEqual(oneAddress);
      expect(upstreamCalls(harness)).toEqual({ "GET /v1/blocks": BURST });
      // The next /64 is another caller.
      expect(await statusesOf(via, () => inside("2001:db8:1:3"), BURST)).toEqual(Array<number>(BURST).fill(200));
    });
  }

  it("an IPv4-mapped IPv6 socket address is its IPv4 address", async () => {
    harness = await startHarness({ RATE_LIMIT_RATE: "0.001", RATE_LIMIT_BURST: String(BURST) });
    // A dual-stack listener sees an IPv4 client as ::ffff:127.0.0.1.
    const server = createServer(harness.gateway.listener);
    await new Promise<void>((resolve) => server.listen(0, "::", resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
      for (let index = 0; index < BURST; index++) {
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
    expect(await statusFrom(harness, "socket", "127.0.0.1")).toBe(429);
    expect(await statusFrom(harness, "socket", "::ffff:127.0.0.1")).toBe(429);
    expect(await statusFrom(harness, "socket", "127.0.0.2")).toBe(200);
  });

  for (const via of ["socket", "forwarded"] as const) {
    it(`streams are capped at MAX_SUBSCRIPTIONS_PER_CALLER across one /64 (${viaName(via)})`, async () => {
      harness = await startHarness({
        TRUST_PROXY: String(via === "forwarded"),
        EXPORT_POLL_INTERVAL_MS: "600000",
        MAX_SUBSCRIPTIONS_PER_CALLER: "10",
      });
      const id = await startExportJob(harness);
      const query = `subscription { exportOperation(id: "${id}") { operationStatus } }`;
      const subscribe = async (address: string) => {
        const { headers, serverContext } = from(via, address);
        const subscription = await subscribeSse(harness!, query, {}, headers, serverContext);
        expect(await subscription.next()).toMatchObject({ event: "next" });
        return subscription;
      };
      const open: ExportSubscription[] = [];
      for (let index = 0; index < 10; index++) open.push(await subscribe(inside("2001:db8:2:2")));
      harness.simulator.resetCounters();
      const eleventh = await postFrom(harness, via, inside("2001:db8:2:2"), query, "text/event-stream");
      expect(eleventh.status).toBe(429);
      expect(JSON.parse(sseData(await eleventh.text()))).toMatchObject({
        errors: [{ extensions: { code: "RATE_LIMITED", limit: "subscriptions", max: 10 } }],
      });
      expect(upstreamCalls(harness)).toEqual({});
      // Another /64 is another caller.
      open.push(await subscribe(inside("2001:db8:2:3")));
      for (const subscription of open) await subscription.cancel();
    });
  }
});

/** The first event's data of an SSE answer, or the answer itself when it is not a stream. */
function sseData(text: string): string {
  const data = text.split("\n").find((line) => line.startsWith("data:"));
  return data ? data.slice(5) : text;
}
