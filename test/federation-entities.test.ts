/**
 * The gateway as a Federation v2 subgraph (issue 29, part A): its `@key`s as `_service { sdl }`
 * serves them, and `_entities` answering each entity as the matching direct query does, through
 * the same loaders and caches (counted on the simulator), each failure at its own index, and
 * every refusal made before any upstream call.
 */
import { readFileSync } from "node:fs";
import { Kind, parse, print } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROUTES } from "../src/upstream/routes.ts";
import { execute, startHarness, upstreamCalls, useHarness, type Harness } from "./support/harness.ts";

const harness = useHarness();

const PRIMARY_NETWORK_SUBNET = "11111111111111111111111111111111LpoYY";
const BLOCK_ROUTE = ROUTES.block.label;

/** `_entities` over the representations, each item with `selection` (inline fragments on the entity types). */
function entities(representations: unknown[], selection: string, target: Harness = harness) {
  return execute<{ _entities: (Record<string, unknown> | null)[] }, { representations: unknown[] }>(
    target,
    `query Entities($representations: [_Any!]!) { _entities(representations: $representations) { __typename ${selection} } }`,
    { representations },
  );
}

/** Runs `read` to learn sample keys, then forgets everything it cost: counters and record cache. */
async function sample<T>(read: () => Promise<T>): Promise<T> {
  const value = await read();
  harness.gateway.cache.clear();
  harness.simulator.resetCounters();
  return value;
}

interface SampleBlock {
  id: string;
  chainId: string;
  blockNumber: string;
  blockHash: string;
  transactions: { nodes: { txHash: string }[] } | null;
}

function latestBlocks(first: number): Promise<SampleBlock[]> {
  return sample(async () => {
    const result = await execute<{ latestBlocks: { nodes: SampleBlock[] } }, Record<string, never>>(
      harness,
      `{ latestBlocks(first: ${first}) { nodes { id chainId blockNumber blockHash transactions(first: 1) { nodes { txHash } } } } }`,
    );
    expect(result.body.errors).toBeUndefined();
    return result.body.data!.latestBlocks.nodes;
  });
}

describe("the subgraph SDL", () => {
  it("serves every entity's @key in _service { sdl }, as schema/subgraph.graphql holds it", async () => {
    const result = await execute<{ _service: { sdl: string } }, Record<string, never>>(harness, "{ _service { sdl } }");
    const sdl = result.body.data!._service.sdl;
    expect(`${sdl}\n`).toBe(readFileSync(new URL("../schema/subgraph.graphql", import.meta.url), "utf8"));
    expect(sdl).toContain('@link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@key"])');
    const keys: Record<string, string[]> = {};
    for (const definition of parse(sdl).definitions) {
      if (definition.kind !== Kind.OBJECT_TYPE_DEFINITION) continue;
      const found = (definition.directives ?? []).filter((directive) => directive.name.value === "key");
      if (found.length > 0) keys[definition.name.value] = found.map((directive) => print(directive.arguments![0]!.value));
    }
    expect(keys).toEqual({
      CChainAtomicTransaction: ['"network blockchainId txHash"'],
      EvmAccount: ['"chain { chainId } address"', '"chainId address"'],
      EvmBlock: ['"chainId blockNumber"', '"chainId blockHash"'],
      EvmChain: ['"chainId"'],
      EvmTransaction: ['"chainId txHash"'],
      L1Validator: ['"network validationId"'],
      PChainTransaction: ['"network blockchainId txHash"'],
      Subnet: ['"network subnetId"'],
      XChainTransaction: ['"network blockchainId txHash"'],
    });
  });
});

