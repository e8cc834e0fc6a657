import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type ClockState, type RunningSimulator } from "../../simulator/server.ts";
import { getJson, postJson } from "./http.ts";

interface Block {
  chainId: string;
  blockNumber: string;
  blockHash: string;
  parentHash: string;
  blockTimestamp: number;
  blockTimestampMilliseconds: number;
  txCount: number;
}

const HEAD_TIME = Date.UTC(2026, 10, 1) / 1000;
// Small chains keep start-up and the address index quick.
const OPTIONS = { seed: "live", blocksPerChain: 800 };

let simulator: RunningSimulator;

beforeAll(async () => {
  simulator = await startSimulator(OPTIONS);
});

afterAll(() => simulator.close());

async function clock(target: RunningSimulator): Promise<ClockState> {
  return (await getJson(`${target.dataUrl}/_simulator/clock`)).body as ClockState;
}

async function advance(target: RunningSimulator, advanceSeconds: number): Promise<ClockState> {
  const response = await postJson(`${target.dataUrl}/_simulator/clock`, { advanceSeconds });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body as ClockState;
}

async function blocks(url: string): Promise<Block[]> {
  return ((await getJson(url)).body as { blocks: Block[] }).blocks;
}

describe("the simulator's clock", () => {
  it("stays at the head time until told to advance (frozen by default)", async () => {
    const before = await clock(simulator);
    expect(before).toMatchObject({ live: false, nowMs: HEAD_TIME * 1000, elapsedSeconds: 0 });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(await clock(simulator)).toEqual(before);
    expect(before.heads.map((head) => head.blockNumber)).toEqual(before.heads.map(() => 799));
  });

  it("refuses a body that is not {advanceSeconds: n} with a JSON 400, and moves nothing", async () => {
    for (const body of [
      {},
      { advanceSeconds: "30" },
      { advanceSeconds: 0 },
      { advanceSeconds: -5 },
      { advanceSeconds: 86_401 },
      { advanceSeconds: 1, extra: true },
      [30],
    ]) {
      const response = await postJson(`${simulator.dataUrl}/_simulator/clock`, body);
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({
        statusCode: 400,
        error: "Bad Request",
        message: expect.stringMatching(/advanceSeconds|field|object/),
      });
    }
    const response = await fetch(`${simulator.metricsUrl}/_simulator/clock`, { method: "POST", body: "{not json" });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ message: "body must be valid JSON" });
    expect((await clock(simulator)).elapsedSeconds).toBe(0);
  });

  it("adds blocks at each chain's interval, in order, each the child of the one before", async () => {
    const before = await clock(simulator);
    const after = await advance(simulator, 60);
    expect(after.elapsedSeconds).toBe(60);
    for (const head of after.heads) {
      const old = before.heads.find((candidate) => candidate.chainId === head.chainId)!;
      const added = head.blockNumber - old.blockNumber;
      // C-Chains every 1.5-2.5 s, the L1s every 2-4 s or 3-7 s.
      if (head.chainId === "43114" || head.chainId === "43113") expect(added).toBeGreaterThanOrEqual(24);
      expect(added, head.chainId).toBeGreaterThanOrEqual(8);
      expect(added, head.chainId).toBeLessThanOrEqual(40);
      const newest = await blocks(`${simulator.dataUrl}/v1/chains/${head.chainId}/blocks?pageSize=${added + 1}`);
      expect(newest[0]!.blockHash).toBe(head.blockHash);
      expect(newest.at(-1)!.blockNumber).toBe(String(old.blockNumber));
      for (let index = 0; index < newest.length - 1; index++) {
        const [child, parent] = [newest[index]!, newest[index + 1]!];
        expect(Number(child.blockNumber)).toBe(Number(parent.blockNumber) + 1);
        expect(child.parentHash).toBe(parent.blockHash);
        expect(child.blockTimestampMilliseconds).toBeGreaterThan(parent.blockTimestampMilliseconds);
        expect(child.blockTimestamp).toBeGreaterThan(HEAD_TIME - 1);
        expect(child.blockTimestamp).toBeLessThanOrEqual(HEAD_TIME + 60);
      }
      // By number and by hash, the same block as in the list.
      const byNumber = (await getJson(`${simulator.dataUrl}/v1/chains/${head.chainId}/blocks/${head.blockNumber}`)).body;
      const byHash = (await getJson(`${simulator.dataUrl}/v1/chains/${head.chainId}/blocks/${head.blockHash}`)).body;
      expect(byNumber).toEqual(newest[0]);
      expect(byHash).toEqual(newest[0]);
      expect((await getJson(`${simulator.dataUrl}/v1/chains/${head.chainId}/blocks/${head.blockNumber + 1}`)).status).toBe(404);
    }
    // The all-chains list leads with the newest blocks of every chain.
    const latest = await blocks(`${simulator.dataUrl}/v1/blocks?pageSize=20`);
    const newestTimestamp = Math.max(...after.heads.map((head) => head.blockTimestamp));
    expect(latest[0]!.blockTimestamp).toBe(newestTimestamp);
    for (const block of latest) {
      const single = (await getJson(`${simulator.dataUrl}/v1/chains/${block.chainId}/blocks/${block.blockNumber}`)).body;
      expect(single).toEqual(block);
    }
  });

  it("keeps a page token on the same blocks while new ones arrive in front", async () => {
    const firstPage = (await getJson(`${simulator.dataUrl}/v1/chains/43114/blocks?pageSize=5`)).body as {
      blocks: Block[];
      nextPageToken: string;
    };
    await advance(simulator, 30);
    const secondPage = await blocks(
      `${simulator.dataUrl}/v1/chains/43114/blocks?pageSize=5&pageToken=${firstPage.nextPageToken}`,
    );
    expect(Number(secondPage[0]!.blockNumber)).toBe(Number(firstPage.blocks.at(-1)!.blockNumber) - 1);
  });

  it("shows an address's new transactions on its page, and the transaction by hash", async () => {
    const before = await clock(simulator);
    const { heads } = await advance(simulator, 30);
    const from = before.heads.find((head) => head.chainId === "43114")!.blockNumber;
    const to = heads.find((head) => head.chainId === "43114")!.blockNumber;
    let found: { hash: string; from: string; block: number } | undefined;
    for (let number = to; number > from && found === undefined; number--) {
      const { transactions } = (await getJson(`${simulator.dataUrl}/v1/chains/43114/blocks/${number}/transactions?pageSize=1`))
        .body as {
        transactions: { txHash: string; from: { address: string } }[];
      };
      if (transactions.length > 0) found = { hash: transactions[0]!.txHash, from: transactions[0]!.from.address, block: number };
    }
    expect(found).toBeDefined();
    const page = (await getJson(`${simulator.dataUrl}/v1/chains/43114/addresses/${found!.from}/transactions?pageSize=100`))
      .body as {
      transactions: { nativeTransaction: { txHash: string; blockNumber: string } }[];
    };
    const hashes = page.transactions.map((tx) => tx.nativeTransaction.txHash);
    expect(hashes).toContain(found!.hash);
    expect(Number(page.transactions[0]!.nativeTransaction.blockNumber)).toBeGreaterThanOrEqual(found!.block);
    const single = await getJson(`${simulator.dataUrl}/v1/chains/43114/transactions/${found!.hash}`);
    expect(single.status).toBe(200);
  });

  it("updates a metric's latest point and the P- and X-Chain's transactions", async () => {
    const metricUrl = `${simulator.metricsUrl}/v2/chains/43114/metrics/txCount?timeInterval=hour&pageSize=1`;
    const pChainUrl = `${simulator.dataUrl}/v1/networks/mainnet/blockchains/p-chain/transactions?pageSize=1`;
    const xChainUrl = `${simulator.dataUrl}/v1/networks/mainnet/blockchains/x-chain/transactions?pageSize=1`;
    const metricBefore = (await getJson(metricUrl)).body as { results: { timestamp: number; value: number }[] };
    const pBefore = (await getJson(pChainUrl)).body as { transactions: { txHash: string; blockTimestamp: number }[] };
    const xBefore = (await getJson(xChainUrl)).body as { transactions: { txHash: string; timestamp: number }[] };
    await advance(simulator, 600);
    const metricAfter = (await getJson(metricUrl)).body as typeof metricBefore;
    expect(metricAfter.results[0]).not.toEqual(metricBefore.results[0]);
    expect(metricAfter.results[0]!.timestamp).toBeGreaterThanOrEqual(metricBefore.results[0]!.timestamp);
    const pAfter = (await getJson(pChainUrl)).body as typeof pBefore;
    const xAfter = (await getJson(xChainUrl)).body as typeof xBefore;
    expect(pAfter.transactions[0]!.txHash).not.toBe(pBefore.transactions[0]!.txHash);
    expect(pAfter.transactions[0]!.blockTimestamp).toBeGreaterThan(HEAD_TIME);
    expect(xAfter.transactions[0]!.txHash).not.toBe(xBefore.transactions[0]!.txHash);
  });
});

