import { afterEach, describe, expect, it } from "vitest";
import {
  getNullableType,
  isInterfaceType,
  isListType,
  isObjectType,
  parse,
  type DocumentNode,
  type GraphQLField,
  type GraphQLObjectType,
} from "graphql";
import { referenceOperations } from "../bench/operations/index.ts";
import { PlainUpstream } from "../bench/upstream.ts";
import { schema } from "../src/schema.ts";
import { ASSUMED_CHAIN_COUNT, NO_FACTS, type KnownChain, type KnownFacts } from "../src/limits/known-facts.ts";
import { estimateCost, estimateUpstreamCalls } from "../src/limits/upstream-calls.ts";
import { NO_UPSTREAM_CALL, declaredCost, type UpstreamCost } from "../src/limits/upstream-cost-declarations.ts";
import { LIST_LENGTHS, SHARED_RECORDS_PER_ITEM, TYPE_SPECIFIC_LINK_SHARE } from "../src/limits/upstream-cost-rules.ts";
import {
  AddressTransactionsCompleteViewsDocument,
  AddressTransactionsWithLinksDocument,
  BlockTransactionsDocument,
  ChainBlockDocument,
  ChainTransactionDocument,
  LatestBlocksWithChainAndParentDocument,
  PChainTransactionLinksDocument,
  PChainUtxoLinksDocument,
  StakingMetricsDocument,
  WarpSignatureDocument,
  XChainUtxoLinksDocument,
  XChainVerticesDocument,
} from "./generated/graphql.ts";
import { execute, registerL1ValidatorTx, simulatorGet, startHarness, upstreamCalls, type Harness } from "./support/harness.ts";

function objectField(coordinate: string): { type: GraphQLObjectType; field: GraphQLField<unknown, unknown> } | undefined {
  const [typeName, fieldName] = coordinate.split(".");
  const type = schema.getType(typeName!);
  const field = isObjectType(type) ? type.getFields()[fieldName!] : undefined;
  return field && isObjectType(type) ? { type, field } : undefined;
}

/** The cost each field of an object type declares on itself (`extensions: upstreamCalls(…)`), by coordinate. */
const DECLARED_COSTS: ReadonlyMap<string, UpstreamCost> = new Map(
  Object.values(schema.getTypeMap())
    .filter(isObjectType)
    .flatMap((type) =>
      Object.values(type.getFields()).flatMap((field) => {
        const cost = declaredCost(type, field);
        return cost === undefined ? [] : [[`${type.name}.${field.name}`, cost] as const];
      }),
    ),
);

function estimate(
  document: DocumentNode | string,
  variables: Record<string, unknown> = {},
  facts: KnownFacts = NO_FACTS,
): number {
  return estimateUpstreamCalls(schema, typeof document === "string" ? parse(document) : document, undefined, variables, facts);
}

describe("the costs fields that call upstream declare", () => {
  it("names only fields of object types that exist, and lists of known length only where they are lists", () => {
    const missing = [...DECLARED_COSTS.keys()].filter((coordinate) => !objectField(coordinate));
    expect(missing).toEqual([]);
    for (const coordinate of Object.keys(LIST_LENGTHS)) {
      expect(isListType(getNullableType(objectField(coordinate)?.field.type)), coordinate).toBe(true);
    }
  });

  it("has every connection, with the default page its resolver uses, as the field's description states it", () => {
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isObjectType(type) || type.name.startsWith("__")) continue;
      for (const field of Object.values(type.getFields())) {
        if (!field.args.some((arg) => arg.name === "first")) continue;
        const coordinate = `${type.name}.${field.name}`;
        const entry = DECLARED_COSTS.get(coordinate);
        expect(entry?.defaultFirst, coordinate).toBeDefined();
        expect(field.description, coordinate).toMatch(new RegExp(`default ${entry!.defaultFirst}\\b`));
      }
    }
  });

  it("lists a field of an interface on every type that implements it", () => {
    for (const coordinate of DECLARED_COSTS.keys()) {
      const { type, field } = objectField(coordinate)!;
      for (const face of type.getInterfaces()) {
        if (!face.getFields()[field.name]) continue;
        for (const implementation of schema.getPossibleTypes(face)) {
          expect(
            DECLARED_COSTS.get(`${implementation.name}.${field.name}`),
            `${implementation.name}.${field.name}`,
          ).toBeDefined();
        }
      }
    }
  });

  it("declares a cost on an interface's field for every implementation, which the estimate reads", () => {
    for (const face of Object.values(schema.getTypeMap()).filter(isInterfaceType)) {
      for (const field of Object.values(face.getFields())) {
        const declaration = field.extensions.upstreamCalls;
        if (declaration === undefined || declaration === NO_UPSTREAM_CALL) continue;
        for (const implementation of schema.getPossibleTypes(face)) {
          expect(
            DECLARED_COSTS.get(`${implementation.name}.${field.name}`),
            `${implementation.name}.${field.name}`,
          ).toBeDefined();
        }
      }
    }
  });
});

