/**
 * The rate limiter's charge against the calls a cold gateway makes, for every operation the
 * project has: each bench operation and each operation of test/operations/*.graphql, with the
 * variables its tests use. For each, a fresh gateway (empty caches, no chain-list preload) over
 * one simulator runs it once; the simulator's request log counts the upstream calls, and the
 * gateway's `ratelimit-remaining` tells what it charged. The estimate (what an operation pays
 * before it runs) must be tight, `1 <= estimate <= 1.5 × cold` for an operation that calls
 * upstream, and the charge once the operation is settled must be `max(estimate, cold)`: the
 * estimate, plus the calls it made beyond it (an operation that calls nothing still pays the 1
 * every request pays).
 */
import { readFileSync, readdirSync } from "node:fs";
import {
  Kind,
  parse,
  print,
  visit,
  type DefinitionNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
} from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { referenceOperations } from "../bench/operations/index.ts";
import { PlainUpstream } from "../bench/upstream.ts";
import { schema } from "../src/schema.ts";
import { newDocumentCost } from "../src/plugins/rate-limit.ts";
import { NO_FACTS, type KnownChain } from "../src/limits/known-facts.ts";
import { estimateCost } from "../src/limits/upstream-calls.ts";
import { decodeCb58 } from "../src/warp/cb58.ts";
import { l1Transactions } from "./support/sample-network.ts";
import { startSimulator } from "../simulator/server.ts";
import {
  execute,
  registerL1ValidatorTx,
  simulatorGet,
  startHarness,
  startInstance,
  until,
  upstreamCalls,
  type Harness,
  type Instance,
  type RunningSimulator,
} from "./support/harness.ts";

/** A bucket so deep and so slow that what a request took is what it was charged. */
const BURST = 1_000_000;
const BUDGET = { RATE_LIMIT_BURST: String(BURST), RATE_LIMIT_RATE: "0.000001" };
const C_CHAIN = "43114";
const QUARRY = "51288";

/** What the variables of an operation may be read from: the simulator, and a gateway of their own (not the measured one). */
interface Setup {
  simulator: RunningSimulator;
  harness: Instance;
  /** Runs a query on the setup gateway and answers its data. */
  // Each test reads the fields it asked for; the answer's shape is the document's.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  query<T = any>(document: string, variables?: Record<string, unknown>): Promise<T>;
}

const busy = ({ simulator }: Setup) => simulator.network.transactions(simulator.network.chain(C_CHAIN)!).catalog.accounts[0]!;
const wallets = ({ simulator }: Setup) => simulator.network.primaryNetwork("mainnet").wallets.map((wallet) => wallet.address);
const mainnetTxHash = async (setup: Setup, chain: "p-chain" | "x-chain" | "c-chain") =>
  (
    await simulatorGet<{ transactions: { txHash: string }[] }>(
      setup.harness,
      "data",
      `/v1/networks/mainnet/blockchains/${chain}/transactions?pageSize=5`,
    )
  ).transactions[4]!.txHash;
const blockTxHash = async (setup: Setup) =>
  (
    await simulatorGet<{ transactions: { txHash: string }[] }>(
      setup.harness,
      "data",
      `/v1/chains/${C_CHAIN}/blocks/4444/transactions?pageSize=1`,
    )
  ).transactions[0]!.txHash;
const exportInput = { primaryNetwork: { includeChains: ["p-chain", "x-chain"] } };
const startExport = (setup: Setup) =>
  setup.query<{ exportTransactions: { id: string; operationId: string } }>(
    `mutation ($input: ExportTransactionsInput!) { exportTransactions(input: $input) { id operationId } }`,
    { input: exportInput },
  );
/** The fuji L1 that converted first: its subnet, its validator manager's chain. */
function fujiL1({ simulator }: Setup): { subnetId: string; chainId: string } {
  const [conversion] = l1Transactions(simulator, "fuji", "ConvertSubnetToL1Tx");
  return { subnetId: conversion!.fields.subnetId!, chainId: conversion!.fields.l1ValidatorManagerDetails!.blockchainId };
}
function warpMessage(chainId: string): string {
  const u32 = (value: number) => Buffer.from([value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255]);
  const payload = Buffer.concat([Buffer.alloc(2), u32(0), Buffer.alloc(32, 0xab)]);
  return `0x${Buffer.concat([Buffer.alloc(2), u32(5), decodeCb58(chainId)!, u32(payload.length), payload]).toString("hex")}`;
}