describe("live determinism", () => {
  it("gives the same chain for the same seed and clock, however the clock got there", async () => {
    const [inSteps, atOnce] = await Promise.all([startSimulator(OPTIONS), startSimulator(OPTIONS)]);
    try {
      for (let step = 0; step < 6; step++) await advance(inSteps, 15);
      await getJson(`${inSteps.dataUrl}/v1/networks/fuji/blockchains/p-chain/transactions?pageSize=3`);
      await advance(inSteps, 10);
      await advance(atOnce, 100);
      const paths = [
        "/v1/blocks?pageSize=40",
        "/v1/chains/43113/blocks?pageSize=30",
        "/v1/chains/73310/blocks/810",
        "/v1/networks/fuji/blockchains/p-chain/transactions?pageSize=10",
        "/v1/networks/fuji/blockchains/x-chain/transactions?pageSize=10",
      ];
      for (const path of paths) {
        const [a, b] = await Promise.all(
          [inSteps, atOnce].map(async (target) => (await fetch(`${target.dataUrl}${path}`)).text()),
        );
        expect(a, path).toBe(b);
      }
      expect((await clock(inSteps)).heads).toEqual((await clock(atOnce)).heads);
    } finally {
      await Promise.all([inSteps.close(), atOnce.close()]);
    }
  });

  it("follows the wall clock in live mode", async () => {
    const live = await startSimulator({ ...OPTIONS, live: true });
    try {
      const start = await clock(live);
      expect(start.live).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 2600));
      const later = await clock(live);
      expect(later.nowMs - start.nowMs).toBeGreaterThanOrEqual(2500);
      const cChain = (state: ClockState) => state.heads.find((head) => head.chainId === "43114")!.blockNumber;
      expect(cChain(later)).toBeGreaterThan(cChain(start));
    } finally {
      await live.close();
    }
  });
});
