import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parse } from "graphql";
import { graphqlEnumName } from "../schema/enums.ts";
import { schema } from "../src/schema.ts";
import { NO_FACTS } from "../src/limits/known-facts.ts";
import { estimateUpstreamCalls } from "../src/limits/upstream-calls.ts";
import {
  cChainExportTransactionTxTypeValues,
  cChainImportTransactionTxTypeValues,
  pChainTransactionTypeValues,
  xChainTransactionTypeValues,
  type components,
} from "../src/upstream/contract/data-api.ts";
import type { PrimaryNetwork } from "../simulator/network/primary-network/index.ts";
import { encodeBech32 } from "../src/upstream/bech32.ts";
import {
  CChainTransactionsPageDocument,
  CChainUtxosPageDocument,
  PChainTransactionHashesDocument,
  PChainTransactionLinksDocument,
  PChainTransactionsPageDocument,
  PChainUtxoLinksDocument,
  PChainUtxosPageDocument,
  PrimaryNetworkNodeDocument,
  PrimaryNetworkTransactionInterfaceDocument,
  PrimaryNetworkTransactionsByHashDocument,
  XChainTransactionsPageDocument,
  XChainUtxoLinksDocument,
  XChainUtxosPageDocument,
} from "./generated/graphql.ts";
import { execute, simulatorGet, startHarness, upstreamCalls, type Harness } from "./support/harness.ts";

type Schemas = components["schemas"];
type PChainTransaction = Schemas["PChainTransaction"];
type XChainTransaction = Schemas["XChainNonLinearTransaction"] | Schemas["XChainLinearTransaction"];
type CChainTransaction = Schemas["CChainExportTransaction"] | Schemas["CChainImportTransaction"];
type AnyTransaction = PChainTransaction | XChainTransaction | CChainTransaction;
type PChainUtxo = Schemas["PChainUtxo"];
type Utxo = Schemas["Utxo"];
type AssetAmount = Schemas["AssetAmount"];

const P = "11111111111111111111111111111111LpoYY";
/** A mainnet address no wallet of the sample network has (20 zero bytes). */
const ZERO_ADDRESS = encodeBech32("avax", Buffer.alloc(20));
const X = "2oYMBNV4eNHyqk2fjjV5nVQLDbtmNJzq5s3qs3Lo6ftnC6FByM";
const C = "2q9e4r6Mu3U68nU1fYjgbR6JvwrRx36CohpAX5UQxse55x1Q5";
const CHAIN_OF_ID: Record<string, string> = { [P]: "p-chain", [X]: "x-chain", [C]: "c-chain" };
const TX_ROUTE = "GET /v1/networks/{network}/blockchains/{blockchainId}/transactions/{txHash}";
const LIST_ROUTE = "GET /v1/networks/{network}/blockchains/{blockchainId}/transactions";
const BLOCK_ROUTE = "GET /v1/networks/{network}/blockchains/{blockchainId}/blocks/{blockId}";
const UTXO_ROUTE = "POST /v1/networks/{network}/blockchains/{blockchainId}/utxos";

let harness: Harness;
let mainnet: PrimaryNetwork;
let wallets: string[];

beforeAll(async () => {
  // These tests follow the links of a hundred UTXOs or more, one after another; the estimate
  // charges every link as if no two shared a record, which the default budget refuses.
  harness = await startHarness({ RATE_LIMIT_RATE: "100000", RATE_LIMIT_BURST: "100000" });
  mainnet = harness.simulator.network.primaryNetwork("mainnet");
  wallets = mainnet.wallets.map((wallet) => wallet.address);
});
afterAll(async () => {
  await harness.close();
});
beforeEach(() => {
  harness.gateway.cache.clear();
  harness.simulator.resetCounters();
});

// ---- what the gateway must answer, derived from the simulator's own REST records ----------------

const enumOf = (value: string | undefined) => (value === undefined ? null : graphqlEnumName(value));
const asset = (amount: AssetAmount) => ({ ...amount, type: enumOf(amount.type) });

function pChainUtxo(utxo: PChainUtxo) {
  return {
    utxoId: utxo.utxoId,
    addresses: utxo.addresses,
    asset: asset(utxo.asset),
    createdOnChainId: utxo.createdOnChainId,
    consumedOnChainId: utxo.consumedOnChainId,
    consumingTxHash: utxo.consumingTxHash ?? null,
    utxoBytes: utxo.utxoBytes ?? null,
    threshold: utxo.threshold ?? null,
    spent: utxo.consumingTxHash !== undefined,
    txHash: utxo.txHash,
    outputIndex: utxo.outputIndex,
    amount: utxo.amount,
    assetId: utxo.assetId,
    blockNumber: utxo.blockNumber,
    blockTimestamp: utxo.blockTimestamp,
    consumingBlockNumber: utxo.consumingBlockNumber ?? null,
    consumingBlockTimestamp: utxo.consumingBlockTimestamp ?? null,
    platformLocktime: utxo.platformLocktime ?? null,
    stakeableLocktime: utxo.stakeableLocktime ?? null,
    staked: utxo.staked ?? null,
    utxoStartTimestamp: utxo.utxoStartTimestamp ?? null,
    utxoEndTimestamp: utxo.utxoEndTimestamp ?? null,
    rewardType: enumOf(utxo.rewardType),
    utxoType: enumOf(utxo.utxoType),
  };
}

function utxo(record: Utxo) {
  return {
    utxoId: record.utxoId,
    addresses: record.addresses,
    asset: asset(record.asset),
    createdOnChainId: record.createdOnChainId,
    consumedOnChainId: record.consumedOnChainId,
    consumingTxHash: record.consumingTxHash ?? null,
    utxoBytes: record.utxoBytes ?? null,
    threshold: record.threshold,
    spent: record.consumingTxHash !== undefined,
    txHash: record.creationTxHash,
    outputIndex: Number(record.outputIndex),
    blockTimestamp: record.timestamp,
    consumingBlockTimestamp: record.consumingTxTimestamp ?? null,
    locktime: record.locktime,
    credentials: record.credentials ?? null,
    groupId: record.groupId ?? null,
    payload: record.payload ?? null,
    utxoType: record.utxoType,
  };
}

function common(tx: AnyTransaction, chain: string, blockchainId: string) {
  return {
    id: Buffer.from(
      `${{ P_CHAIN: "PChainTransaction", X_CHAIN: "XChainTransaction", C_CHAIN: "CChainAtomicTransaction" }[chain]}:mainnet:${blockchainId}:${tx.txHash}`,
    ).toString("base64"),
    network: "MAINNET",
    blockchainId,
    chainName: chain,
    txHash: tx.txHash,
    txType: enumOf(tx.txType),
    sourceChain: tx.sourceChain ?? null,
    destinationChain: tx.destinationChain ?? null,
    memo: tx.memo ?? null,
  };
}

