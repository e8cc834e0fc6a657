/**
 * Every argument of every field at its bounds (issue 27). The cases are derived from the built
 * schema: each argument of each field of the roots and of every object reached under them, and
 * each field of the input objects they take, gets cases from its type and from the bounds the
 * resolvers check it against (a connection's route's page bounds, the contract's minimums, the
 * identifier patterns of src/upstream/identifiers.ts). For every answer: no internal error; a
 * refusal is BAD_USER_INPUT naming the argument, made before any upstream call the field would
 * make; an in-bounds value is not refused.
 */
import {
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLFormattedError,
  type GraphQLInputField,
  type GraphQLInputType,
  type GraphQLObjectType,
} from "graphql";
import { beforeAll, describe, expect, it } from "vitest";
import { schema } from "../src/schema.ts";
import { loadConfig } from "../src/config.ts";
import { MAX_CURSOR_LENGTH } from "../src/execution/pagination.ts";
import { MAX_GLOBAL_ID_LENGTH } from "../src/execution/global-ids.ts";
import {
  CB58_ID,
  EVM_ADDRESS,
  EVM_CHAIN_ID,
  HEX_32,
  MAX_ADDRESSES,
  MAX_PAGE_TOKEN_LENGTH,
  NODE_ID,
} from "../src/upstream/identifiers.ts";
import { MIN_FIRST, queryMinimum } from "../src/upstream/bounds.ts";
import { ROUTES, type PagedRoute, type Route } from "../src/upstream/routes.ts";
import { MAX_PERCENTAGE } from "../resolvers/warp.ts";
import { DEFAULT_QUORUM_PERCENTAGE } from "../schema/warp.ts";
import { encodeCb58, decodeCb58 } from "../src/upstream/cb58.ts";
import { execute, registerL1ValidatorTx, useHarness, type Harness } from "./support/harness.ts";
import { l1Transactions } from "./support/sample-network.ts";
import { readEventStream } from "./support/subscriptions.ts";

const harness: Harness = useHarness({ env: { RATE_LIMIT: "false" }, clearCache: true });

// ---------------------------------------------------------------------------------------------
// Sample values: valid forms (and records of the simulator's sample network where one is needed)
// ---------------------------------------------------------------------------------------------

const C_CHAIN = "43114";
const EVM_SAMPLE_ADDRESS = `0x${"ab".repeat(20)}`;
/** A mainnet wallet of the sample network (set before the cases are built). */
let MAINNET_ADDRESS = "";
const P_CHAIN_ID = "11111111111111111111111111111111LpoYY";
/** A 32-byte id in cb58 with a valid checksum (no record has it). */
const SOME_ID = encodeCb58(Buffer.alloc(32, 7));
const SOME_HEX_32 = `0x${"12".repeat(32)}`;

interface Samples {
  blockNumber: string;
  validationId: string;
  warpTxHash: string;
  warpMessage: string;
}
const samples = {} as Samples;

const u32 = (value: number) => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value);
  return bytes;
};

// ---------------------------------------------------------------------------------------------
// Where each object type with arguments is reached, from a root field
// ---------------------------------------------------------------------------------------------

type OperationKind = "query" | "mutation" | "subscription";

/** How to reach an object of each type: the operation and the selection around the target. */
const REACH: Record<string, () => { operation: OperationKind; wrap: (inner: string) => string }> = {
  Query: () => ({ operation: "query", wrap: (inner) => inner }),
  Mutation: () => ({ operation: "mutation", wrap: (inner) => inner }),
  Subscription: () => ({ operation: "subscription", wrap: (inner) => inner }),
  EvmChain: () => ({ operation: "query", wrap: (inner) => `chain(id: "${C_CHAIN}") { ${inner} }` }),
  EvmAccount: () => ({
    operation: "query",
    wrap: (inner) => `chain(id: "${C_CHAIN}") { address(address: "${EVM_SAMPLE_ADDRESS}") { ${inner} } }`,
  }),
  EvmBlock: () => ({
    operation: "query",
    wrap: (inner) => `chain(id: "${C_CHAIN}") { block(id: "${samples.blockNumber}") { ${inner} } }`,
  }),
  PrimaryNetwork: () => ({ operation: "query", wrap: (inner) => `primaryNetwork(network: MAINNET) { ${inner} }` }),
  PChain: () => ({ operation: "query", wrap: (inner) => `primaryNetwork(network: MAINNET) { pChain { ${inner} } }` }),
  XChain: () => ({ operation: "query", wrap: (inner) => `primaryNetwork(network: MAINNET) { xChain { ${inner} } }` }),
  CChain: () => ({ operation: "query", wrap: (inner) => `primaryNetwork(network: MAINNET) { cChain { ${inner} } }` }),
  Subnet: () => ({
    operation: "query",
    wrap: (inner) =>
      `primaryNetwork(network: FUJI) { l1Validator(validationId: "${samples.validationId}") { subnet { ${inner} } } }`,
  }),
  L1Validator: () => ({
    operation: "query",
    wrap: (inner) => `primaryNetwork(network: FUJI) { l1Validator(validationId: "${samples.validationId}") { ${inner} } }`,
  }),
  WarpMessage: () => ({
    operation: "query",
    wrap: (inner) => `warpSignature(network: FUJI, txHash: "${samples.warpTxHash}") { decoded { ${inner} } }`,
  }),
  WarpSignatureVerification: () => ({
    operation: "query",
    wrap: (inner) => `warpSignature(network: FUJI, txHash: "${samples.warpTxHash}") { decoded { verification { ${inner} } } }`,
  }),
};

