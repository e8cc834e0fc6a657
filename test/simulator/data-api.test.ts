import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { components } from "../../src/upstream/contract/data-api.ts";
import { startSimulator, type RunningSimulator } from "../../simulator/server.ts";
import { expectContract, getJson } from "./http.ts";
import type { ListEvmBlocksResponse } from "../../src/upstream/types.ts";

type ListChainsResponse = components["schemas"]["ListChainsResponse"];
type ErrorBody = components["schemas"]["BadRequest"];

const C_CHAIN_BLOCKCHAIN_ID = "2q9e4r6Mu3U68nU1fYjgbR6JvwrRx36CohpAX5UQxse55x1Q5";

let simulator: RunningSimulator;
let data: string;

beforeAll(async () => {
  simulator = await startSimulator({ dataPort: 0, metricsPort: 0 });
  data = simulator.dataUrl;
});

afterAll(() => simulator.close());

describe("Data API: health", () => {
  it.each(["/v1/health-check", "/v1/live-check"])("GET %s answers ok", async (path) => {
    const response = await getJson(`${data}${path}`);
    expectContract(response, "data", `GET ${path}`, 200);
    expect(response.body).toMatchObject({ status: "ok" });
  });
});

describe("Data API: chains", () => {
  it("lists every chain, filtered by network and feature", async () => {
    const all = await getJson(`${data}/v1/chains`);
    expectContract(all, "data", "GET /v1/chains", 200);
    expect((all.body as ListChainsResponse).chains).toHaveLength(simulator.network.chains.length);

    const mainnet = (await getJson(`${data}/v1/chains?network=mainnet`)).body as ListChainsResponse;
    expect(mainnet.chains.length).toBeGreaterThanOrEqual(3);
    expect(mainnet.chains.every((chain) => !chain.isTestnet)).toBe(true);

    const fuji = (await getJson(`${data}/v1/chains?network=fuji`)).body as ListChainsResponse;
    const testnet = (await getJson(`${data}/v1/chains?network=testnet`)).body as ListChainsResponse;
    expect(fuji.chains.every((chain) => chain.isTestnet)).toBe(true);
    expect(testnet).toEqual(fuji);

    const withWebhooks = await getJson(`${data}/v1/chains?feature=webhooks`);
    expectContract(withWebhooks, "data", "GET /v1/chains", 200);
    const chains = (withWebhooks.body as ListChainsResponse).chains;
    expect(chains.length).toBeGreaterThan(0);
    expect(chains.length).toBeLessThan(simulator.network.chains.length);
    expect(chains.every((chain) => chain.enabledFeatures?.includes("webhooks"))).toBe(true);
  });

  it("gets a chain by EVM chain id or by blockchain id", async () => {
    const byChainId = await getJson(`${data}/v1/chains/43114`);
    expectContract(byChainId, "data", "GET /v1/chains/{chainId}", 200);
    const byBlockchainId = await getJson(`${data}/v1/chains/${C_CHAIN_BLOCKCHAIN_ID}`);
    expect(byBlockchainId.body).toEqual(byChainId.body);
    expect(byChainId.body).toMatchObject({ chainId: "43114", platformChainId: C_CHAIN_BLOCKCHAIN_ID });
  });

  it("answers 404 for an unknown chain", async () => {
    const response = await getJson(`${data}/v1/chains/999999`);
    expectContract(response, "data", "GET /v1/chains/{chainId}", 404);
    expect(response.body).toMatchObject({ error: "Not Found", statusCode: 404 });
  });

  it("rejects values outside the contract's enums", async () => {
    const badNetwork = await getJson(`${data}/v1/chains?network=devnet`);
    expectContract(badNetwork, "data", "GET /v1/chains", 400);
    expect((badNetwork.body as ErrorBody).message).toBe("network must be one of the following values: mainnet, fuji, testnet");
    const badFeature = await getJson(`${data}/v1/chains?feature=search`);
    expectContract(badFeature, "data", "GET /v1/chains", 400);
    expect((badFeature.body as ErrorBody).message).toBe(
      "feature must be one of the following values: nftIndexing, webhooks, teleporter",
    );
  });
});

