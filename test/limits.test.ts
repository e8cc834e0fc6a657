import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execute, serveGateway, upstreamCalls, useHarness, startHarness } from "./support/harness.ts";

const harness = useHarness({
  env: {
    MAX_QUERY_COST: "50",
    MAX_QUERY_DEPTH: "6",
    MAX_QUERY_ALIASES: "5",
    MAX_QUERY_TOKENS: "400",
    MAX_QUERY_DIRECTIVES: "3",
    MAX_BODY_BYTES: "20000",
  },
  clearCache: false,
});

async function refused(query: string, variables: Record<string, unknown> = {}) {
  const result = await execute(harness, query, variables);
  expect(result.body.errors?.length).toBeGreaterThan(0);
  expect(upstreamCalls(harness)).toEqual({});
  return result.body.errors![0]!;
}

describe("operation limits, before any upstream call", () => {
  it("cost is the estimated upstream calls: a connection multiplies the calls under it by first", async () => {
    // The page of blocks, and a page of transactions per block: 21 calls.
    const fits = await execute(
      harness,
      `{ latestBlocks(first: 20) { nodes { blockNumber transactions(first: 1) { nodes { txHash } } } } }`,
    );
    expect(fits.body.errors).toBeUndefined();
    harness.simulator.resetCounters();
    const error = await refused(
      `{ latestBlocks(first: 100) { nodes { blockNumber transactions(first: 1) { nodes { txHash } } } } }`,
    );
    expect(error.message).toMatch(/estimated 101 upstream calls, over the limit of 50 \(MAX_QUERY_COST\)/);
    expect(error.extensions).toEqual({ code: "BAD_USER_INPUT", limit: "cost", max: 50, actual: 101 });
    // A wide selection of fields that call nothing costs the 1 call of its page, however many items.
    const wide = await execute(
      harness,
      `{ latestBlocks(first: 100) { nodes { blockHash txCount gasUsed chain { chainName } } } }`,
    );
    expect(wide.body.errors).toBeUndefined();
  });

  it("measures the operation that runs, with its variables", async () => {
    const document = /* GraphQL */ `
      query Few($first: Int!) {
        latestBlocks(first: $first) {
          nodes {
            transactions(first: 1) {
              nodes {
                txHash
              }
            }
          }
        }
      }
      query Many {
        latestBlocks(first: 100) {
          nodes {
            transactions(first: 1) {
              nodes {
                txHash
              }
            }
          }
        }
      }
    `;
    const few = await execute(harness, document, { first: 5 }, {}, "Few");
    expect(few.body.errors).toBeUndefined();
    expect(few.body.data).toMatchObject({ latestBlocks: { nodes: expect.any(Array) } });
    harness.simulator.resetCounters();
    const many = await execute(harness, document, {}, {}, "Many");
    expect(many.status).toBe(400);
    expect(many.body.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", limit: "cost", max: 50, actual: 101 });
    expect(upstreamCalls(harness)).toEqual({});
    // The same document again, with a `first` that costs more than the limit allows.
    const tooMany = await execute(harness, document, { first: 1000 }, {}, "Few");
    expect(tooMany.body.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", limit: "cost", actual: 1001 });
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("holds a subscription to the same limits", async () => {
    const strict = await startHarness({ MAX_QUERY_COST: "1" });
    try {
      // Its first read: the address's latest transactions, and the parent of their block (2 calls).
      const query = `subscription { newAddressTransactions(chainId: "43114", address: "0x0000000000000000000000000000000000000001") { transaction { block { parent { blockHash } } } } }`;
      const response = await strict.gateway.yoga.fetch("http://gateway.test/graphql", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify({ query }),
      });
      const text = await response.text();
      expect(text).toContain('"code":"BAD_USER_INPUT"');
      expect(text).toContain('"limit":"cost"');
      expect(upstreamCalls(strict)).toEqual({});
    } finally {
      await strict.close();
    }
  });

  it("depth", async () => {
    const error = await refused(
      `{ chain(id: "43114") { block(id: "9") { parent { parent { parent { parent { blockHash } } } } } } }`,
    );
    expect(error.extensions).toMatchObject({ code: "BAD_USER_INPUT", limit: "depth", max: 6 });
  });

  it("aliases", async () => {
    const aliases = Array.from({ length: 6 }, (_, index) => `a${index}: chain(id: "43114") { chainName }`).join(" ");
    const error = await refused(`{ ${aliases} }`);
    expect(error.message).toMatch(/Aliases limit of 5 exceeded, found 6/);
  });

  it("tokens", async () => {
    const fields = Array.from({ length: 450 }, () => "__typename").join(" ");
    const error = await refused(`{ ${fields} }`);
    expect(error.message).toMatch(/Token limit of 400 exceeded/);
  });

  it("directives", async () => {
    const error = await refused(`{ __typename @skip(if: false) @skip(if: false) @skip(if: false) @skip(if: false) }`);
    expect(error.message).toMatch(/Directives limit of 3 exceeded, found 4/);
  });

  it("a body over the limit is refused with 413", async () => {
    const response = await harness.gateway.yoga.fetch("http://gateway.test/graphql", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: `{ __typename }`, variables: { padding: "x".repeat(30_000) } }),
    });
    expect(response.status).toBe(413);
    expect(upstreamCalls(harness)).toEqual({});
  });
});