// ---------------------------------------------------------------------------------------------
// Bounds, from what the resolvers check against
// ---------------------------------------------------------------------------------------------

const PAGED_ROUTES = (Object.values(ROUTES) as Route[]).filter((route): route is PagedRoute => "page" in route);

/** The paged route a connection field reads: the one whose label its description names. */
function pagedRouteOf(field: GraphQLField<unknown, unknown>): PagedRoute | undefined {
  const named = PAGED_ROUTES.filter((route) => field.description?.includes(`\`${route.label}`));
  // The longest label that matches (a route's label may be the start of another's).
  return named.sort((a, b) => b.label.length - a.label.length)[0];
}

interface NumericBounds {
  min: number | bigint;
  /** undefined: no upper bound but the type's. */
  max: number | bigint | undefined;
}

const INT_MAX = 2 ** 31 - 1;
const SAFE_MAX = Number.MAX_SAFE_INTEGER;

/** A numeric argument's bounds, by name, from the source its resolver checks against. */
function numericBounds(target: Target, name: string): NumericBounds {
  const route = pagedRouteOf(target.field);
  const timestamp = (parameter: string): NumericBounds => {
    if (!route) throw new Error(`${target.label}: no route named in its description for ${name}`);
    return { min: queryMinimum(route.service, route.path, parameter, route.method), max: SAFE_MAX };
  };
  switch (name) {
    case "first":
      if (!route) throw new Error(`${target.label}: a connection whose description names no paged route`);
      return { min: MIN_FIRST, max: route.page.max };
    case "from":
      return timestamp("startTimestamp");
    case "to":
      return timestamp("endTimestamp");
    case "height":
      return { min: queryMinimum("data", ROUTES.verticesAtHeight.path, "vertexHeight"), max: SAFE_MAX };
    case "startBlock":
    case "endBlock":
      return { min: 0, max: SAFE_MAX };
    case "threshold":
      return { min: 0, max: undefined };
    case "afterBlock":
    case "after":
      // A live subscription's resume point (`after`: its deprecated name): a block number.
      return { min: 0, max: undefined };
    case "quorumPercentage":
      return { min: 0, max: MAX_PERCENTAGE };
    case "quorumPercentageBuffer":
      // Beside the default quorum (the input sample gives none): the two together at most 100.
      return { min: 0, max: MAX_PERCENTAGE - DEFAULT_QUORUM_PERCENTAGE };
    case "pChainHeight":
      return { min: 0, max: SAFE_MAX };
    default:
      throw new Error(`${target.label}: no bounds known for the numeric argument ${name}`);
  }
}

// ---------------------------------------------------------------------------------------------
// String kinds: what each string argument holds, its valid, longest and malformed forms
// ---------------------------------------------------------------------------------------------

interface StringKind {
  /** Accepted values (the first is the sample used where the argument is needed but not tested). */
  valid: string[];
  /** The longest value accepted, and one character more (refused), where the form has a length bound. */
  longest?: string;
  longer?: string;
  malformed: string[];
  /** The form's pattern, to check the values above against the code's own. */
  pattern?: RegExp;
  /** Any length of the form is a valid value: a very long one is not expected refused. */
  unbounded?: boolean;
  /** Addresses: the list holds at most `MAX_ADDRESSES`. */
  address?: boolean;
}

const cb58Kind: StringKind = {
  valid: [SOME_ID],
  longest: "1".repeat(60),
  longer: "1".repeat(61),
  malformed: ["0xnot-cb58", "lIl0O"],
  pattern: CB58_ID,
};

