import { getNamedType, isObjectType } from "graphql";
import { describe, expect, it } from "vitest";
import { schema } from "../src/schema.ts";
import { toPageTokenConnection } from "../src/execution/pagination.ts";
import { queryMinimum } from "../src/upstream/bounds.ts";
import { ChainBlocksPageDocument, LatestBlocksWithChainAndParentDocument } from "./generated/graphql.ts";
import { execute, upstreamCalls, useHarness } from "./support/harness.ts";

const harness = useHarness({ clearCache: false });

describe("connection arguments are checked before any upstream call", () => {
  const cases: { name: string; variables: Record<string, unknown>; argument: string; message: RegExp }[] = [
    { name: "first: 101", variables: { first: 101 }, argument: "first", message: /first must be between 0 and 100, got 101/ },
    { name: "first: -1", variables: { first: -1 }, argument: "first", message: /first must be between 0 and 100, got -1/ },
    { name: "last: 5", variables: { last: 5 }, argument: "last", message: /last is not supported/ },
    { name: "before", variables: { before: "x" }, argument: "before", message: /before is not supported/ },
    { name: "a malformed cursor", variables: { after: "not-a-cursor" }, argument: "after", message: /not a cursor/ },
    {
      name: "a forged cursor",
      variables: { after: Buffer.from('[1,null,500,3,null,"x"]').toString("base64url") },
      argument: "after",
      message: /another list|not a cursor/,
    },
  ];

  for (const testCase of cases) {
    it(`${testCase.name} is a BAD_USER_INPUT naming ${testCase.argument}`, async () => {
      const result = await execute(harness, LatestBlocksWithChainAndParentDocument, testCase.variables);
      expect(result.status).toBe(200);
      expect(result.body.data).toEqual({ latestBlocks: null });
      expect(result.body.errors).toHaveLength(1);
      const [error] = result.body.errors!;
      expect(error!.message).toMatch(testCase.message);
      expect(error!.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: testCase.argument });
      expect(error!.path).toEqual(["latestBlocks"]);
      expect(upstreamCalls(harness)).toEqual({});
    });
  }

  it("names the route's bounds in the error", async () => {
    const result = await execute(harness, LatestBlocksWithChainAndParentDocument, { first: 101 });
    expect(result.body.errors![0]!.extensions).toMatchObject({ min: 0, max: 100 });
  });

  it("refuses a cursor of one chain's blocks on another chain", async () => {
    const page = await execute(harness, ChainBlocksPageDocument, { chainId: "43114", first: 3 });
    const cursor = page.body.data!.chain!.blocks!.pageInfo.endCursor!;
    harness.simulator.resetCounters();
    const reused = await execute(harness, ChainBlocksPageDocument, { chainId: "43113", first: 3, after: cursor });
    expect(reused.body.data!.chain!.blocks).toBeNull();
    expect(reused.body.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "after" });
    expect(reused.body.errors![0]!.path).toEqual(["chain", "blocks"]);
    expect(upstreamCalls(harness)["GET /v1/chains/{chainId}/blocks"]).toBeUndefined();
  });

  it("uses the route's default page size when first is omitted", async () => {
    const result = await execute(harness, LatestBlocksWithChainAndParentDocument, {});
    expect(result.body.data!.latestBlocks!.edges).toHaveLength(10);
  });
});

describe("a cursor's written form", () => {
  // Cursors handed out before stay valid: each is the base64url of this JSON array, byte for byte.
  it("is [version, pageToken, pageSize, index, nodeKey, filterHash], the last edge of a page carrying the next page's token", async () => {
    const result = await execute(harness, LatestBlocksWithChainAndParentDocument, { first: 3 });
    const edges = result.body.data!.latestBlocks!.edges;
    const decoded = edges.map((edge) => JSON.parse(Buffer.from(edge.cursor, "base64url").toString("utf8")) as unknown[]);
    const filterHash = decoded[0]![5];
    expect(filterHash).toMatch(/^[\w-]{12}$/);
    expect(decoded.slice(0, 2)).toEqual([
      [1, null, 3, 0, `${edges[0]!.node.chainId}:${edges[0]!.node.blockHash}`, filterHash],
      [1, null, 3, 1, `${edges[1]!.node.chainId}:${edges[1]!.node.blockHash}`, filterHash],
    ]);
    expect(decoded[2]).toEqual([1, expect.any(String), 3, -1, null, filterHash]);
    for (const [index, edge] of edges.entries()) {
      expect(edge.cursor).toBe(Buffer.from(JSON.stringify(decoded[index])).toString("base64url"));
    }
    expect(result.body.data!.latestBlocks!.pageInfo.endCursor).toBe(edges[2]!.cursor);
  });
});

