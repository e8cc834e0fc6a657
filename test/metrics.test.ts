import type { GraphQLFormattedError } from "graphql";
import { afterAll, describe, expect, it } from "vitest";
import { graphqlEnumName } from "../schema/enums.ts";
import { loadConfig } from "../src/config.ts";
import { createLogger } from "../src/telemetry/logger.ts";
import {
  chainMetricValues,
  networkMetricValues,
  pathsV2SubnetSubnetIdMetricsMetricGetParametersPathMetricValues as subnetMetricValues,
  pathsV2ValidatorsMetricsMetricGetParametersPathMetricValues as validatorFeeMetricValues,
  type components,
} from "../src/upstream/contract/metrics-api.ts";
import { createGateway } from "../src/gateway.ts";
import { DAY_ONLY_CHAIN_METRICS } from "../src/upstream/metric-rules.ts";
import { startSimulator } from "../simulator/server.ts";
import {
  BtcbBridgedAddressesDocument,
  ChainAvgTpsDocument,
  ChainMetricsDocument,
  DailyTxCountWithBlocksDocument,
  NetworkMetricsDocument,
  StakingMetricsDocument,
  SubnetMetricsDocument,
  TokenHoldersDocument,
  ValidatorFeeMetricsDocument,
  type ChainMetric,
  type StakingMetric,
  type SubnetMetric,
  type ValidatorFeeMetric,
} from "./generated/graphql.ts";
import { execute, simulatorGet, upstreamCalls, type Harness, useHarness } from "./support/harness.ts";

type MetricsApiResponse = components["schemas"]["MetricsApiResponse"];
type LookingGlassResponse = components["schemas"]["LookingGlassResponse"];
type Point = { value: number; valueExact: string; timestamp: number; time: string };

const CHAIN_ROUTE = "GET /v2/chains/{chainId}/metrics/{metric}";
const C_CHAIN = "43114";
/** A quiet L1: its transactions are read quickly. */
const QUARRY = "51288";
const DAY = 86_400;
const PRIMARY_NETWORK_SUBNET_ID = "11111111111111111111111111111111LpoYY";
const DAY_ONLY = [...DAY_ONLY_CHAIN_METRICS];

const harness = useHarness();

/** A whole series straight from the simulator, newest first. */
async function upstreamSeries(path: string): Promise<MetricsApiResponse["results"]> {
  const separator = path.includes("?") ? "&" : "?";
  return (await simulatorGet<MetricsApiResponse>(harness, "metrics", `${path}${separator}pageSize=2160`)).results;
}

/** The points as the gateway answers them: `valueExact` is checked against `value` by `exactAsSent`, and digit for digit where it matters. */
function withTime(points: MetricsApiResponse["results"]): Point[] {
  return points.map((point) => ({
    ...point,
    valueExact: expect.any(String) as unknown as string,
    time: new Date(point.timestamp * 1000).toISOString(),
  }));
}

/** Every point's exact value is a plain decimal that names the same double as its `value`. */
function exactAsSent(points: readonly { value: number; valueExact: string }[]): void {
  for (const point of points) {
    expect(point.valueExact).toMatch(/^-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?$/);
    expect(Number(point.valueExact)).toBe(point.value);
  }
}

function nodesOf<Node>(connection: { edges: { node: Node }[] } | null | undefined): Node[] {
  return connection!.edges.map((edge) => edge.node);
}

function onlyError(errors: readonly GraphQLFormattedError[] | undefined): GraphQLFormattedError {
  expect(errors).toHaveLength(1);
  return errors![0]!;
}

