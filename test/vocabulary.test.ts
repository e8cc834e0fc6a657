/**
 * One vocabulary: the naming rules hold for every field and argument of the schema, and each
 * deprecated older name answers what its new name answers, through the real gateway.
 */
import {
  getNamedType,
  getNullableType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputField,
} from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../src/schema.ts";
import { execute, startHarness, upstreamCalls, type Harness } from "./support/harness.ts";

type Member = GraphQLField<unknown, unknown> | GraphQLArgument | GraphQLInputField;

/** Every field, argument and input field, with where it is. */
function members(): { where: string; member: Member; siblings: Record<string, Member> }[] {
  const found: { where: string; member: Member; siblings: Record<string, Member> }[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith("__")) continue;
    if (isObjectType(type) || isInterfaceType(type) || isInputObjectType(type)) {
      const fields = type.getFields() as Record<string, Member>;
      for (const field of Object.values(fields)) {
        found.push({ where: `${type.name}.${field.name}`, member: field, siblings: fields });
        const args = "args" in field ? field.args : [];
        const byName = Object.fromEntries(args.map((arg) => [arg.name, arg]));
        for (const arg of args) found.push({ where: `${type.name}.${field.name}(${arg.name})`, member: arg, siblings: byName });
      }
    }
  }
  return found;
}

const typeName = (member: Member) => String(getNamedType(member.type));

/** `blockTimestamp` → `blockTime`, `timestamp` → `time`, `lastRun` → `lastRunTime`. */
function dateTimeTwin(name: string): string {
  if (name === "timestamp") return "time";
  return name.endsWith("Timestamp") ? `${name.slice(0, -"Timestamp".length)}Time` : `${name}Time`;
}

describe("the schema's naming rules", () => {
  const all = members();

  it("gives every Unix-seconds time of a record a DateTime twin named with Time", () => {
    const times = all.filter(
      ({ where, member }) =>
        !where.includes("(") &&
        typeName(member) === "SafeInt" &&
        (/Timestamp$/.test(member.name) || member.name === "timestamp" || member.name === "lastRun"),
    );
    expect(times.length).toBeGreaterThan(20);
    const missing = times
      .filter(({ member, siblings }) => {
        const twin = siblings[dateTimeTwin(member.name)];
        return twin === undefined || typeName(twin) !== "DateTime";
      })
      .map(({ where }) => where);
    expect(missing).toEqual([]);
  });

  it("types every height and block number BigInt, and every field or argument of an EVM address EvmAddress", () => {
    const heights = all.filter(
      ({ member }) => /(Height|^blockNumber|BlockNumber)$/.test(member.name) && isScalarType(getNamedType(member.type)),
    );
    expect(heights.length).toBeGreaterThan(10);
    expect(heights.filter(({ member }) => typeName(member) !== "BigInt").map(({ where }) => where)).toEqual([]);
    const evmAddresses = all.filter(
      ({ member }) =>
        /^(fromAddress|toAddress|contractAddress|multicall|address)$/.test(member.name) &&
        isScalarType(getNamedType(member.type)),
    );
    expect(
      evmAddresses
        .filter(({ where, member }) => typeName(member) !== "EvmAddress" && !where.startsWith("AddressBalance"))
        .map(({ where, member }) => `${where}: ${typeName(member)}`),
    ).toEqual([]);
  });

  it("keeps an older name only deprecated, pointing at a sibling that exists with the same type", () => {
    const deprecated = all.filter(({ member }) => member.deprecationReason != null);
    const retired = ["platformChainId", "baseFeePerGas", "l1ValidationId"];
    for (const { where, member } of all.filter(({ member }) => retired.includes(member.name))) {
      expect(member.deprecationReason, where).toBeTruthy();
    }
    for (const { where, member } of all.filter(({ where }) => where.startsWith("Subscription.") && where.endsWith("(after)"))) {
      expect(member.deprecationReason, where).toBeTruthy();
    }
    const renamed = deprecated.filter(({ member }) => /^Use `\w+`/.test(member.deprecationReason!));
    expect(renamed.length).toBeGreaterThanOrEqual(8);
    for (const { where, member, siblings } of renamed) {
      const replacement = /^Use `(\w+)`/.exec(member.deprecationReason!)![1]!;
      // `asset.amount`-style replacements live one level down; the rest are siblings of the same type.
      const sibling = siblings[replacement];
      expect(sibling, `${where} → ${replacement}`).toBeDefined();
      expect(String(getNullableType(sibling!.type)), where).toBe(String(getNullableType(member.type)));
      expect(sibling!.deprecationReason ?? null, where).toBeNull();
    }
  });
});

