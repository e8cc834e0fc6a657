import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  chainMetricValues,
  networkMetricValues,
  pathsV2SubnetSubnetIdMetricsMetricGetParametersPathMetricValues as subnetMetricValues,
  pathsV2ValidatorsMetricsMetricGetParametersPathMetricValues as validatorFeeMetricValues,
  timeIntervalGranularityValues,
  type components,
} from "../../src/upstream/contract/metrics-api.ts";
import { DAY_ONLY_CHAIN_METRICS } from "../../src/upstream/metric-rules.ts";
import { startSimulator, type RunningSimulator } from "../../simulator/server.ts";
import { expectContract, getJson, type JsonResponse } from "./http.ts";

type MetricsApiResponse = components["schemas"]["MetricsApiResponse"];
type LookingGlassResponse = components["schemas"]["LookingGlassResponse"];
type LegacyEvmMetricsResponse = components["schemas"]["LegacyEvmMetricsResponse"];
type ErrorBody = components["schemas"]["BadRequest"];
type Point = components["schemas"]["MetricsValue"];

const CHAIN_ROUTE = "GET /v2/chains/{chainId}/metrics/{metric}";
const STAKING_ROUTE = "GET /v2/networks/{network}/metrics/{metric}";
const SUBNET_ROUTE = "GET /v2/subnet/{subnetId}/metrics/{metric}";
const VALIDATORS_ROUTE = "GET /v2/validators/metrics/{metric}";
const HOLDERS_ROUTE = "GET /v2/chains/{chainId}/contracts/{address}/balances";
const BTCB_ROUTE = "GET /v2/chains/43114/btcb/bridged:getAddresses";
const LEGACY_ROUTE = "GET /v1/avg_tps/{chainId}";
/** A quiet L1: its transactions are read quickly. */
const QUARRY = "51288";
const DAY = 86_400;

let simulator: RunningSimulator;
let metrics: string;

beforeAll(async () => {
  simulator = await startSimulator({ dataPort: 0, metricsPort: 0 });
  metrics = simulator.metricsUrl;
});

afterAll(() => simulator.close());

async function series(path: string): Promise<Point[]> {
  const points: Point[] = [];
  let pageToken: string | undefined;
  do {
    const separator = path.includes("?") ? "&" : "?";
    const response = await getJson(`${metrics}${path}${separator}pageSize=2160${pageToken ? `&pageToken=${pageToken}` : ""}`);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const body = response.body as MetricsApiResponse;
    points.push(...body.results);
    pageToken = body.nextPageToken;
  } while (pageToken);
  return points;
}

/** Several whole series of a chain, by metric name. */
async function seriesOf<const Name extends string>(chainId: string, names: readonly Name[]): Promise<Record<Name, Point[]>> {
  const all = await Promise.all(names.map((name) => series(`/v2/chains/${chainId}/metrics/${name}`)));
  return Object.fromEntries(names.map((name, index) => [name, all[index]!])) as Record<Name, Point[]>;
}

function aligned(timestamp: number, interval: string): boolean {
  const date = new Date(timestamp * 1000);
  const midnight = timestamp % DAY === 0;
  switch (interval) {
    case "hour":
      return timestamp % 3600 === 0;
    case "day":
      return midnight;
    case "week":
      return midnight && date.getUTCDay() === 1;
    default:
      return midnight && date.getUTCDate() === 1;
  }
}

function blocksOf(chainId: string) {
  const { blocks } = simulator.network.chain(chainId)!;
  return Array.from({ length: blocks.count }, (_, number) => blocks.block(number)!);
}

describe("sample network time span", () => {
  it("spans at least 120 days of blocks on every chain by default, with 5,000 blocks each", () => {
    for (const chain of simulator.network.chains) {
      expect(chain.blocks.count).toBe(5000);
      const span = chain.blocks.blockTimestamp(chain.blocks.headNumber) - chain.blocks.blockTimestamp(0);
      expect(span / DAY).toBeGreaterThanOrEqual(120);
    }
  });
});