describe("Data API: blocks of a chain", () => {
  it("lists the latest blocks newest first, 10 by default", async () => {
    const response = await getJson(`${data}/v1/chains/43114/blocks`);
    expectContract(response, "data", "GET /v1/chains/{chainId}/blocks", 200);
    const { blocks, nextPageToken } = response.body as ListEvmBlocksResponse;
    expect(blocks).toHaveLength(10);
    expect(blocks[0]!.blockNumber).toBe(String(simulator.network.chain("43114")!.blocks.headNumber));
    expect(nextPageToken).toBeTypeOf("string");
    blocks.slice(1).forEach((block, index) => {
      expect(block.blockHash).toBe(blocks[index]!.parentHash);
      expect(Number(block.cumulativeTransactions)).toBe(Number(blocks[index]!.cumulativeTransactions) - blocks[index]!.txCount);
    });
  });

  it("pages with changing page sizes, without gaps, down to genesis", async () => {
    const numbers: number[] = [];
    let url = `${data}/v1/chains/${C_CHAIN_BLOCKCHAIN_ID}/blocks?pageSize=100`;
    const sizes = [1, 37, 100];
    for (let page = 0; page < 3; page++) {
      const body = (await getJson(url)).body as ListEvmBlocksResponse;
      numbers.push(...body.blocks.map((block) => Number(block.blockNumber)));
      url = `${data}/v1/chains/${C_CHAIN_BLOCKCHAIN_ID}/blocks?pageSize=${sizes[page]}&pageToken=${body.nextPageToken}`;
    }
    const head = simulator.network.chain("43114")!.blocks.headNumber;
    expect(numbers).toEqual(Array.from({ length: 100 + 1 + 37 }, (_, index) => head - index));

    const tiny = await startSimulator({ blocksPerChain: 5 });
    try {
      const first = (await getJson(`${tiny.dataUrl}/v1/chains/43114/blocks?pageSize=3`)).body as ListEvmBlocksResponse;
      const last = await getJson(`${tiny.dataUrl}/v1/chains/43114/blocks?pageSize=3&pageToken=${first.nextPageToken}`);
      expectContract(last, "data", "GET /v1/chains/{chainId}/blocks", 200);
      const body = last.body as ListEvmBlocksResponse;
      expect(body.blocks.map((block) => block.blockNumber)).toEqual(["1", "0"]);
      expect(body).not.toHaveProperty("nextPageToken");
    } finally {
      await tiny.close();
    }
  });

  it.each([
    ["pageSize=0", "pageSize must not be less than 1"],
    ["pageSize=101", "pageSize must not be greater than 100"],
    ["pageSize=ten", "pageSize must be an integer number"],
    ["pageSize=2.5", "pageSize must be an integer number"],
    ["pageToken=not-a-token", "pageToken is malformed"],
  ])("rejects %s", async (query, message) => {
    const response = await getJson(`${data}/v1/chains/43114/blocks?${query}`);
    expectContract(response, "data", "GET /v1/chains/{chainId}/blocks", 400);
    expect(response.body).toEqual({ message, error: "Bad Request", statusCode: 400 });
  });

  it("refuses a page token on another chain's path", async () => {
    const { nextPageToken } = (await getJson(`${data}/v1/chains/43114/blocks`)).body as ListEvmBlocksResponse;
    const response = await getJson(`${data}/v1/chains/43113/blocks?pageToken=${nextPageToken}`);
    expectContract(response, "data", "GET /v1/chains/{chainId}/blocks", 400);
    expect((response.body as ErrorBody).message).toMatch(/^pageToken /);
  });

  it("answers 404 for blocks of an unknown chain", async () => {
    const response = await getJson(`${data}/v1/chains/1/blocks`);
    expectContract(response, "data", "GET /v1/chains/{chainId}/blocks", 404);
  });
});

describe("Data API: one block", () => {
  it("gets a block by number and by hash", async () => {
    const byNumber = await getJson(`${data}/v1/chains/73310/blocks/1234`);
    expectContract(byNumber, "data", "GET /v1/chains/{chainId}/blocks/{blockId}", 200);
    const block = byNumber.body as components["schemas"]["GetEvmBlockResponse"];
    expect(block).toMatchObject({ chainId: "73310", blockNumber: "1234" });

    const byHash = await getJson(`${data}/v1/chains/73310/blocks/${block.blockHash}`);
    expect(byHash.body).toEqual(block);
    const parent = await getJson(`${data}/v1/chains/73310/blocks/${block.parentHash}`);
    expect(parent.body).toMatchObject({ blockNumber: "1233", blockHash: block.parentHash });
  });

  it("gets genesis, whose parent hash is zero", async () => {
    const genesis = await getJson(`${data}/v1/chains/43114/blocks/0`);
    expectContract(genesis, "data", "GET /v1/chains/{chainId}/blocks/{blockId}", 200);
    expect(genesis.body).toMatchObject({ blockNumber: "0", parentHash: `0x${"0".repeat(64)}` });
  });

  it.each([
    ["a block number past the head", "/v1/chains/43114/blocks/5000"],
    ["an unknown hash", `/v1/chains/43114/blocks/0x${"12".repeat(32)}`],
    ["an unknown chain", "/v1/chains/424242/blocks/1"],
  ])("answers 404 for %s", async (_, path) => {
    const response = await getJson(`${data}${path}`);
    expectContract(response, "data", "GET /v1/chains/{chainId}/blocks/{blockId}", 404);
  });

  it("answers 404 for the hash of a block of another chain", async () => {
    const fujiHash = simulator.network.chain("43113")!.blocks.block(7)!.blockHash;
    const response = await getJson(`${data}/v1/chains/43114/blocks/${fujiHash}`);
    expectContract(response, "data", "GET /v1/chains/{chainId}/blocks/{blockId}", 404);
  });

  it("answers 400 for a block id that is neither a number nor a hash", async () => {
    const response = await getJson(`${data}/v1/chains/43114/blocks/latest`);
    expectContract(response, "data", "GET /v1/chains/{chainId}/blocks/{blockId}", 400);
    expect((response.body as ErrorBody).message).toMatch(/^blockId /);
  });
});