const KINDS: Record<string, StringKind> = {
  evmChainId: {
    valid: [C_CHAIN],
    longest: `1${"0".repeat(19)}`,
    longer: `1${"0".repeat(20)}`,
    malformed: ["-1", "0x1", "c-chain!"],
    pattern: EVM_CHAIN_ID,
  },
  evmAddress: {
    address: true,
    valid: [EVM_SAMPLE_ADDRESS],
    malformed: ["0x12", `0x${"g".repeat(40)}`, `0x${"ab".repeat(21)}`],
    pattern: EVM_ADDRESS,
  },
  hash: { valid: [SOME_HEX_32], malformed: ["0x12", `0x${"zz".repeat(32)}`, `0x${"12".repeat(33)}`], pattern: HEX_32 },
  evmBlockId: { valid: ["1", SOME_HEX_32], malformed: ["-1", "0x12", "latest"] },
  primaryBlockId: { valid: ["1", SOME_ID], malformed: ["-1", "0x12", "latest!"] },
  cChainAtomicBlockId: { valid: ["1", SOME_HEX_32], malformed: ["-1", "0x12", "latest!"] },
  cb58Id: cb58Kind,
  blockchain: { valid: [P_CHAIN_ID, "p-chain"], malformed: ["q-chain", "0x12"] },
  nodeId: {
    valid: ["NodeID-111111111111111111116DBWJs"],
    longest: `NodeID-${"1".repeat(40)}`,
    longer: `NodeID-${"1".repeat(41)}`,
    malformed: ["NodeID-0x12", "node", "NodeID-111111111111111111116DBWJt"],
    pattern: NODE_ID,
  },
  subnetId: { ...cb58Kind, valid: [P_CHAIN_ID] },
  validationId: { ...cb58Kind, valid: [SOME_ID, SOME_HEX_32], pattern: undefined },
  anyFormId: { valid: [SOME_ID, SOME_HEX_32, "12".repeat(32)], malformed: ["0x12", "1".repeat(60)] },
  operationId: {
    valid: ["job-1"],
    longest: "a".repeat(128),
    longer: "a".repeat(129),
    malformed: ["..", "a/b", "a b"],
  },
  cursor: {
    valid: [],
    longest: "A".repeat(MAX_CURSOR_LENGTH),
    longer: "A".repeat(MAX_CURSOR_LENGTH + 1),
    malformed: [
      "not-a-cursor",
      Buffer.from(JSON.stringify([1, "x".repeat(MAX_PAGE_TOKEN_LENGTH + 65), 10, -1, null, "h"])).toString("base64url"),
    ],
  },
  unsupported: { valid: [], malformed: ["x"] },
  globalId: {
    valid: [Buffer.from(`EvmChain:${C_CHAIN}`).toString("base64")],
    // The longest id of the accepted length and form (its key is no chain id); one more character.
    longest: Buffer.from(`EvmChain:${"1".repeat((MAX_GLOBAL_ID_LENGTH / 4) * 3 - 9)}`).toString("base64"),
    longer: `${Buffer.from(`EvmChain:${"1".repeat((MAX_GLOBAL_ID_LENGTH / 4) * 3 - 9)}`).toString("base64")}A`,
    malformed: ["not-an-id", Buffer.from("EvmChain:").toString("base64")],
  },
  bech32: { address: true, valid: [], malformed: ["0xdead", "avax1", `avax1${"q".repeat(38)}`, `fuji1${"q".repeat(38)}`] },
  /** An address of either network (an export names no network). */
  anyNetworkBech32: { address: true, valid: [], malformed: ["0xdead", "avax1", `avax1${"q".repeat(38)}`] },
  primaryOrEvmAddress: { address: true, valid: [EVM_SAMPLE_ADDRESS], malformed: ["0xdead", "avax1", `avax1${"q".repeat(38)}`] },
  warpMessage: { valid: [], malformed: ["0x1", "zz", "0x00", "a".repeat(50_000)] },
  /** Opaque bytes in hex: no form beyond hex, no length bound but the request's. */
  hexBytes: { valid: ["0x00"], malformed: ["0x1", "zz"], unbounded: true },
  date: { valid: ["2026-05-01"], malformed: ["2026-02-30", "2026-5-1", "tomorrow"] },
  exportChain: { valid: ["p-chain"], malformed: ["q-chain"] },
  evmExportChain: { valid: [C_CHAIN], malformed: ["c-chain!", "-1"] },
  warpTxHash: { valid: [SOME_ID], malformed: ["0x12", "1".repeat(61)] },
  metricsChainId: { valid: [C_CHAIN], malformed: ["total", "-1"] },
};

/** The kind of a string argument: by `Type.field.argument` where it differs by field, else by its name. */
const STRING_KIND_BY_FIELD: Record<string, string> = {
  "Query.chain.id": "evmChainId",
  "Query.node.id": "globalId",
  "Query.exportOperation.id": "operationId",
  "Subscription.exportOperation.id": "operationId",
  "EvmChain.block.id": "evmBlockId",
  "PChain.block.id": "primaryBlockId",
  "XChain.block.id": "primaryBlockId",
  "CChain.block.id": "cChainAtomicBlockId",
  "PrimaryNetwork.blockchain.id": "blockchain",
  "Subscription.newPrimaryNetworkTransactions.blockchainId": "blockchain",
  "PChain.transaction.hash": "cb58Id",
  "XChain.transaction.hash": "cb58Id",
  "CChain.transaction.hash": "cb58Id",
  "XChain.vertex.hash": "cb58Id",
  "EvmChain.transaction.hash": "hash",
  "Query.warpSignature.txHash": "warpTxHash",
  "CChain.transactions.addresses": "primaryOrEvmAddress",
  "Subscription.chainMetricUpdates.chainId": "metricsChainId",
  "input.evm.addresses": "evmAddress",
  "input.evm.includeChains": "evmExportChain",
  "input.primaryNetwork.addresses": "anyNetworkBech32",
  "input.primaryNetwork.cChainEvmAddresses": "evmAddress",
  "input.primaryNetwork.includeChains": "exportChain",
};