describe("_entities answers as the direct query", () => {
  it("resolves chains, blocks (by number and by hash), transactions and accounts", async () => {
    const blocks = await latestBlocks(10);
    const block = blocks.find((item) => item.chainId === "43114" && item.transactions?.nodes.length)!;
    const txHash = block.transactions!.nodes[0]!.txHash;
    const transaction = await sample(async () => {
      const result = await execute<{ chain: { transaction: { from: { address: string } } } }, Record<string, never>>(
        harness,
        `{ chain(id: "43114") { transaction(hash: "${txHash}") { from { address } } } }`,
      );
      return result.body.data!.chain.transaction;
    });
    const address = transaction.from.address;
    // `blockChain`: a block's chain is nullable where an account's is not, so they cannot share a name.
    const blockFields = "chainId blockNumber blockHash txCount gasUsed blockChain: chain { chainName } parent { blockHash }";
    const transactionFields =
      "chainId txHash value from { address } to { address } fromAccount { address chain { chainId chainName } } toAccount { address } erc20Transfers { value }";
    const accountFields = "address chain { chainId chainName } transactions(first: 3) { nodes { transaction { txHash } } }";

    const direct = await execute<Record<string, Record<string, unknown>>, Record<string, never>>(
      harness,
      `{ chain(id: "43114") {
        chainId chainName
        byNumber: block(id: "${block.blockNumber}") { ${blockFields} }
        byHash: block(id: "${block.blockHash}") { ${blockFields} }
        transaction(hash: "${txHash}") { ${transactionFields} }
        address(address: "${address}") { ${accountFields} }
      } }`,
    );
    expect(direct.body.errors).toBeUndefined();
    const chain = direct.body.data!.chain!;

    const result = await entities(
      [
        { __typename: "EvmChain", chainId: "43114" },
        { __typename: "EvmBlock", chainId: "43114", blockNumber: block.blockNumber },
        { __typename: "EvmBlock", chainId: "43114", blockHash: block.blockHash },
        { __typename: "EvmTransaction", chainId: "43114", txHash },
        { __typename: "EvmAccount", chain: { chainId: "43114" }, address },
      ],
      `... on EvmChain { chainId chainName }
       ... on EvmBlock { ${blockFields} }
       ... on EvmTransaction { ${transactionFields} }
       ... on EvmAccount { ${accountFields} }`,
    );
    expect(result.body.errors).toBeUndefined();
    expect(result.body.data!._entities).toEqual([
      { __typename: "EvmChain", chainId: chain.chainId, chainName: chain.chainName },
      { __typename: "EvmBlock", ...(chain.byNumber as object) },
      { __typename: "EvmBlock", ...(chain.byHash as object) },
      { __typename: "EvmTransaction", ...(chain.transaction as object) },
      { __typename: "EvmAccount", ...(chain.address as object) },
    ]);
  });

  it("resolves P-, X- and C-Chain transactions, L1 validators and subnets", async () => {
    type Keyed = { txHash: string; blockchainId: string; network: string };
    const found = await sample(async () => {
      const result = await execute<
        {
          primaryNetwork: Record<"pChain" | "xChain" | "cChain", { transactions: { nodes: Keyed[] } }> & {
            l1Validators: { nodes: { validationId: string; subnetId: string }[] };
          };
        },
        Record<string, never>
      >(
        harness,
        `{ primaryNetwork(network: FUJI) {
          pChain { transactions(first: 1) { nodes { txHash blockchainId network } } }
          xChain { transactions(first: 1) { nodes { txHash blockchainId network } } }
          cChain { transactions(first: 1) { nodes { txHash blockchainId network } } }
          l1Validators(first: 1) { nodes { validationId subnetId } }
        } }`,
      );
      expect(result.body.errors).toBeUndefined();
      return result.body.data!.primaryNetwork;
    });
    const [p, x, c] = (["pChain", "xChain", "cChain"] as const).map((chain) => found[chain].transactions.nodes[0]!);
    const validator = found.l1Validators.nodes[0]!;
    const transactionFields = "id network blockchainId txHash txType blockTimestamp";
    const validatorFields = "id network validationId nodeId weight subnet { network subnetId }";
    const subnetFields = `network subnetId
      l1Validators(first: 5) { nodes { validationId } }
      stakingMetrics(metric: VALIDATOR_COUNT, first: 3) { nodes { timestamp valueExact } }`;

    const direct = await execute<{ primaryNetwork: Record<string, Record<string, unknown>> }, Record<string, never>>(
      harness,
      `{ primaryNetwork(network: FUJI) {
        pChain { transaction(hash: "${p!.txHash}") { ${transactionFields} } }
        xChain { transaction(hash: "${x!.txHash}") { ${transactionFields} } }
        cChain { transaction(hash: "${c!.txHash}") { ${transactionFields} } }
        l1Validator(validationId: "${validator.validationId}") { ${validatorFields} }
        l1Validators(subnetId: "${validator.subnetId}", first: 5) { nodes { validationId } }
        stakingMetrics(subnetId: "${validator.subnetId}", metric: VALIDATOR_COUNT, first: 3) { nodes { timestamp valueExact } }
      } }`,
    );
    expect(direct.body.errors).toBeUndefined();
    const network = direct.body.data!.primaryNetwork;

    const transactionKey = (typename: string, keyed: Keyed) => ({ __typename: typename, ...keyed });
    const result = await entities(
      [
        transactionKey("PChainTransaction", p!),
        transactionKey("XChainTransaction", x!),
        transactionKey("CChainAtomicTransaction", c!),
        { __typename: "L1Validator", network: "FUJI", validationId: validator.validationId },
        { __typename: "Subnet", network: "FUJI", subnetId: validator.subnetId },
      ],
      `... on PrimaryNetworkTransaction { ${transactionFields} }
       ... on L1Validator { ${validatorFields} }
       ... on Subnet { ${subnetFields} }`,
    );
    expect(result.body.errors).toBeUndefined();
    expect(result.body.data!._entities).toEqual([
      { __typename: "PChainTransaction", ...(network.pChain!.transaction as object) },
      { __typename: "XChainTransaction", ...(network.xChain!.transaction as object) },
      { __typename: "CChainAtomicTransaction", ...(network.cChain!.transaction as object) },
      { __typename: "L1Validator", ...network.l1Validator },
      {
        __typename: "Subnet",
        network: "FUJI",
        subnetId: validator.subnetId,
        l1Validators: network.l1Validators,
        stakingMetrics: network.stakingMetrics,
      },
    ]);
    expect((network.l1Validators as { nodes: unknown[] }).nodes.length).toBeGreaterThan(0);
  });

  it("answers null for an entity that does not exist, as the direct look-up does", async () => {
    const missing = `0x${"ab".repeat(32)}`;
    const result = await entities(
      [
        { __typename: "EvmBlock", chainId: "43114", blockHash: missing },
        { __typename: "EvmChain", chainId: "999999999" },
      ],
      "... on EvmBlock { blockHash }",
    );
    expect(result.body.errors).toBeUndefined();
    expect(result.body.data!._entities).toEqual([null, null]);
  });
});