describe("a cursor's written form, for keys JSON must escape", () => {
  // Upstream ids are not ours: a quote, a backslash, a control character or text beyond ASCII in a
  // node key or page token must come out as JSON.stringify writes it, and read back.
  const keys = ["plain:0xab", 'quote"d', "back\\slash", "tab\tand\u2028", "caf\u00e9", "\u{1f409}", "0"];
  const nextPageToken = 'next"page\\1';
  const pages: Record<string, { items: string[]; nextPageToken?: string }> = {
    start: { items: keys, nextPageToken },
    [nextPageToken]: { items: ["after"] },
  };
  const connection = (after?: string) =>
    toPageTokenConnection(
      { first: keys.length, after },
      {
        bounds: { min: 1, max: 100, default: 10 },
        filters: { field: "test.escaped" },
        nodeKey: (key: string) => key,
        fetchPage: async ({ pageToken }) => pages[pageToken ?? "start"] ?? { items: [] },
      },
    );

  it("is JSON.stringify's text of the array, byte for byte, and resumes after its edge", async () => {
    const { edges } = await connection();
    const filterHash = (JSON.parse(Buffer.from(edges[0]!.cursor, "base64url").toString("utf8")) as unknown[])[5];
    for (const [index, edge] of edges.entries()) {
      const ends = index === keys.length - 1;
      const expected = ends
        ? [1, nextPageToken, keys.length, -1, null, filterHash]
        : [1, null, keys.length, index, keys[index], filterHash];
      expect(edge.cursor).toBe(Buffer.from(JSON.stringify(expected)).toString("base64url"));
    }
    const resumed = await connection(edges[2]!.cursor);
    expect(resumed.edges.map((edge) => edge.node)).toEqual([...keys.slice(3), "after"]);
    const next = await connection(edges.at(-1)!.cursor);
    expect(next.edges.map((edge) => edge.node)).toEqual(["after"]);
  });
});