function pChainTransaction(tx: PChainTransaction) {
  return {
    ...common(tx, "P_CHAIN", P),
    blockTimestamp: tx.blockTimestamp,
    blockNumber: tx.blockNumber,
    blockHash: tx.blockHash,
    consumedUtxos: tx.consumedUtxos.map(pChainUtxo),
    emittedUtxos: tx.emittedUtxos.map(pChainUtxo),
    value: tx.value.map(asset),
    amountBurned: tx.amountBurned.map(asset),
    amountStaked: tx.amountStaked.map(asset),
    amountL1ValidatorBalanceBurned: tx.amountL1ValidatorBalanceBurned.map(asset),
    startTimestamp: tx.startTimestamp ?? null,
    endTimestamp: tx.endTimestamp ?? null,
    delegationFeePercent: tx.delegationFeePercent ?? null,
    nodeId: tx.nodeId ?? null,
    subnetId: tx.subnetId ?? null,
    l1ValidatorManagerDetails: tx.l1ValidatorManagerDetails ?? null,
    l1ValidatorDetails:
      tx.l1ValidatorDetails?.map((details) => ({
        ...details,
        weight: String(details.weight),
        remainingBalance: String(details.remainingBalance),
        balanceChange: details.balanceChange === undefined ? null : String(details.balanceChange),
        blsCredentials: details.blsCredentials ?? null,
      })) ?? null,
    estimatedReward: tx.estimatedReward ?? null,
    rewardTxHash: tx.rewardTxHash ?? null,
    rewardAddresses: tx.rewardAddresses ?? null,
    stakingTxHash: tx.stakingTxHash ?? null,
    subnetOwnershipInfo: tx.subnetOwnershipInfo ?? null,
    blsCredentials: tx.blsCredentials ?? null,
    blockchainInfo: tx.blockchainInfo ? { ...tx.blockchainInfo, genesisData: tx.blockchainInfo.genesisData ?? null } : null,
  };
}

function xChainTransaction(tx: XChainTransaction) {
  return {
    ...common(tx, "X_CHAIN", X),
    blockTimestamp: tx.timestamp,
    chainFormat: enumOf(tx.chainFormat),
    consumedUtxos: tx.consumedUtxos.map(utxo),
    emittedUtxos: tx.emittedUtxos.map(utxo),
    amountUnlocked: tx.amountUnlocked.map(asset),
    amountCreated: tx.amountCreated.map(asset),
    assetCreated: tx.assetCreated
      ? { ...tx.assetCreated, type: enumOf(tx.assetCreated.type), cap: enumOf(tx.assetCreated.cap) }
      : null,
    vertices:
      "vertices" in tx
        ? tx.vertices.map((vertex) => ({
            vertexHash: vertex.hash,
            vertexHeight: String(vertex.height),
            vertexTimestamp: vertex.timestamp,
          }))
        : null,
    blockNumber: "blockHeight" in tx ? String(tx.blockHeight) : null,
    blockHash: "blockHash" in tx ? tx.blockHash : null,
  };
}

function cChainTransaction(tx: CChainTransaction) {
  return {
    ...common(tx, "C_CHAIN", C),
    blockTimestamp: tx.timestamp,
    blockNumber: String(tx.blockHeight),
    blockHash: tx.blockHash,
    amountUnlocked: tx.amountUnlocked.map(asset),
    amountCreated: tx.amountCreated.map(asset),
    evmInputs: "evmInputs" in tx ? tx.evmInputs.map((input) => ({ ...input, asset: asset(input.asset) })) : null,
    evmOutputs: "evmOutputs" in tx ? tx.evmOutputs.map((output) => ({ ...output, asset: asset(output.asset) })) : null,
    consumedUtxos: "consumedUtxos" in tx ? tx.consumedUtxos.map(utxo) : [],
    emittedUtxos: "emittedUtxos" in tx ? tx.emittedUtxos.map(utxo) : [],
    evmBlock: { blockNumber: String(tx.blockHeight), blockHash: tx.blockHash },
  };
}

/** Paths (a.b.c, lists flattened) of every field in the values, and of those that are non-null somewhere. */
function fieldCoverage(values: readonly unknown[]): { all: Set<string>; set: Set<string> } {
  const all = new Set<string>();
  const set = new Set<string>();
  const visit = (value: unknown, path: string) => {
    if (Array.isArray(value)) return value.forEach((item) => visit(item, path));
    if (value === null || typeof value !== "object" || path.endsWith("blsCredentials") || path.endsWith("genesisData")) {
      all.add(path);
      if (value !== null) set.add(path);
      return;
    }
    all.add(path);
    set.add(path);
    for (const [key, child] of Object.entries(value)) visit(child, path ? `${path}.${key}` : key);
  };
  values.forEach((value) => visit(value, ""));
  return { all, set };
}

/** Every field is set in some value; spent and created UTXOs are one record type, so they count together. */
function expectEveryFieldSet(values: readonly unknown[], except: readonly string[] = []): void {
  const { all, set } = fieldCoverage(values);
  const record = (path: string) => path.replace(/^(consumed|emitted)Utxos/, "utxos");
  const recordsSet = new Set([...set].map(record));
  expect([...new Set([...all].map(record))].filter((path) => !recordsSet.has(path))).toEqual(except);
}

async function restTransactions(chain: string): Promise<AnyTransaction[]> {
  const found: AnyTransaction[] = [];
  let token: string | undefined;
  do {
    const page = await simulatorGet<{ transactions: AnyTransaction[]; nextPageToken?: string }>(
      harness,
      "data",
      `/v1/networks/mainnet/blockchains/${chain}/transactions?pageSize=100${token ? `&pageToken=${token}` : ""}`,
    );
    found.push(...page.transactions);
    token = page.nextPageToken;
  } while (token);
  return found;
}

