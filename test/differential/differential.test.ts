/**
 * One execution semantics: compiled execution (graphql-jit, GRAPHQL_JIT=true) and graphql-js
 * (GRAPHQL_JIT=false) give the same answer, data and errors, to every document the project has,
 * each with its arguments as variables and inline, and to a thousand seeded documents generated
 * from the schema (selections merged again under conditions, fragments spread again, `first: 0`
 * and `first` at its largest among them), subscriptions included. And the listener's operation
 * lane (src/server/operation-lane.ts), which executes a known query past Yoga's HTTP layer,
 * answers each query as Yoga does. The gateways share one simulator.
 *
 * DIFFERENTIAL_SEED=<n> reruns the generated documents of another seed; a failure names its seed.
 */
import { buildSchema, isInterfaceType, isObjectType, parse, type GraphQLSchema } from "graphql";
import { appendFileSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator } from "../../simulator/server.ts";
import { serveGateway, startInstance, type Instance, type RunningSimulator, type ServedGateway } from "../support/harness.ts";
import { projectOperations, type NamedOperation } from "./corpus.ts";
import { mergesConditionally } from "../../src/plugins/compiled-execution.ts";
import { ROUTES } from "../../src/upstream/routes.ts";
import { firstBounds, generateOperation } from "./generator.ts";
import { agree, boundedMap, normalised, send, type Answer } from "./run.ts";
import { inlineVariables, liftLiterals, type Operation } from "./transform.ts";
import { MAIN_CHAIN, readPool, type ValuePool } from "./values.ts";
import { idsIn } from "../support/ids.ts";

const SEED = Number(process.env.DIFFERENTIAL_SEED ?? 17);
const GENERATED = 1_000;
const CONCURRENCY = 8;
const EXPORT_POLL_MS = 30;
/** Fuji's P- and X-Chain, whose transactions the value pool holds. */
const P_CHAIN_ID = "11111111111111111111111111111111LpoYY";
const X_CHAIN_ID = "2JVSBoinj9C2J33VntvzYtVJNZdN2NKiwwKjcumHUWEb5DbBrm";

const GATEWAY_ENV = {
  // The test's own traffic must not meet the budget: both gateways would refuse alike, and test nothing.
  RATE_LIMIT_RATE: "1000000",
  RATE_LIMIT_BURST: "10000000",
  MAX_SUBSCRIPTIONS_PER_CALLER: "1000",
  EXPORT_POLL_INTERVAL_MS: String(EXPORT_POLL_MS),
};

let simulator: RunningSimulator;
let compiled: Instance;
let interpreted: Instance;
/** Compiled too, served on a socket: a query sent to it again is executed by its operation lane. */
let laned: Instance;
let lanedServed: ServedGateway;
let schema: GraphQLSchema;
let pool: ValuePool;
let project: NamedOperation[];

interface Divergence {
  source: string;
  form: string;
  operation: Operation;
  compiled: Answer;
  interpreted: Answer;
}

async function bothWays(operation: Operation, subscription: boolean): Promise<{ compiled: Answer; interpreted: Answer }> {
  const [first, second] = await Promise.all([
    send(compiled.gateway, operation, subscription),
    send(interpreted.gateway, operation, subscription),
  ]);
  return { compiled: first, interpreted: second };
}