describe("the estimate, from the document alone", () => {
  it("multiplies a field's calls by the sizes of the lists around it, and counts the chain list once", () => {
    // the page, a parent per block (its txCount is not known from the child), the chain list once
    expect(estimate(`{ latestBlocks(first: 7) { nodes { chain { chainName } parent { txCount } } } }`)).toBe(1 + 7 + 1);
    // the parent's hash is known from the child: no call
    expect(estimate(`{ latestBlocks(first: 7) { nodes { parent { blockHash } } } }`)).toBe(1);
    // without first, the route's default page (10 blocks), each with a page of its transactions;
    // a transaction's block is the block that listed it, which the request holds
    expect(estimate(`{ latestBlocks { nodes { transactions { nodes { block { gasUsed } } } } } }`)).toBe(1 + 10);
  });

  const chains = (mainnet: number, fuji: number): KnownFacts => ({
    chains: [
      ...Array.from({ length: mainnet }, (_, index) => ({
        chainId: `${index + 1}`,
        isTestnet: false,
        enabledFeatures: index === 0 ? (["nftIndexing"] as const) : [],
      })),
      ...Array.from({ length: fuji }, (_, index) => ({ chainId: `${1000 + index}`, isTestnet: true, enabledFeatures: [] })),
    ] as KnownFacts["chains"],
  });

  it("multiplies by the held chain list's length, per network and feature, and asks for the list when it lacks it", () => {
    const metrics = (filter: string) =>
      `{ chains${filter} { a: metrics(metric: TX_COUNT, first: 5) { nodes { value } } b: metrics(metric: GAS_USED) { nodes { value } } } }`;
    expect(estimate(metrics(""), {}, chains(4, 2))).toBe(1 + 2 * 6);
    expect(estimate(metrics("(network: MAINNET)"), {}, chains(4, 2))).toBe(1 + 2 * 4);
    expect(estimate(metrics("(network: FUJI)"), {}, chains(4, 2))).toBe(1 + 2 * 2);
    expect(estimate(metrics("(feature: NFT_INDEXING)"), {}, chains(4, 2))).toBe(1 + 2 * 1);
    const unknown = estimateCost(schema, parse(metrics("")), undefined, {}, NO_FACTS);
    expect(unknown).toEqual({ upstreamCalls: 1 + 2 * ASSUMED_CHAIN_COUNT, cpuCost: 0, wantsChainList: true });
    // the list alone, and a list whose chains call nothing, need no count
    expect(estimateCost(schema, parse(`{ chains { chainName } }`), undefined, {}, NO_FACTS)).toEqual({
      upstreamCalls: 1,
      cpuCost: 0,
      wantsChainList: false,
    });
  });

  it("counts nothing for first: 0, and the actual first, inline or from a variable", () => {
    expect(estimate(`{ latestBlocks(first: 0) { nodes { parent { txCount } } } }`)).toBe(0);
    expect(estimate(`{ chain(id: "43114") { blocks(first: 0) { nodes { blockHash } } } }`)).toBe(1);
    expect(
      estimate(`query ($n: Int) { latestBlocks(first: $n) { nodes { transactions(first: 0) { nodes { txHash } } } } }`, { n: 4 }),
    ).toBe(1);
    expect(
      estimate(`query ($n: Int) { latestBlocks(first: $n) { nodes { transactions(first: 2) { nodes { txHash } } } } }`, { n: 4 }),
    ).toBe(1 + 4);
  });

  it("counts a parent outside the page once per chain of a latest-blocks page, once per page of one chain's blocks", () => {
    const parents = `nodes { parent { txCount } }`;
    expect(estimate(`{ latestBlocks(first: 20) { ${parents} } }`, {}, chains(4, 2))).toBe(1 + 6 + 1);
    expect(estimate(`{ latestBlocks(first: 20, network: FUJI) { ${parents} } }`, {}, chains(4, 2))).toBe(1 + 2 + 1);
    expect(estimate(`{ latestBlocks(first: 3) { ${parents} } }`, {}, chains(4, 2))).toBe(1 + 3 + 1);
    // without the chain list, a parent per block, and the estimate asks for the list
    expect(estimateCost(schema, parse(`{ latestBlocks(first: 20) { ${parents} } }`), undefined, {}, NO_FACTS)).toMatchObject({
      upstreamCalls: 1 + 20,
      wantsChainList: true,
    });
    expect(estimate(`{ chain(id: "43114") { blocks(first: 20) { ${parents} } } }`)).toBe(1 + 1 + 1);
  });

  it("counts a look-up the request's loaders answer once where the document asks it twice", () => {
    const block = `block(id: "1200") { txCount }`;
    expect(
      estimate(
        `{ a: chain(id: "43114") { ${block} metricsInfo { chainName } } b: chain(id: "43114") { ${block} metricsInfo { chainName } } }`,
      ),
    ).toBe(1 + 1 + 1);
    expect(estimate(`{ a: chain(id: "43114") { ${block} } b: chain(id: "43114") { block(id: "1201") { txCount } } }`)).toBe(
      1 + 2,
    );
    expect(estimate(`{ a: chain(id: "43114") { ${block} } b: chain(id: "43113") { ${block} } }`)).toBe(1 + 2);
    // a series is no look-up: each alias is a call
    const series = `metrics(metric: TX_COUNT, first: 3) { nodes { value } }`;
    expect(estimate(`{ a: chain(id: "43114") { ${series} } b: chain(id: "43114") { ${series} } }`)).toBe(1 + 2);
  });

  it("counts a Warp verification's subnet look-ups only when no subnet is given, to the field or the aggregation", () => {
    const verification = `decoded { verification { valid } }`;
    const aggregate = (subnet: string) =>
      `mutation { aggregateWarpSignatures(input: { network: FUJI, message: "00"${subnet} }) { ${verification} } }`;
    // one look-up expected to find the subnet, then the validator page
    expect(estimate(aggregate(""))).toBe(1 + 2);
    expect(estimate(aggregate(`, signingSubnetId: "11111111111111111111111111111111LpoYY"`))).toBe(1 + 1);
  });

  it("counts a transaction's complete view once however many of its fields ask it, and not at all where it is already loaded", () => {
    const page = (fields: string) =>
      `{ chain(id: "43114") { address(address: "0x${"ab".repeat(20)}") { transactions(first: 4) { nodes { transaction { ${fields} } } } } } }`;
    expect(estimate(page("txHash"))).toBe(2);
    expect(estimate(page("input erc20Transfers { value } internalTransactions { value }"))).toBe(2 + 4);
    expect(
      estimate(`{ chain(id: "43114") { transaction(hash: "0x${"12".repeat(32)}") { input erc20Transfers { value } } } }`),
    ).toBe(2);
  });

  it("counts a UTXO's transaction once for the transaction and the block found through it, and a page's UTXOs sharing half as many", () => {
    const utxos = (fields: string, first = 4) =>
      `{ primaryNetwork(network: MAINNET) { xChain { utxos(addresses: ["avax1x"], first: ${first}) { nodes { ${fields} } } } } }`;
    const shared = Math.ceil(4 * SHARED_RECORDS_PER_ITEM);
    expect(estimate(utxos("creationTransaction { txHash }"))).toBe(1 + shared);
    // the block's hash is the transaction's: no block call
    expect(estimate(utxos("creationTransaction { txHash } creationBlock { blockHash }"))).toBe(1 + shared);
    expect(estimate(utxos("creationTransaction { txHash } creationBlock { txCount }"))).toBe(1 + shared + shared);
    // the transactions that created and spent a page's UTXOs are one pool, as the request's loader has them
    expect(estimate(utxos("creationBlock { blockHash } consumingBlock { blockHash }"))).toBe(1 + shared);
    expect(estimate(utxos("creationBlock { txCount } consumingBlock { txCount }"))).toBe(1 + shared + shared);
    // a single UTXO: one call per link
    expect(estimate(utxos("creationTransaction { txHash } consumingTransaction { txHash }", 1))).toBe(1 + 2);
    const pChain = `{ primaryNetwork(network: MAINNET) { pChain { utxos(addresses: ["P-avax1x"], first: 40) { nodes {
      creationTransaction { txHash } consumingTransaction { txHash } creationBlock { blockHash } consumingBlock { blockHash }
    } } } } }`;
    expect(estimate(pChain)).toBe(1 + 40 * SHARED_RECORDS_PER_ITEM + 40 * SHARED_RECORDS_PER_ITEM);
  });

  it("counts a link that only some transaction types have on a share of a page, and all of a single transaction", () => {
    const page = `{ primaryNetwork(network: MAINNET) { pChain { transactions(first: 20) { nodes { rewardTransaction { txHash } stakingTransaction { txHash } } } } } }`;
    expect(estimate(page)).toBe(1 + 2 * Math.ceil(20 * TYPE_SPECIFIC_LINK_SHARE));
    const single = `{ primaryNetwork(network: MAINNET) { pChain { transaction(hash: "x") { ... on PChainTransaction { rewardTransaction { txHash } } } } } }`;
    expect(estimate(single)).toBe(1 + 1);
  });

  it("follows fragments, inline fragments and aliases, and leaves out what @skip and @include leave out", () => {
    const document = `
      query ($withParents: Boolean!, $first: Int) {
        a: latestBlocks(first: $first) { ...Parents }
        b: latestBlocks(first: 3) @include(if: $withParents) { nodes { blockHash } }
        c: latestBlocks(first: 3) @skip(if: $withParents) { nodes { blockHash } }
      }
      fragment Parents on EvmBlockConnection { nodes { ... on EvmBlock { parent @include(if: $withParents) { txCount } } } }`;
    expect(estimate(document, { withParents: true, first: 5 })).toBe(1 + 5 + 1);
    expect(estimate(document, { withParents: false, first: 5 })).toBe(1 + 1);
  });

  it("takes, under an abstract type, the costliest of the types it may be", () => {
    const document = `{
      primaryNetwork(network: MAINNET) {
        blockchain(id: "p-chain") {
          ... on PChain { transactions(first: 3) { nodes { consumedUtxos { creationTransaction { txHash } } } } }
          ... on XChain { vertex(hash: "x") { vertexHash } }
        }
      }
    }`;
    // 3 transactions' consumed UTXOs (1.5 each expected) share half as many creation transactions
    expect(estimate(document)).toBe(
      1 + Math.ceil(3 * LIST_LENGTHS["PChainTransaction.consumedUtxos"]! * SHARED_RECORDS_PER_ITEM),
    );
  });

  it("counts two pages for a cursor that resumes inside a page, and none for an operation whose variables do not coerce", () => {
    const resumeInside = Buffer.from(JSON.stringify([1, null, 10, 4, "x", "h"])).toString("base64url");
    const pageStart = Buffer.from(JSON.stringify([1, "token", 10, -1, null, "h"])).toString("base64url");
    const document = `query ($after: String) { latestBlocks(first: 10, after: $after) { nodes { blockHash } } }`;
    expect(estimate(document, { after: resumeInside })).toBe(2);
    expect(estimate(document, { after: pageStart })).toBe(1);
    expect(estimate(`query ($first: Int!) { latestBlocks(first: $first) { nodes { blockHash } } }`, { first: "ten" })).toBe(0);
  });
});

