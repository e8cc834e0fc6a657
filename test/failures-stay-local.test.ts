/**
 * Failures stay local (issue 17, item 1): an upstream route that fails takes down the field that
 * needs it and nothing else. For every route the gateway calls, the simulator's fault knobs fail
 * that route alone (HTTP 500, 503 and 400 in turn) under a document that also reads a root field
 * needing no call and one needing another route; the error must sit at the failing field's path
 * with the code its status maps to, and every other field must answer as it does without faults.
 *
 * A guard reads the routes the gateway calls from their declarations (src/upstream/routes.ts),
 * which the upstream clients call through, so a new route cannot be left without a row here.
 */
import { readdirSync, readFileSync } from "node:fs";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { GraphQLFormattedError } from "graphql";
import type { ErrorCode } from "../src/execution/errors.ts";
import { ROUTES, type RouteName } from "../src/upstream/routes.ts";
import { execute, registerL1ValidatorTx, startHarness, upstreamCalls, type Harness } from "./support/harness.ts";

const C_CHAIN = "43114";
const P_CHAIN = "11111111111111111111111111111111LpoYY";
/** A block of the simulated C-Chain that holds transactions. */
const BUSY_BLOCK = 3210;

/** The codes src/execution/errors.ts gives each injected status. */
const STATUS_CODES: ReadonlyArray<[status: number, code: ErrorCode]> = [
  [500, "UPSTREAM_ERROR"],
  [503, "UPSTREAM_UNAVAILABLE"],
  [400, "BAD_USER_INPUT"],
];

/** Values from the simulator's own data, so that every document reads records that exist. */
interface Values {
  cChainTxHash: string;
  evmAccount: string;
  erc20Contract: string;
  pChainTxHash: string;
  pChainWallet: string;
  vertexHash: string;
  l1SubnetId: string;
  warpTxHash: string;
}

interface QueryRow {
  /** The simulator's route key that fails. */
  route: string;
  /** What reads it. */
  via: string;
  /** The selection that needs the route (root fields of a query). */
  selection: (values: Values) => string;
  /** Where its error must sit. */
  path: readonly (string | number)[];
}

/** Needs no upstream call: the primary network's namespace and its chains' ids are in hand. */
const CALM = "calm: primaryNetwork(network: FUJI) { network pChain { blockchainId } xChain { blockchainId } }";
/** Needs `GET /v1/chains` (Data API); for rows that fail that route, a Metrics API route instead. */
const OTHER_ROUTE = "other: chains { chainId chainName }";
const OTHER_ROUTE_WHEN_CHAINS_FAIL =
  "other: validatorFeeMetrics(metric: TOTAL_VALIDATOR_FEES_DAILY, first: 2) { nodes { timestamp } }";

const globalId = (text: string) => Buffer.from(text).toString("base64");