const STRING_KIND_BY_NAME: Record<string, string> = {
  after: "cursor",
  before: "unsupported",
  address: "evmAddress",
  contract: "evmAddress",
  addresses: "bech32",
  assetId: "cb58Id",
  l1ValidationId: "validationId",
  validationId: "validationId",
  nodeId: "nodeId",
  subnetId: "subnetId",
  chainId: "evmChainId",
  signingSubnetId: "anyFormId",
  message: "warpMessage",
  justification: "hexBytes",
  firstDate: "date",
  lastDate: "date",
  startDate: "date",
  endDate: "date",
};

// ---------------------------------------------------------------------------------------------
// Targets and cases
// ---------------------------------------------------------------------------------------------

interface Target {
  type: GraphQLObjectType;
  field: GraphQLField<unknown, unknown>;
  /** `Type.field` */
  label: string;
}

type Expectation = "refused" | "accepted" | "either";

interface Case {
  /** `Type.field(argument)` and the case. */
  name: string;
  target: Target;
  /** The argument (or input field path, `input.evm.addresses`) the case is about. */
  argument: string;
  args: Record<string, unknown>;
  expect: Expectation;
}

/** Arguments that name an exclusive choice: the others of a group are left out when one is tested. */
const EXCLUSIVE: string[][] = [
  ["chainId", "scope"],
  ["nodeId", "validationId"],
];

/** Arguments a field's cases all carry, so that the argument tested is judged alone (filters that need addresses). */
const BASE_ARGS: Record<string, Record<string, unknown>> = {
  "Subscription.chainMetricUpdates": { chainId: C_CHAIN },
};

function stringKind(target: Target, path: string): StringKind {
  const name = path.split(".").pop()!;
  const key = STRING_KIND_BY_FIELD[`${target.label}.${path}`] ?? STRING_KIND_BY_FIELD[path] ?? STRING_KIND_BY_NAME[name];
  const kind = key === undefined ? undefined : KINDS[key];
  if (!kind) throw new Error(`${target.label}: no string kind known for ${path}`);
  return kind;
}

/** Input object samples: a valid value of each input type. */
function inputSample(typeName: string): Record<string, unknown> {
  switch (typeName) {
    case "AggregateWarpSignaturesInput":
      return { network: "FUJI", message: samples.warpMessage };
    case "ExportTransactionsInput":
      return { primaryNetwork: inputSample("PrimaryNetworkTransactionExportInput") };
    case "PrimaryNetworkTransactionExportInput":
      return { includeChains: ["p-chain"] };
    case "EvmTransactionExportInput":
      return { addresses: [EVM_SAMPLE_ADDRESS], includeChains: [C_CHAIN] };
    default:
      throw new Error(`no sample of the input type ${typeName}`);
  }
}

/** A valid value of an argument, for arguments a field needs beside the one tested. */
function sampleValue(target: Target, path: string, type: GraphQLInputType): unknown {
  const nullable = getNullableType(type);
  if (isListType(nullable)) return [sampleValue(target, path, nullable.ofType as GraphQLInputType)];
  const named = getNamedType(type);
  if (isInputObjectType(named)) return inputSample(named.name);
  if (named.name === "_Any") return { __typename: "EvmChain", chainId: C_CHAIN };
  if (isEnumType(named)) {
    const values = named.getValues().filter((value) => value.name !== "UNKNOWN");
    if (named.name === "Network") return "MAINNET";
    return values[0]!.name;
  }
  const name = path.split(".").pop()!;
  if (named.name === "BigInt" || named.name === "Int" || named.name === "SafeInt") {
    if (name === "threshold") return "0";
    if (name === "height") return "0";
  }
  const kind = stringKind(target, path);
  if (kind.valid.length === 0) throw new Error(`${target.label}: no valid sample for ${path}`);
  return kind.valid[0];
}

/** Distinct values of a string kind, `count` of them, for long lists. */
function manyValues(kind: StringKind, count: number): string[] {
  const first = kind.valid[0]!;
  return Array.from({ length: count }, (_, index) => {
    const suffix = index.toString(16).padStart(4, "0");
    if (first.startsWith("avax1")) return wallets()[index % wallets().length]!;
    if (EVM_ADDRESS.test(first)) return `0x${"ab".repeat(18)}${suffix}`;
    return first;
  });
}

