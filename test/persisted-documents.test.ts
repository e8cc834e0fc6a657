/**
 * Persisted documents named by `documentId` (the GraphQL-over-HTTP convention, as Relay and
 * gql.tada send them) beside Apollo's hash form, over every transport: HTTP (a JSON POST, and a
 * GET's query string), WebSocket (a `subscribe` whose payload names its document and sends no
 * query) and SSE (a POST asking for `text/event-stream`). Each transport answers and refuses alike:
 * the same data, the same codes, and the same statuses where it has them (a socket's `error`
 * message has none).
 */
import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ListEvmBlocksResponse } from "../src/upstream/types.ts";
import { simulatorGet, startHarness, upstreamCalls, type Harness } from "./support/harness.ts";
import { over, TRANSPORTS, type Answer, type Operation, type TransportClient } from "./support/transports.ts";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

// Stored under the prefixed id, as gql.tada writes its manifest.
const CHAIN_NAME = `query ChainName($id: ID!) { chain(id: $id) { chainName } }`;
// Stored under the bare hash, as Apollo's manifests and the existing store files do.
const CHAIN_IDS = `query ChainIds { chains { chainId } }`;
// A larger document: reading it as text costs its tokens, named by id it costs nothing to read.
const WIDE = `query Wide { ${Array.from({ length: 20 }, (_, i) => `c${i}: chain(id: "43114") { chainName chainId }`).join(" ")} }`;
const NEW_BLOCKS = `subscription NewBlocks($chainId: ID!, $after: BigInt) { newBlocks(chainId: $chainId, afterBlock: $after) { blockNumber } }`;
const C_CHAIN = "43114";

function documentsFile(): string {
  const file = join(mkdtempSync(join(tmpdir(), "persisted-")), "documents.json");
  const documents = {
    [`sha256:${sha256(CHAIN_NAME)}`]: CHAIN_NAME,
    [sha256(CHAIN_IDS)]: CHAIN_IDS,
    [sha256(WIDE)]: WIDE,
    [`sha256:${sha256(NEW_BLOCKS)}`]: NEW_BLOCKS,
  };
  writeFileSync(file, JSON.stringify(documents));
  return file;
}

/** A gateway over the simulator with the documents file, and more `env`; the poll interval longer than any test. */
function persistedGateway(env: Record<string, string> = {}): Promise<Harness> {
  return startHarness({
    PERSISTED_OPERATIONS_FILE: documentsFile(),
    LIVE_BLOCKS_POLL_MS: "600000",
    LIVE_BLOCKS_MAX_POLL_MS: "600000",
    ...env,
  });
}

const apolloHash = (document: string) => ({ persistedQuery: { version: 1, sha256Hash: sha256(document) } });
const CHAIN_NAME_ANSWER = { data: { chain: { chainName: expect.any(String) } } };

/** Refused with `code`, and with `status` where the transport has one. */
function expectRefused(answer: Answer, code: string, status: number): void {
  expect(answer.refused).toBe(true);
  expect(answer.body.data).toBeUndefined();
  expect(answer.body.errors?.[0]?.extensions?.code).toBe(code);
  if (answer.transport !== "websocket") expect(answer.status).toBe(status);
}

/** The block numbers of the first `count` events of a `newBlocks` subscription named by `operation`. */
async function blocksStreamed(client: TransportClient, harness: Harness, operation: Operation, count: number) {
  const newest = await simulatorGet<ListEvmBlocksResponse>(harness, "data", `/v1/chains/${C_CHAIN}/blocks?pageSize=1`);
  const head = BigInt(newest.blocks[0]!.blockNumber);
  const stream = await client.subscribe({ ...operation, variables: { chainId: C_CHAIN, after: String(head - BigInt(count)) } });
  try {
    expect(await stream.refusal()).toBeUndefined();
    const numbers: string[] = [];
    for (let index = 0; index < count; index += 1) {
      const event = await stream.next();
      expect(event?.event).toBe("next");
      numbers.push((JSON.parse(event!.data) as { data: { newBlocks: { blockNumber: string } } }).data.newBlocks.blockNumber);
    }
    return { numbers, expected: Array.from({ length: count }, (_, index) => String(head - BigInt(count - 1 - index))) };
  } finally {
    await stream.cancel();
  }
}