describe("EvmChain.metrics", () => {
  it("agrees with the chain's blocks: a day's txCount is the sum of that day's blocks, asked in one query", async () => {
    const result = await execute(harness, DailyTxCountWithBlocksDocument, { chainId: C_CHAIN, days: 4, blocks: 100 });
    expect(result.body.errors).toBeUndefined();
    expect(upstreamCalls(harness)).toEqual({ [CHAIN_ROUTE]: 1, "GET /v1/chains": 1, "GET /v1/chains/{chainId}/blocks": 1 });
    const { metrics, blocks } = result.body.data!.chain!;
    const perDay = new Map<number, number>();
    for (const block of blocks!.nodes) {
      const day = block.blockTimestamp - (block.blockTimestamp % DAY);
      perDay.set(day, (perDay.get(day) ?? 0) + block.txCount);
    }
    // The page's oldest day may have older blocks beyond the page; every newer day is whole.
    const oldestDay = Math.min(...perDay.keys());
    const compared = metrics!.nodes.filter((point) => perDay.has(point.timestamp) && point.timestamp > oldestDay);
    expect(compared.length).toBeGreaterThanOrEqual(2);
    for (const point of compared) {
      expect(point.value).toBe(perDay.get(point.timestamp));
      expect(point.time).toBe(new Date(point.timestamp * 1000).toISOString());
    }
  });

  it.each(chainMetricValues)(
    "serves %s as the Metrics API has it, with a date per point",
    async (metric) => {
      const result = await execute(harness, ChainMetricsDocument, {
        chainId: QUARRY,
        metric: graphqlEnumName(metric) as ChainMetric,
        first: 10,
      });
      expect(result.body.errors).toBeUndefined();
      expect(upstreamCalls(harness)).toEqual({ [CHAIN_ROUTE]: 1, "GET /v1/chains": 1 });
      const expected = (await upstreamSeries(`/v2/chains/${QUARRY}/metrics/${metric}?timeInterval=day`)).slice(0, 10);
      expect(result.body.data!.chain!.metrics!.edges.map((edge) => edge.node)).toEqual(withTime(expected));
      exactAsSent(nodesOf(result.body.data!.chain!.metrics));
      expect(result.body.data!.chain!.metrics!.pageInfo.hasNextPage).toBe(true);
      expect(result.body.data!.chain!.metrics!.chain).toEqual({ chainId: QUARRY });
    },
    60_000,
  );

  it.each(["HOUR", "DAY", "WEEK", "MONTH"] as const)(
    "serves TX_COUNT at interval %s, each point at the interval's start",
    async (interval) => {
      const result = await execute(harness, ChainMetricsDocument, { chainId: C_CHAIN, metric: "TX_COUNT", interval, first: 6 });
      expect(result.body.errors).toBeUndefined();
      const points = result.body.data!.chain!.metrics!.edges.map((edge) => edge.node);
      const expected = (
        await upstreamSeries(`/v2/chains/${C_CHAIN}/metrics/txCount?timeInterval=${interval.toLowerCase()}`)
      ).slice(0, 6);
      expect(points).toEqual(withTime(expected));
      for (const point of points) {
        const date = new Date(point.time);
        expect(date.getUTCMinutes() + date.getUTCSeconds()).toBe(0);
        if (interval !== "HOUR") expect(date.getUTCHours()).toBe(0);
        if (interval === "WEEK") expect(date.getUTCDay()).toBe(1);
        if (interval === "MONTH") expect(date.getUTCDate()).toBe(1);
      }
    },
  );

  it("pages forward exactly like the Metrics API, resuming after any edge, one call per page", async () => {
    const expected = withTime((await upstreamSeries(`/v2/chains/${C_CHAIN}/metrics/gasUsed?timeInterval=week`)).slice(0, 12));
    harness.simulator.resetCounters();
    const variables = { chainId: C_CHAIN, metric: "GAS_USED" as const, interval: "WEEK" as const, first: 5 };
    const first = await execute(harness, ChainMetricsDocument, variables);
    const second = await execute(harness, ChainMetricsDocument, {
      ...variables,
      after: first.body.data!.chain!.metrics!.pageInfo.endCursor,
    });
    expect(upstreamCalls(harness)).toMatchObject({ [CHAIN_ROUTE]: 2 });
    const pages = [first, second].flatMap((page) => page.body.data!.chain!.metrics!.edges.map((edge) => edge.node));
    expect(pages).toEqual(expected.slice(0, 10));
    const middle = first.body.data!.chain!.metrics!.edges[2]!.cursor;
    const resumed = await execute(harness, ChainMetricsDocument, { ...variables, after: middle });
    expect(resumed.body.data!.chain!.metrics!.edges.map((edge) => edge.node)).toEqual(expected.slice(3, 8));
  });

  it("accepts an unaligned from: the points start at or after it", async () => {
    const all = await upstreamSeries(`/v2/chains/${C_CHAIN}/metrics/txCount`);
    const from = all[4]!.timestamp + 1;
    const to = all[1]!.timestamp;
    const result = await execute(harness, ChainMetricsDocument, { chainId: C_CHAIN, metric: "TX_COUNT", from, to });
    expect(result.body.errors).toBeUndefined();
    expect(result.body.data!.chain!.metrics!.edges.map((edge) => edge.node)).toEqual(withTime(all.slice(1, 4)));
  });
});

describe("Query.networkMetrics", () => {
  it("adds up the daily txCount of every chain of the scope", async () => {
    const scopes = {
      TOTAL: harness.simulator.network.chains,
      MAINNET: harness.simulator.network.chainsOn("mainnet"),
      FUJI: harness.simulator.network.chainsOn("fuji"),
    };
    for (const [scope, chains] of Object.entries(scopes)) {
      harness.simulator.resetCounters();
      const result = await execute(harness, NetworkMetricsDocument, { scope: scope as "TOTAL", metric: "TX_COUNT", first: 5 });
      expect(result.body.errors).toBeUndefined();
      expect(upstreamCalls(harness)).toEqual({ [CHAIN_ROUTE]: 1 });
      expect(harness.simulator.requests().at(-1)!.path).toBe(
        `/v2/chains/${scope === "FUJI" ? "testnet" : scope.toLowerCase()}/metrics/txCount`,
      );
      // A network-wide series measures no one chain.
      expect(result.body.data!.networkMetrics!.chain).toBeNull();
      const perChain = await Promise.all(chains.map((chain) => upstreamSeries(`/v2/chains/${chain.evmChainId}/metrics/txCount`)));
      for (const { node } of result.body.data!.networkMetrics!.edges) {
        const sum = perChain.reduce(
          (total, points) => total + (points.find((point) => point.timestamp === node.timestamp)?.value ?? 0),
          0,
        );
        expect(node.value).toBe(sum);
      }
    }
  });
});