const QUERY_ROWS: readonly QueryRow[] = [
  // ---- Data API: EVM chains ----
  { route: "GET /v1/chains", via: "chains", selection: () => "chains { chainId }", path: ["chains"] },
  { route: "GET /v1/chains", via: "chain(id:)", selection: () => `chain(id: "${C_CHAIN}") { chainName }`, path: ["chain"] },
  {
    route: "GET /v1/chains/{chainId}",
    via: "chain(id:) of a chain the list leaves out",
    selection: () => `chain(id: "999999") { chainName }`,
    path: ["chain"],
  },
  {
    route: "GET /v1/blocks",
    via: "latestBlocks",
    selection: () => "latestBlocks(first: 2) { nodes { blockHash } }",
    path: ["latestBlocks"],
  },
  {
    route: "GET /v1/chains/{chainId}/blocks",
    via: "EvmChain.blocks",
    selection: () => `chain(id: "${C_CHAIN}") { chainId blocks(first: 2) { nodes { blockHash } } }`,
    path: ["chain", "blocks"],
  },
  {
    route: "GET /v1/chains/{chainId}/blocks/{blockId}",
    via: "EvmChain.block",
    selection: () => `chain(id: "${C_CHAIN}") { chainId block(id: "${BUSY_BLOCK}") { blockHash } }`,
    path: ["chain", "block"],
  },
  {
    route: "GET /v1/chains/{chainId}/blocks/{blockId}/transactions",
    via: "EvmBlock.transactions",
    selection: () =>
      `chain(id: "${C_CHAIN}") { chainId block(id: "${BUSY_BLOCK}") { blockHash transactions(first: 2) { nodes { txHash } } } }`,
    path: ["chain", "block", "transactions"],
  },
  {
    route: "GET /v1/chains/{chainId}/transactions/{txHash}",
    via: "EvmChain.transaction",
    selection: ({ cChainTxHash }) => `chain(id: "${C_CHAIN}") { chainId transaction(hash: "${cChainTxHash}") { txHash } }`,
    path: ["chain", "transaction"],
  },
  {
    route: "GET /v1/chains/{chainId}/addresses/{address}/transactions",
    via: "EvmAccount.transactions",
    selection: ({ evmAccount }) =>
      `chain(id: "${C_CHAIN}") { chainId address(address: "${evmAccount}") { address transactions(first: 2) { nodes { transaction { txHash } } } } }`,
    path: ["chain", "address", "transactions"],
  },
  // ---- Data API: primary network ----
  {
    route: "GET /v1/networks/{network}/blockchains/{blockchainId}/blocks/{blockId}",
    via: "PChain.block",
    selection: () => `primaryNetwork(network: MAINNET) { network pChain { blockchainId block(id: "5") { blockHash } } }`,
    path: ["primaryNetwork", "pChain", "block"],
  },
  {
    route: "GET /v1/networks/{network}/blockchains/{blockchainId}/transactions",
    via: "PChain.transactions",
    selection: () =>
      `primaryNetwork(network: MAINNET) { network pChain { blockchainId transactions(first: 2) { nodes { txHash } } } }`,
    path: ["primaryNetwork", "pChain", "transactions"],
  },
  {
    route: "GET /v1/networks/{network}/blockchains/{blockchainId}/transactions",
    via: "XChain.transactions",
    selection: () =>
      `primaryNetwork(network: MAINNET) { network xChain { blockchainId transactions(first: 2) { nodes { txHash } } } }`,
    path: ["primaryNetwork", "xChain", "transactions"],
  },
  {
    route: "GET /v1/networks/{network}/blockchains/{blockchainId}/transactions",
    via: "CChain.transactions",
    selection: () =>
      `primaryNetwork(network: MAINNET) { network cChain { blockchainId transactions(first: 2) { nodes { txHash } } } }`,
    path: ["primaryNetwork", "cChain", "transactions"],
  },
  {
    route: "GET /v1/networks/{network}/blockchains/{blockchainId}/transactions/{txHash}",
    via: "node(id:) of a P-Chain transaction",
    selection: ({ pChainTxHash }) => `node(id: "${globalId(`PChainTransaction:mainnet:${P_CHAIN}:${pChainTxHash}`)}") { id }`,
    path: ["node"],
  },
  {
    route: "POST /v1/networks/{network}/blockchains/{blockchainId}/utxos",
    via: "PChain.utxos",
    selection: ({ pChainWallet }) =>
      `primaryNetwork(network: MAINNET) { network pChain { blockchainId utxos(addresses: ["${pChainWallet}"], first: 2) { nodes { utxoId } } } }`,
    path: ["primaryNetwork", "pChain", "utxos"],
  },
  {
    route: "GET /v1/networks/{network}/blockchains/{blockchainId}/vertices/{vertexHash}",
    via: "XChain.vertex",
    selection: ({ vertexHash }) =>
      `primaryNetwork(network: MAINNET) { network xChain { blockchainId vertex(hash: "${vertexHash}") { vertexHash } } }`,
    path: ["primaryNetwork", "xChain", "vertex"],
  },
  {
    route: "GET /v1/networks/{network}/blockchains/{blockchainId}/vertices:listByHeight",
    via: "XChain.verticesAtHeight",
    selection: () =>
      `primaryNetwork(network: MAINNET) { network xChain { blockchainId verticesAtHeight(height: 3, first: 2) { nodes { vertexHash } } } }`,
    path: ["primaryNetwork", "xChain", "verticesAtHeight"],
  },
  {
    route: "GET /v1/networks/{network}/l1Validators",
    via: "PrimaryNetwork.l1Validators",
    selection: () => `primaryNetwork(network: MAINNET) { network l1Validators(first: 2) { nodes { validationId } } }`,
    path: ["primaryNetwork", "l1Validators"],
  },
  // ---- Data API: operations and Warp ----
  {
    route: "GET /v1/operations/{operationId}",
    via: "exportOperation",
    selection: () => `exportOperation(id: "no-such-operation") { operationId }`,
    path: ["exportOperation"],
  },
  {
    route: "GET /v1/signatureAggregator/{network}/aggregateSignatures/{txHash}",
    via: "warpSignature",
    selection: ({ warpTxHash }) => `warpSignature(network: FUJI, txHash: "${warpTxHash}") { signedMessage }`,
    path: ["warpSignature"],
  },
  // ---- Metrics API ----
  {
    route: "GET /v2/chains/{chainId}",
    via: "EvmChain.metricsInfo",
    selection: () => `chain(id: "${C_CHAIN}") { chainId metricsInfo { chainName } }`,
    path: ["chain", "metricsInfo"],
  },
  {
    route: "GET /v2/chains/{chainId}/metrics/{metric}",
    via: "EvmChain.metrics",
    selection: () => `chain(id: "${C_CHAIN}") { chainId metrics(metric: TX_COUNT, first: 2) { nodes { timestamp } } }`,
    path: ["chain", "metrics"],
  },
  {
    route: "GET /v2/chains/{chainId}/metrics/{metric}",
    via: "networkMetrics",
    selection: () => `networkMetrics(scope: MAINNET, metric: TX_COUNT, first: 2) { nodes { timestamp } }`,
    path: ["networkMetrics"],
  },
  {
    route: "GET /v1/avg_tps/{chainId}",
    via: "EvmChain.avgTps",
    selection: () => `chain(id: "${C_CHAIN}") { chainId avgTps(first: 2) { nodes { timestamp } } }`,
    path: ["chain", "avgTps"],
  },
  {
    route: "GET /v2/chains/{chainId}/contracts/{address}/balances",
    via: "EvmChain.tokenHolders",
    selection: ({ erc20Contract }) =>
      `chain(id: "${C_CHAIN}") { chainId tokenHolders(contract: "${erc20Contract}", threshold: "0", first: 2) { nodes { address } } }`,
    path: ["chain", "tokenHolders"],
  },
  {
    route: "GET /v2/networks/{network}/metrics/{metric}",
    via: "PrimaryNetwork.stakingMetrics",
    selection: () =>
      `primaryNetwork(network: MAINNET) { network stakingMetrics(metric: VALIDATOR_COUNT, first: 2) { nodes { timestamp } } }`,
    path: ["primaryNetwork", "stakingMetrics"],
  },
  {
    route: "GET /v2/subnet/{subnetId}/metrics/{metric}",
    via: "subnetMetrics",
    selection: ({ l1SubnetId }) =>
      `subnetMetrics(subnetId: "${l1SubnetId}", metric: PER_SUBNET_DAILY_FEES_PAID, first: 2) { nodes { timestamp } }`,
    path: ["subnetMetrics"],
  },
  {
    route: "GET /v2/validators/metrics/{metric}",
    via: "validatorFeeMetrics",
    selection: () => "validatorFeeMetrics(metric: TOTAL_VALIDATOR_FEES_DAILY, first: 2) { nodes { timestamp } }",
    path: ["validatorFeeMetrics"],
  },
  {
    route: "GET /v2/chains/43114/btcb/bridged:getAddresses",
    via: "btcbBridgedAddresses",
    selection: () => `btcbBridgedAddresses(threshold: "0", first: 2) { nodes { address } }`,
    path: ["btcbBridgedAddresses"],
  },
];

