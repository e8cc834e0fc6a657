import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatBlocks, latestBlocks } from "../examples/explorer-home.ts";
import { formatBlock, watchNewBlocks, type NewBlock } from "../examples/new-blocks.ts";
import { simulatorGet, startHarness, until, type Harness, serveGateway } from "./support/harness.ts";

let harness: Harness;
let server: Server;
let endpoint: string;

beforeAll(async () => {
  harness = await startHarness();
  server = createServer(harness.gateway.yoga);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}/graphql`;
});
afterAll(async () => {
  server.close();
  await harness.close();
});

describe("the example client (examples/explorer-home.ts)", () => {
  it("reads two pages of the newest blocks over HTTP, in the simulator's order", async () => {
    const blocks = await latestBlocks(endpoint, 10, 2);
    const reference = await simulatorGet<{ blocks: { blockHash: string }[] }>(harness, "data", "/v1/blocks?pageSize=20");
    expect(blocks.map((block) => block.blockHash)).toEqual(reference.blocks.map((block) => block.blockHash));
    expect(blocks.every((block) => block.chain?.chainName)).toBe(true);
    const table = formatBlocks(blocks).split("\n");
    expect(table).toHaveLength(20);
    expect(table[0]).toContain(blocks[0]!.blockHash);
  });

  it("reports the gateway's errors with their codes", async () => {
    await expect(latestBlocks(endpoint, 500, 1)).rejects.toThrow(
      /BAD_USER_INPUT at latestBlocks: first must be between 0 and 100/,
    );
  });
});

describe("the live example client (examples/new-blocks.ts)", () => {
  it("prints a chain's blocks over a WebSocket, resuming after a block number", async () => {
    const served = await serveGateway(harness);
    const wsEndpoint = `ws://127.0.0.1:${served.port}/graphql`;
    const newest = await simulatorGet<{ blocks: { blockNumber: string; blockHash: string }[] }>(
      harness,
      "data",
      "/v1/chains/43114/blocks?pageSize=3",
    );
    const received: NewBlock[] = [];
    const watch = watchNewBlocks(wsEndpoint, "43114", (block) => received.push(block), { after: newest.blocks[2]!.blockNumber });
    try {
      await until(() => received.length >= 2, "two blocks over the WebSocket");
      expect(received.map((block) => block.blockHash)).toEqual([newest.blocks[1]!.blockHash, newest.blocks[0]!.blockHash]);
      expect(formatBlock(received[0]!)).toContain(newest.blocks[1]!.blockHash);
    } finally {
      await watch.stop();
      await served.close();
    }
  });
});
