import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  ExportOperationDocument,
  ExportOperationNodeDocument,
  ExportTransactionsDocument,
  type ExportOperationFieldsFragment,
  type ExportTransactionsInput,
} from "./generated/graphql.ts";
import { operationsOf, subscribeExport, type ExportSubscription } from "./support/subscriptions.ts";
import { execute, startHarness, upstreamCalls, type Harness } from "./support/harness.ts";

const POST_ROUTE = "POST /v1/operations/transactions:export";
const GET_ROUTE = "GET /v1/operations/{operationId}";
const POLL_MS = 40;
const JOB_MS = 300;
const PRIMARY_ALL = { includeChains: ["p-chain", "x-chain"] };

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness({ EXPORT_POLL_INTERVAL_MS: String(POLL_MS) });
});
afterAll(async () => {
  await harness.close();
});
beforeEach(() => {
  harness.simulator.setKnobs({ exportJobMs: JOB_MS, errorRate: 0, errorRoutes: [] });
  harness.simulator.resetCounters();
});

const isoDate = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);

/** An address with C-Chain transactions on the newest block's day, and those transactions. */
function cChainActivity() {
  const chain = harness.simulator.network.chain("43114")!;
  const transactions = harness.simulator.network.transactions(chain);
  const head = chain.blocks.block(chain.blocks.headNumber)!;
  const address = transactions.blockTransactions(chain.blocks.headNumber)!.at(0)!.from.address;
  const day = isoDate(head.blockTimestamp);
  const all = transactions.addressTransactions(address, { sortOrder: "asc" });
  const hashes: string[] = [];
  for (let index = 0; index < all.length; index++) {
    const tx = all.at(index)!.nativeTransaction;
    if (isoDate(tx.blockTimestamp) === day) hashes.push(tx.txHash);
  }
  return { address, day, hashes };
}

async function startExport(input: ExportTransactionsInput): Promise<ExportOperationFieldsFragment> {
  const result = await execute(harness, ExportTransactionsDocument, { input });
  expect(result.body.errors).toBeUndefined();
  return result.body.data!.exportTransactions!;
}

async function until(
  id: string,
  done: (operation: ExportOperationFieldsFragment) => boolean,
): Promise<ExportOperationFieldsFragment> {
  for (;;) {
    const result = await execute(harness, ExportOperationDocument, { id });
    const operation = result.body.data!.exportOperation!;
    if (done(operation)) return operation;
    await sleep(50);
  }
}

async function csvRows(url: string): Promise<string[][]> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/csv/);
  return (await response.text())
    .trimEnd()
    .split("\n")
    .map((line) => line.split(","));
}

/** A subscription over Server-Sent Events, read event by event. */
function subscribe(id: string, headers: Record<string, string> = {}): Promise<ExportSubscription> {
  return subscribeExport(harness, id, headers);
}