/** Mutations: nullable too, so a failing one is null at its own path beside its siblings (test/mutation-results.test.ts). */
const MUTATION_ROWS: readonly QueryRow[] = [
  {
    route: "POST /v1/operations/transactions:export",
    via: "exportTransactions",
    selection: ({ evmAccount }) =>
      `exportTransactions(input: { evm: { addresses: ["${evmAccount}"], includeChains: ["${C_CHAIN}"] } }) { operationId }`,
    path: ["exportTransactions"],
  },
  {
    route: "POST /v1/signatureAggregator/{network}/aggregateSignatures",
    via: "aggregateWarpSignatures",
    // A P-Chain transaction is the justification of the message it implies; the fault comes first.
    selection: ({ warpTxHash }) =>
      `aggregateWarpSignatures(input: { network: FUJI, justification: "0x${Buffer.from(warpTxHash).toString("hex")}" }) { signedMessage }`,
    path: ["aggregateWarpSignatures"],
  },
];

/** Routes of the service description that the gateway calls: its route declarations (src/upstream/routes.ts). */
function routesTheGatewayCalls(): string[] {
  return Object.values(ROUTES)
    .map((route) => route.label)
    .sort();
}

/** The calls of the gateway's upstream clients, each with the route argument it gives (`ROUTES.x.path`, or else). */
function clientCalls(): { method: string; route: string }[] {
  const directory = new URL("../src/upstream/", import.meta.url);
  const calls = /client\.(get|post)\(\s*([^,)]+)/g;
  const found: { method: string; route: string }[] = [];
  for (const file of readdirSync(directory).filter((name) => name.endsWith(".ts"))) {
    const source = readFileSync(new URL(file, directory), "utf8");
    for (const [, method, route] of source.matchAll(calls)) found.push({ method: method!, route: route! });
  }
  return found;
}