describe("chain metrics", () => {
  it.each(chainMetricValues)("serves %s daily, newest first, each point on 00:00 UTC", async (metric) => {
    const response = await getJson(`${metrics}/v2/chains/${QUARRY}/metrics/${metric}?pageSize=30`);
    expectContract(response, "metrics", CHAIN_ROUTE, 200);
    const { results, nextPageToken } = response.body as MetricsApiResponse;
    expect(results).toHaveLength(30);
    expect(nextPageToken).toBeTypeOf("string");
    results.forEach((point, index) => {
      expect(aligned(point.timestamp, "day")).toBe(true);
      expect(point.value).toBeGreaterThanOrEqual(0);
      if (index > 0) expect(point.timestamp).toBe(results[index - 1]!.timestamp - DAY);
    });
  });

  it.each(timeIntervalGranularityValues)("aligns every %s point and leaves no interval out", async (interval) => {
    const points = await series(`/v2/chains/43114/metrics/txCount?timeInterval=${interval}`);
    expect(points.every((point) => aligned(point.timestamp, interval))).toBe(true);
    const blocks = blocksOf("43114");
    // Oldest interval first: it holds the first block, the newest holds the head.
    const oldest = points[points.length - 1]!;
    expect(oldest.timestamp).toBeLessThanOrEqual(blocks[0]!.blockTimestamp);
    expect(points[0]!.timestamp).toBeLessThanOrEqual(blocks[blocks.length - 1]!.blockTimestamp);
    expect(points.reduce((total, point) => total + point.value, 0)).toBe(
      blocks.reduce((total, block) => total + block.txCount, 0),
    );
    for (let index = 1; index < points.length; index++)
      expect(points[index]!.timestamp).toBeLessThan(points[index - 1]!.timestamp);
  });

  it("counts a day's transactions, gas and cumulative transactions as its blocks do", async () => {
    const {
      txCount,
      gasUsed,
      cumulativeTxCount: cumulative,
    } = await seriesOf("43114", ["txCount", "gasUsed", "cumulativeTxCount"]);
    const byDay = new Map<number, { txCount: number; gasUsed: number; cumulative: number }>();
    for (const block of blocksOf("43114")) {
      const day = block.blockTimestamp - (block.blockTimestamp % DAY);
      const totals = byDay.get(day) ?? { txCount: 0, gasUsed: 0, cumulative: 0 };
      totals.txCount += block.txCount;
      totals.gasUsed += Number(block.gasUsed);
      totals.cumulative = Number(block.cumulativeTransactions);
      byDay.set(day, totals);
    }
    expect(txCount).toHaveLength(byDay.size);
    txCount.forEach((point, index) => {
      const totals = byDay.get(point.timestamp)!;
      expect(point.value).toBe(totals.txCount);
      expect(gasUsed[index]).toEqual({ timestamp: point.timestamp, value: totals.gasUsed });
      expect(cumulative[index]).toEqual({ timestamp: point.timestamp, value: totals.cumulative });
    });
  });

  it("measures rates from block times: average over the day since the previous day's last block, maximum per block", async () => {
    const { avgTps, maxTps } = await seriesOf("43114", ["avgTps", "maxTps"]);
    const blocks = blocksOf("43114");
    const point = avgTps[5]!;
    const inDay = blocks.filter(
      (block) => block.blockTimestamp >= point.timestamp && block.blockTimestamp < point.timestamp + DAY,
    );
    const before = blocks[Number(inDay[0]!.blockNumber) - 1]!;
    const seconds = inDay[inDay.length - 1]!.blockTimestamp - before.blockTimestamp;
    expect(point.value).toBeCloseTo(inDay.reduce((total, block) => total + block.txCount, 0) / seconds, 12);
    const perBlock = inDay.map(
      (block) => block.txCount / (block.blockTimestamp - blocks[Number(block.blockNumber) - 1]!.blockTimestamp),
    );
    expect(maxTps[5]).toEqual({ timestamp: point.timestamp, value: Math.max(...perBlock) });
  });

  it("reads addresses, senders, gas prices and fees of a day from the day's transactions", async () => {
    const {
      activeAddresses: active,
      activeSenders: senders,
      avgGasPrice,
      maxGasPrice,
      feesPaid,
    } = await seriesOf(QUARRY, ["activeAddresses", "activeSenders", "avgGasPrice", "maxGasPrice", "feesPaid"]);
    const day = active[3]!.timestamp;
    const transactions = simulator.network.transactions(simulator.network.chain(QUARRY)!);
    const addresses = new Set<string>();
    const from = new Set<string>();
    const prices: bigint[] = [];
    let fees = 0n;
    for (const block of blocksOf(QUARRY).filter((item) => item.blockTimestamp >= day && item.blockTimestamp < day + DAY)) {
      const list = transactions.blockTransactions(Number(block.blockNumber))!;
      for (let index = 0; index < list.length; index++) {
        const view = transactions.transaction(list.at(index)!.txHash)!;
        const tx = view.nativeTransaction;
        prices.push(BigInt(tx.gasPrice));
        fees += BigInt(tx.gasUsed) * BigInt(tx.gasPrice);
        for (const item of [
          tx,
          ...(view.erc20Transfers ?? []),
          ...(view.erc721Transfers ?? []),
          ...(view.erc1155Transfers ?? []),
        ]) {
          for (const address of [item.from.address, item.to.address])
            if (!/^0x0{40}$/.test(address)) addresses.add(address.toLowerCase());
          if (!/^0x0{40}$/.test(item.from.address)) from.add(item.from.address.toLowerCase());
        }
      }
    }
    expect(active[3]!.value).toBe(addresses.size);
    expect(senders[3]!.value).toBe(from.size);
    expect(avgGasPrice[3]!.value).toBeCloseTo(Number(prices.reduce((a, b) => a + b, 0n)) / prices.length, 0);
    expect(maxGasPrice[3]!.value).toBe(Number(prices.reduce((a, b) => (b > a ? b : a), 0n)));
    expect(feesPaid[3]!.value).toBe(Number(fees));
  });

  it("sends wei amounts above 2^53 as JSON numbers with every digit", async () => {
    const text = await (await fetch(`${metrics}/v2/chains/43114/metrics/feesPaid?pageSize=5`)).text();
    const digits = [...text.matchAll(/"value":(-?[0-9.eE+-]+)/g)].map((match) => match[1]!);
    expect(digits).toHaveLength(5);
    for (const value of digits) expect(value).toMatch(/^[0-9]+$/);
    expect(digits.some((value) => BigInt(value) > 2n ** 53n && String(Number(value)) !== value)).toBe(true);
  });

  it("keeps running totals consistent with the daily counts", async () => {
    const {
      contracts,
      cumulativeContracts,
      deployers,
      cumulativeDeployers,
      activeAddresses: active,
      cumulativeAddresses,
    } = await seriesOf(QUARRY, [
      "contracts",
      "cumulativeContracts",
      "deployers",
      "cumulativeDeployers",
      "activeAddresses",
      "cumulativeAddresses",
    ]);
    // Oldest first. cumulativeContracts counts up to the point's timestamp, the others to the end of its day.
    const oldestFirst = (points: Point[]) => [...points].reverse().map((point) => point.value);
    const daily = oldestFirst(contracts);
    oldestFirst(cumulativeContracts).forEach((value, index) => {
      expect(value).toBe(daily.slice(0, index).reduce((total, count) => total + count, 0));
    });
    expect(daily.reduce((total, count) => total + count, 0)).toBeGreaterThan(0);
    for (const [cumulative, perDay] of [
      [cumulativeDeployers, deployers],
      [cumulativeAddresses, active],
    ] as const) {
      const totals = oldestFirst(cumulative);
      const days = oldestFirst(perDay);
      totals.forEach((value, index) => {
        expect(value).toBeGreaterThanOrEqual(days[index]!);
        if (index > 0) {
          expect(value).toBeGreaterThanOrEqual(totals[index - 1]!);
          expect(value).toBeLessThanOrEqual(totals[index - 1]! + days[index]!);
        }
      });
    }
  });

  it("adds up the chains of a network scope", async () => {
    const chainsOf = {
      total: simulator.network.chains,
      mainnet: simulator.network.chainsOn("mainnet"),
      testnet: simulator.network.chainsOn("fuji"),
    };
    for (const [scope, chains] of Object.entries(chainsOf)) {
      const response = await getJson(`${metrics}/v2/chains/${scope}/metrics/txCount?pageSize=10`);
      expectContract(response, "metrics", CHAIN_ROUTE, 200);
      const perChain = await Promise.all(chains.map((chain) => series(`/v2/chains/${chain.evmChainId}/metrics/txCount`)));
      for (const point of (response.body as MetricsApiResponse).results) {
        const sum = perChain.reduce(
          (total, points) => total + (points.find((item) => item.timestamp === point.timestamp)?.value ?? 0),
          0,
        );
        expect(point.value).toBe(sum);
      }
    }
  });

  it("keeps the points from startTimestamp to endTimestamp, both inclusive; an unaligned start leaves its day out", async () => {
    const all = await series("/v2/chains/43114/metrics/txCount");
    const newest = all[2]!.timestamp;
    const oldest = all[6]!.timestamp;
    const within = await series(`/v2/chains/43114/metrics/txCount?startTimestamp=${oldest}&endTimestamp=${newest}`);
    expect(within).toEqual(all.slice(2, 7));
    const unaligned = await series(`/v2/chains/43114/metrics/txCount?startTimestamp=${oldest + 1}&endTimestamp=${newest}`);
    expect(unaligned).toEqual(all.slice(2, 6));
  });

  it.each([
    [
      "a daily-only metric at another interval",
      "/v2/chains/43114/metrics/avgTps?timeInterval=hour",
      "timeInterval must be day for metric avgTps",
    ],
    ["pageSize over 2160", "/v2/chains/43114/metrics/txCount?pageSize=2161", "pageSize must not be greater than 2160"],
    ["pageSize 0", "/v2/chains/43114/metrics/txCount?pageSize=0", "pageSize must not be less than 1"],
    ["a negative startTimestamp", "/v2/chains/43114/metrics/txCount?startTimestamp=-1", "startTimestamp must not be less than 0"],
    ["an unknown metric", "/v2/chains/43114/metrics/blockCount", undefined],
    ["an unknown interval", "/v2/chains/43114/metrics/txCount?timeInterval=year", undefined],
  ])("answers 400 for %s", async (_, path, message) => {
    const response = await getJson(`${metrics}${path}`);
    expectContract(response, "metrics", CHAIN_ROUTE, 400);
    if (message) expect((response.body as ErrorBody).message).toBe(message);
  });

  it.each([...DAY_ONLY_CHAIN_METRICS])("serves %s only daily", async (metric) => {
    for (const interval of ["hour", "week", "month"]) {
      const response = await getJson(`${metrics}/v2/chains/total/metrics/${metric}?timeInterval=${interval}`);
      expectContract(response, "metrics", CHAIN_ROUTE, 400);
      expect((response.body as ErrorBody).message).toBe(`timeInterval must be day for metric ${metric}`);
    }
  });

  it.each(chainMetricValues.filter((metric) => !DAY_ONLY_CHAIN_METRICS.has(metric)))(
    "serves %s at every interval",
    async (metric) => {
      for (const interval of timeIntervalGranularityValues) {
        expectContract(
          await getJson(`${metrics}/v2/chains/${QUARRY}/metrics/${metric}?timeInterval=${interval}&pageSize=3`),
          "metrics",
          CHAIN_ROUTE,
          200,
        );
      }
    },
  );

  it.each(["999999", "2q9e4r6Mu3U68nU1fYjgbR6JvwrRx36CohpAX5UQxse55x1Q5"])("answers 404 for chain %s", async (chainId) => {
    const response = await getJson(`${metrics}/v2/chains/${chainId}/metrics/txCount`);
    expectContract(response, "metrics", CHAIN_ROUTE, 404);
  });
});