describe("argument rules, checked before any upstream call", () => {
  it.each(DAY_ONLY.flatMap((metric) => (["HOUR", "WEEK", "MONTH"] as const).map((interval) => [metric, interval] as const)))(
    "refuses %s at interval %s, naming the interval argument",
    async (metric, interval) => {
      const name = graphqlEnumName(metric) as ChainMetric;
      const network = await execute(harness, NetworkMetricsDocument, { scope: "TOTAL", metric: name, interval });
      const error = onlyError(network.body.errors);
      expect(error.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "interval" });
      expect(error.message).toBe(
        `interval must be DAY for ${name}: cumulative, average and maximum metrics, CONTRACTS, DEPLOYERS and FEES_PAID are daily only`,
      );
      const chain = await execute(harness, ChainMetricsDocument, { chainId: C_CHAIN, metric: name, interval });
      expect(onlyError(chain.body.errors).extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "interval" });
      expect(upstreamCalls(harness)).toEqual({ "GET /v1/chains": 1 });
    },
  );

  const cases: [string, () => Promise<{ body: { errors?: readonly GraphQLFormattedError[] } }>, string, string][] = [
    [
      "chain metrics first over 2160",
      () => execute(harness, NetworkMetricsDocument, { scope: "TOTAL", metric: "TX_COUNT", first: 2161 }),
      "first",
      "first must be between 0 and 2160, got 2161",
    ],
    [
      "a negative from",
      () => execute(harness, NetworkMetricsDocument, { scope: "TOTAL", metric: "TX_COUNT", from: -1 }),
      "from",
      "from must be a Unix time in seconds of at least 0, got -1",
    ],
    [
      "a negative to",
      () => execute(harness, NetworkMetricsDocument, { scope: "MAINNET", metric: "TX_COUNT", to: -5 }),
      "to",
      "to must be a Unix time in seconds of at least 0, got -5",
    ],
    [
      "from after to",
      () => execute(harness, NetworkMetricsDocument, { scope: "TOTAL", metric: "TX_COUNT", from: 200, to: 100 }),
      "from",
      "from must not be after to, got from 200 and to 100",
    ],
    [
      "staking first over 2160",
      () => execute(harness, StakingMetricsDocument, { network: "MAINNET", metric: "VALIDATOR_COUNT", first: 2161 }),
      "first",
      "first must be between 0 and 2160, got 2161",
    ],
    [
      "staking with a negative from",
      () => execute(harness, StakingMetricsDocument, { network: "FUJI", metric: "DELEGATOR_COUNT", from: -1 }),
      "from",
      "from must be a Unix time in seconds of at least 0, got -1",
    ],
    [
      "staking with a malformed subnet id",
      () => execute(harness, StakingMetricsDocument, { network: "MAINNET", metric: "VALIDATOR_COUNT", subnetId: "subnet!" }),
      "subnetId",
      'subnetId must be a subnet id in cb58, got "subnet!"',
    ],
    [
      "subnet metrics first over 2160",
      () =>
        execute(harness, SubnetMetricsDocument, {
          subnetId: "11111111111111111111111111111111LpoYY",
          metric: "PER_SUBNET_DAILY_FEES_PAID",
          first: 2161,
        }),
      "first",
      "first must be between 0 and 2160, got 2161",
    ],
    [
      "subnet metrics with a malformed subnet id",
      () => execute(harness, SubnetMetricsDocument, { subnetId: "0x12", metric: "PER_SUBNET_DAILY_FEES_PAID" }),
      "subnetId",
      'subnetId must be a subnet id in cb58, got "0x12"',
    ],
    [
      "validator fee metrics with to before from",
      () => execute(harness, ValidatorFeeMetricsDocument, { metric: "TOTAL_VALIDATOR_FEES_DAILY", from: 10, to: 9 }),
      "from",
      "from must not be after to, got from 10 and to 9",
    ],
    [
      "BTC.b first over 5000",
      () => execute(harness, BtcbBridgedAddressesDocument, { threshold: "0", first: 5001 }),
      "first",
      "first must be between 0 and 5000, got 5001",
    ],
    [
      "a negative BTC.b threshold",
      () => execute(harness, BtcbBridgedAddressesDocument, { threshold: "-1" }),
      "threshold",
      "threshold must be 0 or more, got -1",
    ],
  ];

  it.each(cases)("refuses %s", async (_, run, argument, message) => {
    const result = await run();
    const error = onlyError(result.body.errors);
    expect(error.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument });
    expect(error.message).toBe(message);
    expect(upstreamCalls(harness)).toEqual({});
  });

  const chainCases: [string, () => Promise<{ body: { errors?: readonly GraphQLFormattedError[] } }>, string, string][] = [
    [
      "chain metrics first over 2160",
      () => execute(harness, ChainMetricsDocument, { chainId: C_CHAIN, metric: "TX_COUNT", first: 2161 }),
      "first",
      "first must be between 0 and 2160, got 2161",
    ],
    [
      "chain metrics with a negative to",
      () => execute(harness, ChainMetricsDocument, { chainId: C_CHAIN, metric: "TX_COUNT", to: -1 }),
      "to",
      "to must be a Unix time in seconds of at least 0, got -1",
    ],
    [
      "token holders first over 5000",
      () =>
        execute(harness, TokenHoldersDocument, {
          chainId: C_CHAIN,
          contract: `0x${"12".repeat(20)}`,
          threshold: "0",
          first: 5001,
        }),
      "first",
      "first must be between 0 and 5000, got 5001",
    ],
    [
      "a negative token holders threshold",
      () => execute(harness, TokenHoldersDocument, { chainId: C_CHAIN, contract: `0x${"12".repeat(20)}`, threshold: "-7" }),
      "threshold",
      "threshold must be 0 or more, got -7",
    ],
    [
      "token holders with a negative from",
      () =>
        execute(harness, TokenHoldersDocument, { chainId: C_CHAIN, contract: `0x${"12".repeat(20)}`, threshold: "0", from: -1 }),
      "from",
      "from must be a Unix time in seconds of at least 0, got -1",
    ],
    // The legacy route answers 100 points a page, and a page of avgTps never spans two of its pages.
    [
      "avgTps first over 100",
      () => execute(harness, ChainAvgTpsDocument, { chainId: C_CHAIN, first: 101 }),
      "first",
      "first must be between 0 and 100, got 101",
    ],
    // `first: 0` reads no page, and only a page tells the route's status and lastRun.
    [
      "avgTps first 0 with its status and lastRun",
      () => execute(harness, ChainAvgTpsDocument, { chainId: C_CHAIN, first: 0 }),
      "first",
      "first must be between 1 and 100 when status, lastRun or lastRunTime is selected (the legacy route tells them with a page of points), got 0",
    ],
  ];

  it.each(chainCases)("refuses %s on a chain, asking only for the chain", async (_, run, argument, message) => {
    const result = await run();
    const error = onlyError(result.body.errors);
    expect(error.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument });
    expect(error.message).toBe(message);
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/chains": 1 });
  });

  it("refuses a malformed contract address before running", async () => {
    const result = await execute(harness, TokenHoldersDocument, { chainId: C_CHAIN, contract: "0x12", threshold: "0" });
    expect(onlyError(result.body.errors).extensions).toMatchObject({ code: "BAD_USER_INPUT" });
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("refuses a cursor of another metric", async () => {
    const first = await execute(harness, NetworkMetricsDocument, { scope: "TOTAL", metric: "TX_COUNT", first: 2 });
    harness.simulator.resetCounters();
    const other = await execute(harness, NetworkMetricsDocument, {
      scope: "TOTAL",
      metric: "GAS_USED",
      after: first.body.data!.networkMetrics!.pageInfo.endCursor,
    });
    expect(onlyError(other.body.errors).extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "after" });
    expect(upstreamCalls(harness)).toEqual({});
  });
});

