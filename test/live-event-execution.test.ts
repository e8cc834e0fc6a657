/**
 * Each event of a subscription is its own execution: a deadline of its own, REQUEST_TIMEOUT_MS
 * after its execution starts, and loaders of its own. So a stream that lasts many deadlines
 * resolves its events' links as it resolved its first event's, and each event is still settled
 * with its caller by what its selection sent upstream.
 *
 * Transports: SSE (a POST asking for `text/event-stream` to the served port) and WebSocket
 * (graphql-ws frames), real sockets both; the simulator's clock is driven, so that the blocks a
 * poll finds are the test's to choose. The bound on an event's execution is tested on a bare
 * Yoga with the plugin and a resolver that outlives its deadline, over SSE through `yoga.fetch`:
 * the gateway has no such resolver to send an operation to (its upstream calls end at the
 * deadline, so its events complete with partial data before the bound).
 */
import { createSchema, createYoga } from "graphql-yoga";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useEventExecution } from "../src/plugins/event-execution.ts";
import { newDocumentCost } from "../src/limits/request-costs.ts";
import type { ListNativeTransactionsResponse } from "../src/upstream/types.ts";
import { simulatorGet, startHarness, until, upstreamCalls, type Harness } from "./support/harness.ts";
import type { SseEvent } from "./support/subscriptions.ts";
import { over, type TransportClient } from "./support/transports.ts";

const TIMEOUT_MS = 1_000;
const BURST = 1_000;
const C_CHAIN = "43114";
const BLOCKS_ROUTE = "GET /v1/chains/{chainId}/blocks";
const BLOCK_TRANSACTIONS_ROUTE = "GET /v1/chains/{chainId}/blocks/{blockId}/transactions";
const CHAINS_ROUTE = "GET /v1/chains";
/** Two links: the chain (from the chain list the gateway holds) and a page of the block's transactions (an upstream call each). */
const NEW_BLOCKS = `subscription {
  newBlocks(chainId: "${C_CHAIN}") { blockNumber blockHash txCount chain { chainId } transactions(first: 3) { nodes { txHash } } }
}`;
const CALLER = { "x-forwarded-for": "198.51.100.26" };

interface Block {
  blockNumber: string;
  blockHash: string;
  txCount: number;
  chain: { chainId: string } | null;
  transactions: { nodes: { txHash: string }[] } | null;
}

interface Payload {
  data?: { newBlocks: Block | null } | null;
  errors?: { message: string; extensions: Record<string, unknown> }[];
}

