/**
 * No mutation result is ever lost (issue 27). Two mutations share a document, one of them fails
 * upstream (400, 500, a reset connection, a body that is not JSON) and the other succeeds, in
 * either order, on a gateway with compiled execution (GRAPHQL_JIT=true, which sends mutations to
 * graphql-js: src/plugins/compiled-execution.ts) and one without, over one simulator. Every
 * mutation is sent upstream once, the export job the simulator created reaches the client with its
 * id, the failing field alone is null with its error at its own path, and its sibling keeps its data.
 */
import { buildSchema, isNonNullType } from "graphql";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startSimulator } from "../simulator/server.ts";
import type { FaultKind, Knobs } from "../simulator/http/knobs.ts";
import { decodeCb58 } from "../src/upstream/cb58.ts";
import { startInstance, type Instance, type RunningSimulator } from "./support/harness.ts";
import { l1Transactions } from "./support/sample-network.ts";

const EXPORT_ROUTE = "POST /v1/operations/transactions:export";
const WARP_ROUTE = "POST /v1/signatureAggregator/{network}/aggregateSignatures";

const GATEWAY_ENV = {
  // Every failure here is meant; none may open a route's breaker and keep a later case's POST home.
  BREAKER_VOLUME_THRESHOLD: "100000",
};

let simulator: RunningSimulator;
const gateways: Record<"compiled" | "interpreted", Instance> = {} as never;
/** An unsigned Warp message from the Fuji L1's validator manager chain, which its validators sign. */
let warpMessage: string;

const u32 = (value: number) => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value);
  return bytes;
};

beforeAll(async () => {
  simulator = await startSimulator({ dataPort: 0, metricsPort: 0 });
  gateways.compiled = await startInstance(simulator, { ...GATEWAY_ENV, GRAPHQL_JIT: "true", GRAPHQL_JIT_FROM_RUN: "1" });
  gateways.interpreted = await startInstance(simulator, { ...GATEWAY_ENV, GRAPHQL_JIT: "false" });
  const [conversion] = l1Transactions(simulator, "fuji", "ConvertSubnetToL1Tx");
  const chainId = decodeCb58(conversion!.fields.l1ValidatorManagerDetails!.blockchainId)!;
  const payload = Buffer.concat([Buffer.alloc(2), u32(0), Buffer.alloc(32, 0x27)]);
  warpMessage = Buffer.concat([Buffer.alloc(2), u32(5), chainId, u32(payload.length), payload]).toString("hex");
});

afterAll(async () => {
  await gateways.compiled?.close();
  await gateways.interpreted?.close();
  await simulator?.close();
});

const NO_FAULTS: Partial<Knobs> = { errorRate: 0, errorRoutes: [], errorStatus: 500, faultKind: "status" };

beforeEach(() => {
  simulator.setKnobs({ ...NO_FAULTS, exportJobMs: 60_000 });
  simulator.resetCounters();
});

interface Fault {
  name: string;
  knobs: { faultKind: FaultKind; errorStatus?: number };
  code: string;
}

const FAULTS: Fault[] = [
  { name: "a 400", knobs: { faultKind: "status", errorStatus: 400 }, code: "BAD_USER_INPUT" },
  { name: "a 500", knobs: { faultKind: "status", errorStatus: 500 }, code: "UPSTREAM_ERROR" },
  { name: "a reset connection", knobs: { faultKind: "reset" }, code: "UPSTREAM_UNAVAILABLE" },
  { name: "a body that is not JSON", knobs: { faultKind: "malformed" }, code: "UPSTREAM_ERROR" },
];

type Mutation = "export" | "warp";

const field = (mutation: Mutation): string =>
  mutation === "export"
    ? `e: exportTransactions(input: { evm: { addresses: ["0xcd12af610f1850d9f9b80048b8257587e61b6011"], includeChains: ["43114"] } }) { operationId operationStatus }`
    : `w: aggregateWarpSignatures(input: { network: FUJI, message: "${warpMessage}" }) { signedMessage network }`;

const alias = (mutation: Mutation) => (mutation === "export" ? "e" : "w");
const routeOf = (mutation: Mutation) => (mutation === "export" ? EXPORT_ROUTE : WARP_ROUTE);

interface Body {
  data?: Record<string, Record<string, unknown> | null> | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: { code?: string } }[];
}

const cases = (["compiled", "interpreted"] as const).flatMap((path) =>
  (["export", "warp"] as const).flatMap((failing) =>
    (["first", "second"] as const).flatMap((position) => FAULTS.map((fault) => ({ path, failing, position, fault }))),
  ),
);

describe("a failing mutation beside a succeeding one", () => {
  it.each(cases)(
    "$path: $failing fails $position with $fault.name: the other's data and every created job's id reach the client",
    async ({ path, failing, position, fault }) => {
      const succeeding: Mutation = failing === "export" ? "warp" : "export";
      const order = position === "first" ? [failing, succeeding] : [succeeding, failing];
      simulator.setKnobs({ errorRate: 1, errorRoutes: [routeOf(failing)], ...fault.knobs });

      const response = await gateways[path].gateway.yoga.fetch("http://gateway.test/graphql", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/graphql-response+json" },
        body: JSON.stringify({ query: `mutation { ${order.map(field).join(" ")} }` }),
      });
      const body = (await response.json()) as Body;
      const counters = simulator.counters();
      simulator.setKnobs(NO_FAULTS);

      // Each mutation was sent upstream exactly once, whichever failed and wherever it stood.
      expect(counters[EXPORT_ROUTE] ?? 0, JSON.stringify(body)).toBe(1);
      expect(counters[WARP_ROUTE] ?? 0, JSON.stringify(body)).toBe(1);
      // A faulted POST is answered before the simulator's handler runs: it creates no job.
      const jobsCreated = failing === "export" ? 0 : counters[EXPORT_ROUTE]!;
      const ids = body.data?.e?.operationId === undefined ? [] : [body.data.e.operationId as string];
      expect(ids, JSON.stringify(body)).toHaveLength(jobsCreated);

      expect(response.status).toBe(200);
      expect(Object.keys(body.data ?? {})).toEqual(order.map(alias));
      expect(body.data![alias(failing)]).toBeNull();
      expect(body.errors).toHaveLength(1);
      expect(body.errors![0]).toMatchObject({ path: [alias(failing)], extensions: { code: fault.code } });

      if (succeeding === "export") {
        expect(body.data!.e).toMatchObject({ operationId: expect.stringMatching(/^[0-9a-f-]{36}$/), operationStatus: "RUNNING" });
        // The id is the job's at the Data API.
        const job = await fetch(`${simulator.dataUrl}/v1/operations/${ids[0]}`);
        expect(job.status).toBe(200);
        expect(await job.json()).toMatchObject({ operationId: ids[0] });
      } else {
        expect(body.data!.w).toMatchObject({ network: "FUJI", signedMessage: expect.stringMatching(`^${warpMessage}`) });
      }
    },
  );
});

describe("the Mutation type", () => {
  it("has only nullable fields, the mutations to come included", () => {
    const schema = buildSchema(readFileSync(new URL("../schema/schema.graphql", import.meta.url), "utf8"));
    const fields = Object.values(schema.getMutationType()!.getFields());
    expect(fields.map((field) => field.name)).toEqual(expect.arrayContaining(["aggregateWarpSignatures", "exportTransactions"]));
    expect(fields.filter((field) => isNonNullType(field.type)).map((field) => field.name)).toEqual([]);
  });
});