describe("the estimate against the simulator's count of a cold gateway's calls", () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  /** A fresh gateway and simulator: runs the operation once and answers the estimate and the calls made. */
  async function measure(
    document: DocumentNode | string,
    variables: (harness: Harness) => Record<string, unknown> | Promise<Record<string, unknown>> = () => ({}),
  ): Promise<{ estimate: number; calls: number }> {
    harness = await startHarness();
    const values = await variables(harness);
    // As the rate limiter estimates: with the chain list when the estimate depends on its length.
    const parsed = typeof document === "string" ? parse(document) : document;
    const wantsChainList = estimateCost(schema, parsed, undefined, values, NO_FACTS).wantsChainList;
    const facts: KnownFacts = wantsChainList
      ? { chains: (await simulatorGet<{ chains: KnownChain[] }>(harness, "data", "/v1/chains")).chains }
      : NO_FACTS;
    harness.simulator.resetCounters();
    const result = await execute(harness, document, values);
    expect(result.body.errors).toBeUndefined();
    const calls = Object.values(upstreamCalls(harness)).reduce((sum, count) => sum + count, 0);
    expect(calls).toBeGreaterThan(0);
    return { estimate: estimate(document, values, facts), calls };
  }

  const busyAccount = (h: Harness) => h.simulator.network.transactions(h.simulator.network.chain("43114")!).catalog.accounts[0]!;
  const wallet = (h: Harness) => h.simulator.network.primaryNetwork("mainnet").wallets[0]!.address;

  it.each([
    ["a single block", `{ chain(id: "43114") { block(id: "1200") { blockHash txCount } } }`],
    ["latestBlocks with chain", `{ latestBlocks(first: 20) { nodes { blockNumber chain { chainName } } } }`],
    ["a metric series", `{ networkMetrics(scope: MAINNET, metric: TX_COUNT, first: 30) { nodes { timestamp value } } }`],
    [
      "a chain's metric series",
      `{ chain(id: "43114") { chainName metrics(metric: ACTIVE_ADDRESSES, first: 14) { nodes { value } } } }`,
    ],
  ])("is exact for %s", async (_name, document) => {
    const { estimate: estimated, calls } = await measure(document);
    expect(estimated).toBe(calls);
  });

  it("is exact for an address page", async () => {
    const document = `query ($address: EvmAddress!) {
      chain(id: "43114") { address(address: $address) { transactions(first: 10) { nodes { transaction { txHash chain { chainName } } erc20Transfers { value } } } } }
    }`;
    const { estimate: estimated, calls } = await measure(document, (h) => ({ address: busyAccount(h) }));
    expect(estimated).toBe(calls);
  });

  it("is exact for a transaction with its complete view and block", async () => {
    const { estimate: estimated, calls } = await measure(ChainTransactionDocument, async (h) => {
      const page = await simulatorGet<{ transactions: { txHash: string }[] }>(
        h,
        "data",
        "/v1/chains/43114/blocks/4444/transactions?pageSize=1",
      );
      return { chainId: "43114", hash: page.transactions[0]!.txHash };
    });
    expect(estimated).toBe(calls);
  });

  it.each(referenceOperations.map((operation) => [operation.name, operation] as const))(
    "is within 1.5 × the calls of the bench operation %s, and exact where every record asked is the page's",
    async (name, operation) => {
      const { estimate: estimated, calls } = await measure(operation.document, async (h) => {
        const upstream = new PlainUpstream(h.simulator.dataUrl, h.simulator.metricsUrl);
        try {
          return (await operation.prepare(upstream)).variables;
        } finally {
          await upstream.close();
        }
      });
      expect(estimated).toBeGreaterThanOrEqual(1);
      expect(estimated).toBeLessThanOrEqual(1.5 * calls);
      if (["block-page", "primary-network-transactions", "chain-metric-90-days"].includes(name)) expect(estimated).toBe(calls);
    },
  );

  it.each([
    ["the latest blocks with chain and parent", LatestBlocksWithChainAndParentDocument, () => ({ first: 20 })],
    ["a block with its chain and parent", ChainBlockDocument, () => ({ chainId: "43114", blockId: "1200" })],
    ["a block's transactions", BlockTransactionsDocument, () => ({ chainId: "43114", blockId: "4444" })],
    [
      "an address's transactions with links",
      AddressTransactionsWithLinksDocument,
      (h: Harness) => ({ chainId: "43114", address: busyAccount(h), first: 25 }),
    ],
    [
      "an address's transactions with complete views",
      AddressTransactionsCompleteViewsDocument,
      (h: Harness) => ({ chainId: "43114", address: busyAccount(h), first: 6 }),
    ],
    [
      "P-Chain UTXOs with their transactions and blocks",
      PChainUtxoLinksDocument,
      (h: Harness) => ({ network: "MAINNET", addresses: [wallet(h)], first: 40 }),
    ],
    [
      "X-Chain UTXOs with their transactions and blocks",
      XChainUtxoLinksDocument,
      (h: Harness) => ({ network: "MAINNET", addresses: [wallet(h)], first: 40 }),
    ],
    ["P-Chain transactions with their links", PChainTransactionLinksDocument, () => ({ network: "MAINNET", first: 30 })],
    ["X-Chain vertices with parents and transactions", XChainVerticesDocument, () => ({ network: "MAINNET", height: 6 })],
    ["staking metrics", StakingMetricsDocument, () => ({ network: "MAINNET", metric: "VALIDATOR_COUNT", first: 20 })],
    [
      "a Warp signature, decoded and verified",
      WarpSignatureDocument,
      (h: Harness) => ({ network: "FUJI", txHash: registerL1ValidatorTx(h) }),
    ],
  ] as const)(
    "is within 1.5 × the calls of %s (the settlement charges what it made beyond)",
    async (_name, document, variables) => {
      const { estimate: estimated, calls } = await measure(
        document as DocumentNode,
        variables as (h: Harness) => Record<string, unknown>,
      );
      expect(estimated).toBeGreaterThanOrEqual(1);
      expect(estimated).toBeLessThanOrEqual(1.5 * calls);
    },
  );
});