describe("deprecated names answer as their new names", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({ RATE_LIMIT_BURST: "100000" });
  });
  afterAll(async () => {
    await harness.close();
  });

  it("EvmChain.platformChainId and EvmTransaction.baseFeePerGas: the same values as blockchainId and baseFee", async () => {
    const { network } = harness.simulator;
    const hash = network.transactions(network.chain("43114")!).blockTransactions(3210)!.at(1)!.txHash;
    const result = await execute<
      {
        chain: {
          blockchainId: string | null;
          platformChainId: string | null;
          transaction: { baseFee: string | null; baseFeePerGas: string | null } | null;
        } | null;
      },
      Record<string, unknown>
    >(
      harness,
      `query ($hash: Hash!) { chain(id: "43114") { blockchainId platformChainId transaction(hash: $hash) { baseFee baseFeePerGas } } }`,
      { hash },
    );
    expect(result.body.errors).toBeUndefined();
    const chain = result.body.data!.chain!;
    expect(chain.blockchainId).toMatch(/^[1-9A-HJ-NP-Za-km-z]{40,60}$/);
    expect(chain.platformChainId).toBe(chain.blockchainId);
    expect(chain.transaction!.baseFee).toMatch(/^[0-9]+$/);
    expect(chain.transaction!.baseFeePerGas).toBe(chain.transaction!.baseFee);
  });

  it("PrimaryNetworkChain.transaction answers any chain's transaction as its own type, with its blockTime", async () => {
    const mainnet = harness.simulator.network.primaryNetwork("mainnet");
    const validator = mainnet.l1Validators[0]!;
    const listed = await execute<
      { primaryNetwork: { pChain: { transactions: { nodes: { txHash: string; blockTimestamp: number }[] } | null } } },
      Record<string, unknown>
    >(
      harness,
      `{ primaryNetwork(network: MAINNET) { pChain { transactions(validationId: "${validator.validationId}", first: 1) { nodes { txHash blockTimestamp } } } } }`,
    );
    const tx = listed.body.data!.primaryNetwork.pChain.transactions!.nodes[0]!;
    harness.simulator.resetCounters();
    const result = await execute<
      {
        primaryNetwork: { blockchain: { transaction: { __typename: string; txHash: string; blockTime: string } | null } | null };
      },
      Record<string, unknown>
    >(
      harness,
      `query ($hash: String!) { primaryNetwork(network: MAINNET) { blockchain(id: "p-chain") { transaction(hash: $hash) { __typename txHash blockTime } } } }`,
      { hash: tx.txHash },
    );
    expect(result.body.errors).toBeUndefined();
    expect(result.body.data!.primaryNetwork.blockchain!.transaction).toEqual({
      __typename: "PChainTransaction",
      txHash: tx.txHash,
      blockTime: new Date(tx.blockTimestamp * 1000).toISOString(),
    });
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/networks/{network}/blockchains/{blockchainId}/transactions/{txHash}": 1 });
  });

  it("PChain.transactions and PrimaryNetwork.l1Validators: l1ValidationId filters as validationId does; both at once are refused before any call", async () => {
    const validator = harness.simulator.network.primaryNetwork("mainnet").l1Validators[0]!;
    const query = (argument: string) => `{ primaryNetwork(network: MAINNET) {
      pChain { transactions(${argument}: "${validator.validationId}", first: 5) { nodes { txHash } } }
      l1Validators(${argument}: "${validator.validationId}", includeInactive: true) { nodes { validationId } }
    } }`;
    type Answer = {
      primaryNetwork: {
        pChain: { transactions: { nodes: { txHash: string }[] } | null };
        l1Validators: { nodes: { validationId: string }[] } | null;
      };
    };
    const byNew = await execute<Answer, Record<string, unknown>>(harness, query("validationId"));
    const byOld = await execute<Answer, Record<string, unknown>>(harness, query("l1ValidationId"));
    expect(byNew.body.errors).toBeUndefined();
    expect(byOld.body.errors).toBeUndefined();
    expect(byNew.body.data!.primaryNetwork.pChain.transactions!.nodes.length).toBeGreaterThan(0);
    expect(byNew.body.data!.primaryNetwork.l1Validators!.nodes.map((node) => node.validationId)).toEqual([
      validator.validationId,
    ]);
    expect(byOld.body.data).toEqual(byNew.body.data);

    harness.simulator.resetCounters();
    const both = await execute(
      harness,
      `{ primaryNetwork(network: MAINNET) { pChain { transactions(validationId: "${validator.validationId}", l1ValidationId: "${validator.validationId}") { nodes { txHash } } } } }`,
    );
    expect(both.body.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "l1ValidationId" });
    expect(upstreamCalls(harness)).toEqual({});
  });
});