describe("first: 0", () => {
  const PAGE = "{ edges { cursor node { __typename } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }";
  const ADDRESS = "0x1111111111111111111111111111111111111111";
  const PRIMARY_NETWORK_SUBNET = "11111111111111111111111111111111LpoYY";
  const vertexHeight = queryMinimum(
    "data",
    "/v1/networks/{network}/blockchains/{blockchainId}/vertices:listByHeight",
    "vertexHeight",
  );

  /** Every connection field, reached with valid arguments: `around` is the document without the connection. */
  const cases: Record<string, { around: string; field: string }> = {
    "Query.latestBlocks": { around: "{ %s }", field: "latestBlocks" },
    "Query.networkMetrics": { around: "{ %s }", field: "networkMetrics(scope: MAINNET, metric: TX_COUNT)" },
    "Query.subnetMetrics": {
      around: "{ %s }",
      field: `subnetMetrics(subnetId: "${PRIMARY_NETWORK_SUBNET}", metric: PER_SUBNET_DAILY_FEES_PAID)`,
    },
    "Query.validatorFeeMetrics": { around: "{ %s }", field: "validatorFeeMetrics(metric: TOTAL_CUMULATIVE_FEES_DAILY)" },
    "Query.btcbBridgedAddresses": { around: "{ %s }", field: `btcbBridgedAddresses(threshold: "0")` },
    "EvmChain.blocks": { around: `{ chain(id: "43114") { chainId %s } }`, field: "blocks" },
    "EvmChain.metrics": { around: `{ chain(id: "43114") { chainId %s } }`, field: "metrics(metric: TX_COUNT)" },
    "EvmChain.tokenHolders": {
      around: `{ chain(id: "43114") { chainId %s } }`,
      field: `tokenHolders(contract: "${ADDRESS}", threshold: "0")`,
    },
    "EvmChain.avgTps": { around: `{ chain(id: "43114") { chainId %s } }`, field: "avgTps" },
    "EvmAccount.transactions": {
      around: `{ chain(id: "43114") { address(address: "${ADDRESS}") { address %s } } }`,
      field: "transactions",
    },
    "EvmBlock.transactions": { around: `{ chain(id: "43114") { block(id: "1") { txCount %s } } }`, field: "transactions" },
    "PrimaryNetwork.l1Validators": { around: "{ primaryNetwork(network: FUJI) { %s } }", field: "l1Validators" },
    "L1Validator.subnetValidators": {
      around: "{ primaryNetwork(network: FUJI) { l1Validators(first: 1) { nodes { %s } } } }",
      field: "subnetValidators",
    },
    "L1Validator.transactions": {
      around: "{ primaryNetwork(network: FUJI) { l1Validators(first: 1) { nodes { %s } } } }",
      field: "transactions",
    },
    "Subnet.l1Validators": {
      around: "{ primaryNetwork(network: FUJI) { l1Validators(first: 1) { nodes { subnet { %s } } } } }",
      field: "l1Validators",
    },
    "Subnet.stakingMetrics": {
      around: "{ primaryNetwork(network: FUJI) { l1Validators(first: 1) { nodes { subnet { %s } } } } }",
      field: "stakingMetrics(metric: DELEGATOR_COUNT)",
    },
    "PrimaryNetwork.stakingMetrics": {
      around: "{ primaryNetwork(network: MAINNET) { %s } }",
      field: "stakingMetrics(metric: DELEGATOR_COUNT)",
    },
    "PChain.transactions": { around: "{ primaryNetwork(network: FUJI) { pChain { %s } } }", field: "transactions" },
    "PChain.utxos": {
      around: "{ primaryNetwork(network: FUJI) { pChain { %s } } }",
      field: `utxos(addresses: ["fuji1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq2nffjl"])`,
    },
    "XChain.transactions": { around: "{ primaryNetwork(network: FUJI) { xChain { %s } } }", field: "transactions" },
    "XChain.utxos": {
      around: "{ primaryNetwork(network: FUJI) { xChain { %s } } }",
      field: `utxos(addresses: ["fuji1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq2nffjl"])`,
    },
    "XChain.verticesAtHeight": {
      around: "{ primaryNetwork(network: FUJI) { xChain { %s } } }",
      field: `verticesAtHeight(height: ${vertexHeight})`,
    },
    "CChain.transactions": { around: "{ primaryNetwork(network: FUJI) { cChain { %s } } }", field: "transactions" },
    "CChain.utxos": {
      around: "{ primaryNetwork(network: FUJI) { cChain { %s } } }",
      field: `utxos(addresses: ["fuji1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq2nffjl"])`,
    },
  };

  it("has a case for every connection field of the schema", () => {
    const connections: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isObjectType(type) || type.name.startsWith("__")) continue;
      for (const field of Object.values(type.getFields())) {
        if (getNamedType(field.type).name.endsWith("Connection")) connections.push(`${type.name}.${field.name}`);
      }
    }
    expect(Object.keys(cases).sort()).toEqual(connections.sort());
  });

  /** The connection's value, wherever it sits in the answer. */
  function connectionIn(data: unknown): unknown {
    let value = data as Record<string, unknown>;
    while (value && typeof value === "object" && !("pageInfo" in value))
      value = Object.values(value).find((v) => v && typeof v === "object") as Record<string, unknown>;
    return value;
  }

  for (const [coordinate, { around, field }] of Object.entries(cases)) {
    it(`${coordinate}(first: 0) answers an empty page without an upstream call of its own`, async () => {
      const withFirst = field.includes("(") ? field.replace("(", "(first: 0, ") : `${field}(first: 0)`;
      const baseline = around.replace("%s", "__typename");
      harness.gateway.cache.clear();
      harness.simulator.resetCounters();
      const alone = await execute(harness, baseline);
      expect(alone.body.errors).toBeUndefined();
      const parentCalls = upstreamCalls(harness);

      harness.gateway.cache.clear();
      harness.simulator.resetCounters();
      const result = await execute(harness, around.replace("%s", `__typename ${withFirst} ${PAGE}`));
      expect(result.body.errors).toBeUndefined();
      expect(connectionIn(result.body.data)).toEqual({
        edges: [],
        pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null },
      });
      expect(upstreamCalls(harness)).toEqual(parentCalls);
    });
  }

  it("still checks a cursor given with first: 0", async () => {
    const result = await execute(harness, `{ latestBlocks(first: 0, after: "not-a-cursor") { edges { cursor } } }`);
    expect(result.body.data).toEqual({ latestBlocks: null });
    expect(result.body.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "after" });
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("makes no call with pageSize=0 for a block's transactions, and a later page still reads", async () => {
    const page = await execute(harness, `{ chain(id: "43114") { blocks(first: 5) { nodes { blockHash txCount } } } }`);
    const blocks = (page.body.data as { chain: { blocks: { nodes: { blockHash: string; txCount: number }[] } } }).chain.blocks
      .nodes;
    const block = blocks.find((node) => node.txCount > 0);
    expect(block).toBeDefined();
    harness.gateway.cache.clear();
    harness.simulator.resetCounters();
    const query = `{ chain(id: "43114") { block(id: "${block!.blockHash}") { none: transactions(first: 0) { pageInfo { hasNextPage } } some: transactions(first: 1) { edges { node { txHash } } } } } }`;
    const result = await execute(harness, query);
    expect(result.body.errors).toBeUndefined();
    expect(upstreamCalls(harness)["GET /v1/chains/{chainId}/blocks/{blockId}/transactions"]).toBe(1);
    const blockTransactionCalls = harness.simulator
      .requests()
      .filter((request) => request.route === "GET /v1/chains/{chainId}/blocks/{blockId}/transactions");
    expect(blockTransactionCalls.map((request) => request.query.pageSize)).toEqual(["1"]);
  });
});
