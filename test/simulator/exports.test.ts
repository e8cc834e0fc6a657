import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { components } from "../../src/upstream/contract/data-api.ts";
import { PRIMARY_CHAIN_IDS } from "../../simulator/network/primary-network/index.ts";
import { startSimulator, type RunningSimulator } from "../../simulator/server.ts";
import { expectContract, getJson, postJson, type JsonResponse } from "./http.ts";

type Operation = components["schemas"]["OperationStatusResponse"];
type ErrorBody = components["schemas"]["BadRequest"];

const CREATE = "POST /v1/operations/transactions:export";
const READ = "GET /v1/operations/{operationId}";
const JOB_MS = 150;

let simulator: RunningSimulator;
let data: string;

beforeAll(async () => {
  simulator = await startSimulator({ dataPort: 0, metricsPort: 0, exportJobMs: JOB_MS });
  data = simulator.dataUrl;
});
afterAll(() => simulator.close());
beforeEach(() => simulator.setKnobs({ exportJobMs: JOB_MS }));

const create = (body: unknown) => postJson(`${data}/v1/operations/transactions:export`, body);

async function finished(operationId: string): Promise<JsonResponse> {
  await sleep(JOB_MS + 20);
  const response = await getJson(`${data}/v1/operations/${operationId}`);
  expectContract(response, "data", READ, 200);
  return response;
}

describe("transaction export jobs", () => {
  it("creates a RUNNING job (201), keeps it running for exportJobMs, then completes it with a CSV to download", async () => {
    const created = await create({
      type: "TRANSACTION_EXPORT_PRIMARY_NETWORK",
      firstDate: "2026-10-01",
      lastDate: "2026-10-10",
      options: { includeChains: ["p-chain"] },
    });
    expectContract(created, "data", CREATE, 201);
    const job = created.body as Operation;
    expect(job).toMatchObject({ operationType: "TRANSACTION_EXPORT_PRIMARY_NETWORK", operationStatus: "RUNNING" });
    expect(job.metadata).toBeUndefined();
    const running = await getJson(`${data}/v1/operations/${job.operationId}`);
    expectContract(running, "data", READ, 200);
    expect(running.body).toEqual(job);

    const done = (await finished(job.operationId)).body as Operation;
    expect(done).toMatchObject({ operationStatus: "COMPLETED", createdAtTimestamp: job.createdAtTimestamp });
    expect(done.metadata?.downloadUrl).toBe(`${data}/_downloads/transaction-exports/${job.operationId}.csv`);

    simulator.resetCounters();
    const file = await fetch(done.metadata!.downloadUrl!);
    expect(file.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    const [header, ...rows] = (await file.text()).trimEnd().split("\n");
    expect(header).toBe("date,chain,blockchainId,blockNumber,timestamp,txHash,txType,nodeId,addresses");
    const expected = simulator.network.primaryNetwork("mainnet").transactions("P", {
      addresses: undefined,
      txTypes: undefined,
      startTimestamp: Date.UTC(2026, 9, 1) / 1000,
      endTimestamp: Date.UTC(2026, 9, 11) / 1000 - 1,
      l1ValidationId: undefined,
      sortOrder: "asc",
    });
    expect(rows.map((row) => row.split(",")[5])).toEqual(expected.map((tx) => tx.txHash));
    expect(simulator.counters()).toEqual({});
  });

  it("cuts a range of more than 31 days, with WarnTruncatedExport and the day to continue from", async () => {
    const created = await create({
      type: "TRANSACTION_EXPORT_PRIMARY_NETWORK_SIMPLE",
      startDate: "2026-09-01",
      endDate: "2026-10-31",
      options: { includeChains: [PRIMARY_CHAIN_IDS.fuji.X] },
    });
    const done = (await finished((created.body as Operation).operationId)).body as Operation;
    expect(done).toMatchObject({
      operationStatus: "COMPLETED_WITH_WARNING",
      metadata: { code: "WarnTruncatedExport", nextDate: "2026-10-02" },
    });
    const rows = (await (await fetch(done.metadata!.downloadUrl!)).text()).trimEnd().split("\n").slice(1);
    expect(rows.every((row) => row.split(",")[0]! <= "2026-10-01")).toBe(true);
  });

  it.each([
    [
      "an EVM chain the network does not have",
      { type: "TRANSACTION_EXPORT_EVM", options: { addresses: [`0x${"1".repeat(40)}`], includeChains: ["1"] } },
    ],
    [
      "chains of both networks",
      {
        type: "TRANSACTION_EXPORT_PRIMARY_NETWORK",
        options: { includeChains: [PRIMARY_CHAIN_IDS.mainnet.X, PRIMARY_CHAIN_IDS.fuji.C] },
      },
    ],
  ])("fails a job with ErrInvalidRequest for %s", async (_, body) => {
    const created = await create(body);
    expectContract(created, "data", CREATE, 201);
    const done = (await finished((created.body as Operation).operationId)).body as Operation;
    expect(done).toMatchObject({ operationStatus: "FAILED", metadata: { code: "ErrInvalidRequest" } });
    expect(done.metadata?.downloadUrl).toBeUndefined();
    const file = await fetch(`${data}/_downloads/transaction-exports/${done.operationId}.csv`);
    expect(file.status).toBe(404);
  });

  it.each([
    ["no type", { options: { includeChains: ["p-chain"] } }],
    ["an unknown type", { type: "TRANSACTION_EXPORT_ALL", options: { includeChains: ["p-chain"] } }],
    ["no options", { type: "TRANSACTION_EXPORT_EVM" }],
    ["EVM options without addresses", { type: "TRANSACTION_EXPORT_EVM", options: { includeChains: ["43114"] } }],
    [
      "a primary-network chain outside the contract's list",
      { type: "TRANSACTION_EXPORT_PRIMARY_NETWORK", options: { includeChains: ["d-chain"] } },
    ],
    [
      "a date that is not YYYY-MM-DD",
      { type: "TRANSACTION_EXPORT_PRIMARY_NETWORK", firstDate: "2026-02-30", options: { includeChains: ["p-chain"] } },
    ],
    [
      "firstDate after lastDate",
      {
        type: "TRANSACTION_EXPORT_PRIMARY_NETWORK",
        firstDate: "2026-05-02",
        lastDate: "2026-05-01",
        options: { includeChains: ["p-chain"] },
      },
    ],
  ])("answers 400 for %s", async (_, body) => {
    const response = await create(body);
    expectContract(response, "data", CREATE, 400);
    expect((response.body as ErrorBody).statusCode).toBe(400);
  });

  it("answers 404 for an unknown operation, and refuses an invalid exportJobMs", async () => {
    const response = await getJson(`${data}/v1/operations/00000000-0000-4000-a000-000000000000`);
    expectContract(response, "data", READ, 404);
    expect(() => simulator.setKnobs({ exportJobMs: -1 })).toThrow(RangeError);
  });
});