describe("page tokens", () => {
  it("refuse a token older than the token lifetime with a 400 that says it expired", async () => {
    const first = await getJson(`${metrics}/v2/chains/43114/metrics/txCount?pageSize=5`);
    const { nextPageToken } = first.body as MetricsApiResponse;
    const again = await getJson(`${metrics}/v2/chains/43114/metrics/txCount?pageSize=5&pageToken=${nextPageToken}`);
    expectContract(again, "metrics", CHAIN_ROUTE, 200);
    simulator.setKnobs({ metricsTokenTtlMs: 0 });
    try {
      await new Promise((resolve) => setTimeout(resolve, 5));
      const expired = await getJson(`${metrics}/v2/chains/43114/metrics/txCount?pageSize=5&pageToken=${nextPageToken}`);
      expectContract(expired, "metrics", CHAIN_ROUTE, 400);
      expect((expired.body as ErrorBody).message).toMatch(/expired/);
    } finally {
      simulator.setKnobs({ metricsTokenTtlMs: 24 * 3600 * 1000 });
    }
  });

  it("refuse a token of another query", async () => {
    const first = await getJson(`${metrics}/v2/chains/43114/metrics/txCount?pageSize=5`);
    const { nextPageToken } = first.body as MetricsApiResponse;
    const other = await getJson(`${metrics}/v2/chains/43114/metrics/gasUsed?pageSize=5&pageToken=${nextPageToken}`);
    expectContract(other, "metrics", CHAIN_ROUTE, 400);
  });
});