function queryDocument(row: QueryRow, values: Values): string {
  const other = row.route === "GET /v1/chains" ? OTHER_ROUTE_WHEN_CHAINS_FAIL : OTHER_ROUTE;
  return `query FailureStaysLocal { ${CALM} ${other} ${row.selection(values)} }`;
}

function valueAt(data: unknown, path: readonly (string | number)[]): unknown {
  return path.reduce<unknown>((value, key) => (value as Record<string | number, unknown> | null | undefined)?.[key], data);
}

let harness: Harness;
let values: Values;

beforeAll(async () => {
  // Every row fails a route on purpose: no retries (one call per failure) and a breaker that
  // cannot open, so that the failures of one row never reach the next; a rate limit that the
  // rows together cannot spend.
  harness = await startHarness({
    UPSTREAM_RETRIES: "0",
    BREAKER_VOLUME_THRESHOLD: "1000000",
    RATE_LIMIT_RATE: "100000",
    RATE_LIMIT_BURST: "100000",
  });
  const { network } = harness.simulator;
  const cChain = network.transactions(network.chain(C_CHAIN)!);
  const mainnet = network.primaryNetwork("mainnet");
  values = {
    cChainTxHash: cChain.blockTransactions(BUSY_BLOCK)!.at(0)!.txHash,
    evmAccount: cChain.catalog.accounts[0]!,
    erc20Contract: cChain.catalog.erc20[0]!.address,
    pChainTxHash: mainnet.transactions("P", {
      addresses: undefined,
      txTypes: undefined,
      startTimestamp: undefined,
      endTimestamp: undefined,
      l1ValidationId: undefined,
      sortOrder: "desc",
    })[0]!.txHash,
    pChainWallet: mainnet.wallets[0]!.address,
    vertexHash: mainnet.verticesAtHeight(3, "asc")[0]!.vertexHash,
    l1SubnetId: mainnet.l1Validators[0]!.subnetId,
    warpTxHash: registerL1ValidatorTx(harness),
  };
});

afterAll(async () => {
  await harness.close();
});

beforeEach(() => {
  harness.simulator.setKnobs({ errorRate: 0, errorRoutes: [], errorStatus: 500, faultKind: "status" });
  harness.gateway.cache.clear();
  harness.simulator.resetCounters();
});

afterEach(() => {
  harness.simulator.setKnobs({ errorRate: 0, errorRoutes: [], errorStatus: 500 });
});

function failOnly(route: string, status: number): void {
  harness.gateway.cache.clear();
  harness.simulator.resetCounters();
  harness.simulator.setKnobs({ errorRate: 1, errorStatus: status, errorRoutes: [route], faultKind: "status" });
}

describe("every route the gateway calls has a row", () => {
  it("the rows name exactly the routes of the gateway's upstream clients", () => {
    const called = routesTheGatewayCalls();
    // The scan must see the clients: about two dozen routes, each one the simulator serves.
    expect(called.length).toBeGreaterThanOrEqual(20);
    expect(() => harness.simulator.setKnobs({ errorRoutes: called })).not.toThrow();
    const covered = new Set([...QUERY_ROWS, ...MUTATION_ROWS].map((row) => row.route));
    expect(
      called.filter((route) => !covered.has(route)),
      "routes without a row",
    ).toEqual([]);
    expect(
      [...covered].filter((route) => !called.includes(route)),
      "rows of routes the gateway does not call",
    ).toEqual([]);
  });

  it("the upstream clients call every declared route through its declaration, none by a literal path", () => {
    const calls = clientCalls();
    expect(
      calls.filter((call) => !/^ROUTES\.\w+\.path$/.test(call.route)),
      "calls by a literal path, or other than through a declaration",
    ).toEqual([]);
    const declared = (call: { route: string }) => ROUTES[call.route.split(".")[1] as RouteName];
    expect(
      calls.filter((call) => declared(call)?.method !== call.method),
      "calls of a route not declared, or by another method",
    ).toEqual([]);
    expect(new Set(calls.map((call) => declared(call)?.label)).size).toBe(routesTheGatewayCalls().length);
  });

  it("the field every row reads beside the failing one needs no upstream call", async () => {
    const result = await execute(harness, `{ ${CALM} }`);
    expect(result.body.errors).toBeUndefined();
    expect(upstreamCalls(harness)).toEqual({});
  });
});