async function restUtxos<T>(chain: string, query: string, addresses: string[]): Promise<{ utxos: T[]; nextPageToken?: string }> {
  const response = await fetch(`${harness.simulator.dataUrl}/v1/networks/mainnet/blockchains/${chain}/utxos?${query}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ addresses: addresses.join(",") }),
  });
  if (!response.ok) throw new Error(`simulator utxos: HTTP ${response.status}`);
  return (await response.json()) as { utxos: T[]; nextPageToken?: string };
}

// ---- tests --------------------------------------------------------------------------------------

describe("latest transactions: every field of the three shapes", () => {
  it("pages through every P-Chain transaction, each with every field of the record", async () => {
    const reference = await restTransactions("p-chain");
    harness.simulator.resetCounters();
    const nodes: unknown[] = [];
    let after: string | undefined;
    let pages = 0;
    do {
      // 15 transactions with every field of their UTXOs stay within the gateway's query cost limit.
      const result = await execute(harness, PChainTransactionsPageDocument, { network: "MAINNET", first: 15, after });
      expect(result.body.errors).toBeUndefined();
      const connection = result.body.data!.primaryNetwork.pChain.transactions!;
      expect(connection.chainInfo).toEqual({ chainName: "P_CHAIN", network: "MAINNET" });
      for (const { node } of connection.edges) {
        expect(node).toEqual(pChainTransaction(reference[nodes.length] as PChainTransaction));
        nodes.push(node);
      }
      after = connection.pageInfo.hasNextPage ? connection.pageInfo.endCursor! : undefined;
      pages += 1;
    } while (after);
    expect(nodes).toHaveLength(reference.length);
    expect(upstreamCalls(harness)).toEqual({ [LIST_ROUTE]: pages });
    expect(new Set(nodes.map((node) => (node as { txType: string }).txType))).toEqual(
      new Set(pChainTransactionTypeValues.map(graphqlEnumName)),
    );
    expectEveryFieldSet(nodes);
  });

  it("pages through every X-Chain transaction, from vertices and from blocks", async () => {
    const reference = await restTransactions("x-chain");
    const nodes: unknown[] = [];
    let after: string | undefined;
    do {
      const result = await execute(harness, XChainTransactionsPageDocument, { network: "MAINNET", first: 15, after });
      expect(result.body.errors).toBeUndefined();
      const connection = result.body.data!.primaryNetwork.xChain.transactions!;
      expect(connection.chainInfo).toEqual({ chainName: "X_CHAIN", network: "MAINNET" });
      for (const { node } of connection.edges) {
        expect(node).toEqual(xChainTransaction(reference[nodes.length] as XChainTransaction));
        nodes.push(node);
      }
      after = connection.pageInfo.hasNextPage ? connection.pageInfo.endCursor! : undefined;
    } while (after);
    expect(nodes).toHaveLength(reference.length);
    expect(new Set(nodes.map((node) => (node as { chainFormat: string }).chainFormat))).toEqual(
      new Set(["LINEAR", "NON_LINEAR"]),
    );
    // Vertices and block fields never meet in one transaction, so coverage is per format.
    const linear = nodes.filter((node) => (node as { chainFormat: string }).chainFormat === "LINEAR");
    expectEveryFieldSet(linear.map((node) => ({ ...(node as object), vertices: [] })));
    expect(nodes.some((node) => (node as { vertices: unknown[] | null }).vertices?.length)).toBe(true);
  });

  it("pages through every C-Chain atomic transaction, with its EVM block", async () => {
    const reference = await restTransactions("c-chain");
    const nodes: unknown[] = [];
    let after: string | undefined;
    do {
      const result = await execute(harness, CChainTransactionsPageDocument, { network: "MAINNET", first: 12, after });
      expect(result.body.errors).toBeUndefined();
      const connection = result.body.data!.primaryNetwork.cChain.transactions!;
      expect(connection.chainInfo).toEqual({ chainName: "C_CHAIN", network: "MAINNET" });
      for (const { node } of connection.edges) {
        expect(node).toEqual(cChainTransaction(reference[nodes.length] as CChainTransaction));
        nodes.push(node);
      }
      after = connection.pageInfo.hasNextPage ? connection.pageInfo.endCursor! : undefined;
    } while (after);
    expect(nodes).toHaveLength(reference.length);
    const exports = nodes.filter((node) => (node as { txType: string }).txType === "EXPORT_TX");
    const imports = nodes.filter((node) => (node as { txType: string }).txType === "IMPORT_TX");
    // Only NFTs have a group and a payload, and NFTs never leave the X-Chain.
    const nftOnly = ["utxos.groupId", "utxos.payload"];
    expectEveryFieldSet(
      exports.map((node) => ({ ...(node as object), evmOutputs: [], consumedUtxos: [] })),
      nftOnly,
    );
    expectEveryFieldSet(
      imports.map((node) => ({ ...(node as object), evmInputs: [], emittedUtxos: [] })),
      nftOnly,
    );
  });

  it("refetches a transaction of each chain by its node id, through the by-hash route", async () => {
    for (const [chain, typename] of [
      ["p-chain", "PChainTransaction"],
      ["x-chain", "XChainTransaction"],
      ["c-chain", "CChainAtomicTransaction"],
    ] as const) {
      const page = await simulatorGet<{ transactions: AnyTransaction[] }>(
        harness,
        "data",
        `/v1/networks/mainnet/blockchains/${chain}/transactions?pageSize=5`,
      );
      const tx = page.transactions[4]!;
      const blockchainId = { "p-chain": P, "x-chain": X, "c-chain": C }[chain];
      const id = Buffer.from(`${typename}:mainnet:${blockchainId}:${tx.txHash}`).toString("base64");
      harness.simulator.resetCounters();
      const result = await execute(harness, PrimaryNetworkNodeDocument, { id });
      expect(result.body.errors).toBeUndefined();
      expect(result.body.data!.node).toMatchObject({ __typename: typename, id, txHash: tx.txHash, blockchainId });
      expect(upstreamCalls(harness)).toEqual({ [TX_ROUTE]: 1 });
    }
    const missing = Buffer.from(`PChainTransaction:mainnet:${P}:2wx1bZz5oNAzRprQi3bxMVv2PaajoqTWE4s3uibNb9yFH5xW4v`).toString(
      "base64",
    );
    expect((await execute(harness, PrimaryNetworkNodeDocument, { id: missing })).body.data!.node).toBeNull();
  });

  it("offers as transaction types exactly the contract's values of each chain", async () => {
    const result = await execute(
      harness,
      `{ p: __type(name: "PChainTransactionType") { enumValues { name } } x: __type(name: "XChainTransactionType") { enumValues { name } }
         c: __type(name: "CChainAtomicTransactionType") { enumValues { name } } }`,
    );
    const names = (key: string) =>
      (result.body.data as Record<string, { enumValues: { name: string }[] }>)[key]!.enumValues.map((value) => value.name).sort();
    expect(names("p")).toEqual(pChainTransactionTypeValues.map(graphqlEnumName).sort());
    expect(names("x")).toEqual(xChainTransactionTypeValues.map(graphqlEnumName).sort());
    expect(names("c")).toEqual(
      [...cChainImportTransactionTxTypeValues, ...cChainExportTransactionTxTypeValues, "UNKNOWN"].map(graphqlEnumName).sort(),
    );
  });

  it("has txType on the interface, one enum holding every chain's kinds", async () => {
    const result = await execute(
      harness,
      `{ all: __type(name: "PrimaryNetworkTransactionType") { enumValues { name } }
         i: __type(name: "PrimaryNetworkTransaction") { fields { name type { kind name ofType { name } } } } }`,
    );
    const data = result.body.data as {
      all: { enumValues: { name: string }[] };
      i: { fields: { name: string; type: { ofType: { name: string } | null } }[] };
    };
    const every = new Set(
      [
        ...pChainTransactionTypeValues,
        ...xChainTransactionTypeValues,
        ...cChainImportTransactionTxTypeValues,
        ...cChainExportTransactionTxTypeValues,
      ].map(graphqlEnumName),
    );
    expect(data.all.enumValues.map((value) => value.name).sort()).toEqual([...every].sort());
    expect(data.i.fields.find((field) => field.name === "txType")!.type.ofType!.name).toBe("PrimaryNetworkTransactionType");
    expect(data.i.fields.map((field) => field.name)).toEqual(
      expect.arrayContaining(["blockTimestamp", "blockNumber", "blockHash"]),
    );
  });
});

describe("latest transactions: the route's rules", () => {
  it.each([
    ["txTypes without addresses", { txTypes: ["BASE_TX"] }, "txTypes", "needs addresses"],
    ["from without addresses", { from: 1 }, "from", "needs addresses"],
    ["to without addresses", { to: 1 }, "to", "needs addresses"],
    ["a negative from", { addresses: [ZERO_ADDRESS], from: -1 }, "from", "at least 0"],
    ["an empty address list", { addresses: [] }, "addresses", "must not be empty"],
    ["a malformed address", { addresses: ["0xdead"] }, "addresses", "bech32"],
    [
      "an address whose checksum fails",
      { addresses: [`${ZERO_ADDRESS.slice(0, -1)}${ZERO_ADDRESS.endsWith("q") ? "p" : "q"}`] },
      "addresses",
      "checksum",
    ],
    ["an address of the other network", { addresses: [encodeBech32("fuji", Buffer.alloc(20))] }, "addresses", "not avax"],
    ["101 addresses", { addresses: Array<string>(101).fill(ZERO_ADDRESS) }, "addresses", "at most 100"],
    ["a malformed L1 validation id", { validationId: "nope" }, "validationId", "cb58"],
    ["a page over 100", { first: 101 }, "first", "between 0 and 100"],
    ["a negative page", { first: -1 }, "first", "between 0 and 100"],
  ])("refuses %s before any upstream call", async (_, variables, argument, message) => {
    const result = await execute(harness, PChainTransactionHashesDocument, { network: "MAINNET", ...variables } as never);
    expect(result.body.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument });
    expect(result.body.errors?.[0]?.message).toContain(message);
    expect(result.body.data?.primaryNetwork.pChain.transactions).toBeNull();
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("refuses an address of one network on the other after it passed on its own, however often it passed", async () => {
    const fujiAddress = encodeBech32("fuji", Buffer.alloc(20, 7));
    for (let round = 0; round < 2; round += 1) {
      const fuji = await execute(harness, PChainTransactionHashesDocument, { network: "FUJI", addresses: [fujiAddress] });
      expect(fuji.body.errors).toBeUndefined();
    }
    const calls = upstreamCalls(harness);
    const mainnet = await execute(harness, PChainTransactionHashesDocument, { network: "MAINNET", addresses: [fujiAddress] });
    expect(mainnet.body.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "addresses" });
    expect(mainnet.body.errors?.[0]?.message).toContain("not avax");
    expect(upstreamCalls(harness)).toEqual(calls);
  });

  it("refuses type and time filters without addresses on the X- and C-Chain too, where l1ValidationId does not exist", async () => {
    const x = await execute(harness, XChainTransactionsPageDocument, { network: "MAINNET", txTypes: ["BASE_TX"] });
    expect(x.body.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "txTypes" });
    const c = await execute(harness, CChainTransactionsPageDocument, { network: "MAINNET", to: 100 });
    expect(c.body.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "to" });
    const unknown = await execute(harness, CChainTransactionsPageDocument, {
      network: "MAINNET",
      addresses: [wallets[0]!],
      txTypes: ["UNKNOWN"],
    });
    expect(unknown.body.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "txTypes" });
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("filters by address, types and time, as the route does", async () => {
    const wallet = wallets[0]!;
    const all = await simulatorGet<{ transactions: PChainTransaction[] }>(
      harness,
      "data",
      `/v1/networks/mainnet/blockchains/p-chain/transactions?addresses=${wallet}&pageSize=100`,
    );
    const until = all.transactions[10]!.blockTimestamp;
    const since = all.transactions[40]!.blockTimestamp;
    const reference = await simulatorGet<{ transactions: PChainTransaction[] }>(
      harness,
      "data",
      `/v1/networks/mainnet/blockchains/p-chain/transactions?addresses=P-${wallet}&txTypes=BaseTx,ExportTx&startTimestamp=${since}&endTimestamp=${until}&pageSize=100`,
    );
    expect(reference.transactions.length).toBeGreaterThan(2);
    harness.simulator.resetCounters();
    const result = await execute(harness, PChainTransactionHashesDocument, {
      network: "MAINNET",
      first: 100,
      addresses: [`P-${wallet}`],
      txTypes: ["BASE_TX", "EXPORT_TX"],
      from: since,
      to: until,
    });
    expect(result.body.errors).toBeUndefined();
    expect(result.body.data!.primaryNetwork.pChain.transactions!.nodes.map((node) => node.txHash)).toEqual(
      reference.transactions.map((tx) => tx.txHash),
    );
    expect(upstreamCalls(harness)).toEqual({ [LIST_ROUTE]: 1 });
  });

  it("finds an L1 validation's transactions by type without addresses on the P-Chain", async () => {
    const validator = mainnet.l1Validators.find((candidate) => candidate.remainingBalance === 0)!;
    const reference = await simulatorGet<{ transactions: PChainTransaction[] }>(
      harness,
      "data",
      `/v1/networks/mainnet/blockchains/p-chain/transactions?l1ValidationId=${validator.validationId}`,
    );
    const types = [...new Set(reference.transactions.map((tx) => tx.txType))];
    expect(types).toContain("DisableL1ValidatorTx");
    harness.simulator.resetCounters();
    const result = await execute(harness, PChainTransactionHashesDocument, {
      network: "MAINNET",
      validationId: validator.validationId,
      txTypes: ["DISABLE_L1_VALIDATOR_TX"],
    });
    expect(result.body.errors).toBeUndefined();
    expect(result.body.data!.primaryNetwork.pChain.transactions!.nodes).toEqual(
      reference.transactions
        .filter((tx) => tx.txType === "DisableL1ValidatorTx")
        .map((tx) => ({ txHash: tx.txHash, txType: "DISABLE_L1_VALIDATOR_TX", blockTimestamp: tx.blockTimestamp })),
    );
    expect(upstreamCalls(harness)).toEqual({ [LIST_ROUTE]: 1 });
  });

  it("passes on a page the upstream ended early, with its token, and continues from there", async () => {
    const reference = await simulatorGet<{ transactions: PChainTransaction[]; nextPageToken: string }>(
      harness,
      "data",
      "/v1/networks/mainnet/blockchains/p-chain/transactions?pageSize=100",
    );
    expect(reference.transactions.length).toBeLessThan(100);
    const next = await simulatorGet<{ transactions: PChainTransaction[] }>(
      harness,
      "data",
      `/v1/networks/mainnet/blockchains/p-chain/transactions?pageSize=3&pageToken=${reference.nextPageToken}`,
    );
    harness.simulator.resetCounters();
    const short = await execute(harness, PChainTransactionHashesDocument, { network: "MAINNET", first: 100 });
    const connection = short.body.data!.primaryNetwork.pChain.transactions!;
    expect(connection.nodes.map((node) => node.txHash)).toEqual(reference.transactions.map((tx) => tx.txHash));
    expect(connection.pageInfo.hasNextPage).toBe(true);
    expect(upstreamCalls(harness)).toEqual({ [LIST_ROUTE]: 1 });
    const following = await execute(harness, PChainTransactionHashesDocument, {
      network: "MAINNET",
      first: 3,
      after: connection.pageInfo.endCursor,
    });
    expect(following.body.data!.primaryNetwork.pChain.transactions!.nodes.map((node) => node.txHash)).toEqual(
      next.transactions.map((tx) => tx.txHash),
    );
  });

  it("refuses a cursor used with other filters", async () => {
    const first = await execute(harness, PChainTransactionHashesDocument, {
      network: "MAINNET",
      first: 2,
      addresses: [wallets[0]!],
    });
    harness.simulator.resetCounters();
    const reused = await execute(harness, PChainTransactionHashesDocument, {
      network: "MAINNET",
      first: 2,
      addresses: [wallets[1]!],
      after: first.body.data!.primaryNetwork.pChain.transactions!.pageInfo.endCursor,
    });
    expect(reused.body.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "after" });
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("reports the upstream's own refusal as BAD_USER_INPUT on the field", async () => {
    harness.simulator.setKnobs({ errorRate: 1, errorStatus: 400, errorRoutes: [LIST_ROUTE] });
    try {
      const result = await execute(harness, PChainTransactionHashesDocument, { network: "MAINNET", addresses: [wallets[0]!] });
      expect(result.body.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", upstream: { status: 400 } });
      expect(upstreamCalls(harness)).toEqual({ [LIST_ROUTE]: 1 });
    } finally {
      harness.simulator.setKnobs({ errorRate: 0, errorRoutes: [] });
    }
  });
});

describe("UTXOs", () => {
  it("lists every P-Chain UTXO of the wallets with every field, page by page", async () => {
    const nodes: unknown[] = [];
    let after: string | undefined;
    let token: string | undefined;
    do {
      const reference = await restUtxos<PChainUtxo>(
        "p-chain",
        `pageSize=300&includeSpent=true${token ? `&pageToken=${token}` : ""}`,
        wallets,
      );
      const result = await execute(harness, PChainUtxosPageDocument, {
        network: "MAINNET",
        addresses: wallets,
        first: 300,
        includeSpent: true,
        after,
      });
      expect(result.body.errors).toBeUndefined();
      const connection = result.body.data!.primaryNetwork.pChain.utxos!;
      expect(connection.chainInfo).toEqual({ chainName: "P_CHAIN", network: "MAINNET" });
      expect(connection.edges.map((edge) => edge.node)).toEqual(reference.utxos.map(pChainUtxo));
      nodes.push(...connection.edges.map((edge) => edge.node));
      after = connection.pageInfo.endCursor ?? undefined;
      token = reference.nextPageToken;
      expect(connection.pageInfo.hasNextPage).toBe(token !== undefined);
    } while (token);
    expectEveryFieldSet(nodes);
    expect(new Set(nodes.map((node) => (node as { createdOnChainId: string }).createdOnChainId))).toEqual(new Set([P, X, C]));
  });

  it("lists X-Chain UTXOs of any asset, or of one, and C-Chain UTXOs in shared memory, with every field", async () => {
    const reference = await restUtxos<Utxo>("x-chain", "pageSize=300&includeSpent=true", wallets);
    const x = await execute(harness, XChainUtxosPageDocument, {
      network: "MAINNET",
      addresses: wallets,
      first: 300,
      includeSpent: true,
    });
    expect(x.body.errors).toBeUndefined();
    expect(x.body.data!.primaryNetwork.xChain.utxos!.nodes).toEqual(reference.utxos.map(utxo));
    expect(x.body.data!.primaryNetwork.xChain.utxos!.chainInfo).toEqual({ chainName: "X_CHAIN", network: "MAINNET" });
    expectEveryFieldSet(x.body.data!.primaryNetwork.xChain.utxos!.nodes);

    const token = reference.utxos.find((candidate) => candidate.asset.symbol.startsWith("SIM"))!.asset.assetId;
    const ofToken = await restUtxos<Utxo>("x-chain", `pageSize=100&assetId=${token}`, wallets);
    harness.simulator.resetCounters();
    const filtered = await execute(harness, XChainUtxosPageDocument, {
      network: "MAINNET",
      addresses: wallets.map((w) => `X-${w}`),
      first: 100,
      assetId: token,
    });
    expect(filtered.body.data!.primaryNetwork.xChain.utxos!.nodes.map((node) => node.utxoId)).toEqual(
      ofToken.utxos.map((u) => u.utxoId),
    );
    expect(ofToken.utxos.length).toBeGreaterThan(0);
    expect(upstreamCalls(harness)).toEqual({ [UTXO_ROUTE]: 1 });

    const cReference = await restUtxos<Utxo>("c-chain", "pageSize=100&includeSpent=true", wallets);
    const c = await execute(harness, CChainUtxosPageDocument, {
      network: "MAINNET",
      addresses: wallets.map((w) => `C-${w}`),
      first: 100,
      includeSpent: true,
    });
    expect(c.body.data!.primaryNetwork.cChain.utxos!.nodes).toEqual(cReference.utxos.map(utxo));
    expect(
      c.body.data!.primaryNetwork.cChain.utxos!.nodes.every(
        (node) => node.consumedOnChainId === C && node.createdOnChainId !== C,
      ),
    ).toBe(true);
  });

  it("sorts by amount as the route does", async () => {
    const reference = await restUtxos<PChainUtxo>("p-chain", "pageSize=30&sortBy=amount&sortOrder=asc", wallets);
    const result = await execute(harness, PChainUtxosPageDocument, {
      network: "MAINNET",
      addresses: wallets,
      first: 30,
      sortBy: "AMOUNT",
      sortOrder: "ASC",
    });
    expect(result.body.data!.primaryNetwork.pChain.utxos!.edges.map((edge) => edge.node.utxoId)).toEqual(
      reference.utxos.map((u) => u.utxoId),
    );
  });

  it("refuses a page over 1024 before any upstream call", async () => {
    const result = await execute(
      harness,
      `{ primaryNetwork(network: MAINNET) { pChain { utxos(addresses: ["${wallets[0]}"], first: 1025) { nodes { utxoId } } } } }`,
    );
    expect(result.body.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "first", max: 1024 });
    expect(result.body.errors?.[0]?.message).toMatch(/between \d and 1024/);
    expect(upstreamCalls(harness)).toEqual({});
  });

  it.each([
    ["no addresses", { addresses: [] }, "addresses", "must hold at least one address"],
    ["a 0x address", { addresses: ["0x1234567890123456789012345678901234567890"] }, "addresses", "bech32"],
  ])("refuses %s before any upstream call", async (_, variables, argument, message) => {
    const result = await execute(harness, PChainUtxosPageDocument, { network: "MAINNET", ...variables });
    expect(result.body.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument });
    expect(result.body.errors?.[0]?.message).toContain(message);
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("tells a caller who gives no address on any chain that the required argument needs one, not to leave it out", async () => {
    for (const chain of ["pChain", "xChain", "cChain"]) {
      const result = await execute(
        harness,
        `{ primaryNetwork(network: MAINNET) { ${chain} { utxos(addresses: []) { nodes { utxoId } } } } }`,
      );
      expect(result.body.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "addresses", min: 1 });
      expect(result.body.errors?.[0]?.message).toContain("at least one address");
      expect(result.body.errors?.[0]?.message).not.toMatch(/leave it out/);
    }
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("takes the route's largest page, 1024", async () => {
    const result = await execute(
      harness,
      `query($a: [String!]!) { primaryNetwork(network: MAINNET) { pChain { utxos(addresses: $a, first: 1024) { nodes { utxoId } } } } }`,
      { a: wallets },
    );
    expect(result.body.errors).toBeUndefined();
    expect(harness.simulator.requests().at(-1)?.query).toMatchObject({ pageSize: "1024" });
    expect(upstreamCalls(harness)).toEqual({ [UTXO_ROUTE]: 1 });
  });

  it("refuses a malformed asset id, and has assetId only on the X-Chain", async () => {
    const result = await execute(harness, XChainUtxosPageDocument, {
      network: "MAINNET",
      addresses: [wallets[0]!],
      assetId: "0xabc",
    });
    expect(result.body.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "assetId" });
    const onP = await execute(
      harness,
      `{ primaryNetwork(network: MAINNET) { pChain { utxos(addresses: ["${wallets[0]}"], assetId: "x") { nodes { utxoId } } } } }`,
    );
    expect(onP.body.errors?.[0]?.message).toContain('Unknown argument "assetId"');
    expect(upstreamCalls(harness)).toEqual({});
  });
});

describe("links through loaders, with the fewest upstream calls", () => {
  it("follows P-Chain UTXOs to the transactions and blocks that created and spent them, one call per distinct record", async () => {
    const { utxos } = await restUtxos<PChainUtxo>("p-chain", "pageSize=120&includeSpent=true", [wallets[0]!]);
    // The blocks of the transactions are the UTXOs' own blocks (same chain and height), so they add no call.
    const transactions = new Set<string>();
    const blocks = new Set<string>();
    for (const utxo of utxos) {
      transactions.add(`${utxo.createdOnChainId}:${utxo.txHash}`);
      blocks.add(`${utxo.createdOnChainId}:${utxo.blockNumber}`);
      if (utxo.consumingTxHash) {
        transactions.add(`${utxo.consumedOnChainId}:${utxo.consumingTxHash}`);
        blocks.add(`${utxo.consumedOnChainId}:${utxo.consumingBlockNumber}`);
      }
    }
    expect(new Set(utxos.map((u) => u.createdOnChainId)).size).toBeGreaterThan(1);
    expect(transactions.size).toBeLessThan(utxos.length * 2);
    harness.simulator.resetCounters();

    const result = await execute(harness, PChainUtxoLinksDocument, { network: "MAINNET", addresses: [wallets[0]!], first: 120 });
    expect(result.body.errors).toBeUndefined();
    expect(upstreamCalls(harness)).toEqual({ [UTXO_ROUTE]: 1, [TX_ROUTE]: transactions.size, [BLOCK_ROUTE]: blocks.size });

    for (const node of result.body.data!.primaryNetwork.pChain.utxos!.nodes) {
      const reference = utxos.find((candidate) => candidate.utxoId === node.utxoId)!;
      expect(node.creationTransaction).toMatchObject({ txHash: reference.txHash, blockchainId: reference.createdOnChainId });
      expect(node.creationBlock).toMatchObject({ blockNumber: reference.blockNumber, blockchainId: reference.createdOnChainId });
      expect(node.creationTransaction!.block).toEqual(node.creationBlock);
      expect(node.consumingTransaction?.txHash ?? null).toBe(reference.consumingTxHash ?? null);
      expect(node.consumingBlock?.blockNumber ?? null).toBe(reference.consumingBlockNumber ?? null);
      if (node.consumingTransaction)
        expect(node.consumingTransaction.block).toMatchObject({ blockHash: node.consumingBlock!.blockHash });
    }

    // Accepted blocks stay in the shared cache; transactions are read again, as their UTXOs' state changes.
    harness.simulator.resetCounters();
    await execute(harness, PChainUtxoLinksDocument, { network: "MAINNET", addresses: [wallets[0]!], first: 120 });
    expect(upstreamCalls(harness)).toEqual({ [UTXO_ROUTE]: 1, [TX_ROUTE]: transactions.size });
  });

  it("finds the blocks of X-Chain UTXOs through their transactions, once each, with no block call for what the transactions tell, and none in vertices", async () => {
    const { utxos } = await restUtxos<Utxo>("x-chain", "pageSize=150&includeSpent=true", [wallets[0]!]);
    const transactions = new Map<string, AnyTransaction>();
    for (const utxo of utxos) {
      for (const [chainId, hash] of [
        [utxo.createdOnChainId, utxo.creationTxHash],
        [utxo.consumedOnChainId, utxo.consumingTxHash],
      ] as const) {
        if (!hash || transactions.has(`${chainId}:${hash}`)) continue;
        transactions.set(
          `${chainId}:${hash}`,
          await simulatorGet(harness, "data", `/v1/networks/mainnet/blockchains/${CHAIN_OF_ID[chainId]}/transactions/${hash}`),
        );
      }
    }
    const blocks = new Set<string>();
    for (const [key, tx] of transactions) {
      const height = "blockNumber" in tx ? tx.blockNumber : "blockHeight" in tx ? tx.blockHeight : undefined;
      if (height !== undefined) blocks.add(`${key.split(":")[0]}:${height}`);
    }
    expect(blocks.size).toBeLessThan(transactions.size);
    harness.simulator.resetCounters();

    const result = await execute(harness, XChainUtxoLinksDocument, { network: "MAINNET", addresses: [wallets[0]!], first: 150 });
    expect(result.body.errors).toBeUndefined();
    // The document asks only the blocks' height and id, which the transactions tell.
    expect(upstreamCalls(harness)).toEqual({ [UTXO_ROUTE]: 1, [TX_ROUTE]: transactions.size });
    const nodes = result.body.data!.primaryNetwork.xChain.utxos!.nodes;
    expect(nodes.some((node) => node.creationBlock === null)).toBe(true);
    for (const node of nodes) expect(node.creationBlock).toEqual(node.creationTransaction!.block);
    const answered = new Set(
      nodes
        .flatMap((node) => [node.creationBlock, node.consumingBlock])
        .filter((block) => block !== null)
        .map((block) => `${block!.blockNumber}:${block!.blockHash}`),
    );
    expect(answered.size).toBe(blocks.size);

    // Asked a field only the block holds, each distinct block is read once.
    harness.simulator.resetCounters();
    const withBlockType = await execute(
      harness,
      `query ($addresses: [String!]!) { primaryNetwork(network: MAINNET) { xChain { utxos(addresses: $addresses, first: 150, includeSpent: true) {
        nodes { creationBlock { blockType } consumingBlock { blockType } } } } } }`,
      { addresses: [wallets[0]!] },
    );
    expect(withBlockType.body.errors).toBeUndefined();
    expect(upstreamCalls(harness)).toEqual({ [UTXO_ROUTE]: 1, [TX_ROUTE]: transactions.size, [BLOCK_ROUTE]: blocks.size });
  });

  it("primes the transaction loader with a page, so links to transactions of the page cost nothing", async () => {
    const page = await simulatorGet<{ transactions: PChainTransaction[] }>(
      harness,
      "data",
      "/v1/networks/mainnet/blockchains/p-chain/transactions?pageSize=30",
    );
    const inPage = new Set(page.transactions.map((tx) => tx.txHash));
    const fetched = new Set<string>();
    const validations = new Set<string>();
    for (const tx of page.transactions) {
      for (const utxo of tx.consumedUtxos) fetched.add(`${utxo.createdOnChainId}:${utxo.txHash}`);
      for (const hash of [tx.rewardTxHash, tx.stakingTxHash]) if (hash) fetched.add(`${P}:${hash}`);
      for (const details of tx.l1ValidatorDetails ?? []) validations.add(details.validationId);
    }
    const linked = [...fetched].filter((key) => !(key.startsWith(`${P}:`) && inPage.has(key.slice(P.length + 1))));
    expect(linked.length).toBeLessThan(fetched.size);
    const blocks = new Set(page.transactions.map((tx) => tx.blockNumber));
    harness.simulator.resetCounters();

    const result = await execute(harness, PChainTransactionLinksDocument, { network: "MAINNET", first: 30 });
    expect(result.body.errors).toBeUndefined();
    expect(upstreamCalls(harness)).toEqual({
      [LIST_ROUTE]: 1,
      [TX_ROUTE]: linked.length,
      [BLOCK_ROUTE]: blocks.size,
      ...(validations.size > 0 ? { "GET /v1/networks/{network}/l1Validators": validations.size } : {}),
    });
    for (const node of result.body.data!.primaryNetwork.pChain.transactions!.nodes) {
      expect(node.block!.blockNumber).toBe(node.blockNumber);
      expect(node.block!.transactionHashes).toContain(node.txHash);
      if (node.rewardTransaction) expect(node.rewardTransaction.stakingTxHash).toBe(node.txHash);
      if (node.stakingTransaction) expect(node.stakingTransaction.rewardTxHash).toBe(node.txHash);
      for (const details of node.l1ValidatorDetails ?? []) expect(details.validator?.validationId).toBe(details.validationId);
    }
  });

  it("links a staking transaction to its reward and back", async () => {
    const reward = await simulatorGet<{ transactions: PChainTransaction[] }>(
      harness,
      "data",
      `/v1/networks/mainnet/blockchains/p-chain/transactions?addresses=${wallets.join(",")}&txTypes=RewardValidatorTx&pageSize=3`,
    );
    expect(reward.transactions.length).toBeGreaterThan(0);
    harness.simulator.resetCounters();
    const result = await execute(harness, PChainTransactionLinksDocument, {
      network: "MAINNET",
      first: 3,
      addresses: wallets,
      txTypes: ["REWARD_VALIDATOR_TX"],
    });
    for (const [index, node] of result.body.data!.primaryNetwork.pChain.transactions!.nodes.entries()) {
      expect(node.stakingTransaction!.txHash).toBe(reward.transactions[index]!.stakingTxHash);
      expect(node.stakingTransaction!.rewardTxHash).toBe(node.txHash);
    }
  });
});

describe("a transaction by hash on each chain", () => {
  async function latest<T>(chain: string, predicate: (tx: T) => boolean = () => true): Promise<T> {
    const page = await simulatorGet<{ transactions: T[] }>(
      harness,
      "data",
      `/v1/networks/mainnet/blockchains/${chain}/transactions?pageSize=100`,
    );
    return page.transactions.find(predicate)!;
  }

  it("answers each chain's own type with every field, one by-hash call each, and refetches it by its node id", async () => {
    const p = await latest<PChainTransaction>("p-chain");
    const x = await latest<XChainTransaction>("x-chain");
    const c = await latest<CChainTransaction>("c-chain");
    harness.simulator.resetCounters();
    const result = await execute(harness, PrimaryNetworkTransactionsByHashDocument, {
      network: "MAINNET",
      pHash: p.txHash,
      xHash: x.txHash,
      cHash: c.txHash,
    });
    expect(result.body.errors).toBeUndefined();
    const { pChain, xChain, cChain } = result.body.data!.primaryNetwork;
    expect(pChain.transaction).toEqual(pChainTransaction(p));
    expect(xChain.transaction).toEqual(xChainTransaction(x));
    const { evmBlock: _, ...cFields } = cChainTransaction(c);
    expect(cChain.transaction).toEqual(cFields);
    expect(upstreamCalls(harness)).toEqual({ [TX_ROUTE]: 3 });
    expect(
      harness.simulator
        .requests()
        .map((request) => request.path)
        .sort(),
    ).toEqual(
      [
        `/v1/networks/mainnet/blockchains/${P}/transactions/${p.txHash}`,
        `/v1/networks/mainnet/blockchains/${X}/transactions/${x.txHash}`,
        `/v1/networks/mainnet/blockchains/${C}/transactions/${c.txHash}`,
      ].sort(),
    );

    harness.simulator.resetCounters();
    const node = await execute(harness, PrimaryNetworkNodeDocument, { id: pChain.transaction!.id });
    expect(node.body.data!.node).toMatchObject({
      __typename: "PChainTransaction",
      txHash: p.txHash,
      blockTimestamp: p.blockTimestamp,
    });
    expect(upstreamCalls(harness)).toEqual({ [TX_ROUTE]: 1 });
  });

  it("answers null for an unknown hash and for another chain's transaction, and refuses a malformed hash before any call", async () => {
    const p = await latest<PChainTransaction>("p-chain");
    const x = await latest<XChainTransaction>("x-chain");
    const unknown = "2wx1bZz5oNAzRprQi3bxMVv2PaajoqTWE4s3uibNb9yFH5xW4v";
    harness.simulator.resetCounters();
    const result = await execute(harness, PrimaryNetworkTransactionsByHashDocument, {
      network: "MAINNET",
      pHash: x.txHash,
      xHash: unknown,
      cHash: p.txHash,
    });
    expect(result.body.errors).toBeUndefined();
    expect(result.body.data!.primaryNetwork).toEqual({
      pChain: { transaction: null },
      xChain: { transaction: null },
      cChain: { transaction: null },
    });
    expect(upstreamCalls(harness)).toEqual({ [TX_ROUTE]: 3 });

    harness.simulator.resetCounters();
    for (const hash of ["0x" + "ab".repeat(32), "../blocks/1", "short"]) {
      const refused = await execute(
        harness,
        `query ($hash: String!) { primaryNetwork(network: MAINNET) { a: pChain { transaction(hash: $hash) { txHash } } b: xChain { txHash: blockchainId } } }`,
        { hash },
      );
      expect(refused.body.errors?.[0]).toMatchObject({
        path: ["primaryNetwork", "a", "transaction"],
        extensions: { code: "BAD_USER_INPUT", argument: "hash" },
      });
      expect((refused.body.data as { primaryNetwork: unknown }).primaryNetwork).toEqual({
        a: { transaction: null },
        b: { txHash: X },
      });
    }
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("reads txType, block number, block time and the UTXOs' P-Chain names through one fragment on the interface", async () => {
    const p = await latest<PChainTransaction>("p-chain", (tx) => tx.consumedUtxos.length > 0);
    const x = await latest<XChainTransaction>("x-chain", (tx) => tx.consumedUtxos.length > 0);
    const c = await latest<CChainTransaction>("c-chain", (tx) => "consumedUtxos" in tx && tx.consumedUtxos.length > 0);
    const result = await execute(harness, PrimaryNetworkTransactionInterfaceDocument, {
      network: "MAINNET",
      pHash: p.txHash,
      xHash: x.txHash,
      cHash: c.txHash,
    });
    expect(result.body.errors).toBeUndefined();
    const { pChain, xChain, cChain } = result.body.data!.primaryNetwork;
    const interfaceUtxo = (utxo: PChainUtxo | Utxo) =>
      "txHash" in utxo
        ? {
            utxoId: utxo.utxoId,
            txHash: utxo.txHash,
            outputIndex: utxo.outputIndex,
            blockTimestamp: utxo.blockTimestamp,
            consumingBlockTimestamp: utxo.consumingBlockTimestamp ?? null,
          }
        : {
            utxoId: utxo.utxoId,
            txHash: utxo.creationTxHash,
            outputIndex: Number(utxo.outputIndex),
            blockTimestamp: utxo.timestamp,
            consumingBlockTimestamp: utxo.consumingTxTimestamp ?? null,
          };
    expect(pChain.transaction).toEqual({
      __typename: "PChainTransaction",
      txHash: p.txHash,
      txType: enumOf(p.txType),
      blockNumber: p.blockNumber,
      blockHash: p.blockHash,
      blockTimestamp: p.blockTimestamp,
      consumedUtxos: p.consumedUtxos.map(interfaceUtxo),
    });
    expect(xChain.transaction).toEqual({
      __typename: "XChainTransaction",
      txHash: x.txHash,
      txType: enumOf(x.txType),
      blockNumber: "blockHeight" in x ? String(x.blockHeight) : null,
      blockHash: "blockHash" in x ? x.blockHash : null,
      blockTimestamp: x.timestamp,
      consumedUtxos: x.consumedUtxos.map(interfaceUtxo),
    });
    expect(cChain.transaction).toEqual({
      __typename: "CChainAtomicTransaction",
      txHash: c.txHash,
      txType: enumOf(c.txType),
      blockNumber: String(c.blockHeight),
      blockHash: c.blockHash,
      blockTimestamp: c.timestamp,
      consumedUtxos: ("consumedUtxos" in c ? c.consumedUtxos : []).map(interfaceUtxo),
    });
    expect(cChain.transaction!.consumedUtxos.every((utxo) => Number.isInteger(utxo.outputIndex))).toBe(true);
  });
});

describe("a transaction's block with the fewest calls", () => {
  const HELD = "__typename id network blockchainId chainName blockNumber blockHash blockTimestamp blockTime";
  const page = (chain: string, block: string, first = 5) =>
    `{ primaryNetwork(network: MAINNET) { ${chain} { transactions(first: ${first}) { nodes { txHash block { ${block} } } } } } }`;

  it.each([["pChain"], ["xChain"], ["cChain"]])(
    "%s: a block's height, id and time come from the transaction, without a block call",
    async (chain) => {
      const held = await execute(harness, page(chain, HELD, 20));
      expect(held.body.errors).toBeUndefined();
      expect(upstreamCalls(harness)).toEqual({ [LIST_ROUTE]: 1 });
      const nodes = (
        held.body.data as {
          primaryNetwork: Record<
            string,
            { transactions: { nodes: { txHash: string; block: Record<string, unknown> | null }[] } }
          >;
        }
      ).primaryNetwork[chain]!.transactions.nodes;
      expect(nodes.some((node) => node.block !== null)).toBe(true);

      // The same fields of the block read from its route: the partial record tells the truth.
      harness.simulator.resetCounters();
      const fetched = await execute(harness, page(chain, `${HELD} blockType`, 20));
      const fetchedNodes = (
        fetched.body.data as {
          primaryNetwork: Record<string, { transactions: { nodes: { block: Record<string, unknown> | null }[] } }>;
        }
      ).primaryNetwork[chain]!.transactions.nodes;
      const blocks = new Set(nodes.filter((node) => node.block !== null).map((node) => node.block!.blockNumber));
      expect(upstreamCalls(harness)).toEqual({ [LIST_ROUTE]: 1, [BLOCK_ROUTE]: blocks.size });
      expect(fetchedNodes.map((node) => (node.block ? { ...node.block, blockType: undefined } : null))).toEqual(
        nodes.map((node) => (node.block ? { ...node.block, blockType: undefined } : null)),
      );
    },
  );

  it("pChain { transactions(first: 5) { nodes { block { blockHash } } } } makes one call, and the estimate says so", async () => {
    const document = page("pChain", "blockHash");
    const result = await execute(harness, document);
    expect(result.body.errors).toBeUndefined();
    expect(upstreamCalls(harness)).toEqual({ [LIST_ROUTE]: 1 });
    expect(estimateUpstreamCalls(schema, parse(document), undefined, {}, NO_FACTS)).toBe(1);
    expect(estimateUpstreamCalls(schema, parse(page("xChain", "blockNumber")), undefined, {}, NO_FACTS)).toBe(1);
    expect(estimateUpstreamCalls(schema, parse(page("cChain", "blockNumber blockTime")), undefined, {}, NO_FACTS)).toBe(1);
    // A field only the block holds costs its call, in the estimate as in fact.
    expect(estimateUpstreamCalls(schema, parse(page("pChain", "blockHash txCount")), undefined, {}, NO_FACTS)).toBe(1 + 5);
  });

  it("answers a P-Chain UTXO's blocks' height and time from the UTXO, without a block call", async () => {
    const { utxos } = await restUtxos<PChainUtxo>("p-chain", "pageSize=40&includeSpent=true", [wallets[0]!]);
    expect(utxos.some((utxo) => utxo.consumingTxHash)).toBe(true);
    harness.simulator.resetCounters();
    const document = `query ($addresses: [String!]!) { primaryNetwork(network: MAINNET) { pChain { utxos(addresses: $addresses, first: 40, includeSpent: true) {
      nodes { utxoId creationBlock { __typename blockchainId chainName blockNumber blockTimestamp blockTime } consumingBlock { blockchainId blockNumber blockTimestamp } } } } } }`;
    const result = await execute(harness, document, { addresses: [wallets[0]!] });
    expect(result.body.errors).toBeUndefined();
    expect(upstreamCalls(harness)).toEqual({ [UTXO_ROUTE]: 1 });
    expect(estimateUpstreamCalls(schema, parse(document), undefined, { addresses: [wallets[0]!] }, NO_FACTS)).toBe(1);
    type Node = { utxoId: string; creationBlock: Record<string, unknown>; consumingBlock: Record<string, unknown> | null };
    const nodes = (result.body.data as { primaryNetwork: { pChain: { utxos: { nodes: Node[] } } } }).primaryNetwork.pChain.utxos
      .nodes;
    for (const node of nodes) {
      const reference = utxos.find((utxo) => utxo.utxoId === node.utxoId)!;
      expect(node.creationBlock).toEqual({
        __typename: "PrimaryNetworkBlock",
        blockchainId: reference.createdOnChainId,
        chainName: `${CHAIN_OF_ID[reference.createdOnChainId]![0]!.toUpperCase()}_CHAIN`,
        blockNumber: reference.blockNumber,
        blockTimestamp: reference.blockTimestamp,
        blockTime: new Date(reference.blockTimestamp * 1000).toISOString(),
      });
      expect(node.consumingBlock).toEqual(
        reference.consumingTxHash
          ? {
              blockchainId: reference.consumedOnChainId,
              blockNumber: reference.consumingBlockNumber,
              blockTimestamp: reference.consumingBlockTimestamp,
            }
          : null,
      );
    }
  });
});