describe("staking, subnet and validator fee metrics", () => {
  const l1Subnet = () => harness.simulator.network.primaryNetwork("mainnet").l1Validators[0]!.subnetId;

  it.each(networkMetricValues)(
    "serves %s of all subnets, of the primary network and of an L1, as the Metrics API has them",
    async (metric) => {
      for (const subnetId of [undefined, PRIMARY_NETWORK_SUBNET_ID, l1Subnet()]) {
        harness.simulator.resetCounters();
        const result = await execute(harness, StakingMetricsDocument, {
          network: "MAINNET",
          metric: graphqlEnumName(metric) as StakingMetric,
          subnetId,
          first: 20,
        });
        expect(result.body.errors).toBeUndefined();
        expect(upstreamCalls(harness)).toEqual({ "GET /v2/networks/{network}/metrics/{metric}": 1 });
        // Left out, subnetId is not sent: the Metrics API then answers for all subnets.
        const sent = harness.simulator.requests().at(-1)!;
        expect(sent.query.subnetId).toBe(subnetId);
        const expected = await upstreamSeries(`/v2/networks/mainnet/metrics/${metric}${subnetId ? `?subnetId=${subnetId}` : ""}`);
        expect(result.body.data!.primaryNetwork.stakingMetrics!.edges.map((edge) => edge.node)).toEqual(
          withTime(expected.slice(0, 20)),
        );
      }
    },
  );

  it.each(subnetMetricValues)("serves %s of an L1, paged by the gateway from one answer per page", async (metric) => {
    const expected = withTime(await upstreamSeries(`/v2/subnet/${l1Subnet()}/metrics/${metric}`));
    harness.simulator.resetCounters();
    const variables = { subnetId: l1Subnet(), metric: graphqlEnumName(metric) as SubnetMetric, first: 15 };
    const first = await execute(harness, SubnetMetricsDocument, variables);
    const second = await execute(harness, SubnetMetricsDocument, {
      ...variables,
      after: first.body.data!.subnetMetrics!.pageInfo.endCursor,
    });
    expect(upstreamCalls(harness)).toEqual({ "GET /v2/subnet/{subnetId}/metrics/{metric}": 2 });
    const points = [first, second].flatMap((page) => page.body.data!.subnetMetrics!.edges.map((edge) => edge.node));
    expect(points).toEqual(expected.slice(0, 30));
    expect(second.body.data!.subnetMetrics!.pageInfo.hasNextPage).toBe(expected.length > 30);
  });

  it.each(validatorFeeMetricValues)("serves %s, whole or within a time range", async (metric) => {
    const expected = withTime(await upstreamSeries(`/v2/validators/metrics/${metric}`));
    const name = graphqlEnumName(metric) as ValidatorFeeMetric;
    const all = await execute(harness, ValidatorFeeMetricsDocument, { metric: name, first: 2160 });
    expect(all.body.data!.validatorFeeMetrics!.edges.map((edge) => edge.node)).toEqual(expected);
    expect(all.body.data!.validatorFeeMetrics!.pageInfo.hasNextPage).toBe(false);
    const ranged = await execute(harness, ValidatorFeeMetricsDocument, {
      metric: name,
      from: expected[9]!.timestamp,
      to: expected[2]!.timestamp,
    });
    expect(ranged.body.data!.validatorFeeMetrics!.edges.map((edge) => edge.node)).toEqual(expected.slice(2, 10));
  });

  it("adds the subnets' daily fees up to the total, and the days up to the cumulative total", async () => {
    const daily = await execute(harness, ValidatorFeeMetricsDocument, { metric: "TOTAL_VALIDATOR_FEES_DAILY", first: 2160 });
    const cumulative = await execute(harness, ValidatorFeeMetricsDocument, {
      metric: "TOTAL_CUMULATIVE_FEES_DAILY",
      first: 2160,
    });
    const subnet = await execute(harness, SubnetMetricsDocument, {
      subnetId: l1Subnet(),
      metric: "PER_SUBNET_DAILY_FEES_PAID",
      first: 2160,
    });
    const subnets = new Set(
      harness.simulator.network.primaryNetwork("mainnet").l1Validators.map((validator) => validator.subnetId),
    );
    const days = nodesOf(daily.body.data!.validatorFeeMetrics);
    if (subnets.size === 1) expect(nodesOf(subnet.body.data!.subnetMetrics)).toEqual(days);
    let total = 0;
    const running = [...days]
      .reverse()
      .map((point) => (total += point.value))
      .reverse();
    expect(nodesOf(cumulative.body.data!.validatorFeeMetrics).map((point) => point.value)).toEqual(running);
  });
});