describe("Data API: latest blocks of all chains", () => {
  it("pages through every chain newest first, without gaps or duplicates", async () => {
    const seen: components["schemas"]["EvmBlock"][] = [];
    let url = `${data}/v1/blocks?pageSize=100`;
    for (let page = 0; page < 6; page++) {
      const response = await getJson(url);
      expectContract(response, "data", "GET /v1/blocks", 200);
      const body = response.body as ListEvmBlocksResponse;
      seen.push(...body.blocks);
      url = `${data}/v1/blocks?pageSize=${page % 2 === 0 ? 50 : 100}&pageToken=${body.nextPageToken}`;
    }
    const expected = simulator.network.latestBlocks(undefined);
    expect(seen.map((block) => `${block.chainId}:${block.blockNumber}`)).toEqual(
      Array.from({ length: seen.length }, (_, index) => {
        const block = expected.at(index)!;
        return `${block.chainId}:${block.blockNumber}`;
      }),
    );
    expect(new Set(seen.map((block) => block.blockHash)).size).toBe(seen.length);
    seen.slice(1).forEach((block, index) => {
      expect(block.blockTimestamp).toBeLessThanOrEqual(seen[index]!.blockTimestamp);
    });
    expect(new Set(seen.map((block) => block.chainId)).size).toBe(simulator.network.chains.length);
  });

  it("filters by network, testnet meaning fuji", async () => {
    const fujiIds = new Set(simulator.network.chainsOn("fuji").map((chain) => chain.evmChainId));
    for (const network of ["fuji", "testnet"]) {
      const response = await getJson(`${data}/v1/blocks?network=${network}&pageSize=100`);
      expectContract(response, "data", "GET /v1/blocks", 200);
      const { blocks } = response.body as ListEvmBlocksResponse;
      expect(blocks).toHaveLength(100);
      expect(blocks.every((block) => fujiIds.has(block.chainId))).toBe(true);
    }
    const mainnet = (await getJson(`${data}/v1/blocks?network=mainnet&pageSize=100`)).body as ListEvmBlocksResponse;
    expect(mainnet.blocks.some((block) => fujiIds.has(block.chainId))).toBe(false);
  });

  it("refuses a page token with another network filter", async () => {
    const { nextPageToken } = (await getJson(`${data}/v1/blocks?network=mainnet`)).body as ListEvmBlocksResponse;
    const sameQuery = await getJson(`${data}/v1/blocks?network=mainnet&pageToken=${nextPageToken}`);
    expect(sameQuery.status).toBe(200);
    for (const query of ["network=fuji&", ""]) {
      const response = await getJson(`${data}/v1/blocks?${query}pageToken=${nextPageToken}`);
      expectContract(response, "data", "GET /v1/blocks", 400);
      expect((response.body as ErrorBody).message).toMatch(/^pageToken /);
    }
    const otherRoute = await getJson(`${data}/v1/chains/43114/blocks?pageToken=${nextPageToken}`);
    expect(otherRoute.status).toBe(400);
  });

  it("rejects out-of-bounds page sizes and unknown networks", async () => {
    const response = await getJson(`${data}/v1/blocks?pageSize=500&network=local`);
    expectContract(response, "data", "GET /v1/blocks", 400);
    const { message } = response.body as ErrorBody;
    expect(message).toContain("pageSize must not be greater than 100");
    expect(message).toContain("network must be one of the following values: mainnet, fuji, testnet");
  });
});

describe("Data API: unknown routes", () => {
  it.each([
    ["GET", "/v1/nothing-here"],
    ["GET", "/v2/chains"],
    ["POST", "/v1/chains"],
  ])("%s %s is a 404 with the error body", async (method, path) => {
    const response = await fetch(`${data}${path}`, { method });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      message: `Cannot ${method} ${path}`,
      error: "Not Found",
      statusCode: 404,
    });
  });
});
