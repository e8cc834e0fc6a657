/**
 * `node(id:)` asked more than once for the same id in one document: every Node type of the
 * graph answers each alias with the same object, loads it once (the upstream calls equal those
 * of asking it once), and answers at once, compiled and on graphql-js alike. The second alias
 * used to get the first one's load before `node` had marked its type: the Node interface then
 * tried every Node type's `isTypeOf`, a primary-network one threw on an EVM record, and compiled
 * execution waited for the request timeout with an unhandled rejection.
 */
import { buildSchema, isObjectType, type GraphQLResolveInfo } from "graphql";
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { schema as executableSchema } from "../src/schema.ts";
import { primaryChain, register } from "../src/upstream/primary-network-api.ts";
import { idsIn } from "./support/ids.ts";
import { execute, simulatorGet, startHarness, upstreamCalls, useHarness, type Harness } from "./support/harness.ts";

const schema = buildSchema(readFileSync(new URL("../schema/schema.graphql", import.meta.url), "utf8"));

/** Every object type that implements Node, as the printed schema has it. */
const NODE_TYPES = Object.values(schema.getTypeMap())
  .filter((type) => isObjectType(type) && type.getInterfaces().some((implemented) => implemented.name === "Node"))
  .map((type) => type.name)
  .sort();

/** A few of each type's own fields, so that both aliases show the record, not only its id (each aliased by its type: their types differ), two each to stay within the alias limit. */
const FIELDS: Record<string, string> = {
  CChainAtomicTransaction: "txHash destinationChain",
  EvmBlock: "blockHash blockNumber",
  EvmChain: "chainId chainName",
  EvmTransaction: "txHash blockHash",
  ExportOperation: "operationId operationStatus",
  L1Validator: "validationId network",
  PChainTransaction: "txHash txType",
  PrimaryNetworkBlock: "blockHash chainName",
  XChainTransaction: "txHash memo",
  XChainVertex: "vertexHash vertexHeight",
};

const SELECTION = `__typename id ${Object.entries(FIELDS)
  .map(
    ([type, fields]) =>
      `... on ${type} { ${fields
        .split(" ")
        .map((field) => `${type}_${field}: ${field}`)
        .join(" ")} }`,
  )
  .join(" ")}`;
const ONCE = `query Once($id: ID!) { a: node(id: $id) { ${SELECTION} } }`;
const TWICE = `query Twice($id: ID!) { a: node(id: $id) { ${SELECTION} } b: node(id: $id) { ${SELECTION} } }`;

/** One `id` of each Node type, as the gateway gives them out. */
async function harvestIds(harness: Harness): Promise<Record<string, string>> {
  const listed = await execute(
    harness,
    `{
      chain(id: "43114") { id blocks(first: 10) { nodes { id txCount transactions(first: 1) { nodes { id } } } } }
      primaryNetwork(network: FUJI) {
        pChain { transactions(first: 1) { nodes { id } } block(id: "1") { id } }
        xChain { transactions(first: 1) { nodes { id } } verticesAtHeight(height: 1, first: 1) { nodes { id } } }
        cChain { transactions(first: 1) { nodes { id } } }
        l1Validators(first: 1) { nodes { id } }
      }
    }`,
  );
  expect(listed.body.errors).toBeUndefined();
  const started = await execute(
    harness,
    `mutation { exportTransactions(input: { primaryNetwork: { includeChains: ["p-chain"] } }) { id } }`,
  );
  expect(started.body.errors).toBeUndefined();
  const ids = idsIn([listed.body.data, started.body.data]);
  const byType: Record<string, string> = {};
  for (const id of ids) {
    const typename = Buffer.from(id, "base64").toString("utf8").split(":")[0]!;
    byType[typename] ??= id;
  }
  return byType;
}

describe.each([
  ["compiled", "true"],
  ["graphql-js", "false"],
])("node(id:) twice for one id, %s", (_mode, jit) => {
  const harness = useHarness({ env: { GRAPHQL_JIT: jit } });
  let ids: Record<string, string>;

  beforeAll(async () => {
    // A job that ends at once: its status is the same whenever it is read.
    harness.simulator.setKnobs({ exportJobMs: 0 });
    ids = await harvestIds(harness);
  });

  it("covers every Node type of the schema", () => {
    expect(Object.keys(FIELDS).sort()).toEqual(NODE_TYPES);
    expect(Object.keys(ids).sort()).toEqual(NODE_TYPES);
  });

  it.each(NODE_TYPES)(
    "%s: both aliases answer the same object, loaded once",
    async (typename) => {
      const id = ids[typename]!;
      harness.gateway.cache.clear();
      harness.simulator.resetCounters();
      const once = await execute(harness, ONCE, { id });
      expect(once.body.errors).toBeUndefined();
      const callsOnce = upstreamCalls(harness);

      harness.gateway.cache.clear();
      harness.simulator.resetCounters();
      const twice = await execute(harness, TWICE, { id });
      // Not cut short by the request timeout, and no error at all.
      expect((twice.body.errors ?? []).map((error) => error.extensions?.code)).not.toContain("TIMEOUT");
      expect(twice.body.errors).toBeUndefined();
      const data = twice.body.data as { a: Record<string, unknown>; b: Record<string, unknown> };
      expect(data.a).toMatchObject({ __typename: typename, id });
      expect(data.b).toEqual(data.a);
      expect(data.a).toEqual((once.body.data as { a: unknown }).a);
      expect(upstreamCalls(harness)).toEqual(callsOnce);
    },
    40_000,
  );
});

describe("the Node types' isTypeOf", () => {
  it("answers for any record, never throws, and claims only its own type's", async () => {
    const harness = await startHarness();
    try {
      const get = <T>(path: string) => simulatorGet<T>(harness, "data", path);
      const fuji = (chain: "p-chain" | "x-chain" | "c-chain") => primaryChain("fuji", chain);
      const pChainTx = (await get<{ transactions: object[] }>("/v1/networks/fuji/blockchains/p-chain/transactions?pageSize=1"))
        .transactions[0]!;
      const pChainBlock = await get<object>("/v1/networks/fuji/blockchains/p-chain/blocks/1");
      const evmBlock = (await get<{ blocks: object[] }>("/v1/chains/43114/blocks?pageSize=1")).blocks[0]!;
      const records: [string, unknown][] = [
        ["an EVM block", evmBlock],
        ["an unregistered P-Chain transaction", structuredClone(pChainTx)],
        ["a P-Chain block", register(pChainBlock, fuji("p-chain"))],
        ["a P-Chain transaction", register(pChainTx, fuji("p-chain"))],
        ["null", null],
      ];
      const claims: Record<string, string[]> = {};
      for (const typename of NODE_TYPES) {
        const type = executableSchema.getType(typename);
        if (!isObjectType(type) || !type.isTypeOf) continue;
        for (const [what, record] of records) {
          const claimed = type.isTypeOf(record, {}, {} as GraphQLResolveInfo);
          if (claimed === true) (claims[what] ??= []).push(typename);
          else expect(claimed, `${typename}.isTypeOf(${what})`).toBe(false);
        }
      }
      expect(claims).toEqual({ "a P-Chain transaction": ["PChainTransaction"] });
    } finally {
      await harness.close();
    }
  });
});