describe("_entities goes through the request's loaders and caches", () => {
  it("makes the calls N block look-ups in one query make: batched, then held by the record cache", async () => {
    const blocks = (await latestBlocks(6)).slice(0, 5);
    const fields = "chainId blockNumber blockHash parentHash";

    const lookups = `{ ${blocks.map((block, index) => `b${index}: node(id: "${block.id}") { ... on EvmBlock { ${fields} } }`).join(" ")} }`;
    const direct = await execute<Record<string, unknown>, Record<string, never>>(harness, lookups);
    expect(direct.body.errors).toBeUndefined();
    const directCalls = upstreamCalls(harness);

    harness.gateway.cache.clear();
    harness.simulator.resetCounters();
    const representations = blocks.map((block) => ({
      __typename: "EvmBlock",
      chainId: block.chainId,
      blockHash: block.blockHash,
    }));
    const result = await entities(representations, `... on EvmBlock { ${fields} }`);
    expect(result.body.errors).toBeUndefined();
    expect(upstreamCalls(harness)).toEqual(directCalls);
    expect(upstreamCalls(harness)).toEqual({ [BLOCK_ROUTE]: 5 });
    expect(result.body.data!._entities).toEqual(
      blocks.map((_, index) => ({ __typename: "EvmBlock", ...(direct.body.data![`b${index}`] as object) })),
    );

    // A block by hash does not change: the record cache holds it for the next request, either way.
    harness.simulator.resetCounters();
    expect((await entities(representations, `... on EvmBlock { ${fields} }`)).body.data).toEqual(result.body.data);
    expect((await execute(harness, lookups)).body.data).toEqual(direct.body.data);
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("makes the block calls of `chain { block(id:) }` look-ups, a block asked twice once", async () => {
    const [block] = await latestBlocks(1);
    // By number and by hash, one of each asked twice.
    const ids = ["1", "2", "3", "1", block!.blockHash, block!.blockHash];
    const direct = await execute(
      harness,
      `{ chain(id: "${block!.chainId}") { ${ids.map((id, index) => `b${index}: block(id: "${id}") { blockHash }`).join(" ")} } }`,
    );
    expect(direct.body.errors).toBeUndefined();
    const { [ROUTES.chains.label]: chainList, ...directCalls } = upstreamCalls(harness);
    expect(chainList).toBe(1);

    harness.gateway.cache.clear();
    harness.simulator.resetCounters();
    const result = await entities(
      ids.map((id) =>
        id.startsWith("0x")
          ? { __typename: "EvmBlock", chainId: block!.chainId, blockHash: id }
          : { __typename: "EvmBlock", chainId: block!.chainId, blockNumber: id },
      ),
      "... on EvmBlock { blockHash }",
    );
    expect(result.body.errors).toBeUndefined();
    expect(upstreamCalls(harness)).toEqual(directCalls);
    expect(upstreamCalls(harness)).toEqual({ [BLOCK_ROUTE]: 4 });
    expect(result.body.data!._entities.map((item) => item!.blockHash)).toEqual(
      ids.map((_, index) => (direct.body.data as { chain: Record<string, { blockHash: string }> }).chain[`b${index}`]!.blockHash),
    );
  });

  it("resolves an account's and a subnet's key, and a transaction's sender's, without a call of their own", async () => {
    const [block] = (await latestBlocks(10)).filter((item) => item.transactions?.nodes.length);
    const address = `0x${"12".repeat(20)}`;
    const keysOnly = await entities(
      [
        { __typename: "EvmAccount", chain: { chainId: "43114" }, address },
        // By the flat key as well.
        { __typename: "EvmAccount", chainId: "43113", address },
        { __typename: "Subnet", network: "MAINNET", subnetId: PRIMARY_NETWORK_SUBNET },
      ],
      "... on EvmAccount { address chainId chain { chainId } } ... on Subnet { network subnetId }",
    );
    expect(keysOnly.body.data!._entities).toEqual([
      { __typename: "EvmAccount", address, chainId: "43114", chain: { chainId: "43114" } },
      { __typename: "EvmAccount", address, chainId: "43113", chain: { chainId: "43113" } },
      { __typename: "Subnet", network: "MAINNET", subnetId: PRIMARY_NETWORK_SUBNET },
    ]);
    expect(upstreamCalls(harness)).toEqual({});

    // What a router fetches to hang another subgraph's fields on a transaction's sender.
    const txHash = block!.transactions!.nodes[0]!.txHash;
    const sender = await entities(
      [{ __typename: "EvmTransaction", chainId: block!.chainId, txHash }],
      "... on EvmTransaction { fromAccount { __typename address chain { chainId } } toAccount { address } }",
    );
    expect(sender.body.errors).toBeUndefined();
    expect(upstreamCalls(harness)).toEqual({ [ROUTES.transaction.label]: 1 });
  });
});

describe("_entities failures and refusals", () => {
  it("keeps a failed look-up at its own index; the others keep their data", async () => {
    const [block] = await latestBlocks(1);
    const pChainTx = await sample(async () => {
      const result = await execute<
        { primaryNetwork: { pChain: { transactions: { nodes: { txHash: string; blockchainId: string }[] } } } },
        Record<string, never>
      >(harness, "{ primaryNetwork(network: FUJI) { pChain { transactions(first: 1) { nodes { txHash blockchainId } } } } }");
      return result.body.data!.primaryNetwork.pChain.transactions.nodes[0]!;
    });
    harness.simulator.setKnobs({
      errorRate: 1,
      errorStatus: 500,
      errorRoutes: [ROUTES.primaryNetworkTransaction.label],
      faultKind: "status",
    });
    try {
      const result = await entities(
        [
          { __typename: "EvmBlock", chainId: block!.chainId, blockHash: block!.blockHash },
          { __typename: "PChainTransaction", network: "FUJI", ...pChainTx },
          { __typename: "Subnet", network: "FUJI", subnetId: PRIMARY_NETWORK_SUBNET },
        ],
        "... on EvmBlock { blockHash } ... on PChainTransaction { txHash } ... on Subnet { subnetId }",
      );
      expect(result.body.data!._entities).toEqual([
        { __typename: "EvmBlock", blockHash: block!.blockHash },
        null,
        { __typename: "Subnet", subnetId: PRIMARY_NETWORK_SUBNET },
      ]);
      expect(result.body.errors).toHaveLength(1);
      expect(result.body.errors![0]).toMatchObject({ path: ["_entities", 1], extensions: { code: "UPSTREAM_ERROR" } });
    } finally {
      harness.simulator.setKnobs({ errorRate: 0, errorRoutes: [], errorStatus: 500 });
    }
  });

  const BLOCK = { __typename: "EvmBlock", chainId: "43114", blockNumber: "1" };
  const TX = "2u4DRm4inuf5DEqxT3ru2cQy3DcrnDRKMJFutUj8d32bNbUZNA";
  const refused: [what: string, representation: unknown, field: string | undefined][] = [
    ["a chain id that is not decimal", { __typename: "EvmChain", chainId: "0x1" }, "chainId"],
    ["a block hash that is not 32 bytes", { __typename: "EvmBlock", chainId: "43114", blockHash: "0x12" }, "blockHash"],
    ["a block number that is not decimal", { __typename: "EvmBlock", chainId: "43114", blockNumber: "-1" }, "blockNumber"],
    ["a transaction hash that is not hex", { __typename: "EvmTransaction", chainId: "43114", txHash: "abc" }, "txHash"],
    ["an address that is not 20 bytes", { __typename: "EvmAccount", chain: { chainId: "43114" }, address: "0x12" }, "address"],
    ["an account without its chain", { __typename: "EvmAccount", address: `0x${"12".repeat(20)}` }, "chain"],
    [
      "an account's malformed chain id",
      { __typename: "EvmAccount", chain: { chainId: "c" }, address: `0x${"12".repeat(20)}` },
      "chain.chainId",
    ],
    [
      "an account's malformed flat chain id",
      { __typename: "EvmAccount", chainId: "c", address: `0x${"12".repeat(20)}` },
      "chainId",
    ],
    ["an unknown network", { __typename: "Subnet", network: "DEVNET", subnetId: PRIMARY_NETWORK_SUBNET }, "network"],
    ["a subnet id that is not cb58", { __typename: "Subnet", network: "FUJI", subnetId: "0xabc" }, "subnetId"],
    [
      "another chain's blockchain id",
      {
        __typename: "PChainTransaction",
        network: "FUJI",
        blockchainId: "2JVSBoinj9C2J33VntvzYtVJNZdN2NKiwwKjcumHUWEb5DbBrm",
        txHash: TX,
      },
      "blockchainId",
    ],
    ["a missing key field", { __typename: "L1Validator", network: "FUJI" }, "validationId"],
    ["an unknown __typename", { __typename: "EvmWallet", address: "0x" }, "__typename"],
    ["a type that is not an entity", { __typename: "PrimaryNetwork", network: "FUJI" }, "__typename"],
    ["no __typename", { chainId: "43114" }, "__typename"],
    ["a value that is not an object", "43114", undefined],
  ];

  it.each(refused)("refuses %s before any upstream call, naming the index and field", async (_what, representation, field) => {
    // Valid representations before and after it would each make a call, were anything looked up.
    const result = await entities([BLOCK, representation, { ...BLOCK, blockNumber: "2" }], "... on EvmBlock { blockHash }");
    expect(result.body.data).toBeNull();
    expect(result.body.errors).toHaveLength(1);
    expect(result.body.errors![0]!.path).toEqual(["_entities"]);
    expect(result.body.errors![0]!.extensions).toEqual({
      code: "BAD_USER_INPUT",
      argument: "representations",
      index: 1,
      ...(field === undefined ? {} : { field }),
    });
    expect(result.body.errors![0]!.message).toMatch(/^representations\[1\]/);
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("refuses more than MAX_ENTITY_REPRESENTATIONS (default 100) representations before any upstream call", async () => {
    const representations = Array.from({ length: 101 }, (_, index) => ({ ...BLOCK, blockNumber: String(index + 1) }));
    const result = await entities(representations, "... on EvmBlock { blockHash }");
    expect(result.body.data).toBeNull();
    expect(result.body.errors![0]!.extensions).toEqual({
      code: "BAD_USER_INPUT",
      argument: "representations",
      index: 100,
      max: 100,
    });
    expect(result.body.errors![0]!.message).toMatch(/over the limit of 100 \(MAX_ENTITY_REPRESENTATIONS\)/);
    expect(upstreamCalls(harness)).toEqual({});

    const fits = await entities(representations.slice(0, 100), "... on EvmBlock { blockNumber }");
    expect(fits.body.errors).toBeUndefined();
    expect(fits.body.data!._entities).toHaveLength(100);
    expect(upstreamCalls(harness)).toEqual({ [BLOCK_ROUTE]: 100 });
  });

  describe("with MAX_QUERY_COST 3", () => {
    let strict: Harness;
    beforeAll(async () => {
      strict = await startHarness({ MAX_QUERY_COST: "3", MAX_ENTITY_REPRESENTATIONS: "10" });
    });
    afterAll(async () => {
      await strict.close();
    });

    it("counts each distinct representation's look-up in the cost and refuses the operation before any call", async () => {
      const blocks = ["1", "2", "3", "4"].map((blockNumber) => ({ ...BLOCK, blockNumber }));
      strict.simulator.resetCounters();
      const over = await entities(blocks, "... on EvmBlock { blockHash }", strict);
      expect(over.status).toBe(400);
      expect(over.body.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", limit: "cost", max: 3, actual: 4 });
      expect(upstreamCalls(strict)).toEqual({});

      // A block asked twice is one look-up, as it is one call.
      const fits = await entities([...blocks.slice(0, 3), blocks[0]], "... on EvmBlock { blockHash }", strict);
      expect(fits.body.errors).toBeUndefined();
      expect(upstreamCalls(strict)).toEqual({ [BLOCK_ROUTE]: 3 });

      // What is asked of each entity counts too: a block's transactions are a call each.
      strict.simulator.resetCounters();
      const nested = await entities(
        blocks.slice(0, 2),
        "... on EvmBlock { transactions(first: 1) { nodes { txHash } } }",
        strict,
      );
      expect(nested.body.errors![0]!.extensions).toMatchObject({ limit: "cost", actual: 4 });
      expect(upstreamCalls(strict)).toEqual({});
    });

    it("takes its bound from MAX_ENTITY_REPRESENTATIONS", async () => {
      const subnets = Array.from({ length: 11 }, () => ({
        __typename: "Subnet",
        network: "FUJI",
        subnetId: PRIMARY_NETWORK_SUBNET,
      }));
      const result = await entities(subnets, "... on Subnet { subnetId }", strict);
      expect(result.body.errors![0]!.extensions).toEqual({
        code: "BAD_USER_INPUT",
        argument: "representations",
        index: 10,
        max: 10,
      });
      expect((await entities(subnets.slice(0, 10), "... on Subnet { subnetId }", strict)).body.data!._entities).toHaveLength(10);
    });
  });
});
