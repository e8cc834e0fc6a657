/**
 * A browser's native EventSource: a GET asking for `text/event-stream`, its operation in the query
 * string, and no header of its own. With CSRF prevention on (the default), a subscription so sent
 * streams; anything else so sent is refused as every GET without a preflight header is (400
 * BAD_REQUEST), and nothing runs. Sent over a real socket to the served gateway, with the headers
 * a browser's EventSource sends.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ListEvmBlocksResponse } from "../src/upstream/types.ts";
import { serveGateway, simulatorGet, startHarness, upstreamCalls, type Harness, type ServedGateway } from "./support/harness.ts";
import { readEventStream } from "./support/subscriptions.ts";

const NEW_BLOCKS = `subscription NewBlocks($chainId: ID!, $after: BigInt) { newBlocks(chainId: $chainId, afterBlock: $after) { blockNumber } }`;
const EXPORT = `mutation { exportTransactions(input: { primaryNetwork: { includeChains: ["p-chain"] } }) { operationId } }`;
const C_CHAIN = "43114";
/** What a browser's EventSource sends, and nothing more. */
const EVENT_SOURCE_HEADERS = { accept: "text/event-stream", "cache-control": "no-cache" };

/** A gateway over the simulator, served on a loopback port; the poll interval longer than any test. */
async function servedGateway(env: Record<string, string> = {}): Promise<{ harness: Harness; served: ServedGateway }> {
  const harness = await startHarness({ LIVE_BLOCKS_POLL_MS: "600000", LIVE_BLOCKS_MAX_POLL_MS: "600000", ...env });
  return { harness, served: await serveGateway(harness) };
}

function getOf(served: ServedGateway, params: Record<string, string>, headers: Record<string, string> = EVENT_SOURCE_HEADERS) {
  return fetch(`http://127.0.0.1:${served.port}/graphql?${new URLSearchParams(params)}`, { headers });
}

/** The variables that resume `newBlocks` two blocks before the head: two events come at once. */
async function twoBlocksBack(harness: Harness): Promise<{ variables: string; expected: string[] }> {
  const newest = await simulatorGet<ListEvmBlocksResponse>(harness, "data", `/v1/chains/${C_CHAIN}/blocks?pageSize=1`);
  const head = BigInt(newest.blocks[0]!.blockNumber);
  return {
    variables: JSON.stringify({ chainId: C_CHAIN, after: String(head - 2n) }),
    expected: [String(head - 1n), String(head)],
  };
}

async function blockNumbers(response: Response, count: number): Promise<string[]> {
  const stream = await readEventStream(response);
  try {
    expect(stream.refusal).toBeUndefined();
    const numbers: string[] = [];
    for (let index = 0; index < count; index += 1) {
      const event = await stream.next();
      expect(event?.event).toBe("next");
      numbers.push((JSON.parse(event!.data) as { data: { newBlocks: { blockNumber: string } } }).data.newBlocks.blockNumber);
    }
    return numbers;
  } finally {
    await stream.cancel();
  }
}

async function expectCsrfRefusal(response: Response): Promise<void> {
  expect(response.status).toBe(400);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  const body = (await response.json()) as { data?: unknown; errors: { message: string; extensions: { code: string } }[] };
  expect(body.data).toBeUndefined();
  expect(body.errors[0]!.extensions.code).toBe("BAD_REQUEST");
  expect(body.errors[0]!.message).toMatch(/CSRF/);
}

describe("a native EventSource's GET, with CSRF prevention on", () => {
  let harness: Harness;
  let served: ServedGateway;
  beforeAll(async () => {
    ({ harness, served } = await servedGateway());
  });
  afterAll(async () => {
    await served.close();
    await harness.close();
  });

  it("subscribes to newBlocks without a preflight header, and reads its events; it paid as any request", async () => {
    const { variables, expected } = await twoBlocksBack(harness);
    const response = await getOf(served, { query: NEW_BLOCKS, variables });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(Number(response.headers.get("ratelimit-remaining"))).toBeLessThan(Number(response.headers.get("ratelimit-limit")));
    expect(await blockNumbers(response, 2)).toEqual(expected);
  });

  it("refuses a mutation so sent with the CSRF refusal, 400 BAD_REQUEST; with the header a GET mutation is still 405", async () => {
    harness.simulator.resetCounters();
    await expectCsrfRefusal(await getOf(served, { query: EXPORT }));
    const withHeader = await getOf(served, { query: EXPORT }, { ...EVENT_SOURCE_HEADERS, "x-graphql-yoga-csrf": "1" });
    expect(withHeader.status).toBe(405);
    expect(((await withHeader.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe(
      "BAD_REQUEST",
    );
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("refuses a query without the header, asking for an event stream or for JSON, as before", async () => {
    harness.simulator.resetCounters();
    const query = `{ chain(id: "${C_CHAIN}") { chainName } }`;
    await expectCsrfRefusal(await getOf(served, { query }));
    await expectCsrfRefusal(await getOf(served, { query }, { accept: "application/json" }));
    // A subscription asking for JSON is no EventSource: the header is asked for.
    await expectCsrfRefusal(await getOf(served, { query: NEW_BLOCKS }, { accept: "application/json" }));
    // Nor does a document that names no single operation pass, nor one that does not parse.
    await expectCsrfRefusal(await getOf(served, { query: `${NEW_BLOCKS} query Other { __typename }` }));
    await expectCsrfRefusal(await getOf(served, { query: "subscription {" }));
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("meets the limits as any request: a subscription over MAX_QUERY_DEPTH is refused with its code", async () => {
    // 18 levels, beyond the default 15.
    const deep = `subscription { newBlocks(chainId: "${C_CHAIN}") { ${"parent { ".repeat(16)}blockHash${" }".repeat(16)} } }`;
    const response = await getOf(served, { query: deep });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { errors: { extensions: { code: string; limit?: string } }[] };
    expect(body.errors[0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", limit: "depth" });
  });
});

describe("a native EventSource's GET, with PERSISTED_OPERATIONS_ONLY", () => {
  let harness: Harness;
  let served: ServedGateway;
  const hash = createHash("sha256").update(NEW_BLOCKS).digest("hex");
  beforeAll(async () => {
    const file = join(mkdtempSync(join(tmpdir(), "persisted-")), "documents.json");
    writeFileSync(file, JSON.stringify({ [`sha256:${hash}`]: NEW_BLOCKS }));
    ({ harness, served } = await servedGateway({ PERSISTED_OPERATIONS_FILE: file, PERSISTED_OPERATIONS_ONLY: "true" }));
  });
  afterAll(async () => {
    await served.close();
    await harness.close();
  });

  it("streams a subscription named by documentId, and refuses one sent as text with 400 PERSISTED_QUERY_ONLY", async () => {
    const { variables, expected } = await twoBlocksBack(harness);
    expect(await blockNumbers(await getOf(served, { documentId: `sha256:${hash}`, variables }), 2)).toEqual(expected);
    const asText = await getOf(served, { query: NEW_BLOCKS, variables });
    expect(asText.status).toBe(400);
    const body = (await asText.json()) as { errors: { extensions: { code: string } }[] };
    expect(body.errors[0]!.extensions.code).toBe("PERSISTED_QUERY_ONLY");
  });
});
