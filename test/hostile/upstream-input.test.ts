/**
 * Row 5 (and row 2's forged ids and cursors): every value that goes into an upstream path or
 * query (global ids of every node type, export operation ids, cursors' page tokens) is checked
 * as strictly as the direct argument for the same thing, before any upstream call.
 *
 * Transports: the queries run over HTTP, WebSocket and SSE (a POST asking for
 * `text/event-stream` is another door a forged id can come through); the subscription over
 * WebSocket and SSE, the transports a subscription has (a JSON POST cannot carry one). The path
 * and query builders are tested without a transport.
 */
import { print } from "graphql";
import { describe, expect, it } from "vitest";
import { buildPath, buildQuery } from "../../src/upstream/request-target.ts";
import { WatchExportOperationDocument } from "../generated/graphql.ts";
import { upstreamCalls, useHarness } from "../support/harness.ts";
import { TRANSPORTS, useClient, type Operation, type Transport } from "../support/transports.ts";

const harness = useHarness();

const P_CHAIN = "11111111111111111111111111111111LpoYY";
const X_CHAIN = "2oYMBNV4eNHyqk2fjjV5nVQLDbtmNJzq5s3qs3Lo6ftnC6FByM";
const CB58_TX = "2wx1bZz5oNAzRprQi3bxMVv2PaajoqTWE4s3uibNb9yFH5xW4v";
const LONG = "A".repeat(17_000);

const globalId = (text: string) => Buffer.from(text).toString("base64");

/** Per node type: a key with dot segments, and a key of the wrong shape. */
const NODE_KEYS: Record<string, { dots: string; wrongShape: string }> = {
  EvmChain: { dots: "..", wrongShape: "not-a-chain" },
  EvmBlock: { dots: "..:..", wrongShape: "43114:0x12" },
  EvmTransaction: { dots: "43114:..", wrongShape: "43114:0x12" },
  ExportOperation: { dots: "..", wrongShape: "a/b?c" },
  PrimaryNetworkBlock: { dots: "mainnet:p-chain:..", wrongShape: "mainnet:p-chain:0xZZ" },
  XChainVertex: { dots: "mainnet:..", wrongShape: "mainnet:0x12" },
  PChainTransaction: { dots: `mainnet:${P_CHAIN}:..`, wrongShape: `mainnet:${X_CHAIN}:${CB58_TX}` },
  XChainTransaction: { dots: `mainnet:${X_CHAIN}:..`, wrongShape: `mainnet:${P_CHAIN}:${CB58_TX}` },
  CChainAtomicTransaction: { dots: "mainnet:c-chain:..", wrongShape: "mainnet:c-chain:0x12" },
  L1Validator: { dots: "mainnet:..", wrongShape: "mainnet:NodeID-abc" },
};

const NODE_QUERY = "query Refetch($id: ID!) { node(id: $id) { id } __typename }";