/**
 * The variables each operation of test/operations runs with in its tests (one set each, that
 * answers without errors). A new operation without a row fails the test below.
 */
const VARIABLES: Record<
  string,
  ((setup: Setup) => Record<string, unknown> | Promise<Record<string, unknown>>) | { skip: string }
> = {
  // blocks.graphql
  LatestBlocksWithChainAndParent: () => ({ first: 20 }),
  LatestBlocksWithParentDetails: () => ({ first: 30 }),
  ChainBlocksPage: () => ({ chainId: C_CHAIN, first: 10 }),
  ChainBlock: () => ({ chainId: C_CHAIN, blockId: "1200" }),
  BlockNode: async (setup) => ({
    id: (await setup.query(`{ chain(id: "${C_CHAIN}") { block(id: "1200") { id } } }`)).chain.block.id,
  }),
  // chains.graphql
  Chains: () => ({}),
  Chain: () => ({ id: C_CHAIN }),
  ChainNode: async (setup) => ({ id: (await setup.query(`{ chain(id: "${C_CHAIN}") { id } }`)).chain.id }),
  // evm-transactions.graphql
  AddressTransactionsPage: (setup) => ({ chainId: C_CHAIN, address: busy(setup), first: 15, sortOrder: "ASC" }),
  AddressTransactionsWithLinks: (setup) => ({ chainId: C_CHAIN, address: busy(setup), first: 25 }),
  AddressTransactionsWithBlockDetails: (setup) => ({ chainId: C_CHAIN, address: busy(setup), first: 40 }),
  AddressTransactionsCompleteViews: (setup) => ({ chainId: C_CHAIN, address: busy(setup), first: 6 }),
  ChainTransaction: async (setup) => ({ chainId: C_CHAIN, hash: await blockTxHash(setup) }),
  BlockTransactions: () => ({ chainId: C_CHAIN, blockId: "4444" }),
  TransactionNode: async (setup) => ({
    id: (await setup.query(`{ chain(id: "${C_CHAIN}") { transaction(hash: "${await blockTxHash(setup)}") { id } } }`)).chain
      .transaction.id,
  }),
  // exports.graphql
  ExportTransactions: () => ({ input: exportInput }),
  ExportOperation: async (setup) => ({ id: (await startExport(setup)).exportTransactions.operationId }),
  ExportOperationNode: async (setup) => ({ id: (await startExport(setup)).exportTransactions.id }),
  WatchExportOperation: {
    skip: "a subscription pays its first read when it starts and 1 for each later read as its poller makes it: its charge is its calls by construction",
  },
  // live.graphql
  NewAddressTransactions: { skip: "a live subscription pays its first read when it starts and 1 for each poll after it" },
  NewPrimaryNetworkTransactions: { skip: "a live subscription pays its first read when it starts and 1 for each poll after it" },
  ChainMetricUpdates: { skip: "a live subscription pays its first read when it starts and 1 for each poll after it" },
  // metrics.graphql
  ChainMetrics: () => ({ chainId: C_CHAIN, metric: "TX_COUNT", first: 10 }),
  DailyTxCountWithBlocks: () => ({ chainId: C_CHAIN, days: 4, blocks: 100 }),
  NetworkMetrics: () => ({ scope: "TOTAL", metric: "TX_COUNT", first: 5 }),
  StakingMetrics: () => ({ network: "MAINNET", metric: "VALIDATOR_COUNT", first: 20 }),
  SubnetMetrics: (setup) => ({ subnetId: fujiL1(setup).subnetId, metric: "PER_SUBNET_DAILY_FEES_PAID", first: 15 }),
  ValidatorFeeMetrics: () => ({ metric: "TOTAL_VALIDATOR_FEES_DAILY", first: 2160 }),
  TokenHolders: ({ simulator }) => ({
    chainId: QUARRY,
    contract: simulator.network.transactions(simulator.network.chain(QUARRY)!).catalog.erc20[0]!.address,
    threshold: "0",
    first: 20,
  }),
  BtcbBridgedAddresses: () => ({ threshold: "0", first: 20 }),
  ChainAvgTps: () => ({ chainId: C_CHAIN, first: 100 }),
  // primary-network.graphql
  PrimaryNetworkChains: () => ({ network: "MAINNET" }),
  PrimaryNetworkBlockchain: () => ({ network: "MAINNET", id: "p-chain" }),
  PrimaryNetworkChainBlock: () => ({ network: "MAINNET", chain: "p-chain", blockId: "100" }),
  PrimaryNetworkNode: async (setup) => {
    const { pChain } = await setup
      .query(`{ primaryNetwork(network: MAINNET) { pChain { blockchainId } } }`)
      .then((data) => data.primaryNetwork);
    return {
      id: Buffer.from(`PChainTransaction:mainnet:${pChain.blockchainId}:${await mainnetTxHash(setup, "p-chain")}`).toString(
        "base64",
      ),
    };
  },
  PChainTransactionsPage: () => ({ network: "MAINNET", first: 15 }),
  PChainTransactionHashes: (setup) => ({ network: "MAINNET", addresses: [wallets(setup)[0]!], first: 20 }),
  XChainTransactionsPage: () => ({ network: "MAINNET", first: 15 }),
  CChainTransactionsPage: () => ({ network: "MAINNET", first: 12 }),
  PChainUtxosPage: (setup) => ({ network: "MAINNET", addresses: wallets(setup), first: 300, includeSpent: true }),
  XChainUtxosPage: (setup) => ({ network: "MAINNET", addresses: wallets(setup), first: 300, includeSpent: true }),
  CChainUtxosPage: (setup) => ({
    network: "MAINNET",
    addresses: wallets(setup).map((wallet) => `C-${wallet}`),
    first: 100,
    includeSpent: true,
  }),
  PChainUtxoLinks: (setup) => ({ network: "MAINNET", addresses: [wallets(setup)[0]!], first: 120 }),
  XChainUtxoLinks: (setup) => ({ network: "MAINNET", addresses: [wallets(setup)[0]!], first: 150 }),
  PChainTransactionLinks: () => ({ network: "MAINNET", first: 30 }),
  XChainVertices: () => ({ network: "MAINNET", height: 6 }),
  XChainVertex: async (setup) => ({
    network: "MAINNET",
    hash: (
      await simulatorGet<{ vertices: { vertexHash: string }[] }>(
        setup.harness,
        "data",
        "/v1/networks/mainnet/blockchains/x-chain/vertices:listByHeight?vertexHeight=3",
      )
    ).vertices[0]!.vertexHash,
  }),
  L1ValidatorsPage: () => ({ network: "MAINNET", first: 100 }),
  PrimaryNetworkTransactionsByHash: async (setup) => ({
    network: "MAINNET",
    pHash: await mainnetTxHash(setup, "p-chain"),
    xHash: await mainnetTxHash(setup, "x-chain"),
    cHash: await mainnetTxHash(setup, "c-chain"),
  }),
  PrimaryNetworkTransactionInterface: async (setup) => ({
    network: "MAINNET",
    pHash: await mainnetTxHash(setup, "p-chain"),
    xHash: await mainnetTxHash(setup, "x-chain"),
    cHash: await mainnetTxHash(setup, "c-chain"),
  }),
  L1ValidatorLookup: async (setup) => ({
    network: "MAINNET",
    validationId: (
      await simulatorGet<{ validators: { validationId: string }[] }>(
        setup.harness,
        "data",
        "/v1/networks/mainnet/l1Validators?pageSize=1&includeInactiveL1Validators=true",
      )
    ).validators[0]!.validationId,
    first: 100,
    includeInactive: true,
  }),
  // explorer-home.graphql, as test/explorer-home-calls.test.ts runs it
  ExplorerHomeCold: () => ({ blocks: 10, transactionsPerBlock: 3, metricPoints: 7, pChainTransactions: 5, validators: 10 }),
  // warp.graphql
  AggregateWarpSignatures: (setup) => {
    const { subnetId, chainId } = fujiL1(setup);
    return {
      input: {
        network: "FUJI",
        message: warpMessage(chainId),
        signingSubnetId: subnetId,
        quorumPercentage: 60,
        quorumPercentageBuffer: 25,
      },
    };
  },
  WarpSignature: (setup) => ({ network: "FUJI", txHash: registerL1ValidatorTx(setup.harness) }),
  WarpSignatureAgainst: (setup) => ({
    network: "FUJI",
    txHash: registerL1ValidatorTx(setup.harness),
    signingSubnetId: fujiL1(setup).subnetId,
  }),
};