/** `_entities(representations:)`: federation's representations, each an entity's `__typename` and key. */
function representationCases(): { label: string; value: unknown; expect: Expectation }[] {
  const chain = { __typename: "EvmChain", chainId: C_CHAIN };
  const max = loadConfig({}).limits.entityRepresentations;
  return [
    { label: "empty list", value: [], expect: "accepted" },
    { label: "one valid", value: [chain], expect: "accepted" },
    { label: `${max} items (the most)`, value: Array.from({ length: max }, () => chain), expect: "accepted" },
    { label: `${max + 1} items`, value: Array.from({ length: max + 1 }, () => chain), expect: "refused" },
    { label: "not an object", value: ["EvmChain"], expect: "refused" },
    { label: "no __typename", value: [{ chainId: C_CHAIN }], expect: "refused" },
    { label: "not an entity type", value: [{ __typename: "PageInfo" }], expect: "refused" },
    { label: "no key", value: [{ __typename: "EvmChain" }], expect: "refused" },
    { label: "malformed key", value: [{ __typename: "EvmChain", chainId: "0xa86a" }], expect: "refused" },
  ];
}

/** The cases of one argument (or input field at `path`) of a type, each as the value to send. */
function valueCases(
  target: Target,
  path: string,
  type: GraphQLInputType,
): { label: string; value: unknown; expect: Expectation }[] {
  const nullable = getNullableType(type);
  const named = getNamedType(type);
  const name = path.split(".").pop()!;
  if (name === "last") return [-1, 0, 1, INT_MAX].map((value) => ({ label: `last ${value}`, value, expect: "refused" }));
  if (isListType(nullable)) {
    const item = getNamedType(nullable.ofType as GraphQLInputType);
    if (isEnumType(item)) {
      const values = item.getValues().map((value) => value.name);
      return [
        { label: "empty list", value: [], expect: "either" },
        ...values.map((value) => ({ label: `[${value}]`, value: [value], expect: "either" as const })),
        { label: "every value", value: values, expect: "either" },
      ];
    }
    if (item.name === "_Any") return representationCases();
    const kind = stringKind(target, path);
    return [
      { label: "empty list", value: [], expect: "refused" },
      { label: "one valid", value: [kind.valid[0]], expect: "accepted" },
      { label: "one empty string", value: [""], expect: "refused" },
      ...kind.malformed.map((value) => ({
        label: `malformed ${JSON.stringify(value).slice(0, 30)}`,
        value: [value],
        expect: "refused" as const,
      })),
      ...(kind.address
        ? [
            { label: `${MAX_ADDRESSES} items (the most)`, value: manyValues(kind, MAX_ADDRESSES), expect: "accepted" as const },
            { label: `${MAX_ADDRESSES + 1} items`, value: manyValues(kind, MAX_ADDRESSES + 1), expect: "refused" as const },
          ]
        : [{ label: "1,500 items", value: manyValues(kind, 1_500), expect: "either" as const }]),
    ];
  }
  if (isEnumType(named)) return named.getValues().map((value) => ({ label: value.name, value: value.name, expect: "either" }));
  if (named.name === "Boolean") return [true, false].map((value) => ({ label: String(value), value, expect: "accepted" }));
  if (named.name === "Int" || named.name === "SafeInt" || named.name === "BigInt") {
    const bounds = numericBounds(target, name);
    const typeMax = named.name === "Int" ? INT_MAX : named.name === "SafeInt" ? SAFE_MAX : 2n ** 256n;
    const asValue = (value: number | bigint) => (named.name === "BigInt" ? String(value) : value);
    const min = BigInt(bounds.min);
    const max = bounds.max === undefined ? undefined : BigInt(bounds.max);
    const cases: { label: string; value: unknown; expect: Expectation }[] = [
      { label: `min - 1 (${min - 1n})`, value: asValue(Number(min - 1n)), expect: "refused" },
      { label: `min (${min})`, value: asValue(Number(min)), expect: "accepted" },
    ];
    if (max !== undefined) {
      cases.push(
        { label: `max (${max})`, value: asValue(Number(max)), expect: "accepted" },
        {
          label: `max + 1 (${max + 1n})`,
          value: named.name === "BigInt" ? String(max + 1n) : Number(max + 1n),
          expect: "refused",
        },
      );
    } else {
      cases.push({ label: `type max (${typeMax})`, value: asValue(BigInt(typeMax) as never), expect: "either" });
    }
    if (named.name === "BigInt") cases.push({ label: "not a number", value: "12abc", expect: "refused" });
    return cases;
  }
  if (isScalarType(named)) {
    const kind = stringKind(target, path);
    const cases: { label: string; value: unknown; expect: Expectation }[] = [
      { label: "empty string", value: "", expect: "refused" },
      ...kind.valid.map((value) => ({ label: `valid ${value.slice(0, 24)}`, value, expect: "accepted" as const })),
      ...kind.malformed.map((value) => ({
        label: `malformed ${JSON.stringify(value).slice(0, 30)}`,
        value,
        expect: "refused" as const,
      })),
      { label: "50,000 characters", value: "a".repeat(50_000), expect: kind.unbounded ? "either" : "refused" },
    ];
    if (kind.longest !== undefined) cases.push({ label: "longest accepted", value: kind.longest, expect: "either" });
    if (kind.longer !== undefined) cases.push({ label: "one longer", value: kind.longer, expect: "refused" });
    if (name === "before") for (const c of cases) c.expect = "refused";
    return cases;
  }
  throw new Error(`${target.label}: no cases for ${path} of type ${String(type)}`);
}