describe("staking, subnet and validator fee metrics", () => {
  const l1Subnet = () => simulator.network.primaryNetwork("mainnet").l1Validators[0]!.subnetId;

  it.each(networkMetricValues)("serves %s daily for the primary network and for an L1", async (metric) => {
    for (const query of ["", `&subnetId=${l1Subnet()}`]) {
      const response = await getJson(`${metrics}/v2/networks/mainnet/metrics/${metric}?pageSize=100${query}`);
      expectContract(response, "metrics", STAKING_ROUTE, 200);
      const { results } = response.body as MetricsApiResponse;
      expect(results.length).toBeGreaterThan(30);
      expect(results.every((point) => aligned(point.timestamp, "day") && point.value >= 0)).toBe(true);
      if (metric.startsWith("validator")) expect(results.some((point) => point.value > 0)).toBe(true);
    }
  });

  it("answers for all subnets together when subnetId is left out, and for the primary network when it is named", async () => {
    const read = async (query: string) =>
      ((await getJson(`${metrics}/v2/networks/mainnet/metrics/validatorCount?pageSize=30${query}`)).body as MetricsApiResponse)
        .results;
    const [all, primary, l1] = await Promise.all([
      read(""),
      read("&subnetId=11111111111111111111111111111111LpoYY"),
      read(`&subnetId=${l1Subnet()}`),
    ]);
    all.forEach((point, index) => expect(point.value).toBeGreaterThanOrEqual(primary[index]!.value + l1[index]!.value));
    expect(all.some((point, index) => point.value > primary[index]!.value)).toBe(true);
  });

  it.each(subnetMetricValues)("serves %s of an L1 in one answer", async (metric) => {
    const response = await getJson(`${metrics}/v2/subnet/${l1Subnet()}/metrics/${metric}`);
    expectContract(response, "metrics", SUBNET_ROUTE, 200);
    const { results, nextPageToken } = response.body as MetricsApiResponse;
    expect(nextPageToken).toBeUndefined();
    expect(results.some((point) => point.value > 0)).toBe(true);
  });

  it("answers an empty series for a subnet without L1 validators", async () => {
    const response = await getJson(`${metrics}/v2/subnet/11111111111111111111111111111111LpoYY/metrics/perSubnetDailyFeesPaid`);
    expectContract(response, "metrics", SUBNET_ROUTE, 200);
    expect((response.body as MetricsApiResponse).results).toEqual([]);
  });

  it.each(validatorFeeMetricValues)("serves %s for the mainnet's L1 validators", async (metric) => {
    const response = await getJson(`${metrics}/v2/validators/metrics/${metric}`);
    expectContract(response, "metrics", VALIDATORS_ROUTE, 200);
    expect((response.body as MetricsApiResponse).results.some((point) => point.value > 0)).toBe(true);
  });

  it("charges L1 validators exactly the fees the P-Chain accrues", async () => {
    const primary = simulator.network.primaryNetwork("mainnet");
    const latest = primary.block("P", String(primary.pChainHeight))!;
    const cumulative = (await getJson(`${metrics}/v2/validators/metrics/totalCumulativeFeesDaily`)).body as MetricsApiResponse;
    const daily = (await getJson(`${metrics}/v2/validators/metrics/totalValidatorFeesDaily`)).body as MetricsApiResponse;
    expect(cumulative.results[0]!.value).toBe(latest.l1ValidatorsAccruedFees);
    expect(daily.results.reduce((total, point) => total + point.value, 0)).toBe(latest.l1ValidatorsAccruedFees);
  });
});