describe("bodies over HTTP (the Node listener reads and parses JSON bodies ahead)", () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer(harness.gateway.listener);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  /** A raw HTTP/1.1 exchange, so that the request is exactly what the test says (no client fix-ups). */
  function raw(head: string, body: string): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const socket = connect((server.address() as AddressInfo).port, "127.0.0.1", () => socket.end(head + body));
      let received = "";
      socket.on("data", (chunk) => (received += chunk.toString()));
      socket.on("end", () => resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(received)?.[1]), text: received }));
      socket.on("error", reject);
    });
  }

  async function post(body: string, contentType = "application/json") {
    const response = await fetch(`${base}/graphql`, { method: "POST", headers: { "content-type": contentType }, body });
    return { status: response.status, body: (await response.json()) as { data?: unknown; errors?: { message: string }[] } };
  }

  it("runs an operation", async () => {
    const result = await post(JSON.stringify({ query: "{ __typename }" }));
    expect(result).toEqual({ status: 200, body: { data: { __typename: "Query" } } });
  });

  it.each([
    ["malformed JSON", "{ not json", "application/json"],
    ["an empty object", "{}", "application/json"],
    ["a JSON number", "42", "application/json"],
    ["a JSON array", "[]", "application/json"],
    ["a GraphQL document", "query { __typename }", "application/graphql"],
    ["plain text", "{ __typename }", "text/plain"],
  ])("answers %s exactly as Yoga itself does", async (_, body, contentType) => {
    const overHttp = await fetch(`${base}/graphql`, { method: "POST", headers: { "content-type": contentType }, body });
    const direct = await harness.gateway.yoga.fetch("http://gateway.test/graphql", {
      method: "POST",
      headers: { "content-type": contentType },
      body,
    });
    expect(overHttp.status).toBe(direct.status);
    expect(await overHttp.text()).toBe(await direct.text());
  });

  it("refuses a body over the limit with 413 and a chunked body without a length with 411, reading neither", async () => {
    const over = await post(JSON.stringify({ query: "{ __typename }", variables: { padding: "x".repeat(30_000) } }));
    expect(over.status).toBe(413);
    const chunk = JSON.stringify({ query: "{ __typename }" });
    const chunked = await raw(
      "POST /graphql HTTP/1.1\r\nhost: gateway\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
      `${chunk.length.toString(16)}\r\n${chunk}\r\n0\r\n\r\n`,
    );
    expect(chunked.status).toBe(411);
    expect(upstreamCalls(harness)).toEqual({});
  });
});