/** The targets: every field with arguments of every object type. */
function targets(): Target[] {
  const found: Target[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith("__")) continue;
    for (const field of Object.values(type.getFields())) {
      if (field.args.length > 0) found.push({ type, field, label: `${type.name}.${field.name}` });
    }
  }
  return found;
}

/** Every argument path of a target: its arguments, and the fields of the input objects they take, depth first. */
function argumentPaths(target: Target): { path: string; type: GraphQLInputType; top: GraphQLArgument }[] {
  const paths: { path: string; type: GraphQLInputType; top: GraphQLArgument }[] = [];
  const walk = (path: string, type: GraphQLInputType, top: GraphQLArgument) => {
    const named = getNamedType(type);
    if (isInputObjectType(named)) {
      for (const field of Object.values(named.getFields()) as GraphQLInputField[]) walk(`${path}.${field.name}`, field.type, top);
    } else {
      paths.push({ path, type, top });
    }
  };
  for (const arg of target.field.args) walk(arg.name, arg.type, arg);
  return paths;
}

/** Sets `value` at `path` (below the top argument) in a copy of the input object sample. */
function inputWith(target: Target, top: GraphQLArgument, path: string, value: unknown): Record<string, unknown> {
  const parts = path.split(".").slice(1);
  const root = sampleValue(target, top.name, top.type) as Record<string, unknown>;
  let object = root;
  let type = getNamedType(top.type);
  for (const [index, part] of parts.entries()) {
    if (!isInputObjectType(type)) throw new Error(`${path}: not an input object at ${part}`);
    const fieldType = type.getFields()[part]!.type;
    if (index === parts.length - 1) {
      object[part] = value;
    } else {
      const childType = getNamedType(fieldType);
      // An input object field chosen: its sibling input objects leave (an input takes one of them).
      for (const [name, sibling] of Object.entries(type.getFields())) {
        if (name !== part && isInputObjectType(getNamedType(sibling.type))) delete object[name];
      }
      object[part] = { ...(object[part] as Record<string, unknown> | undefined), ...inputSample(childType.name) };
      object = object[part] as Record<string, unknown>;
      type = childType;
    }
  }
  return root;
}

function casesOf(target: Target): Case[] {
  const cases: Case[] = [];
  const base = { ...BASE_ARGS[target.label] };
  for (const { path, type, top } of argumentPaths(target)) {
    const isInput = path.includes(".");
    for (const valueCase of valueCases(target, path, type)) {
      const args: Record<string, unknown> = {};
      for (const arg of target.field.args)
        if (isNonNullType(arg.type) && arg.defaultValue === undefined) args[arg.name] = sampleValue(target, arg.name, arg.type);
      Object.assign(args, base);
      const group = EXCLUSIVE.find((names) => names.includes(top.name));
      if (group) for (const other of group) if (other !== top.name) delete args[other];
      // A validation id (or its older name) stands in for addresses (the type and time filters need one of them): judged alone.
      if (path === "validationId" || path === "l1ValidationId") delete args.addresses;
      args[top.name] = isInput ? inputWith(target, top, path, valueCase.value) : valueCase.value;
      const argument = path;
      cases.push({ name: `${target.label}(${path}): ${valueCase.label}`, target, argument, args, expect: valueCase.expect });
    }
  }
  return cases;
}

/** A selection of the field: `__typename` on composites (with the cursor on connections), nothing on leaves. */
function selectionOf(field: GraphQLField<unknown, unknown>): string {
  const named = getNamedType(field.type);
  if (isScalarType(named) || isEnumType(named)) return "";
  return "{ __typename }";
}

