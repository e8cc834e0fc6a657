import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GRAPHIQL_EXAMPLES, type GraphiQLExample } from "../src/plugins/graphiql-examples.ts";
import { execute, startHarness, until, upstreamCalls, type Harness } from "./support/harness.ts";
import { subscribeSse } from "./support/subscriptions.ts";

const BLOCKS_ROUTE = "GET /v1/chains/{chainId}/blocks";

let harness: Harness;

beforeAll(async () => {
  // A short poll interval, so that a subscription tab's poller reads the blocks the clock adds soon.
  harness = await startHarness({ LIVE_BLOCKS_POLL_MS: "100", LIVE_BLOCKS_MAX_POLL_MS: "100" });
});
afterAll(async () => {
  await harness.close();
});

/** The operation's type and name, from its first definition (not from the comments above it). */
function operationOf(example: GraphiQLExample): { type: string; name: string } {
  const match = /^(query|mutation|subscription) (\w+)/m.exec(example.query);
  return { type: match?.[1] ?? "?", name: match?.[2] ?? "?" };
}

/** A query or mutation tab: it answers with data and no error. */
async function runOnce(example: GraphiQLExample): Promise<void> {
  const result = await execute(harness, example.query, example.variables ?? {});
  expect(result.body.errors).toBeUndefined();
  expect(JSON.stringify(result.body.data)).not.toMatch(/^\{"\w+":null\}$/);
}

/**
 * A subscription tab (a chain's new blocks): once the poller has read the chain's head and the
 * simulator's clock moves, it pushes the block after that head.
 */
async function subscribeOnce(example: GraphiQLExample): Promise<void> {
  const chainId = String(example.variables?.chainId ?? /chainId: "(\d+)"/.exec(example.query)?.[1]);
  const headOf = () => harness.simulator.clock().heads.find((head) => head.chainId === chainId)?.blockNumber;
  expect(headOf(), `the simulator's chain ${chainId}`).toBeDefined();
  harness.simulator.resetCounters();
  const subscription = await subscribeSse(harness, example.query, example.variables ?? {});
  try {
    await until(() => (upstreamCalls(harness)[BLOCKS_ROUTE] ?? 0) >= 1, "the poller's first read");
    const before = BigInt(headOf()!);
    harness.simulator.advanceClock(10);
    expect(BigInt(headOf()!)).toBeGreaterThan(before);
    const event = await subscription.next();
    expect(event?.event).toBe("next");
    const payload = JSON.parse(event!.data) as { data?: Record<string, { blockNumber: string } | null>; errors?: unknown };
    expect(payload.errors).toBeUndefined();
    expect(Object.values(payload.data ?? {})[0]?.blockNumber).toBe(String(before + 1n));
  } finally {
    await subscription.cancel();
  }
}

describe("GraphiQL's example operations", () => {
  it.each(GRAPHIQL_EXAMPLES.map((example) => [operationOf(example).name, operationOf(example).type, example] as const))(
    "%s (a %s) runs against the simulator without an error and returns data",
    async (_, type, example) => {
      expect(["query", "mutation", "subscription"]).toContain(type);
      await (type === "subscription" ? subscribeOnce(example) : runOnce(example));
    },
  );

  it("opens on the live tab: new blocks of the C-Chain", () => {
    expect(operationOf(GRAPHIQL_EXAMPLES[0]!)).toEqual({ type: "subscription", name: "NewBlocks" });
    expect(GRAPHIQL_EXAMPLES[0]!.query).toContain('newBlocks(chainId: "43114")');
    expect(operationOf(GRAPHIQL_EXAMPLES[1]!).name).toBe("LatestBlocks");
  });

  it("are served in GraphiQL's tabs, with the API-key header explained", async () => {
    const page = await harness.gateway.yoga.fetch("http://gateway.test/graphql", { headers: { accept: "text/html" } });
    const html = await page.text();
    expect(page.status).toBe(200);
    for (const name of ["NewBlocks", "LatestBlocks", "Transaction", "WarpSignature"]) expect(html).toContain(name);
    expect(html).toContain("x-glacier-api-key");
    // Subscriptions are sent as POSTs: as GETs (GraphiQL's default), CSRF prevention refuses them (npm run test:e2e runs one).
    expect(html).toContain('"method":"POST"');
  });
});