/** What the bare Yoga's resolvers read of their context: the deadline. */
interface TickContext {
  call: { deadline: number };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function payloadOf(event: SseEvent | undefined): Payload {
  expect(event?.event).toBe("next");
  return JSON.parse(event!.data) as Payload;
}

describe.each(["sse", "websocket"] as const)("each event of a subscription is its own execution, over %s", (transport) => {
  let harness: Harness;
  let client: TransportClient;
  beforeAll(async () => {
    harness = await startHarness({
      REQUEST_TIMEOUT_MS: String(TIMEOUT_MS),
      LIVE_BLOCKS_POLL_MS: "100",
      LIVE_BLOCKS_MAX_POLL_MS: "100",
      TRUST_PROXY: "true",
      RATE_LIMIT_RATE: "0.001",
      RATE_LIMIT_BURST: String(BURST),
    });
    client = over(transport, harness);
    // The simulator builds a chain's transactions when first asked, which takes longer than a
    // deadline on a loaded machine: built before any event's deadline runs.
    await simulatorGet(harness, "data", `/v1/chains/${C_CHAIN}/blocks/${head()}/transactions?pageSize=3`);
    harness.simulator.resetCounters();
  });
  afterAll(async () => {
    await client.close();
    await harness.close();
  });

  function head(): bigint {
    return BigInt(harness.simulator.clock().heads.find((chain) => chain.chainId === C_CHAIN)!.blockNumber);
  }

  it("resolves every event's links long after the opening request's deadline, each call counted and paid for", async () => {
    const started = Date.now();
    const stream = await client.subscribe({ query: NEW_BLOCKS }, CALLER);
    const events: Payload[] = [];
    const numbers: string[] = [];
    try {
      await until(() => (upstreamCalls(harness)[BLOCKS_ROUTE] ?? 0) >= 1, "the poller's first read");
      for (let round = 0; round < 4; round += 1) {
        // Past the deadline of the request that opened the stream, and of every event before.
        await sleep(TIMEOUT_MS + 200);
        const before = head();
        harness.simulator.advanceClock(6);
        for (let number = before + 1n; number <= head(); number += 1n) {
          events.push(payloadOf(await stream.next()));
          numbers.push(String(number));
        }
      }
      expect(Date.now() - started).toBeGreaterThan(3 * TIMEOUT_MS);
      // Leaves just after a read, 100 ms before the next: every read sent was charged.
      const readsBefore = upstreamCalls(harness)[BLOCKS_ROUTE]!;
      await until(() => upstreamCalls(harness)[BLOCKS_ROUTE]! > readsBefore, "the next poll");
    } finally {
      await stream.cancel();
    }
    await until(() => harness.gateway.liveCounts().pollers === 0, "the poller to stop");

    const failed = events.flatMap((event, index) => (event.errors ?? []).map((error) => `event ${index}: ${error.message}`));
    expect(failed).toEqual([]);
    const blocks = events.map((event) => event.data!.newBlocks!);
    expect(blocks.map((block) => block.blockNumber)).toEqual(numbers);
    expect(blocks.length).toBeGreaterThanOrEqual(8);
    for (const block of blocks) expect(block.chain).toEqual({ chainId: C_CHAIN });

    // One call for the chain list (the subscription's estimate, whose look-up the chain links
    // share) and one for each block's page of transactions, whichever event it came in.
    const { [BLOCKS_ROUTE]: reads = 0, ...selections } = upstreamCalls(harness);
    const withTransactions = blocks.filter((block) => block.txCount > 0).length;
    expect(withTransactions).toBeGreaterThan(5);
    expect(selections).toEqual({ [CHAINS_ROUTE]: 1, [BLOCK_TRANSACTIONS_ROUTE]: withTransactions });

    // Each event was settled by what its selection sent, beyond the subscription's estimate
    // (its first read, its chain and one page: less than what was sent); each read after the
    // first cost 1, a socket's opening 1 and the follow-up 1; each document, new to this
    // gateway, its reading (NEW_DOCUMENT_COST).
    const fetched = 1 + withTransactions;
    const opening = transport === "websocket" ? 1 : 0;
    const followUp = await client.send({ query: "{ __typename }" }, CALLER);
    expect(followUp.refused).toBe(false);
    const reading = newDocumentCost(NEW_BLOCKS) + newDocumentCost("{ __typename }");
    expect(followUp.remaining).toBe(BURST - opening - fetched - (reads - 1) - 1 - reading);

    // Every page is the simulator's own answer for the block.
    for (const block of blocks) {
      const page = await simulatorGet<ListNativeTransactionsResponse>(
        harness,
        "data",
        `/v1/chains/${C_CHAIN}/blocks/${block.blockHash}/transactions?pageSize=3`,
      );
      expect(block.transactions).toEqual({ nodes: page.transactions.map(({ txHash }) => ({ txHash })) });
    }
  });
});

describe("an event that outlives its deadline (a bare Yoga with the plugin)", () => {
  it("is sent as data: null and one TIMEOUT error, and the next event executes with a deadline of its own", async () => {
    let slowFinished = 0;
    const schema = createSchema<TickContext>({
      typeDefs: "type Query { ok: Boolean } type Subscription { tick: Tick } type Tick { n: Int, late: Boolean }",
      resolvers: {
        Subscription: {
          tick: {
            subscribe: async function* () {
              yield { n: 1 };
              yield { n: 2 };
            },
            resolve: (tick: { n: number }) => tick,
          },
        },
        Tick: {
          // The first event outlives its deadline; the second says whether its own has passed.
          late: async (tick: { n: number }, _args: unknown, context: TickContext) => {
            if (tick.n === 1) {
              await sleep(1_000);
              slowFinished += 1;
            }
            return Date.now() > context.call.deadline;
          },
        },
      },
    });
    const contexts: number[] = [];
    const yoga = createYoga({
      schema,
      logging: false,
      context: () => ({ call: { deadline: Date.now() - 60_000 } }),
      plugins: [
        useEventExecution<TickContext>({
          timeoutMs: 200,
          contextFor: (parent, deadline) => {
            contexts.push(deadline);
            return { ...parent, call: { ...parent.call, deadline } };
          },
        }),
      ],
    });
    const response = await yoga.fetch("http://gateway.test/graphql", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ query: "subscription { tick { n late } }" }),
    });
    const events = (await response.text())
      .split("\n\n")
      .filter((block) => block.startsWith("event: next"))
      .map((block) => JSON.parse(block.slice(block.indexOf("data:") + 5)) as Payload);
    expect(events).toEqual([
      {
        data: null,
        errors: [
          {
            message: "This event took longer than REQUEST_TIMEOUT_MS (200 ms) and was cut short",
            extensions: { code: "TIMEOUT", timeoutMs: 200 },
          },
        ],
      },
      { data: { tick: { n: 2, late: false } } },
    ]);
    // Two executions, each with its own deadline; the stream went on while the first still ran.
    expect(contexts).toHaveLength(2);
    expect(contexts[1]!).toBeGreaterThan(contexts[0]!);
    expect(slowFinished).toBe(0);
  });
});