function documentOf(testCase: Case): { query: string; variables: Record<string, unknown> } {
  const { target } = testCase;
  const reach = REACH[target.type.name];
  if (!reach) throw new Error(`no way to reach ${target.type.name} (add it to REACH)`);
  const { operation, wrap } = reach();
  const definitions: string[] = [];
  const argumentsText: string[] = [];
  const variables: Record<string, unknown> = {};
  for (const arg of target.field.args) {
    if (!(arg.name in testCase.args) || testCase.args[arg.name] === undefined) continue;
    definitions.push(`$${arg.name}: ${String(arg.type)}`);
    argumentsText.push(`${arg.name}: $${arg.name}`);
    variables[arg.name] = testCase.args[arg.name];
  }
  const inner = `target: ${target.field.name}${argumentsText.length ? `(${argumentsText.join(", ")})` : ""} ${selectionOf(target.field)}`;
  const query = `${operation} Bounds${definitions.length ? `(${definitions.join(", ")})` : ""} { ${wrap(inner)} }`;
  return { query, variables };
}

interface Outcome {
  errors: GraphQLFormattedError[];
  data: unknown;
  calls: number;
}

let requestNumber = 0;

async function run(testCase: Case): Promise<Outcome> {
  const { query, variables } = documentOf(testCase);
  const requestId = `bounds-${(requestNumber += 1)}`;
  const headers = { "x-request-id": requestId };
  harness.gateway.cache.clear();
  harness.simulator.resetCounters();
  let errors: GraphQLFormattedError[] = [];
  let data: unknown;
  if (query.startsWith("subscription")) {
    const response = await harness.gateway.yoga.fetch("http://gateway.test/graphql", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", ...headers },
      body: JSON.stringify({ query, variables }),
    });
    if (!response.headers.get("content-type")?.startsWith("text/event-stream")) {
      ({ errors = [], data } = (await response.json()) as { errors?: GraphQLFormattedError[]; data?: unknown });
    } else {
      const stream = await readEventStream(response);
      const event = await Promise.race([stream.next(), new Promise<undefined>((resolve) => setTimeout(resolve, 100))]);
      await stream.cancel();
      if (event?.event === "next")
        ({ errors = [], data } = JSON.parse(event.data) as { errors?: GraphQLFormattedError[]; data?: unknown });
    }
  } else {
    const result = await execute(harness, query, variables, headers);
    errors = result.body.errors ?? [];
    data = result.body.data;
  }
  const calls = harness.simulator.requests().filter((request) => request.requestId === requestId).length;
  return { errors, data, calls };
}

/** Whether an error names the argument: in `extensions.argument`, or in its message. */
function names(error: GraphQLFormattedError, argument: string): boolean {
  const given = error.extensions?.argument;
  const last = argument.split(".").pop()!;
  if (typeof given === "string" && (given === argument || given.endsWith(`.${last}`) || given === last)) return true;
  return error.message.includes(argument) || new RegExp(`\\b${last}\\b`).test(error.message);
}

/** The upstream calls of the selection around a type's fields alone (its parents' look-ups), from cold. */
async function baseline(target: Target): Promise<number> {
  const known = calledBaseline.get(target.type.name);
  if (known !== undefined) return known;
  const { operation, wrap } = REACH[target.type.name]!();
  let calls = 0;
  if (operation === "query" && target.type.name !== "Query") {
    const requestId = `baseline-${target.type.name}`;
    harness.gateway.cache.clear();
    harness.simulator.resetCounters();
    await execute(harness, `{ ${wrap("__typename")} }`, {}, { "x-request-id": requestId });
    calls = harness.simulator.requests().filter((request) => request.requestId === requestId).length;
  }
  calledBaseline.set(target.type.name, calls);
  return calls;
}

// ---------------------------------------------------------------------------------------------

const ALL_TARGETS = targets();

/** Mainnet wallets of the sample network: valid primary-network addresses. */
function wallets(): string[] {
  return harness.simulator.network.primaryNetwork("mainnet").wallets.map((wallet) => wallet.address);
}
let calledBaseline = new Map<string, number>();

