/**
 * Row 14: no answer arrives later than REQUEST_TIMEOUT_MS (+ a few tens of ms). Upstream calls
 * end at the request's deadline wherever they are, queued for a connection included, so the
 * answer comes with what is known; and execution itself is bounded for anything else.
 * These tests count what happened (answers, codes, calls sent and aborted); they never time.
 *
 * Transports: the six requests run over HTTP and WebSocket (six operations on one socket, sent
 * at once). Not SSE: six POSTs asking for `text/event-stream` are six connections that reach the
 * gateway milliseconds apart, each with its own deadline, so how many calls the one upstream
 * connection sends before each is aborted would be their spread's doing, not the gateway's; they
 * run HTTP's pipeline all the same. The bound on execution itself is tested on a bare Yoga with
 * the deadline's plugins and a resolver that outlives it, over HTTP only: the gateway has no
 * such resolver to send an operation to.
 */
import { useGraphQlJit } from "@envelop/graphql-jit";
import { createSchema, createYoga } from "graphql-yoga";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RequestDeadlines } from "../../src/limits/deadline.ts";
import { execute, metricsText, startHarness, upstreamCalls, type Harness } from "../support/harness.ts";
import { useClient } from "../support/transports.ts";

const BLOCK_ROUTE = "GET /v1/chains/{chainId}/blocks/{blockId}";
const BLOCK_QUERY = 'query Block($id: String!) { chain(id: "43114") { chainId block(id: $id) { blockNumber } } }';

let harness: Harness;

beforeAll(async () => {
  // One connection to the Data API, so that concurrent calls wait in the pool's queue.
  harness = await startHarness({
    REQUEST_TIMEOUT_MS: "300",
    UPSTREAM_CONNECTIONS: "1",
    UPSTREAM_RETRIES: "0",
    BREAKER_VOLUME_THRESHOLD: "1000",
  });
  await execute(harness, '{ chain(id: "43114") { chainId } }');
});

afterAll(async () => {
  await harness.close();
});

function deadlineOutcomes(metrics: string, route: string): number {
  const line = metrics
    .split("\n")
    .find(
      (text) =>
        text.startsWith("gateway_upstream_requests_total{") &&
        text.includes(`route="${route}"`) &&
        text.includes('outcome="deadline"'),
    );
  return line ? Number(line.split(" ").at(-1)) : 0;
}

describe.each(["http", "websocket"] as const)(
  "row 14: answers never come later than the request's deadline, over %s",
  (transport) => {
    const client = useClient(transport, () => harness);

    it("row 14: 6 concurrent requests behind one slow connection all get their answer, with the deadline error and partial data", async () => {
      // The query runs once first (a socket is opened, the document compiled and its chain loaded),
      // so that the deadline bounds only the upstream calls that wait.
      expect((await client.send({ query: BLOCK_QUERY, variables: { id: "699" } })).body.errors).toBeUndefined();
      const deadlinesBefore = deadlineOutcomes(await metricsText(harness), "/v1/chains/{chainId}/blocks/{blockId}");
      harness.simulator.setKnobs({ latencyMs: 2_000 });
      harness.simulator.resetCounters();
      try {
        const answers = await Promise.all(
          Array.from({ length: 6 }, (_, index) => client.send({ query: BLOCK_QUERY, variables: { id: String(700 + index) } })),
        );
        for (const answer of answers) {
          expect(answer.refused).toBe(false);
          if (answer.status !== undefined) expect(answer.status).toBe(200);
          // What was known (the chain, from the cache) is kept; the block that never came is null.
          expect(answer.body.data).toEqual({ chain: { chainId: "43114", block: null } });
          expect(answer.body.errors).toHaveLength(1);
          expect(answer.body.errors![0]).toMatchObject({
            path: ["chain", "block"],
            message: expect.stringMatching(/deadline passed/),
            extensions: { code: "UPSTREAM_UNAVAILABLE", upstream: { status: null } },
          });
        }
        // Only the call on the one connection was sent; the five queued behind it were aborted
        // in the queue, never sent. All six end as "deadline".
        expect(upstreamCalls(harness)).toEqual({ [BLOCK_ROUTE]: 1 });
        expect(deadlineOutcomes(await metricsText(harness), "/v1/chains/{chainId}/blocks/{blockId}")).toBe(deadlinesBefore + 6);
      } finally {
        harness.simulator.setKnobs({ latencyMs: 0 });
      }
      expect((await client.send({ query: "{ __typename }" })).result).toEqual({ data: { __typename: "Query" } });
    });
  },
);

describe("row 14: execution is bounded (HTTP only: a bare Yoga with the deadline's plugins)", () => {
  it("row 14: execution that outlives the deadline is cut short: TIMEOUT, HTTP 504, compiled or not", async () => {
    let started = 0;
    let finished = 0;
    const schema = createSchema<{ call: { deadline: number } }>({
      typeDefs: "type Query { slow: String, fast: String }",
      resolvers: {
        Query: {
          fast: () => "fast",
          slow: async () => {
            started += 1;
            await new Promise((resolve) => setTimeout(resolve, 3_000));
            finished += 1;
            return "slow";
          },
        },
      },
    });
    for (const compiled of [false, true]) {
      const deadlines = new RequestDeadlines(200);
      const yoga = createYoga({
        schema,
        logging: false,
        plugins: [deadlines.arrival(), ...(compiled ? [useGraphQlJit()] : []), deadlines.executionBound()],
        context: ({ request }) => ({ call: { deadline: deadlines.of(request) } }),
      });
      const ask = async (query: string) => {
        const response = await yoga.fetch("http://gateway.test/graphql", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ query }),
        });
        return {
          status: response.status,
          body: (await response.json()) as { data: unknown; errors?: { message: string; extensions: Record<string, unknown> }[] },
        };
      };
      const answers = await Promise.all([ask("{ fast slow }"), ask("{ slow }")]);
      for (const answer of answers) {
        expect(answer.status).toBe(504);
        expect(answer.body.data).toBeNull();
        expect(answer.body.errors).toEqual([
          {
            message: "The request took longer than REQUEST_TIMEOUT_MS (200 ms) and was cut short",
            extensions: { code: "TIMEOUT", timeoutMs: 200 },
          },
        ]);
      }
      // A fast operation is untouched.
      expect(await ask("{ fast }")).toEqual({ status: 200, body: { data: { fast: "fast" } } });
    }
    // The answers came while the slow resolvers were still running.
    expect(started).toBe(4);
    expect(finished).toBe(0);
  });
});
