/**
 * Every operation of test/operations/*.graphql, each as a document of its own, and the variables
 * its tests run it with (one set each, read from the simulator or a gateway of the setup's own),
 * for the tests that run them all: test/cost-budget.test.ts (the estimate against the cold
 * calls) and test/operation-limits.test.ts (each at its largest pages under the default limits).
 */
import { readFileSync, readdirSync } from "node:fs";
import {
  Kind,
  type OperationTypeNode,
  parse,
  print,
  visit,
  type DefinitionNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
} from "graphql";
import { decodeCb58 } from "../../src/upstream/cb58.ts";
import { l1Transactions } from "./sample-network.ts";
import { execute, registerL1ValidatorTx, simulatorGet, startInstance, type Instance, type RunningSimulator } from "./harness.ts";

export const C_CHAIN = "43114";
const QUARRY = "51288";

/** What the variables of an operation may be read from: the simulator, and a gateway of their own (not the measured one). */
export interface Setup {
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
 * answers without errors). A new operation without a row fails test/cost-budget.test.ts.
 */
export const VARIABLES: Record<string, (setup: Setup) => Record<string, unknown> | Promise<Record<string, unknown>>> = {
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
  WatchExportOperation: async (setup) => ({ id: (await startExport(setup)).exportTransactions.operationId }),
  // live.graphql
  NewAddressTransactions: (setup) => ({ chainId: C_CHAIN, address: busy(setup) }),
  NewPrimaryNetworkTransactions: () => ({ network: "MAINNET", blockchainId: "p-chain" }),
  ChainMetricUpdates: () => ({ chainId: C_CHAIN, metric: "TX_COUNT" }),
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

export interface TestOperation {
  name: string;
  kind: OperationTypeNode;
  /** The operation, and the fragments it uses. */
  document: string;
}

/** Each operation of test/operations, as a document of its own with the fragments it uses. */
export function testOperations(): TestOperation[] {
  const directory = new URL("../operations/", import.meta.url);
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
      return { name: operation.name!.value, kind: operation.operation, document: print(document) };
    });
}

/** A gateway of the setup's own over `simulator` (close it with `setup.harness.close()`), which reads the variables. */
export async function startSetup(simulator: RunningSimulator, env: Record<string, string> = {}): Promise<Setup> {
  const harness = await startInstance(simulator, env);
  return {
    simulator,
    harness,
    async query(document, variables) {
      const result = await execute(harness, document, variables);
      if (result.body.errors) throw new Error(`setup query failed: ${JSON.stringify(result.body.errors)}`);
      return result.body.data as never;
    },
  };
}