beforeAll(async () => {
  const blocks = await execute(harness, `{ chain(id: "${C_CHAIN}") { blocks(first: 1) { nodes { blockNumber } } } }`);
  MAINNET_ADDRESS = wallets()[0]!;
  KINDS.bech32!.valid.push(MAINNET_ADDRESS);
  KINDS.primaryOrEvmAddress!.valid.unshift(MAINNET_ADDRESS);
  BASE_ARGS["PChain.transactions"] = { addresses: [MAINNET_ADDRESS] };
  BASE_ARGS["XChain.transactions"] = { addresses: [MAINNET_ADDRESS] };
  BASE_ARGS["CChain.transactions"] = { addresses: [MAINNET_ADDRESS] };
  samples.blockNumber = (
    blocks.body.data as { chain: { blocks: { nodes: { blockNumber: string }[] } } }
  ).chain.blocks.nodes[0]!.blockNumber;
  const validators = await execute(
    harness,
    `{ primaryNetwork(network: FUJI) { l1Validators(first: 1) { nodes { validationId } } } }`,
  );
  samples.validationId = (
    validators.body.data as { primaryNetwork: { l1Validators: { nodes: { validationId: string }[] } } }
  ).primaryNetwork.l1Validators.nodes[0]!.validationId;
  samples.warpTxHash = registerL1ValidatorTx(harness);
  const conversion = l1Transactions(harness.simulator, "fuji", "ConvertSubnetToL1Tx")[0]!;
  const chainId = decodeCb58(conversion.fields.l1ValidatorManagerDetails!.blockchainId)!;
  const payload = Buffer.concat([Buffer.alloc(2), u32(0), Buffer.alloc(32, 0xab)]);
  samples.warpMessage = `0x${Buffer.concat([Buffer.alloc(2), u32(5), chainId, u32(payload.length), payload]).toString("hex")}`;
  KINDS.warpMessage!.valid.push(samples.warpMessage);
  const fujiWallet = harness.simulator.network.primaryNetwork("fuji").wallets[0]!.address;
  KINDS.anyNetworkBech32!.valid.push(MAINNET_ADDRESS, fujiWallet);
  KINDS.anyNetworkBech32!.malformed.push(`${MAINNET_ADDRESS.slice(0, -1)}${MAINNET_ADDRESS.endsWith("q") ? "p" : "q"}`);
  KINDS.bech32!.malformed.push(fujiWallet, `${MAINNET_ADDRESS.slice(0, -1)}${MAINNET_ADDRESS.endsWith("q") ? "p" : "q"}`);
  calledBaseline = new Map();
});

describe("every argument at its bounds", () => {
  it("reaches every type whose fields take arguments, and checks its sample values against the code's patterns", () => {
    const unreachable = [...new Set(ALL_TARGETS.map((target) => target.type.name))].filter((name) => !(name in REACH));
    expect(unreachable).toEqual([]);
    for (const kind of Object.values(KINDS)) {
      if (!kind.pattern) continue;
      for (const value of kind.valid) expect(kind.pattern.test(value), value).toBe(true);
      if (kind.longest !== undefined) expect(kind.pattern.test(kind.longest), kind.longest).toBe(true);
      if (kind.longer !== undefined) expect(kind.pattern.test(kind.longer), kind.longer).toBe(false);
    }
  });

  it("answers every case without an internal error, refusing out-of-bounds values by name before any upstream call", async () => {
    const failures: string[] = [];
    const covered = new Set<string>();
    let count = 0;
    for (const target of ALL_TARGETS) {
      for (const testCase of casesOf(target)) {
        count += 1;
        covered.add(`${target.label}(${testCase.argument})`);
        const outcome = await run(testCase);
        const problems: string[] = [];
        const internal = outcome.errors.filter(
          (error) => error.extensions?.code === "INTERNAL_SERVER_ERROR" || error.message === "Unexpected error.",
        );
        if (internal.length > 0) problems.push(`internal error: ${internal[0]!.message}`);
        const refusals = outcome.errors.filter(
          (error) =>
            error.extensions?.code === "BAD_USER_INPUT" ||
            error.extensions?.code === "GRAPHQL_VALIDATION_FAILED" ||
            error.extensions?.code === undefined,
        );
        const naming = refusals.filter((error) => names(error, testCase.argument));
        if (testCase.expect === "refused" && naming.length === 0) {
          problems.push(
            `not refused by name: ${JSON.stringify(outcome.errors.map((e) => [e.message.slice(0, 160), e.extensions]))}`,
          );
        }
        if (testCase.expect === "accepted" && refusals.length > 0) {
          problems.push(`refused: ${JSON.stringify(refusals.map((e) => [e.message.slice(0, 160), e.extensions?.argument]))}`);
        }
        // The field was resolved: its parents were there (a subscription's first event may come later).
        if (testCase.expect === "accepted" && REACH[target.type.name]!().operation !== "subscription") {
          if (!JSON.stringify(outcome.data ?? null).includes('"target":')) problems.push("the field was not reached");
        }
        if (testCase.expect === "either" && refusals.length > 0 && naming.length === 0) {
          problems.push(
            `refused without naming it: ${JSON.stringify(refusals.map((e) => [e.message.slice(0, 160), e.extensions]))}`,
          );
        }
        const parentCalls = await baseline(target);
        if (naming.length > 0 && outcome.calls > parentCalls) {
          problems.push(`refused after ${outcome.calls - parentCalls} upstream calls (beside the parent's ${parentCalls})`);
        }
        if (problems.length > 0) failures.push(`${testCase.name}: ${problems.join("; ")}`);
      }
    }
    // Every argument of every field was sent at least once.
    const expected = ALL_TARGETS.flatMap((target) => argumentPaths(target).map(({ path }) => `${target.label}(${path})`));
    expect([...covered].sort()).toEqual([...new Set(expected)].sort());
    console.log(`${count} cases over ${covered.size} arguments`);
    expect(failures).toEqual([]);
  }, 120_000);
});