describe.each(TRANSPORTS)(
  "row 5: values that reach an upstream path are validated like direct arguments, over %s",
  (transport) => {
    const client = useClient(transport, () => harness);

    const send = (query: string, variables?: Record<string, unknown>) => client.send({ query, variables });

    async function expectRefusedNode(id: string) {
      const result = await send(NODE_QUERY, { id });
      expect(result.refused).toBe(false);
      if (result.status !== undefined) expect(result.status).toBe(200);
      // The sibling keeps its data; the refusal is on `node`, coded, naming the argument.
      expect(result.body.data).toEqual({ node: null, __typename: "Query" });
      expect(result.body.errors).toHaveLength(1);
      expect(result.body.errors![0]).toMatchObject({ path: ["node"], extensions: { code: "BAD_USER_INPUT", argument: "id" } });
      expect(result.body.errors![0]!.message.length).toBeLessThan(600);
      expect(upstreamCalls(harness)).toEqual({});
    }

    async function expectStillServing() {
      const result = await send("{ __typename }");
      expect(result.result).toEqual({ data: { __typename: "Query" } });
    }

    it.each(Object.entries(NODE_KEYS))(
      "row 5: node(id:) of type %s with dot segments, 17 kB or the wrong shape: 0 calls",
      async (typename, keys) => {
        await expectRefusedNode(globalId(`${typename}:${keys.dots}`));
        await expectRefusedNode(globalId(`${typename}:${LONG}`));
        await expectRefusedNode(globalId(`${typename}:${keys.wrongShape}`));
        await expectStillServing();
      },
    );

    it("row 5: node(id:) that is not base64, has no key, or names an unknown or non-Node type: 0 calls", async () => {
      for (const id of [
        "!!!",
        "",
        globalId("EvmChain"),
        globalId("EvmChain:"),
        globalId("Nope:43114"),
        globalId("PageInfo:x"),
        globalId("Query:x"),
      ]) {
        await expectRefusedNode(id);
      }
      await expectStillServing();
    });

    it("row 5: a well-formed global id still loads its record", async () => {
      const result = await send(NODE_QUERY, { id: globalId("EvmChain:43114") });
      expect(result.body.errors).toBeUndefined();
      expect(result.body.data!.node).toEqual({ id: globalId("EvmChain:43114") });
      // Chains load through the chain list.
      expect(upstreamCalls(harness)).toEqual({ "GET /v1/chains": 1 });
    });

    it("row 5: exportOperation(id:) with dot segments or 17 kB, as a query: 0 calls", async () => {
      for (const id of ["..", ".", LONG, "a/b"]) {
        const result = await send("query Op($id: ID!) { exportOperation(id: $id) { operationId } __typename }", { id });
        expect(result.body.data).toEqual({ exportOperation: null, __typename: "Query" });
        expect(result.body.errors![0]).toMatchObject({
          path: ["exportOperation"],
          extensions: { code: "BAD_USER_INPUT", argument: "id", maxLength: 128 },
        });
        expect(result.body.errors![0]!.message.length).toBeLessThan(400);
      }
      expect(upstreamCalls(harness)).toEqual({});
      await expectStillServing();
    });

    it("row 5: forged cursors (a 20 kB page token, not JSON, a token with spaces) are refused: 0 calls", async () => {
      const cursor = (body: unknown) => Buffer.from(JSON.stringify(body)).toString("base64url");
      const forged = [
        cursor([1, "x".repeat(20_000), 10, -1, null, "any"]),
        Buffer.from("not json at all").toString("base64url"),
        cursor([1, "a token with spaces", 10, -1, null, "any"]),
        "%%%",
      ];
      for (const after of forged) {
        const result = await send(
          "query Page($after: String) { latestBlocks(first: 2, after: $after) { edges { cursor } } __typename }",
          { after },
        );
        // The error stays on latestBlocks: its sibling keeps its data.
        expect(result.body.data).toEqual({ latestBlocks: null, __typename: "Query" });
        expect(result.body.errors![0]).toMatchObject({
          path: ["latestBlocks"],
          extensions: { code: "BAD_USER_INPUT", argument: "after" },
        });
        expect(result.body.errors![0]!.message.length).toBeLessThan(400);
      }
      expect(upstreamCalls(harness)).toEqual({});
      await expectStillServing();
    });

    it("row 5: a real cursor still pages on", async () => {
      const first = await send("{ latestBlocks(first: 2) { pageInfo { endCursor } } }");
      const { latestBlocks } = first.body.data as { latestBlocks: { pageInfo: { endCursor: string } } };
      const next = await send("query Page($after: String) { latestBlocks(first: 2, after: $after) { edges { cursor } } }", {
        after: latestBlocks.pageInfo.endCursor,
      });
      expect(next.body.errors).toBeUndefined();
      expect(upstreamCalls(harness)).toEqual({ "GET /v1/blocks": 2 });
    });
  },
);

describe.each(["websocket", "sse"] as const satisfies readonly Transport[])(
  "row 5: a subscription's id is validated like a query's, over %s",
  (transport) => {
    const client = useClient(transport, () => harness);

    it("row 5: exportOperation(id:) with dot segments or 17 kB, as a subscription: 0 calls", async () => {
      for (const id of ["..", LONG]) {
        const subscription: Operation = { query: print(WatchExportOperationDocument), variables: { id } };
        const answer = await client.send(subscription);
        // The refusal is in the stream's events, or in the `error` message of an operation refused before it ran.
        const errors = (answer.results.length > 0 ? answer.results : [answer.body]).flatMap((result) => result.errors ?? []);
        expect(errors).toHaveLength(1);
        expect(errors[0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "id" });
      }
      expect(upstreamCalls(harness)).toEqual({});
      const served = await client.send({ query: "{ __typename }" });
      expect(served.result).toEqual({ data: { __typename: "Query" } });
    });
  },
);

describe("row 5: the builders of upstream paths and queries", () => {
  it("row 5: the path builder refuses dot segments, empty and over-long values; the query builder over-long or odd page tokens", () => {
    for (const value of [".", "..", "", "x".repeat(257)]) {
      expect(() => buildPath("/v1/chains/{chainId}", { chainId: value })).toThrow(
        expect.objectContaining({ code: "BAD_USER_INPUT" }),
      );
    }
    expect(buildPath("/v1/chains/{chainId}", { chainId: "..." })).toBe("/v1/chains/...");
    for (const pageToken of ["x".repeat(1025), "a b", "line\nbreak"]) {
      expect(() => buildQuery({ pageSize: 10, pageToken })).toThrow(expect.objectContaining({ code: "BAD_USER_INPUT" }));
    }
    expect(buildQuery({ pageSize: 10, pageToken: "eyJvZmZzZXQiOjEwfQ" })).toBe("?pageSize=10&pageToken=eyJvZmZzZXQiOjEwfQ");
  });
});
