/**
 * Row 4: an invented `x-glacier-api-key` buys no budget. Requests come over a real loopback
 * socket, so that the gateway sees their address (127.0.0.1).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { execute, startHarness, upstreamCalls, type Harness } from "../support/harness.ts";

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