describe("address lists", () => {
  const tokenOf = (chainId: string, symbol: string) =>
    harness.simulator.network
      .transactions(harness.simulator.network.chain(chainId)!)
      .catalog.erc20.find((token) => token.symbol === symbol)!.address;

  it("pages a token's holders like the Metrics API, with their amounts", async () => {
    const contract = tokenOf(QUARRY, "USDC");
    const expected = (
      await simulatorGet<LookingGlassResponse>(
        harness,
        "metrics",
        `/v2/chains/${QUARRY}/contracts/${contract}/balances?threshold=1000&pageSize=40`,
      )
    ).addresses;
    harness.simulator.resetCounters();
    const variables = { chainId: QUARRY, contract, threshold: "1000", first: 20 };
    const first = await execute(harness, TokenHoldersDocument, variables);
    const second = await execute(harness, TokenHoldersDocument, {
      ...variables,
      after: first.body.data!.chain!.tokenHolders!.pageInfo.endCursor,
    });
    // The chain record is cached after the first request.
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/chains": 1, "GET /v2/chains/{chainId}/contracts/{address}/balances": 2 });
    const nodes = [first, second].flatMap((page) => page.body.data!.chain!.tokenHolders!.edges.map((edge) => edge.node));
    expect(nodes).toEqual(expected.map((entry) => ({ ...entry, amount: entry.sortKey })));
    for (const node of nodes) expect(BigInt(node.amount!) >= 0n).toBe(true);
  });

  it("narrows holders to a time frame", async () => {
    const contract = tokenOf(QUARRY, "USDt");
    const blocks = harness.simulator.network.chain(QUARRY)!.blocks;
    const to = blocks.blockTimestamp(blocks.headNumber) - 30 * DAY;
    const from = to - 2 * DAY;
    const expected = (
      await simulatorGet<LookingGlassResponse>(
        harness,
        "metrics",
        `/v2/chains/${QUARRY}/contracts/${contract}/balances?threshold=0&startTimestamp=${from}&endTimestamp=${to}&pageSize=5000`,
      )
    ).addresses;
    const result = await execute(harness, TokenHoldersDocument, {
      chainId: QUARRY,
      contract,
      threshold: "0",
      from,
      to,
      first: 5000,
    });
    expect(result.body.errors).toBeUndefined();
    expect(nodesOf(result.body.data!.chain!.tokenHolders).map((node) => node.address)).toEqual(
      expected.map((entry) => entry.address),
    );
    expect(expected.length).toBeGreaterThan(0);
  });

  it("lists BTC.b bridgers above a threshold, the largest first", async () => {
    const expected = (
      await simulatorGet<LookingGlassResponse>(
        harness,
        "metrics",
        "/v2/chains/43114/btcb/bridged:getAddresses?threshold=0&pageSize=5000",
      )
    ).addresses;
    const threshold = expected[5]!.sortKey;
    harness.simulator.resetCounters();
    const result = await execute(harness, BtcbBridgedAddressesDocument, { threshold });
    expect(result.body.errors).toBeUndefined();
    expect(upstreamCalls(harness)).toEqual({ "GET /v2/chains/43114/btcb/bridged:getAddresses": 1 });
    expect(nodesOf(result.body.data!.btcbBridgedAddresses)).toEqual(
      expected.slice(0, 5).map((entry) => ({ ...entry, amount: entry.sortKey })),
    );
  }, 60_000);
});