/** Each operation of test/operations, as a document of its own with the fragments it uses. */
function testOperations(): { name: string; document: string }[] {
  const directory = new URL("./operations/", import.meta.url);
  const definitions: DefinitionNode[] = readdirSync(directory)
    .filter((file) => file.endsWith(".graphql"))
    .flatMap((file) => parse(readFileSync(new URL(file, directory), "utf8")).definitions);
  const fragments = new Map(
    definitions
      .filter((definition): definition is FragmentDefinitionNode => definition.kind === Kind.FRAGMENT_DEFINITION)
      .map((fragment) => [fragment.name.value, fragment]),
  );
  const spreadsIn = (node: DefinitionNode) => {
    const names = new Set<string>();
    visit(node, { FragmentSpread: (spread) => void names.add(spread.name.value) });
    return names;
  };
  return definitions
    .filter((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION)
    .map((operation) => {
      const used = new Set<string>();
      const pending = [...spreadsIn(operation)];
      while (pending.length > 0) {
        const name = pending.pop()!;
        if (used.has(name)) continue;
        used.add(name);
        pending.push(...spreadsIn(fragments.get(name)!));
      }
      const document = {
        kind: Kind.DOCUMENT,
        definitions: [operation, ...[...used].map((name) => fragments.get(name)!)],
      } as const;
      return { name: operation.name!.value, document: print(document) };
    });
}

interface Row {
  operation: string;
  /** The upstream calls the cold run made. */
  cold: number;
  /** The upstream calls estimated before it ran (what the operation paid up front). */
  estimate: number;
  /** What the operation was charged once settled, in upstream calls. */
  charged: number;
  /** Within 1.5 × cold, at least 1, and settled to max(estimate, cold). */
  within: boolean;
  /** The cold calls by route, shown for a row out of bounds. */
  routes: Record<string, number>;
}

function row(operation: string, routes: Record<string, number>, estimate: number, charged: number): Row {
  const cold = Object.values(routes).reduce((sum, count) => sum + count, 0);
  const within =
    (cold === 0 || estimate >= 1) &&
    estimate <= Math.max(1, Math.floor(1.5 * cold)) &&
    // Every request pays at least 1, an operation that calls nothing too.
    charged === Math.max(1, estimate, cold);
  return { operation, cold, estimate, charged, within, routes };
}

function table(rows: readonly Row[]): string {
  return [
    "operation                                   cold  estimate  ratio  charged",
    ...rows.map(
      (r) =>
        `${r.within ? " " : "✗"} ${r.operation.padEnd(42)}${String(r.cold).padStart(5)}${String(r.estimate).padStart(10)}${(r.cold === 0 ? "-" : (r.estimate / r.cold).toFixed(2)).padStart(7)}${String(r.charged).padStart(9)}` +
        (r.within ? "" : `  ${JSON.stringify(r.routes)}`),
    ),
  ].join("\n");
}

describe("the rate limiter's charge against a cold gateway's calls", () => {
  let simulator: RunningSimulator;
  let setup: Setup;
  /** The chain list, as the rate limiter has it for an estimate that depends on its length. */
  let chains: KnownChain[];

  beforeAll(async () => {
    simulator = await startSimulator({ dataPort: 0, metricsPort: 0 });
    const harness = await startInstance(simulator, BUDGET);
    ({ chains } = await simulatorGet<{ chains: KnownChain[] }>(harness, "data", "/v1/chains"));
    setup = {
      simulator,
      harness,
      async query(document, variables) {
        const result = await execute(harness, document, variables);
        if (result.body.errors) throw new Error(`setup query failed: ${JSON.stringify(result.body.errors)}`);
        return result.body.data as never;
      },
    };
  });

  afterAll(async () => {
    await setup?.harness.close();
    await simulator?.close();
  });

  /** Runs a document once on a fresh gateway: the upstream calls it made, and the operation's charge. */
  async function measure(name: string, document: string, variables: Record<string, unknown>): Promise<Row> {
    const gateway = await startInstance(simulator, BUDGET);
    try {
      simulator.resetCounters();
      const response = await execute(gateway, document, variables);
      expect(response.body.errors, name).toBeUndefined();
      // The request paid its document's reading, and the operation its estimated calls (at least
      // 1) and CPU, which the schema alone tells (a Warp verification), then the calls it made
      // beyond the estimate. The estimate counts the chain list when it depends on its length,
      // as the rate limiter does.
      let estimate = estimateCost(schema, parse(document), undefined, variables, NO_FACTS);
      if (estimate.wantsChainList) estimate = estimateCost(schema, parse(document), undefined, variables, { chains });
      const charged = BURST - Number(response.headers.get("ratelimit-remaining")) - newDocumentCost(document) - estimate.cpuCost;
      return row(name, upstreamCalls(gateway), estimate.upstreamCalls, charged);
    } finally {
      await gateway.close();
    }
  }

  it("has variables for every test operation", () => {
    expect(
      testOperations()
        .map(({ name }) => name)
        .filter((name) => !(name in VARIABLES)),
    ).toEqual([]);
  });

  it("estimates within 1.5 × the cold calls and settles the charge to max(estimate, cold) for every bench and test operation", async () => {
    const rows: Row[] = [];
    for (const operation of referenceOperations) {
      const upstream = new PlainUpstream(simulator.dataUrl, simulator.metricsUrl);
      const { variables } = await operation.prepare(upstream).finally(() => upstream.close());
      rows.push(await measure(`bench ${operation.name}`, operation.document, variables));
    }
    for (const { name, document } of testOperations()) {
      const variables = VARIABLES[name];
      if (variables === undefined || "skip" in variables) continue;
      rows.push(await measure(name, document, await variables(setup)));
    }
    console.log(table(rows));
    expect(
      rows.filter((r) => !r.within).map((r) => r.operation),
      table(rows),
    ).toEqual([]);
    // Every operation the project has was measured (a subscription pays per read, by construction).
    expect(rows.length).toBe(
      referenceOperations.length + testOperations().filter(({ name }) => !("skip" in (VARIABLES[name] ?? {}))).length,
    );
  }, 180_000);
});

describe("metrics of every chain at the default budget", () => {
  let harness: Harness | undefined;
  afterAll(async () => harness?.close());

  const METRICS = [
    "TX_COUNT",
    "ACTIVE_ADDRESSES",
    "ACTIVE_SENDERS",
    "GAS_USED",
    "CONTRACTS",
    "DEPLOYERS",
    "FEES_PAID",
    "AVG_TPS",
    "MAX_TPS",
  ];
  const document = `{ chains { chainId ${METRICS.map((metric, index) => `m${index}: metrics(metric: ${metric}, interval: DAY, first: 7) { nodes { value } }`).join(" ")} } }`;

  it.each([
    ["held, as the gateway preloads it", "true"],
    ["not held yet, so fetched once before the estimate", "false"],
  ])("charges what the chain list (%s) holds, and a second such query is not refused", async (_, preload) => {
    harness = await startHarness({ CHAIN_LIST_PRELOAD: preload });
    const chains = (await simulatorGet<{ chains: unknown[] }>(harness, "data", "/v1/chains")).chains.length;
    if (preload === "true") {
      // the preload's own call, answered before the operation comes
      await until(() => (harness!.simulator.counters()["GET /v1/chains"] ?? 0) >= 1, "the chain list's preload");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    harness.simulator.resetCounters();
    const first = await execute(harness, document);
    expect(first.body.errors).toBeUndefined();
    const calls = Object.values(upstreamCalls(harness)).reduce((sum, count) => sum + count, 0);
    // the chain list (held or fetched once), then a series per chain and metric
    expect(calls).toBe((preload === "true" ? 0 : 1) + chains * METRICS.length);
    // What it was charged, less what the bucket refilled meanwhile (100 a second by default).
    const charged = harness.config.rateLimit.burst - Number(first.headers.get("ratelimit-remaining")) - newDocumentCost(document);
    const estimate = 1 + chains * METRICS.length;
    expect(charged).toBeLessThanOrEqual(estimate);
    expect(charged).toBeGreaterThan(estimate - 20);
    const second = await execute(harness, document);
    expect(second.status).toBe(200);
    expect(second.body.errors).toBeUndefined();
    await harness.close();
    harness = undefined;
  });
});