describe.each(TRANSPORTS)("persisted documents, over %s", (transport) => {
  let harness: Harness;
  let client: TransportClient;
  beforeAll(async () => {
    // A refill too slow to matter between two requests: each request's charge shows in what remains.
    harness = await persistedGateway({ RATE_LIMIT_RATE: "0.001", RATE_LIMIT_BURST: "100000" });
    client = over(transport, harness);
  });
  afterAll(async () => {
    await client.close();
    await harness.close();
  });

  it("runs a document named by documentId, in either sha256 form", async () => {
    for (const documentId of [`sha256:${sha256(CHAIN_NAME)}`, sha256(CHAIN_NAME)]) {
      const result = await client.send({ documentId, variables: { id: C_CHAIN } });
      expect(result.refused).toBe(false);
      if (transport !== "websocket") expect(result.status).toBe(200);
      expect(result.result).toEqual(CHAIN_NAME_ANSWER);
    }
    const bare = await client.send({ documentId: `sha256:${sha256(CHAIN_IDS)}` });
    expect(bare.result.data).toEqual({ chains: expect.arrayContaining([{ chainId: C_CHAIN }]) });
  });

  it("runs Apollo's hash form, alone or beside its query", async () => {
    const alone = await client.send({ extensions: apolloHash(CHAIN_NAME), variables: { id: C_CHAIN } });
    expect(alone.result).toEqual(CHAIN_NAME_ANSWER);
    const beside = await client.send({ query: CHAIN_NAME, extensions: apolloHash(CHAIN_NAME), variables: { id: C_CHAIN } });
    expect(beside.result).toEqual(CHAIN_NAME_ANSWER);
  });

  it("refuses an unknown documentId with 404 PERSISTED_QUERY_NOT_FOUND, Apollo's unknown hash with 400, and asks nothing upstream", async () => {
    harness.simulator.resetCounters();
    expectRefused(await client.send({ documentId: `sha256:${"0".repeat(64)}` }), "PERSISTED_QUERY_NOT_FOUND", 404);
    expectRefused(await client.send({ documentId: "nothing-here" }), "PERSISTED_QUERY_NOT_FOUND", 404);
    // Apollo's form keeps the 400 of the gateway's other refusals.
    const hash = { persistedQuery: { version: 1, sha256Hash: "0".repeat(64) } };
    expectRefused(await client.send({ extensions: hash }), "PERSISTED_QUERY_NOT_FOUND", 400);
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("refuses an operation with neither a query nor a document's id as 400 BAD_REQUEST, and goes on serving", async () => {
    const nothing = await client.send({ variables: { id: C_CHAIN } });
    expectRefused(nothing, "BAD_REQUEST", 400);
    expect(nothing.body.errors?.[0]?.message).toMatch(/documentId/);
    // Over a socket, the same socket: the refusal did not close it.
    expect((await client.send({ documentId: sha256(CHAIN_NAME), variables: { id: C_CHAIN } })).result).toEqual(CHAIN_NAME_ANSWER);
  });

  it("charges a document named by id as an already parsed one: nothing for reading it", async () => {
    const charge = async (operation: Operation) => {
      const before = (await client.send({ query: "{ __typename }" })).remaining!;
      const result = await client.send(operation);
      expect(result.body.errors).toBeUndefined();
      return before - result.remaining!;
    };
    const byId = await charge({ documentId: sha256(WIDE) });
    const byIdAgain = await charge({ documentId: `sha256:${sha256(WIDE)}` });
    const byHash = await charge({ extensions: apolloHash(WIDE) });
    // The same operation as text the parse cache does not hold (one more space).
    const asText = await charge({ query: WIDE.replace("{", "{ ") });
    expect(byId).toBeGreaterThan(0);
    expect(byIdAgain).toBe(byId);
    expect(byHash).toBe(byId);
    expect(asText).toBeGreaterThan(byId);
  });

  it.skipIf(transport === "http" || transport === "http-socket")("streams a subscription named by documentId", async () => {
    const { numbers, expected } = await blocksStreamed(client, harness, { documentId: `sha256:${sha256(NEW_BLOCKS)}` }, 2);
    expect(numbers).toEqual(expected);
  });
});

describe.each(TRANSPORTS)("PERSISTED_OPERATIONS_ONLY, over %s", (transport) => {
  let harness: Harness;
  let client: TransportClient;
  beforeAll(async () => {
    harness = await persistedGateway({ PERSISTED_OPERATIONS_ONLY: "true" });
    client = over(transport, harness);
  });
  afterAll(async () => {
    await client.close();
    await harness.close();
  });

  it("runs a document named by documentId or Apollo's hash; refuses a query sent as text with 400 PERSISTED_QUERY_ONLY, even beside its hash", async () => {
    const variables = { id: C_CHAIN };
    expect((await client.send({ documentId: sha256(CHAIN_NAME), variables })).result).toEqual(CHAIN_NAME_ANSWER);
    expect((await client.send({ extensions: apolloHash(CHAIN_NAME), variables })).result).toEqual(CHAIN_NAME_ANSWER);
    harness.simulator.resetCounters();
    expectRefused(await client.send({ query: CHAIN_NAME, variables }), "PERSISTED_QUERY_ONLY", 400);
    expectRefused(
      await client.send({ query: CHAIN_NAME, extensions: apolloHash(CHAIN_NAME), variables }),
      "PERSISTED_QUERY_ONLY",
      400,
    );
    expectRefused(await client.send({ documentId: "nothing-here" }), "PERSISTED_QUERY_NOT_FOUND", 404);
    expect(upstreamCalls(harness)).toEqual({});
  });

  it.skipIf(transport === "http" || transport === "http-socket")(
    "streams a subscription named by documentId, and refuses one sent as text",
    async () => {
      const { numbers, expected } = await blocksStreamed(client, harness, { documentId: sha256(NEW_BLOCKS) }, 2);
      expect(numbers).toEqual(expected);
      const asText = await client.subscribe({ query: NEW_BLOCKS, variables: { chainId: C_CHAIN } });
      const refusal = await asText.refusal();
      expect(refusal?.errors[0]?.extensions?.code).toBe("PERSISTED_QUERY_ONLY");
      if (transport === "sse") expect(refusal?.status).toBe(400);
    },
  );
});

// A GET's query string is HTTP's own framing.
describe("persisted documents in a GET's query string (HTTP only)", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await persistedGateway();
  });
  afterAll(async () => {
    await harness.close();
  });
  // CSRF prevention asks a GET for a header a cross-site form cannot send.
  const get = async (params: Record<string, string>) => {
    const response = await harness.gateway.yoga.fetch(`http://gateway.test/graphql?${new URLSearchParams(params)}`, {
      headers: { accept: "application/json", "x-graphql-yoga-csrf": "1" },
    });
    return { status: response.status, body: (await response.json()) as Answer["body"] };
  };

  it("runs a query named by documentId, and refuses an unknown one with 404 PERSISTED_QUERY_NOT_FOUND", async () => {
    const known = await get({ documentId: `sha256:${sha256(CHAIN_NAME)}`, variables: JSON.stringify({ id: C_CHAIN }) });
    expect(known.status).toBe(200);
    expect(known.body).toEqual(CHAIN_NAME_ANSWER);
    const unknown = await get({ documentId: "nothing-here" });
    expect(unknown.status).toBe(404);
    expect(unknown.body.errors?.[0]?.extensions?.code).toBe("PERSISTED_QUERY_NOT_FOUND");
  });
});