/** The same operation: as written, with its variables inlined, with its literal arguments lifted, and with its input objects' leaves lifted. */
function forms(operation: Operation): [string, Operation][] {
  const all: [string, Operation][] = [
    ["as written", operation],
    ["inline", inlineVariables(schema, operation)],
    ["arguments as variables", liftLiterals(schema, inlineVariables(schema, operation), "arguments")],
    ["input leaves as variables", liftLiterals(schema, operation, "leaves")],
  ];
  const seen = new Set<string>();
  return all.filter(([, form]) => {
    const key = form.query + JSON.stringify(form.variables);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

async function divergences(
  cases: { source: string; form: string; operation: Operation; subscription: boolean }[],
): Promise<Divergence[]> {
  const found = await boundedMap(cases, CONCURRENCY, async (item) => {
    const answers = await bothWays(item.operation, item.subscription);
    return agree(answers.compiled, answers.interpreted) ? undefined : { ...item, ...answers };
  });
  const divergent = found.filter((item) => item !== undefined) as Divergence[];
  // DIFFERENTIAL_REPORT=<file> keeps every divergence whole, one JSON line each, for study.
  if (process.env.DIFFERENTIAL_REPORT)
    for (const item of divergent) appendFileSync(process.env.DIFFERENTIAL_REPORT, `${JSON.stringify(item)}\n`);
  return divergent;
}

function report(found: Divergence[], seed?: number): string {
  const lines = found
    .slice(0, 5)
    .map((item) =>
      [
        `--- ${item.source} (${item.form})`,
        item.operation.query,
        `variables: ${JSON.stringify(item.operation.variables)}`,
        `compiled:    ${JSON.stringify(item.compiled).slice(0, 1_500)}`,
        `interpreted: ${JSON.stringify(item.interpreted).slice(0, 1_500)}`,
      ].join("\n"),
    );
  return `${found.length} divergence(s)${seed === undefined ? "" : ` (seed ${seed})`}\n${lines.join("\n")}`;
}

async function graphql(
  instance: Instance,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<{ data?: Record<string, unknown> | null; errors?: unknown[] }> {
  const response = await instance.gateway.yoga.fetch("http://gateway.test/graphql", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/graphql-response+json" },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as { data?: Record<string, unknown> | null };
}

async function startExport(): Promise<string> {
  const result = await graphql(
    interpreted,
    `
      mutation {
        exportTransactions(input: { primaryNetwork: { includeChains: ["p-chain"] } }) {
          operationId
        }
      }
    `,
  );
  const id = (result.data?.exportTransactions as { operationId?: string } | undefined)?.operationId;
  if (!id) throw new Error(`could not start an export: ${JSON.stringify(result)}`);
  return id;
}

/** Every `id` the gateway answers for a few records, for `node(id:)` refetches. */
async function harvestGlobalIds(): Promise<string[]> {
  const result = await graphql(
    interpreted,
    `
      {
        latestBlocks(first: 2) {
          nodes {
            id
          }
        }
        chain(id: "43114") {
          id
        }
      }
    `,
  );
  return idsIn(result.data);
}

beforeAll(async () => {
  schema = buildSchema(readFileSync(new URL("../../schema/schema.graphql", import.meta.url), "utf8"));
  simulator = await startSimulator({ dataPort: 0, metricsPort: 0 });
  compiled = await startInstance(simulator, { ...GATEWAY_ENV, GRAPHQL_JIT: "true", GRAPHQL_JIT_FROM_RUN: "1" });
  interpreted = await startInstance(simulator, { ...GATEWAY_ENV, GRAPHQL_JIT: "false" });
  laned = await startInstance(simulator, { ...GATEWAY_ENV, GRAPHQL_JIT: "true", GRAPHQL_JIT_FROM_RUN: "1" });
  lanedServed = await serveGateway(laned);
  const get = async <T>(path: string): Promise<T> => {
    const response = await fetch(simulator.dataUrl + path);
    if (!response.ok) throw new Error(`simulator ${path}: HTTP ${response.status}`);
    return (await response.json()) as T;
  };
  // A job that ends at once: reading or watching it answers the same whenever it is asked.
  simulator.setKnobs({ exportJobMs: 0 });
  const completedExportId = await startExport();
  pool = { ...(await readPool({ get })), completedExportId, globalIds: await harvestGlobalIds() };
  project = await projectOperations(schema, pool, simulator, SEED);
});

afterAll(async () => {
  await lanedServed?.close();
  await laned?.close();
  await compiled?.close();
  await interpreted?.close();
  await simulator?.close();
});

describe("compiled execution and graphql-js", () => {
  it("answer every document of the project alike, with its arguments as variables and inline", async () => {
    expect(project.length).toBeGreaterThan(60);
    const cases = project.flatMap((operation) =>
      forms(operation).map(([form, variant]) => ({
        source: operation.source,
        form,
        operation: variant,
        subscription: operation.kind === "subscription",
      })),
    );
    const found = await divergences(cases);
    expect(found, report(found)).toEqual([]);
  }, 120_000);

  it(`answer ${GENERATED} documents generated from the schema alike`, async () => {
    const cases = Array.from({ length: GENERATED }, (_, index) => {
      const seed = SEED * 1_000_003 + index;
      const operation = generateOperation(schema, pool, seed);
      // Each document in one of its forms, in turn: as generated, inline, or lifted into variables.
      const variants = forms(operation);
      const [form, variant] = variants[index % variants.length]!;
      return { source: `generated seed ${seed}`, form, operation: variant, subscription: false };
    });
    const found = await divergences(cases);
    expect(found, report(found, SEED)).toEqual([]);
    // Selections merged under conditions come up, which compiled execution leaves to graphql-js;
    // most documents still run compiled, or the test would hold graphql-js to itself.
    const leftToGraphqlJs = cases.filter((item) => mergesConditionally(schema, parse(item.operation.query))).length;
    expect(leftToGraphqlJs).toBeGreaterThan(GENERATED / 10);
    expect(leftToGraphqlJs).toBeLessThan(GENERATED / 3);
  }, 120_000);

  it("answer _entities alike: every entity type, one missing, one failing, and refusals", async () => {
    const [block, blockByHash] = [pool.evmBlockIds[0]!, pool.evmBlockIds[1]!];
    const account = { chain: { chainId: MAIN_CHAIN }, address: pool.evmAddresses[0] };
    const fuji = (typename: string, blockchainId: string, txHash: string | undefined) => ({
      __typename: typename,
      network: "FUJI",
      blockchainId,
      txHash,
    });
    const representations = [
      { __typename: "EvmChain", chainId: MAIN_CHAIN },
      { __typename: "EvmBlock", chainId: MAIN_CHAIN, blockNumber: block },
      { __typename: "EvmBlock", chainId: MAIN_CHAIN, blockHash: blockByHash },
      { __typename: "EvmBlock", chainId: MAIN_CHAIN, blockHash: `0x${"ab".repeat(32)}` },
      { __typename: "EvmTransaction", chainId: MAIN_CHAIN, txHash: pool.evmTransactionHashes[0] },
      { __typename: "EvmAccount", ...account },
      fuji("PChainTransaction", P_CHAIN_ID, pool.pChainTransactionHashes[0]),
      fuji("XChainTransaction", X_CHAIN_ID, pool.xChainTransactionHashes[0]),
      { __typename: "L1Validator", network: "FUJI", validationId: pool.validationIds[0] },
      { __typename: "Subnet", network: "FUJI", subnetId: pool.subnetIds[0] },
    ];
    const selection = `__typename
      ... on EvmChain { chainId chainName }
      ... on EvmBlock { id blockNumber blockHash parent { blockNumber } blockTransactions: transactions(first: 2) { nodes { txHash } } }
      ... on EvmTransaction { txHash value fromAccount { address chain { chainId } } toAccount { address } }
      ... on EvmAccount { address chain { chainName } transactions(first: 2) { nodes { transaction { txHash } } } }
      ... on PrimaryNetworkTransaction { id primaryTxHash: txHash txType }
      ... on L1Validator { validationId subnet { subnetId } }
      ... on Subnet { subnetId l1Validators(first: 2) { nodes { validationId } } }`;
    const query = `query Entities($representations: [_Any!]!) { _entities(representations: $representations) { ${selection} } }`;
    // Compiled execution runs it (it leaves documents that merge selections under conditions to graphql-js).
    expect(mergesConditionally(schema, parse(query))).toBe(false);
    const operations: Operation[] = [
      { query, variables: { representations } },
      { query, variables: { representations: [...representations].reverse() } },
      { query, variables: { representations: [representations[1], { __typename: "EvmBlock", chainId: "x" }] } },
      { query, variables: { representations: [representations[0], "not an object"] } },
      { query, variables: { representations: [{ __typename: "Unknown" }] } },
    ];
    const cases = operations.flatMap((operation, index) =>
      forms(operation).map(([form, variant]) => ({
        source: `_entities ${index}`,
        form,
        operation: variant,
        subscription: false,
      })),
    );
    const found = await divergences(cases);
    expect(found, report(found)).toEqual([]);
    const answered = (await bothWays(operations[0]!, false)).interpreted.body as { data: { _entities: unknown[] } };
    expect(answered, JSON.stringify(answered).slice(0, 500)).toHaveProperty("data._entities");
    expect(answered.data._entities.filter((item) => item !== null)).toHaveLength(representations.length - 1);

    // A look-up that fails is null with its error at its index, in both.
    simulator.setKnobs({
      errorRate: 1,
      errorStatus: 500,
      errorRoutes: [ROUTES.primaryNetworkTransaction.label],
      faultKind: "status",
    });
    try {
      const failing = await divergences(
        forms(operations[0]!).map(([form, variant]) => ({
          source: "_entities failing",
          form,
          operation: variant,
          subscription: false,
        })),
      );
      expect(failing, report(failing)).toEqual([]);
    } finally {
      simulator.setKnobs({ errorRate: 0, errorRoutes: [], errorStatus: 500 });
    }
  }, 60_000);

  it("answer node(id:) asked more than once for one id alike, for an id of every Node type", async () => {
    // One id of each Node type, as the gateway gives them out.
    const listed = await graphql(
      interpreted,
      `{
        chain(id: "${MAIN_CHAIN}") { id blocks(first: 10) { nodes { id transactions(first: 1) { nodes { id } } } } }
        primaryNetwork(network: FUJI) {
          pChain { transactions(first: 1) { nodes { id } } block(id: "1") { id } }
          xChain { transactions(first: 1) { nodes { id } } verticesAtHeight(height: 1, first: 1) { nodes { id } } }
          cChain { transactions(first: 1) { nodes { id } } }
          l1Validators(first: 1) { nodes { id } }
        }
        exportOperation(id: "${pool.completedExportId}") { id }
      }`,
    );
    expect(listed.errors).toBeUndefined();
    const byType = new Map<string, string>();
    for (const id of idsIn(listed.data)) {
      const typename = Buffer.from(id, "base64").toString("utf8").split(":")[0]!;
      if (!byType.has(typename)) byType.set(typename, id);
    }
    const nodeTypes = Object.values(schema.getTypeMap())
      .filter((type) => isObjectType(type) && type.getInterfaces().some((implemented) => implemented.name === "Node"))
      .map((type) => type.name)
      .sort();
    expect([...byType.keys()].sort()).toEqual(nodeTypes);

    const fields = `__typename id
      ... on EvmChain { chainId }
      ... on EvmBlock { blockNumber }
      ... on EvmTransaction { evmTxHash: txHash }
      ... on PrimaryNetworkTransaction { txHash txType }
      ... on PrimaryNetworkBlock { blockHash chainName }
      ... on XChainVertex { vertexHash }
      ... on L1Validator { validationId }
      ... on ExportOperation { operationId }`;
    const twice = `query Twice($id: ID!) { a: node(id: $id) { ${fields} } b: node(id: $id) { ${fields} } }`;
    // Three times, each with a selection of its own, one through a fragment.
    const thrice = `query Thrice($id: ID!) { a: node(id: $id) { id } b: node(id: $id) { __typename } ...Again }
      fragment Again on Query { c: node(id: $id) { ${fields} } }`;
    expect(mergesConditionally(schema, parse(twice))).toBe(false);
    expect(mergesConditionally(schema, parse(thrice))).toBe(false);
    const cases = [...byType].flatMap(([typename, id]) =>
      [twice, thrice].flatMap((query) =>
        forms({ query, variables: { id } }).map(([form, operation]) => ({
          source: `node twice, ${typename}`,
          form,
          operation,
          subscription: false,
        })),
      ),
    );
    const found = await divergences(cases);
    expect(found, report(found)).toEqual([]);
    // Alike, and answered: both aliases the same object, without an error (answers come normalised).
    for (const [typename, id] of byType) {
      const answer = (await bothWays({ query: twice, variables: { id } }, false)).compiled.body as {
        data?: { a: unknown; b: unknown };
        errors?: unknown[];
      };
      expect(answer.errors, typename).toBeUndefined();
      expect(answer.data?.a, typename).toMatchObject({ __typename: typename, id: normalised(id) });
      expect(answer.data?.b, typename).toEqual(answer.data?.a);
    }
  }, 60_000);

  it("generate each connection's largest first as its route bounds it", () => {
    const routeMaxima = new Set<number>(Object.values(ROUTES).flatMap((route) => ("page" in route ? [route.page.max] : [])));
    const stated: number[] = [];
    for (const type of Object.values(schema.getTypeMap()))
      if ((isObjectType(type) || isInterfaceType(type)) && !type.name.startsWith("__"))
        for (const field of Object.values(type.getFields()))
          if (field.args.some((argument) => argument.name === "first")) stated.push(firstBounds(type.name, field).max);
    expect(stated.length).toBeGreaterThan(20);
    for (const max of stated) expect(routeMaxima).toContain(max);
  });

  it("stream the same events for a running export job, its id inline or through a variable of any name", async () => {
    simulator.setKnobs({ exportJobMs: 300 });
    const id = await startExport();
    const fields = "operationStatus operationId metadata { code } createdAtTimestamp";
    const shapes: Operation[] = [
      { query: `subscription { exportOperation(id: ${JSON.stringify(id)}) { ${fields} } }`, variables: {} },
      { query: `subscription Watch($id: ID!) { exportOperation(id: $id) { ${fields} } }`, variables: { id } },
      { query: `subscription Watch($job: ID!) { exportOperation(id: $job) { ${fields} } }`, variables: { job: id } },
      { query: `subscription { a: exportOperation(id: "no-such-job") { operationStatus } }`, variables: {} },
      { query: `subscription($job: ID!) { exportOperation(id: $job) { operationStatus } }`, variables: { job: "" } },
    ];
    const answers = await Promise.all(shapes.map((shape) => bothWays(shape, true)));
    answers.forEach((answer, index) => expect(answer.compiled, shapes[index]!.query).toEqual(answer.interpreted));
    const statuses = (
      answers[0]!.interpreted.body as { event: string; data: { data: { exportOperation: { operationStatus: string } } } }[]
    )
      .filter((event) => event.event === "next")
      .map((event) => event.data.data.exportOperation.operationStatus);
    // The stream follows the job to its end: it was read running, and then finished.
    expect(statuses[0]).toBe("RUNNING");
    expect(statuses.at(-1)).toMatch(/^COMPLETED/);
  }, 30_000);
});

describe("the listener's operation lane and Yoga", () => {
  const lanedExecuted = async () =>
    Number(
      /gateway_operation_lane_requests_total\{outcome="executed"\} (\d+)/.exec(
        await laned.gateway.metrics.registry.metrics(),
      )?.[1] ?? 0,
    );

  /** Each query sent twice to the laned gateway's socket (the second run is the lane's) and once to `compiled` through Yoga. */
  async function laneDivergences(cases: { source: string; form: string; operation: Operation }[]): Promise<Divergence[]> {
    const found = await boundedMap(cases, CONCURRENCY, async (item) => {
      await send(laned.gateway, item.operation, false, lanedServed.port);
      const [viaLane, viaYoga] = await Promise.all([
        send(laned.gateway, item.operation, false, lanedServed.port),
        send(compiled.gateway, item.operation, false),
      ]);
      return agree(viaLane, viaYoga) ? undefined : { ...item, compiled: viaLane, interpreted: viaYoga };
    });
    return found.filter((item) => item !== undefined) as Divergence[];
  }

  it("answer every query of the project and a thousand generated ones alike, each in its forms", async () => {
    const before = await lanedExecuted();
    const projectCases = project
      .filter((operation) => operation.kind === "query")
      .flatMap((operation) =>
        forms(operation).map(([form, variant]) => ({ source: operation.source, form, operation: variant })),
      );
    const generated = Array.from({ length: GENERATED }, (_, index) => {
      const seed = SEED * 1_000_003 + index;
      const variants = forms(generateOperation(schema, pool, seed));
      const [form, variant] = variants[index % variants.length]!;
      return { source: `generated seed ${seed}`, form, operation: variant };
    });
    const cases = [...projectCases, ...generated];
    const found = await laneDivergences(cases);
    // "compiled" and "interpreted" read here as the lane's answer and Yoga's.
    expect(found, report(found, SEED)).toEqual([]);
    // Most second runs were the lane's: the test would otherwise hold Yoga to itself.
    expect((await lanedExecuted()) - before).toBeGreaterThan(cases.length * 0.8);
  }, 180_000);
});