describe("page tokens that expired upstream", () => {
  afterAll(() => harness.simulator.setKnobs({ metricsTokenTtlMs: 24 * 3600 * 1000 }));

  const expiring: [
    string,
    () => Promise<string>,
    (after: string) => Promise<{ body: { errors?: readonly GraphQLFormattedError[] } }>,
  ][] = [
    [
      "EvmChain.metrics",
      async () =>
        (await execute(harness, ChainMetricsDocument, { chainId: C_CHAIN, metric: "TX_COUNT", first: 3 })).body.data!.chain!
          .metrics!.pageInfo.endCursor!,
      (after) => execute(harness, ChainMetricsDocument, { chainId: C_CHAIN, metric: "TX_COUNT", first: 3, after }),
    ],
    [
      "Query.networkMetrics",
      async () =>
        (await execute(harness, NetworkMetricsDocument, { scope: "TOTAL", metric: "GAS_USED", first: 3 })).body.data!
          .networkMetrics!.pageInfo.endCursor!,
      (after) => execute(harness, NetworkMetricsDocument, { scope: "TOTAL", metric: "GAS_USED", first: 3, after }),
    ],
    [
      "PrimaryNetwork.stakingMetrics",
      async () =>
        (await execute(harness, StakingMetricsDocument, { network: "FUJI", metric: "VALIDATOR_WEIGHT", first: 3 })).body.data!
          .primaryNetwork.stakingMetrics!.pageInfo.endCursor!,
      (after) => execute(harness, StakingMetricsDocument, { network: "FUJI", metric: "VALIDATOR_WEIGHT", first: 3, after }),
    ],
    [
      "EvmChain.tokenHolders",
      async () => {
        const contract = harness.simulator.network.transactions(harness.simulator.network.chain(QUARRY)!).catalog.erc20[0]!
          .address;
        return (await execute(harness, TokenHoldersDocument, { chainId: QUARRY, contract, threshold: "0", first: 2 })).body.data!
          .chain!.tokenHolders!.pageInfo.endCursor!;
      },
      (after) => {
        const contract = harness.simulator.network.transactions(harness.simulator.network.chain(QUARRY)!).catalog.erc20[0]!
          .address;
        return execute(harness, TokenHoldersDocument, { chainId: QUARRY, contract, threshold: "0", first: 2, after });
      },
    ],
    [
      "EvmChain.avgTps",
      // The legacy route's first page holds 100 points: the 100th edge continues with its token.
      async () =>
        (await execute(harness, ChainAvgTpsDocument, { chainId: C_CHAIN, first: 100 })).body.data!.chain!.avgTps!.pageInfo
          .endCursor!,
      (after) => execute(harness, ChainAvgTpsDocument, { chainId: C_CHAIN, first: 10, after }),
    ],
  ];

  it.each(expiring)(
    "%s answers CURSOR_EXPIRED for a cursor whose upstream page token expired, and the first page again",
    async (_, firstPage, next) => {
      harness.simulator.setKnobs({ metricsTokenTtlMs: 24 * 3600 * 1000 });
      const after = await firstPage();
      const fresh = await next(after);
      expect(fresh.body.errors).toBeUndefined();
      harness.simulator.setKnobs({ metricsTokenTtlMs: 1 });
      await new Promise((resolve) => setTimeout(resolve, 10));
      const expired = await next(after);
      const error = onlyError(expired.body.errors);
      expect(error.extensions).toMatchObject({ code: "CURSOR_EXPIRED", argument: "after", upstream: { status: 400 } });
      expect(error.message).toMatch(/request the first page again/);
      await expect(firstPage()).resolves.toBeTypeOf("string");
    },
  );
});

