import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ChainBlocksPageDocument, LatestBlocksWithChainAndParentDocument } from "./generated/graphql.ts";
import { execute, startHarness, upstreamCalls, type Harness } from "./helpers.ts";

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness();
});
afterAll(async () => {
  await harness.close();
});
beforeEach(() => {
  harness.simulator.resetCounters();
});

describe("connection arguments are checked before any upstream call", () => {
  const cases: { name: string; variables: Record<string, unknown>; argument: string; message: RegExp }[] = [
    { name: "first: 0", variables: { first: 0 }, argument: "first", message: /first must be between 1 and 100/ },
    { name: "first: 101", variables: { first: 101 }, argument: "first", message: /first must be between 1 and 100/ },
    { name: "first: -1", variables: { first: -1 }, argument: "first", message: /first must be between 1 and 100/ },
    { name: "last: 5", variables: { last: 5 }, argument: "last", message: /last is not supported/ },
    { name: "before", variables: { before: "x" }, argument: "before", message: /before is not supported/ },
    { name: "a malformed cursor", variables: { after: "not-a-cursor" }, argument: "after", message: /not a cursor/ },
    { name: "a forged cursor", variables: { after: Buffer.from("[1,null,500,3,null,\"x\"]").toString("base64url") }, argument: "after", message: /another list|not a cursor/ },
  ];

  for (const testCase of cases) {
    it(`${testCase.name} is a BAD_USER_INPUT naming ${testCase.argument}`, async () => {
      const result = await execute(harness, LatestBlocksWithChainAndParentDocument, testCase.variables);
      expect(result.status).toBe(200);
      expect(result.body.data).toBeNull();
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
    expect(result.body.errors![0]!.extensions).toMatchObject({ min: 1, max: 100 });
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
    expect(result.body.data!.latestBlocks.edges).toHaveLength(10);
  });
});
