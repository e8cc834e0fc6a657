/**
 * Row 2: answers the caller's own input causes (4xx) never count against the service, so no
 * caller can open the circuit breaker for every other caller. Only 5xx, resets, timeouts and
 * malformed 2xx bodies do.
 *
 * Transports: every test sends its queries over HTTP, WebSocket and SSE (a POST asking for
 * `text/event-stream` is another door a query can come through); the breaker sits behind all
 * three, so the same upstream calls are counted on each. `/ready` is an HTTP endpoint only.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { execute, metricsText, startHarness, upstreamCalls, type Harness } from "../support/harness.ts";
import { over, TRANSPORTS, useClient } from "../support/transports.ts";

const BLOCK_ROUTE = "GET /v1/chains/{chainId}/blocks/{blockId}";
const BLOCK_QUERY = 'query Block($id: String!) { chain(id: "43114") { block(id: $id) { blockNumber } } }';
/** A breaker that opens on little: 3 calls in 10 s of which half failed. */
const FRAGILE = {
  UPSTREAM_RETRIES: "0",
  BREAKER_VOLUME_THRESHOLD: "3",
  BREAKER_ERROR_PERCENTAGE: "50",
  BREAKER_RESET_MS: "60000",
  // Row 2's forged values cost their characters (1 per 1,000 of them, test/hostile/charges.test.ts):
  // the three transports' 150 of them, about 3,700 units, are within this budget.
  RATE_LIMIT_BURST: "100000",
};

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness(FRAGILE);
  // The chain list, once: the requests below then make one call each, to the block route.
  await execute(harness, '{ chain(id: "43114") { chainId } }');
});

afterAll(async () => {
  await harness.close();
});

beforeEach(() => {
  harness.simulator.setKnobs({ errorRate: 0, errorStatus: 500, errorRoutes: [] });
  harness.simulator.resetCounters();
});

/** The block route's breaker state, as the gauge says it. */
async function breakerState(): Promise<string | undefined> {
  const gauge = `gateway_upstream_breaker_state{service="Data API",method="GET",route="${BLOCK_ROUTE.slice("GET ".length)}"} `;
  return (await metricsText(harness))
    .split("\n")
    .find((line) => line.startsWith(gauge))
    ?.slice(gauge.length);
}

describe.each(TRANSPORTS)("row 2: the breaker counts only the service's failures, over %s", (transport) => {
  const client = useClient(transport, () => harness);

  const block = (id: string) => client.send({ query: BLOCK_QUERY, variables: { id } });

  async function expectServiceStillServes() {
    expect(await breakerState()).toBe("0");
    expect((await harness.gateway.yoga.fetch("http://gateway.test/ready")).status).toBe(200);
    harness.simulator.resetCounters();
    harness.gateway.cache.clear();
    await client.send({ query: '{ chain(id: "43114") { chainId } }' });
    harness.simulator.resetCounters();
    const served = await block("100");
    expect(served.body.errors).toBeUndefined();
    expect(served.body.data).toEqual({ chain: { block: { blockNumber: "100" } } });
    expect(upstreamCalls(harness)).toEqual({ [BLOCK_ROUTE]: 1 });
    expect((await client.send({ query: "{ __typename }" })).result).toEqual({ data: { __typename: "Query" } });
  }

  it("row 2: 35 answers of 400, 413, 414, 422, 429, 431 and 404 leave the breaker closed for everyone", async () => {
    const statuses = [400, 413, 414, 422, 429, 431];
    const codes: Record<number, string> = {
      400: "BAD_USER_INPUT",
      413: "BAD_USER_INPUT",
      414: "BAD_USER_INPUT",
      422: "BAD_USER_INPUT",
      429: "RATE_LIMITED",
      431: "BAD_USER_INPUT",
    };
    for (const status of statuses) {
      harness.simulator.setKnobs({ errorRate: 1, errorStatus: status, errorRoutes: [BLOCK_ROUTE] });
      for (let attempt = 0; attempt < 5; attempt += 1) {
        const result = await block(String(200 + attempt));
        expect(result.refused).toBe(false);
        expect(result.body.errors![0]!.extensions).toMatchObject({ code: codes[status], upstream: { status } });
      }
    }
    // Blocks that do not exist: real 404s from the simulator, each a null block.
    harness.simulator.setKnobs({ errorRate: 0 });
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const result = await block(`0x${String(attempt).padStart(64, "f")}`);
      expect(result.result).toEqual({ data: { chain: { block: null } } });
    }
    // Every one of them reached the service: none was refused by an open circuit.
    expect(upstreamCalls(harness)).toEqual({ [BLOCK_ROUTE]: 35 });
    await expectServiceStillServes();
  });

  it("row 2: 25 forged 17 kB global ids and 20 kB cursor tokens never reach the service, so cannot count against it", async () => {
    const hugeId = Buffer.from(`EvmChain:${"A".repeat(17_000)}`).toString("base64");
    const hugeCursor = Buffer.from(JSON.stringify([1, "x".repeat(20_000), 10, -1, null, "any"])).toString("base64url");
    for (let attempt = 0; attempt < 25; attempt += 1) {
      const node = await client.send({ query: "query N($id: ID!) { node(id: $id) { id } }", variables: { id: hugeId } });
      expect(node.body.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "id" });
      const page = await client.send({
        query: "query P($after: String) { latestBlocks(after: $after) { pageInfo { endCursor } } }",
        variables: { after: hugeCursor },
      });
      expect(page.body.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "after" });
    }
    expect(upstreamCalls(harness)).toEqual({});
    await expectServiceStillServes();
  });

  it("row 2: the service's own failures (5xx) still open it", async () => {
    const fragile = await startHarness(FRAGILE);
    const fragileClient = over(transport, fragile);
    try {
      await fragileClient.send({ query: '{ chain(id: "43114") { chainId } }' });
      fragile.simulator.setKnobs({ errorRate: 1, errorStatus: 500, errorRoutes: [BLOCK_ROUTE] });
      fragile.simulator.resetCounters();
      const messages: string[] = [];
      for (let attempt = 0; attempt < 6; attempt += 1) {
        const result = await fragileClient.send({ query: BLOCK_QUERY, variables: { id: String(300 + attempt) } });
        messages.push(result.body.errors![0]!.message);
      }
      expect(messages.at(-1)).toMatch(/circuit open/);
      expect(upstreamCalls(fragile)[BLOCK_ROUTE]).toBeLessThan(6);
    } finally {
      await fragileClient.close();
      await fragile.close();
    }
  });
});

describe("callers' deadlines", () => {
  it("calls whose request ran out of time before they were sent never reach the service or count against it", async () => {
    const fragile = await startHarness(FRAGILE);
    try {
      await execute(fragile, '{ chain(id: "43114") { chainId } }');
      fragile.simulator.resetCounters();
      const evm = fragile.gateway.upstreams.evm;
      for (let attempt = 0; attempt < 10; attempt += 1) {
        await expect(evm.getBlock("43114", String(400 + attempt), { deadline: Date.now() - 1 })).rejects.toMatchObject({
          message: expect.stringMatching(/deadline passed/),
        });
      }
      expect(upstreamCalls(fragile)).toEqual({});
      // The breaker is closed: the next caller's call is sent and answered.
      const answer = await execute<{ chain: { block: { blockNumber: string } | null } }, { id: string }>(fragile, BLOCK_QUERY, {
        id: "300",
      });
      expect(answer.body.errors).toBeUndefined();
      expect(answer.body.data?.chain.block?.blockNumber).toBe("300");
    } finally {
      await fragile.close();
    }
  });
});