describe("a failing upstream route fails only the field that needs it", () => {
  it.each(QUERY_ROWS.map((row) => [row.route, row.via, row] as const))("%s (through %s)", async (route, _via, row) => {
    const document = queryDocument(row, values);

    // Without faults the document answers in full and calls the route.
    const healthy = await execute<Record<string, unknown>, Record<string, never>>(harness, document);
    expect(healthy.body.errors, "errors without faults").toBeUndefined();
    expect(upstreamCalls(harness)[route], `${route} called without faults`).toBeGreaterThan(0);
    const { calm, other } = healthy.body.data!;
    expect(calm).toEqual({ network: "FUJI", pChain: { blockchainId: P_CHAIN }, xChain: { blockchainId: expect.any(String) } });
    expect(other).toBeTruthy();

    for (const [status, code] of STATUS_CODES) {
      failOnly(route, status);
      const failed = await execute<Record<string, unknown>, Record<string, never>>(harness, document);
      const context = `${route} failing with HTTP ${status}`;
      expect(upstreamCalls(harness)[route], `${context}: the route was called`).toBeGreaterThan(0);
      expect(failed.status, context).toBe(200);
      expect(failed.body.data, `${context}: data`).not.toBeNull();
      expect(failed.body.data?.calm, `${context}: the field that needs no call`).toEqual(calm);
      expect(failed.body.data?.other, `${context}: the field that needs another route`).toEqual(other);
      expect(valueAt(failed.body.data, row.path), `${context}: the failing field`).toBeNull();
      const errors: GraphQLFormattedError[] = failed.body.errors ?? [];
      expect(errors.length, `${context}: errors`).toBeGreaterThan(0);
      for (const error of errors) {
        expect(error.path, `${context}: ${error.message}`).toEqual(row.path);
        expect(error.extensions, `${context}: ${error.message}`).toMatchObject({ code, upstream: { status } });
      }
    }
  });
});

describe("a failing mutation route nulls the mutation alone", () => {
  it.each(MUTATION_ROWS.map((row) => [row.route, row.via, row] as const))("%s (%s)", async (route, _via, row) => {
    const document = `mutation FailureIsTheAnswer { ${row.selection(values)} }`;
    for (const [status, code] of STATUS_CODES) {
      failOnly(route, status);
      const failed = await execute(harness, document);
      const context = `${route} failing with HTTP ${status}`;
      // Sent once: a POST is never retried.
      expect(upstreamCalls(harness), context).toEqual({ [route]: 1 });
      expect(failed.body.data, context).toEqual({ [row.via]: null });
      expect(failed.body.errors, context).toHaveLength(1);
      expect(failed.body.errors![0], context).toMatchObject({ path: row.path, extensions: { code, upstream: { status } } });
    }
  });
});

describe("node(id:) refusals stay on node", () => {
  const refused: ReadonlyArray<[what: string, id: string]> = [
    ["not a global id", "garbage"],
    ["not base64", "a===="],
    ["base64 without a key", globalId("EvmChain")],
    ["a type that does not exist", globalId("Foo:1")],
    ["a type that is not a Node", globalId("PageInfo:1")],
    ["a key of the wrong shape", globalId("EvmChain:zz")],
  ];

  for (const compiled of [true, false]) {
    describe(compiled ? "compiled execution" : "graphql-js execution", () => {
      let local: Harness;
      beforeAll(async () => {
        local = await startHarness({ GRAPHQL_JIT: String(compiled) });
      });
      afterAll(async () => {
        await local.close();
      });

      it.each(refused)("%s, inline and as a variable: BAD_USER_INPUT on that node alone, no call for it", async (_what, id) => {
        const inline = `{ chain(id: "${C_CHAIN}") { chainName } n: node(id: ${JSON.stringify(id)}) { id } }`;
        const variable = `query Refetch($id: ID!) { chain(id: "${C_CHAIN}") { chainName } n: node(id: $id) { id } }`;
        for (const [document, variables] of [
          [inline, undefined],
          [variable, { id }],
        ] as const) {
          local.gateway.cache.clear();
          local.simulator.resetCounters();
          const result = await execute(local, document, variables);
          expect(result.status).toBe(200);
          expect(result.body.data).toEqual({ chain: { chainName: "Avalanche (C-Chain)" }, n: null });
          expect(result.body.errors).toHaveLength(1);
          expect(result.body.errors![0]).toMatchObject({ path: ["n"], extensions: { code: "BAD_USER_INPUT", argument: "id" } });
          // Only the sibling's chain list: the refused id reaches no route.
          expect(upstreamCalls(local)).toEqual({ "GET /v1/chains": 1 });
        }
      });
    });
  }
});