describe("exportTransactions", () => {
  it("starts an EVM export that completes with a CSV of the transactions touching the address on those days", async () => {
    const { address, day, hashes } = cChainActivity();
    expect(hashes.length).toBeGreaterThan(0);
    const started = await startExport({ evm: { addresses: [address], includeChains: ["43114"] }, firstDate: day, lastDate: day });
    expect(started).toMatchObject({ operationType: "TRANSACTION_EXPORT_EVM", operationStatus: "RUNNING", metadata: null });
    expect(started.operationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(upstreamCalls(harness)).toEqual({ [POST_ROUTE]: 1 });

    const done = await until(started.operationId, (operation) => operation.operationStatus !== "RUNNING");
    expect(done).toMatchObject({ operationStatus: "COMPLETED", metadata: { code: null, nextDate: null } });
    expect(done.updatedAtTimestamp).toBeGreaterThanOrEqual(done.createdAtTimestamp);
    const [header, ...rows] = await csvRows(done.metadata!.downloadUrl!);
    expect(header).toEqual([
      "date",
      "chainId",
      "blockNumber",
      "blockTimestamp",
      "txHash",
      "from",
      "to",
      "value",
      "gasUsed",
      "gasPrice",
      "txStatus",
    ]);
    expect(rows.map((row) => row[4])).toEqual(hashes);
    for (const row of rows) {
      expect(row[0]).toBe(day);
      expect(row[1]).toBe("43114");
    }
  });

  it("exports primary-network transactions: the staking kind, and the simple kind with the deprecated date names", async () => {
    const primary = harness.simulator.network.primaryNetwork("mainnet");
    const wallet = primary.wallets[0]!;
    const staking = await startExport({
      primaryNetwork: {
        type: "TRANSACTION_EXPORT_PRIMARY_NETWORK_STAKING",
        includeChains: ["p-chain"],
        addresses: [`P-${wallet.address}`],
      },
      firstDate: "2026-09-22",
      lastDate: "2026-11-01",
    });
    expect(staking.operationType).toBe("TRANSACTION_EXPORT_PRIMARY_NETWORK_STAKING");
    const simple = await startExport({
      primaryNetwork: {
        type: "TRANSACTION_EXPORT_PRIMARY_NETWORK_SIMPLE",
        includeChains: ["x-chain", "c-chain"],
        cChainEvmAddresses: [wallet.evmAddress],
      },
      startDate: "2026-10-15",
      endDate: "2026-10-31",
    });

    // 41 days is longer than one file takes: the export is cut after 31, and says where to go on.
    const cut = await until(staking.operationId, (operation) => operation.operationStatus !== "RUNNING");
    expect(cut).toMatchObject({
      operationStatus: "COMPLETED_WITH_WARNING",
      metadata: { code: "WARN_TRUNCATED_EXPORT", nextDate: "2026-10-23" },
    });
    expect(cut.message).toMatch(/31 days/);
    const [stakingHeader, ...stakingRows] = await csvRows(cut.metadata!.downloadUrl!);
    expect(stakingHeader).toContain("nodeId");
    expect(stakingRows.length).toBeGreaterThan(0);
    for (const row of stakingRows) {
      expect([
        "AddValidatorTx",
        "AddPermissionlessValidatorTx",
        "AddDelegatorTx",
        "AddPermissionlessDelegatorTx",
        "RewardValidatorTx",
      ]).toContain(row[6]);
      expect(row[0]! >= "2026-09-22" && row[0]! <= "2026-10-22").toBe(true);
    }

    const done = await until(simple.operationId, (operation) => operation.operationStatus !== "RUNNING");
    expect(done.operationStatus).toBe("COMPLETED");
    const [simpleHeader, ...simpleRows] = await csvRows(done.metadata!.downloadUrl!);
    expect(simpleHeader).toEqual(["date", "chain", "txHash", "txType"]);
    expect(simpleRows.length).toBeGreaterThan(0);
    expect(simpleRows.every((row) => row[1] === "c-chain" && row[0]! >= "2026-10-15" && row[0]! <= "2026-10-31")).toBe(true);
  });

  it("ends as FAILED with ErrInvalidRequest for a chain the Data API does not have", async () => {
    const started = await startExport({ evm: { addresses: [`0x${"1".repeat(40)}`], includeChains: ["999999"] } });
    const failed = await until(started.operationId, (operation) => operation.operationStatus !== "RUNNING");
    expect(failed).toMatchObject({ operationStatus: "FAILED", metadata: { code: "ERR_INVALID_REQUEST", downloadUrl: null } });
    expect(failed.message).toMatch(/999999/);
  });

  const EVM = { addresses: [`0x${"ab".repeat(20)}`], includeChains: ["43114"] };
  const PRIMARY = { includeChains: ["p-chain"] };
  it.each<[string, ExportTransactionsInput, string]>([
    ["neither evm nor primaryNetwork", {}, "input"],
    ["both evm and primaryNetwork", { evm: EVM, primaryNetwork: PRIMARY }, "input"],
    ["a firstDate not written YYYY-MM-DD", { evm: EVM, firstDate: "2026/05/01" }, "input.firstDate"],
    ["a day that does not exist", { evm: EVM, firstDate: "2026-02-30" }, "input.firstDate"],
    ["a month that does not exist", { evm: EVM, lastDate: "2026-13-01" }, "input.lastDate"],
    ["a date with a time", { evm: EVM, lastDate: "2026-05-01T00:00:00Z" }, "input.lastDate"],
    ["lastDate before firstDate", { evm: EVM, firstDate: "2026-05-02", lastDate: "2026-05-01" }, "input.lastDate"],
    ["endDate before startDate", { evm: EVM, startDate: "2026-05-02", endDate: "2026-05-01" }, "input.endDate"],
    ["a malformed startDate", { evm: EVM, startDate: "yesterday" }, "input.startDate"],
    ["firstDate beside its deprecated name", { evm: EVM, firstDate: "2026-05-01", startDate: "2026-05-01" }, "input.startDate"],
    ["lastDate beside its deprecated name", { evm: EVM, lastDate: "2026-05-01", endDate: "2026-05-01" }, "input.endDate"],
    ["no EVM addresses", { evm: { ...EVM, addresses: [] } }, "input.evm.addresses"],
    ["a malformed EVM address", { evm: { ...EVM, addresses: ["0x1234"] } }, "input.evm.addresses"],
    ["no EVM chains", { evm: { ...EVM, includeChains: [] } }, "input.evm.includeChains"],
    ["an EVM chain that is not a chain id", { evm: { ...EVM, includeChains: ["c-chain"] } }, "input.evm.includeChains"],
    ["no primary-network chains", { primaryNetwork: { includeChains: [] } }, "input.primaryNetwork.includeChains"],
    [
      "a primary-network chain outside the contract's list",
      { primaryNetwork: { includeChains: ["p-chain", "d-chain"] } },
      "input.primaryNetwork.includeChains",
    ],
    [
      "an EVM chain id as a primary-network chain",
      { primaryNetwork: { includeChains: ["43114"] } },
      "input.primaryNetwork.includeChains",
    ],
    ["an empty address list", { primaryNetwork: { ...PRIMARY, addresses: [] } }, "input.primaryNetwork.addresses"],
    ["an address that is not bech32", { primaryNetwork: { ...PRIMARY, addresses: ["0xabc"] } }, "input.primaryNetwork.addresses"],
    [
      "an empty C-Chain account list",
      { primaryNetwork: { ...PRIMARY, cChainEvmAddresses: [] } },
      "input.primaryNetwork.cChainEvmAddresses",
    ],
    [
      "a malformed C-Chain account",
      { primaryNetwork: { ...PRIMARY, cChainEvmAddresses: ["avax1xyz"] } },
      "input.primaryNetwork.cChainEvmAddresses",
    ],
  ])("refuses %s before any upstream call", async (_, input, argument) => {
    const result = await execute(harness, ExportTransactionsDocument, { input });
    expect(result.body.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument });
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("marks startDate and endDate deprecated in the schema", async () => {
    const result = await execute(
      harness,
      `{ __type(name: "ExportTransactionsInput") { inputFields(includeDeprecated: true) { name isDeprecated deprecationReason } } }`,
    );
    const fields = (
      result.body.data as { __type: { inputFields: { name: string; isDeprecated: boolean; deprecationReason: string | null }[] } }
    ).__type.inputFields;
    expect(fields.filter((field) => field.isDeprecated)).toEqual([
      { name: "endDate", isDeprecated: true, deprecationReason: "Use `lastDate`." },
      { name: "startDate", isDeprecated: true, deprecationReason: "Use `firstDate`." },
    ]);
  });

  it("sends the POST once on a 503: never retried", async () => {
    harness.simulator.setKnobs({ errorRate: 1, errorStatus: 503, errorRoutes: [POST_ROUTE] });
    const result = await execute(harness, ExportTransactionsDocument, { input: { primaryNetwork: PRIMARY } });
    expect(result.body.errors?.[0]?.extensions).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", upstream: { status: 503 } });
    expect(upstreamCalls(harness)).toEqual({ [POST_ROUTE]: 1 });
  });
});

describe("exportOperation", () => {
  it("reads an operation, refetches it by node id, and answers null for an unknown id", async () => {
    const started = await startExport({ primaryNetwork: PRIMARY_ALL });
    const read = await execute(harness, ExportOperationDocument, { id: started.operationId });
    expect(read.body.data!.exportOperation).toEqual(started);
    expect(started.id).toBe(Buffer.from(`ExportOperation:${started.operationId}`).toString("base64"));
    const node = await execute(harness, ExportOperationNodeDocument, { id: started.id });
    expect(node.body.data!.node).toMatchObject({
      __typename: "ExportOperation",
      id: started.id,
      operationId: started.operationId,
    });

    const unknown = await execute(harness, ExportOperationDocument, { id: "00000000-0000-4000-a000-000000000000" });
    expect(unknown.body.errors).toBeUndefined();
    expect(unknown.body.data!.exportOperation).toBeNull();
    harness.simulator.resetCounters();
    const malformed = await execute(harness, ExportOperationDocument, { id: "../../v1/chains" });
    expect(malformed.body.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "id" });
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("takes the ExportOperation.id it gives out as well as the operationId, and refuses another type's id", async () => {
    const started = await startExport({ primaryNetwork: PRIMARY_ALL });
    harness.simulator.resetCounters();
    const byId = await execute(harness, ExportOperationDocument, { id: started.id });
    expect(byId.body.errors).toBeUndefined();
    expect(byId.body.data!.exportOperation).toEqual(started);
    expect(upstreamCalls(harness)).toEqual({ [GET_ROUTE]: 1 });

    harness.simulator.resetCounters();
    const chainId = Buffer.from("EvmChain:43114").toString("base64");
    const wrongType = await execute(harness, ExportOperationDocument, { id: chainId });
    expect(wrongType.body.data!.exportOperation).toBeNull();
    expect(wrongType.body.errors?.[0]).toMatchObject({
      path: ["exportOperation"],
      extensions: { code: "BAD_USER_INPUT", argument: "id" },
    });
    expect(wrongType.body.errors?.[0]?.message).toContain("not of an ExportOperation");
    expect(upstreamCalls(harness)).toEqual({});
  });
});

describe("Subscription.exportOperation over Server-Sent Events", () => {
  it("pushes the operation at each change and completes when the job ends", async () => {
    const started = await startExport({ primaryNetwork: PRIMARY_ALL });
    const subscription = await subscribe(started.operationId);
    const events = await subscription.rest();
    expect(events.map((event) => event.event)).toEqual(["next", "next", "complete"]);
    const operations = operationsOf(events);
    expect(operations.map((operation) => operation.operationStatus)).toEqual(["RUNNING", "COMPLETED"]);
    expect(operations[1]!.metadata!.downloadUrl).toMatch(new RegExp(`/${started.operationId}\\.csv$`));
  });

  it("is counted in /metrics once, as a subscription, when its stream ends", async () => {
    const count = async () => {
      const text = await (await harness.gateway.yoga.fetch("http://gateway.test/metrics")).text();
      const line = text
        .split("\n")
        .find(
          (row) =>
            row.startsWith("graphql_envelop_request_duration_count{") &&
            row.includes('operationName="WatchExportOperation"') &&
            row.includes('operationType="subscription"'),
        );
      return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
    };
    const before = await count();
    const started = await startExport({ primaryNetwork: PRIMARY_ALL });
    const subscription = await subscribe(started.operationId);
    expect(await subscription.next()).toMatchObject({ event: "next" });
    expect(await count()).toBe(before);
    expect((await subscription.rest()).at(-1)?.event).toBe("complete");
    expect(await count()).toBe(before + 1);
  });

  it("shares one poller between two concurrent subscribers of one job", async () => {
    harness.simulator.setKnobs({ exportJobMs: 600 });
    const started = await startExport({ primaryNetwork: PRIMARY_ALL });
    harness.simulator.resetCounters();
    const began = Date.now();
    const first = await subscribe(started.operationId, { "x-request-id": "first-subscriber" });
    await expect(first.next()).resolves.toMatchObject({ event: "next" });
    await sleep(150);
    const second = await subscribe(started.operationId, { "x-request-id": "second-subscriber" });
    const [firstEvents, secondEvents] = await Promise.all([first.rest(), second.rest()]);
    const elapsed = Date.now() - began;

    expect(operationsOf(firstEvents).map((operation) => operation.operationStatus)).toEqual(["COMPLETED"]);
    // The late subscriber gets the state the poller already has, then the change.
    expect(operationsOf(secondEvents).map((operation) => operation.operationStatus)).toEqual(["RUNNING", "COMPLETED"]);
    expect(secondEvents.at(-1)?.event).toBe("complete");

    const polls = harness.simulator.requests().filter((request) => request.route === GET_ROUTE);
    expect(upstreamCalls(harness)).toEqual({ [GET_ROUTE]: polls.length });
    expect(polls.length).toBeLessThanOrEqual(Math.ceil(elapsed / POLL_MS) + 1);
    expect(new Set(polls.map((request) => request.requestId))).toEqual(new Set(["first-subscriber"]));
  });

  it("stops polling when the last subscriber disconnects", async () => {
    harness.simulator.setKnobs({ exportJobMs: 60_000 });
    const started = await startExport({ primaryNetwork: PRIMARY_ALL });
    const subscription = await subscribe(started.operationId);
    expect(await subscription.next()).toMatchObject({ event: "next" });
    await sleep(3 * POLL_MS);
    await subscription.cancel();
    await sleep(2 * POLL_MS);
    const after = upstreamCalls(harness)[GET_ROUTE];
    expect(after).toBeGreaterThanOrEqual(2);
    await sleep(5 * POLL_MS);
    expect(upstreamCalls(harness)[GET_ROUTE]).toBe(after);
  });

  it("ends with a NOT_FOUND error for an unknown id", async () => {
    const subscription = await subscribe("00000000-0000-4000-a000-000000000000");
    const events = await subscription.rest();
    expect(events.map((event) => event.event)).toEqual(["next", "complete"]);
    const result = JSON.parse(events[0]!.data) as { errors: { path: string[]; extensions: { code: string } }[] };
    expect(result.errors[0]).toMatchObject({ path: ["exportOperation"], extensions: { code: "NOT_FOUND" } });
    expect(upstreamCalls(harness)).toEqual({ [GET_ROUTE]: 1 });
  });

  it("refuses a malformed id before any upstream call", async () => {
    const subscription = await subscribe("a/b");
    expect(subscription.refusal).toMatchObject({
      status: 400,
      errors: [{ extensions: { code: "BAD_USER_INPUT", argument: "id" } }],
    });
    expect(upstreamCalls(harness)).toEqual({});
  });
});

describe("a failing operations route stays at its field", () => {
  it("a 500 on GET /v1/operations/{operationId} nulls exportOperation alone", async () => {
    const started = (await execute(harness, ExportTransactionsDocument, { input: { primaryNetwork: PRIMARY_ALL } })).body.data!
      .exportTransactions!;
    harness.simulator.setKnobs({ errorRate: 1, errorStatus: 500, errorRoutes: [GET_ROUTE] });
    const result = await execute(
      harness,
      `{ exportOperation(id: "${started.operationId}") { operationStatus } pn: primaryNetwork(network: FUJI) { network } }`,
    );
    expect(result.body.data).toEqual({ exportOperation: null, pn: { network: "FUJI" } });
    expect(result.body.errors).toHaveLength(1);
    expect(result.body.errors![0]).toMatchObject({ path: ["exportOperation"], extensions: { code: "UPSTREAM_ERROR" } });
  });
});