describe("address lists", () => {
  const usdc = (chainId: string) =>
    simulator.network.transactions(simulator.network.chain(chainId)!).catalog.erc20.find((token) => token.symbol === "USDC")!
      .address;

  it("lists a token's holders above a threshold, largest latest balance first", async () => {
    const response = await getJson(`${metrics}/v2/chains/${QUARRY}/contracts/${usdc(QUARRY)}/balances?threshold=0&pageSize=5000`);
    expectContract(response, "metrics", HOLDERS_ROUTE, 200);
    const { addresses } = response.body as LookingGlassResponse;
    expect(addresses.length).toBeGreaterThan(10);
    const amounts = addresses.map((entry) => BigInt(entry.sortKey));
    amounts.forEach((amount, index) => index > 0 && expect(amount <= amounts[index - 1]!).toBe(true));
    const threshold = amounts[Math.floor(amounts.length / 2)]!;
    const above = (
      await getJson(`${metrics}/v2/chains/${QUARRY}/contracts/${usdc(QUARRY)}/balances?threshold=${threshold}&pageSize=5000`)
    ).body as LookingGlassResponse;
    // An address held more than the threshold at some time; its latest balance may be lower.
    expect(above.addresses.length).toBeGreaterThan(0);
    expect(above.addresses.length).toBeLessThan(addresses.length);
  });

  it("pages holders and narrows them to a time frame", async () => {
    const path = `/v2/chains/${QUARRY}/contracts/${usdc(QUARRY)}/balances?threshold=0`;
    const first = (await getJson(`${metrics}${path}&pageSize=3`)).body as LookingGlassResponse;
    const second = await getJson(`${metrics}${path}&pageSize=3&pageToken=${first.nextPageToken}`);
    expectContract(second, "metrics", HOLDERS_ROUTE, 200);
    const all = (await getJson(`${metrics}${path}&pageSize=6`)).body as LookingGlassResponse;
    expect([...first.addresses, ...(second.body as LookingGlassResponse).addresses]).toEqual(all.addresses);
    const head = simulator.network.chain(QUARRY)!.blocks;
    const lastDay = head.blockTimestamp(head.headNumber) - DAY;
    const recent = (await getJson(`${metrics}${path}&pageSize=5000&startTimestamp=${lastDay}&endTimestamp=${lastDay + 3600}`))
      .body as LookingGlassResponse;
    expect(recent.addresses.length).toBeGreaterThan(0);
  });

  it("answers an empty list for a contract without transfers", async () => {
    const response = await getJson(`${metrics}/v2/chains/${QUARRY}/contracts/0x${"12".repeat(20)}/balances?threshold=0`);
    expectContract(response, "metrics", HOLDERS_ROUTE, 200);
    expect((response.body as LookingGlassResponse).addresses).toEqual([]);
  });

  it.each([
    ["no threshold", `/v2/chains/${QUARRY}/contracts/0x${"12".repeat(20)}/balances`, "threshold should not be empty"],
    [
      "a threshold that is not a whole number",
      `/v2/chains/${QUARRY}/contracts/0x${"12".repeat(20)}/balances?threshold=1.5`,
      "threshold must be a non-negative integer string",
    ],
    ["a malformed address", `/v2/chains/${QUARRY}/contracts/0x12/balances?threshold=0`, "address must be an EVM address"],
    [
      "pageSize over 5000",
      `/v2/chains/${QUARRY}/contracts/0x${"12".repeat(20)}/balances?threshold=0&pageSize=5001`,
      "pageSize must not be greater than 5000",
    ],
  ])("answers 400 for %s", async (_, path, message) => {
    const response = await getJson(`${metrics}${path}`);
    expectContract(response, "metrics", HOLDERS_ROUTE, 400);
    expect((response.body as ErrorBody).message).toBe(message);
  });

  it("lists BTC.b bridgers above a threshold, the largest net amount first", async () => {
    const all = await getJson(`${metrics}/v2/chains/43114/btcb/bridged:getAddresses?threshold=0&pageSize=5000`);
    expectContract(all, "metrics", BTCB_ROUTE, 200);
    const { addresses } = all.body as LookingGlassResponse;
    expect(addresses.length).toBeGreaterThan(5);
    const threshold = BigInt(addresses[3]!.sortKey);
    const above = (await getJson(`${metrics}/v2/chains/43114/btcb/bridged:getAddresses?threshold=${threshold}`))
      .body as LookingGlassResponse;
    expect(above.addresses).toEqual(addresses.filter((entry) => BigInt(entry.sortKey) > threshold));
    const missing = await getJson(`${metrics}/v2/chains/43114/btcb/bridged:getAddresses`);
    expectContract(missing, "metrics", BTCB_ROUTE, 400);
  }, 60_000);
});