describe("EvmChain.avgTps", () => {
  async function allPages(target: Harness) {
    const points: Point[] = [];
    let after: string | null | undefined;
    let status: number | undefined;
    let lastRun: number | null | undefined;
    do {
      const result = await execute(target, ChainAvgTpsDocument, { chainId: C_CHAIN, first: 45, after });
      expect(result.body.errors).toBeUndefined();
      const avgTps = result.body.data!.chain!.avgTps!;
      points.push(...avgTps.edges.map((edge) => edge.node));
      ({ status, lastRun } = avgTps);
      expect(avgTps.lastRunTime).toBe(new Date(avgTps.lastRun! * 1000).toISOString());
      after = avgTps.pageInfo.hasNextPage ? avgTps.pageInfo.endCursor : undefined;
    } while (after);
    return { points, status, lastRun };
  }

  it("answers first: 0 with an empty page when status, lastRun and lastRunTime are not asked, as @skip and @include decide", async () => {
    const query = `query ($skipStatus: Boolean!) {
      chain(id: "${C_CHAIN}") {
        avgTps(first: 0) {
          status @skip(if: $skipStatus)
          ... @include(if: false) { lastRun }
          ...Later @skip(if: $skipStatus)
          pageInfo { hasNextPage }
        }
      }
    }
    fragment Later on LegacyAvgTpsConnection { lastRunTime }`;
    const skipped = await execute(harness, query, { skipStatus: true });
    expect(skipped.body).toEqual({ data: { chain: { avgTps: { pageInfo: { hasNextPage: false } } } } });
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/chains": 1 });

    harness.simulator.resetCounters();
    const asked = await execute(harness, query, { skipStatus: false });
    expect(asked.body.data).toEqual({ chain: { avgTps: null } });
    expect(onlyError(asked.body.errors).extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "first", min: 1 });
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("pages through the legacy route under either cursor name, the same points as the daily AVG_TPS", async () => {
    const daily = withTime(await upstreamSeries(`/v2/chains/${C_CHAIN}/metrics/avgTps`));
    const head = harness.simulator.network.chain(C_CHAIN)!.blocks;
    const current = await allPages(harness);
    expect(current).toEqual({ points: daily, status: 200, lastRun: head.blockTimestamp(head.headNumber) });

    // A Metrics API that names its cursor as the older spec does.
    const simulator = await startSimulator({ legacyAvgTpsCursor: "nextPageStartKey" });
    const config = loadConfig({ LOG_LEVEL: "silent", RESPONSE_CACHE_TTL_MS: "0" });
    const gateway = createGateway(
      config,
      { dataApiUrl: simulator.dataUrl, metricsApiUrl: simulator.metricsUrl },
      createLogger("silent"),
    );
    const older: Harness = { simulator, gateway, config, close: async () => {} };
    try {
      const raw = await fetch(`${simulator.metricsUrl}/v1/avg_tps/${C_CHAIN}`).then((response) => response.json());
      expect(raw).toHaveProperty("nextPageStartKey");
      expect(raw).not.toHaveProperty("nextPageToken");
      expect(await allPages(older)).toEqual(current);
    } finally {
      await gateway.close();
      await simulator.close();
    }
  });
});

describe("a chain the Metrics API does not know", () => {
  it("has null metrics, holders and avgTps, without failing the chain", async () => {
    const unknownChain = await startSimulator({});
    // A Metrics API without the chain: every metrics route of it answers 404.
    unknownChain.setKnobs({
      errorRate: 1,
      errorStatus: 404,
      errorRoutes: [CHAIN_ROUTE, "GET /v1/avg_tps/{chainId}", "GET /v2/chains/{chainId}/contracts/{address}/balances"],
    });
    const config = loadConfig({ LOG_LEVEL: "silent", RESPONSE_CACHE_TTL_MS: "0" });
    const gateway = createGateway(
      config,
      { dataApiUrl: unknownChain.dataUrl, metricsApiUrl: unknownChain.metricsUrl },
      createLogger("silent"),
    );
    const target: Harness = { simulator: unknownChain, gateway, config, close: async () => {} };
    try {
      const metrics = await execute(target, ChainMetricsDocument, { chainId: QUARRY, metric: "TX_COUNT" });
      expect(metrics.body.errors).toBeUndefined();
      expect(metrics.body.data!.chain!.metrics).toBeNull();
      const avgTps = await execute(target, ChainAvgTpsDocument, { chainId: QUARRY });
      expect(avgTps.body.data!.chain!.avgTps).toBeNull();
      const holders = await execute(target, TokenHoldersDocument, {
        chainId: QUARRY,
        contract: `0x${"12".repeat(20)}`,
        threshold: "0",
      });
      expect(holders.body.data!.chain!.tokenHolders).toBeNull();
    } finally {
      await gateway.close();
      await unknownChain.close();
    }
  });
});

describe("failures stay local", () => {
  afterAll(() => harness.simulator.setKnobs({ errorRate: 0, errorRoutes: [] }));

  it("keeps the chain beside a subnetMetrics whose subnet id is refused, the error at the alias's path", async () => {
    const result = await execute(
      harness,
      `{ chain(id: "43114") { chainName } s: subnetMetrics(subnetId: "!!", metric: PER_SUBNET_DAILY_FEES_PAID) { nodes { value } } }`,
    );
    expect(result.body.data).toEqual({ chain: { chainName: harness.simulator.network.chain(C_CHAIN)!.info.chainName }, s: null });
    const error = onlyError(result.body.errors);
    expect(error.path).toEqual(["s"]);
    expect(error.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "subnetId" });
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/chains": 1 });
  });

  it("keeps seven networkMetrics aliases when an eighth asks a daily-only metric by the hour", async () => {
    const good = ["TX_COUNT", "GAS_USED", "CUMULATIVE_TX_COUNT", "AVG_TPS", "AVG_GPS", "MAX_TPS", "MAX_GPS"];
    const aliases = good.map(
      (metric, index) => `m${index}: networkMetrics(scope: MAINNET, metric: ${metric}, first: 3) { nodes { timestamp value } }`,
    );
    const result = await execute(
      harness,
      `{ ${aliases.join(" ")} m7: networkMetrics(scope: MAINNET, metric: FEES_PAID, interval: HOUR) { nodes { value } } }`,
    );
    const error = onlyError(result.body.errors);
    expect(error.path).toEqual(["m7"]);
    expect(error.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "interval" });
    const data = result.body.data as Record<string, { nodes: unknown[] } | null>;
    expect(data.m7).toBeNull();
    for (const index of good.keys()) expect(data[`m${index}`]!.nodes).toHaveLength(3);
    // The refused alias made no call; each other made its own.
    expect(upstreamCalls(harness)).toEqual({ [CHAIN_ROUTE]: 7 });
  });

  it("keeps the chain beside a networkMetrics whose upstream call fails", async () => {
    harness.simulator.setKnobs({ errorRate: 1, errorStatus: 500, errorRoutes: [CHAIN_ROUTE] });
    const result = await execute(
      harness,
      `{ chain(id: "43114") { chainId } n: networkMetrics(scope: TOTAL, metric: TX_COUNT, first: 2) { nodes { value } } }`,
    );
    harness.simulator.setKnobs({ errorRate: 0, errorRoutes: [] });
    expect(result.body.data).toEqual({ chain: { chainId: C_CHAIN }, n: null });
    const error = onlyError(result.body.errors);
    expect(error.path).toEqual(["n"]);
    expect(error.extensions).toMatchObject({ code: "UPSTREAM_ERROR", upstream: { status: 500 } });
  });
});