describe("CSRF prevention", () => {
  it("refuses a GET operation without a preflight header, and accepts it with one", async () => {
    const url = `http://gateway.test/graphql?query=${encodeURIComponent("{ __typename }")}`;
    const simple = await harness.gateway.yoga.fetch(url, { headers: { accept: "application/json" } });
    expect(simple.status).toBe(400);
    expect(((await simple.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe(
      "BAD_REQUEST",
    );
    const preflighted = await harness.gateway.yoga.fetch(url, {
      headers: { accept: "application/json", "x-graphql-yoga-csrf": "1" },
    });
    expect(preflighted.status).toBe(200);
  });
});

describe("production switches", () => {
  it("INTROSPECTION=false refuses introspection", async () => {
    const closed = await startHarness({ INTROSPECTION: "false" });
    try {
      const result = await execute(closed, `{ __schema { types { name } } }`);
      expect(result.body.errors?.[0]?.message).toMatch(/introspection/i);
      const ordinary = await execute(closed, `{ chain(id: "43114") { chainName } }`);
      expect(ordinary.body.errors).toBeUndefined();
    } finally {
      await closed.close();
    }
  });

  it("INTROSPECTION=false refuses an introspection document every time, over HTTP, while a validated query is run by the lane", async () => {
    const closed = await startHarness({ INTROSPECTION: "false" });
    const served = await serveGateway(closed);
    const post = async (query: string) => {
      const response = await fetch(`http://127.0.0.1:${served.port}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query }),
      });
      return (await response.json()) as { data?: unknown; errors?: { message: string }[] };
    };
    const executedByLane = async () => {
      const text = await (await closed.gateway.yoga.fetch("http://gateway.test/metrics")).text();
      return Number(/gateway_operation_lane_requests_total\{outcome="executed"\} (\d+)/.exec(text)?.[1] ?? 0);
    };
    try {
      // Validated once, then its validation is answered from what was kept: refused each time.
      for (let round = 0; round < 3; round += 1) {
        const refused = await post(`{ __schema { queryType { name } } }`);
        expect(refused.data).toBeUndefined();
        expect(refused.errors?.[0]?.message).toMatch(/introspection/i);
      }
      const ordinary = `{ chain(id: "43114") { chainName } }`;
      expect((await post(ordinary)).errors).toBeUndefined();
      const before = await executedByLane();
      expect((await post(ordinary)).data).toEqual({ chain: { chainName: expect.any(String) } });
      expect(await executedByLane()).toBe(before + 1);
      // The refused document never runs in the lane, however often it comes.
      expect((await post(`{ __schema { queryType { name } } }`)).errors?.[0]?.message).toMatch(/introspection/i);
      expect(await executedByLane()).toBe(before + 1);
    } finally {
      await served.close();
      await closed.close();
    }
  });

  it("PERSISTED_OPERATIONS_ONLY runs the known documents and nothing else", async () => {
    const document = `query ChainName { chain(id: "43114") { chainName } }`;
    const hash = createHash("sha256").update(document).digest("hex");
    const file = join(mkdtempSync(join(tmpdir(), "persisted-")), "operations.json");
    writeFileSync(file, JSON.stringify({ [hash]: document }));
    const locked = await startHarness({ PERSISTED_OPERATIONS_FILE: file, PERSISTED_OPERATIONS_ONLY: "true" });
    try {
      const post = (body: unknown) =>
        locked.gateway.yoga.fetch("http://gateway.test/graphql", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      const known = (await (await post({ extensions: { persistedQuery: { version: 1, sha256Hash: hash } } })).json()) as {
        data: unknown;
      };
      expect(known.data).toEqual({ chain: { chainName: expect.any(String) } });
      const arbitrary = (await (await post({ query: document })).json()) as { errors: { extensions: { code: string } }[] };
      expect(arbitrary.errors[0]!.extensions.code).toBe("PERSISTED_QUERY_ONLY");
      const unknown = (await (
        await post({ extensions: { persistedQuery: { version: 1, sha256Hash: "0".repeat(64) } } })
      ).json()) as {
        errors: { extensions: { code: string } }[];
      };
      expect(unknown.errors[0]!.extensions.code).toBe("PERSISTED_QUERY_NOT_FOUND");
    } finally {
      await locked.close();
    }
  });
});