describe("legacy average TPS", () => {
  async function legacyPages(base: string): Promise<JsonResponse[]> {
    const pages: JsonResponse[] = [];
    let token: string | undefined;
    do {
      const response = await getJson(`${base}/v1/avg_tps/43114${token ? `?pageToken=${token}` : ""}`);
      expectContract(response, "metrics", LEGACY_ROUTE, 200);
      pages.push(response);
      const body = response.body as LegacyEvmMetricsResponse;
      token = body.nextPageToken ?? body.nextPageStartKey;
    } while (token);
    return pages;
  }

  it("serves the daily average TPS in pages, with its status and last run, under either cursor name", async () => {
    const daily = await series("/v2/chains/43114/metrics/avgTps");
    const chain = simulator.network.chain("43114")!;
    const older = await startSimulator({ legacyAvgTpsCursor: "nextPageStartKey" });
    try {
      for (const [base, cursor, other] of [
        [metrics, "nextPageToken", "nextPageStartKey"],
        [older.metricsUrl, "nextPageStartKey", "nextPageToken"],
      ] as const) {
        const pages = await legacyPages(base);
        expect(pages.length).toBeGreaterThan(1);
        const bodies = pages.map((page) => page.body as LegacyEvmMetricsResponse);
        expect(bodies[0]![cursor]).toBeTypeOf("string");
        expect(bodies.every((body) => body[other] === undefined)).toBe(true);
        expect(bodies.flatMap((body) => body.results)).toEqual(daily);
        expect(bodies[0]).toMatchObject({ status: 200, lastRun: chain.blocks.blockTimestamp(chain.blocks.headNumber) });
      }
    } finally {
      await older.close();
    }
  });

  it("answers 404 for an unknown chain", async () => {
    expectContract(await getJson(`${metrics}/v1/avg_tps/999999`), "metrics", LEGACY_ROUTE, 404);
  });
});