describe("a metric body that is not JSON", () => {
  afterAll(() => harness.simulator.setKnobs({ errorRate: 0, errorRoutes: [], faultKind: "status" }));

  it("is UPSTREAM_ERROR on its own field, read through the lossless parser", async () => {
    harness.simulator.setKnobs({ errorRate: 1, errorRoutes: [CHAIN_ROUTE], faultKind: "malformed" });
    const result = await execute(
      harness,
      `{ chain(id: "43114") { chainId m: metrics(metric: FEES_PAID, first: 2) { nodes { valueExact } } } }`,
    );
    harness.simulator.setKnobs({ errorRate: 0, errorRoutes: [], faultKind: "status" });
    expect(result.body.data).toEqual({ chain: { chainId: C_CHAIN, m: null } });
    const error = onlyError(result.body.errors);
    expect(error.path).toEqual(["chain", "m"]);
    expect(error.extensions).toMatchObject({ code: "UPSTREAM_ERROR" });
  });
});

describe("exact metric values", () => {
  /** The fees of a day of a chain in wei, from its transactions: gas used times gas price, exactly. */
  function feesOfDay(chainId: string, day: number): bigint {
    const chain = harness.simulator.network.chain(chainId)!;
    const transactions = harness.simulator.network.transactions(chain);
    let fees = 0n;
    for (let number = chain.blocks.headNumber; number >= 0 && chain.blocks.blockTimestamp(number) >= day; number--) {
      if (chain.blocks.blockTimestamp(number) >= day + DAY) continue;
      const list = transactions.blockTransactions(number)!;
      for (let index = 0; index < list.length; index++) {
        const tx = transactions.transaction(list.at(index)!.txHash)!.nativeTransaction;
        fees += BigInt(tx.gasUsed) * BigInt(tx.gasPrice);
      }
    }
    return fees;
  }

  it("passes FEES_PAID above 2^53 to the client digit for digit, beside the rounded Float", async () => {
    const result = await execute(harness, ChainMetricsDocument, { chainId: C_CHAIN, metric: "FEES_PAID", first: 4 });
    expect(result.body.errors).toBeUndefined();
    const points = nodesOf(result.body.data!.chain!.metrics);
    expect(points).toHaveLength(4);
    let rounded = 0;
    for (const point of points) {
      const fees = feesOfDay(C_CHAIN, point.timestamp);
      expect(fees).toBeGreaterThan(2n ** 53n);
      expect(point.valueExact).toBe(fees.toString());
      expect(point.value).toBe(Number(fees));
      if (BigInt(point.value) !== fees) rounded += 1;
    }
    // The Float alone would have lost digits.
    expect(rounded).toBeGreaterThan(0);
  });

  it("adds network-wide fees up exactly", async () => {
    const result = await execute(harness, NetworkMetricsDocument, { scope: "FUJI", metric: "FEES_PAID", first: 2 });
    expect(result.body.errors).toBeUndefined();
    for (const point of nodesOf(result.body.data!.networkMetrics)) {
      const fees = harness.simulator.network
        .chainsOn("fuji")
        .reduce((total, chain) => total + feesOfDay(chain.evmChainId, point.timestamp), 0n);
      expect(point.valueExact).toBe(fees.toString());
    }
  }, 60_000);

  it("keeps fractional values as the service sent them", async () => {
    const result = await execute(harness, ChainMetricsDocument, { chainId: QUARRY, metric: "AVG_GAS_PRICE", first: 5 });
    const points = nodesOf(result.body.data!.chain!.metrics);
    exactAsSent(points);
    expect(points.some((point) => point.valueExact.includes("."))).toBe(true);
  });
});

describe("staking metrics of all subnets", () => {
  it("adds every subnet's validators up when subnetId is left out", async () => {
    const primary = harness.simulator.network.primaryNetwork("mainnet");
    const subnets = new Set<string>([PRIMARY_NETWORK_SUBNET_ID, ...primary.l1Validators.map((validator) => validator.subnetId)]);
    for (const tx of primary.transactions("P", {
      addresses: undefined,
      txTypes: new Set(["AddSubnetValidatorTx"]),
      startTimestamp: undefined,
      endTimestamp: undefined,
      l1ValidationId: undefined,
      sortOrder: "asc",
    })) {
      subnets.add((tx as { fields: { subnetId?: string } }).fields.subnetId!);
    }
    expect(subnets.size).toBeGreaterThan(1);
    const all = nodesOf(
      (await execute(harness, StakingMetricsDocument, { network: "MAINNET", metric: "VALIDATOR_COUNT", first: 30 })).body.data!
        .primaryNetwork.stakingMetrics,
    );
    const perSubnet = await Promise.all(
      [...subnets].map(async (subnetId) =>
        nodesOf(
          (await execute(harness, StakingMetricsDocument, { network: "MAINNET", metric: "VALIDATOR_COUNT", subnetId, first: 30 }))
            .body.data!.primaryNetwork.stakingMetrics,
        ),
      ),
    );
    const primaryOnly = perSubnet[0]!;
    expect(all.map((point) => point.timestamp)).toEqual(primaryOnly.map((point) => point.timestamp));
    all.forEach((point, index) => expect(point.value).toBe(perSubnet.reduce((total, points) => total + points[index]!.value, 0)));
    expect(all.some((point, index) => point.value > primaryOnly[index]!.value)).toBe(true);
  });
});
