/**
 * `Subscription.newAddressTransactions`, `newPrimaryNetworkTransactions` and `chainMetricUpdates`
 * on a simulator whose clock the tests drive: each new item once, in the simulator's own order,
 * one poller per question, filters and resume points, and every bad argument refused before any
 * upstream call.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { subscribeSse, type ExportSubscription, type SseEvent } from "./support/subscriptions.ts";
import {
  serveGateway,
  simulatorGet,
  startHarness,
  until,
  upstreamCalls,
  type Harness,
  type ServedGateway,
} from "./support/harness.ts";
import type { ListAddressTransactionsResponse, PChainTransaction } from "../src/upstream/types.ts";

const C_CHAIN = "43114";
/** The sample network's busiest C-Chain address: it is in most new blocks. */
const BUSY_ADDRESS = "0xba8f6bc43ce667f26cb1ace5fe31a2cdc287159d";
const PRIMARY_ROUTE = "GET /v1/networks/{network}/blockchains/{blockchainId}/transactions";
const ADDRESS_ROUTE = "GET /v1/chains/{chainId}/addresses/{address}/transactions";

const NEW_ADDRESS_TRANSACTIONS = `subscription AddressActivity($chainId: ID!, $address: EvmAddress!, $after: BigInt) {
  newAddressTransactions(chainId: $chainId, address: $address, afterBlock: $after) {
    transaction { txHash blockNumber chain { chainId } block { blockNumber } }
    erc20Transfers { value }
  }
}`;
const NEW_P_CHAIN_TRANSACTIONS = `subscription PChainActivity($txTypes: [PrimaryNetworkTransactionType!], $after: BigInt) {
  newPrimaryNetworkTransactions(network: MAINNET, blockchainId: "p-chain", txTypes: $txTypes, afterBlock: $after) {
    __typename
    txHash
    txType
    ... on PChainTransaction { blockNumber }
  }
}`;

interface Payload<T> {
  data?: T | null;
  errors?: { message: string; extensions: { code: string; argument?: string } }[];
}

function payload<T>(event: SseEvent | undefined): Payload<T> {
  expect(event?.event).toBe("next");
  return JSON.parse(event!.data) as Payload<T>;
}

async function take<T>(subscription: ExportSubscription, count: number): Promise<Payload<T>[]> {
  const events: Payload<T>[] = [];
  for (let index = 0; index < count; index += 1) events.push(payload<T>(await subscription.next()));
  return events;
}

type AddressEvent = {
  newAddressTransactions: {
    transaction: {
      txHash: string;
      blockNumber: string;
      chain: { chainId: string } | null;
      block: { blockNumber: string } | null;
    };
    erc20Transfers: { value: string }[];
  };
};
type PChainEvent = { newPrimaryNetworkTransactions: { __typename: string; txHash: string; txType: string; blockNumber: string } };

describe("live transactions and metrics on a chain that moves", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({
      LIVE_ADDRESS_POLL_MS: "100",
      LIVE_ADDRESS_MAX_POLL_MS: "100",
      LIVE_PRIMARY_NETWORK_POLL_MS: "100",
      LIVE_PRIMARY_NETWORK_MAX_POLL_MS: "100",
      LIVE_METRICS_POLL_MS: "100",
      LIVE_METRICS_MAX_POLL_MS: "100",
      RATE_LIMIT_BURST: "100000",
    });
  });
  afterAll(async () => {
    await harness.close();
  });

  /** The address's transactions in blocks after `after`, oldest first, as the simulator lists them. */
  async function addressTransactionsAfter(after: bigint): Promise<string[]> {
    const list = await simulatorGet<ListAddressTransactionsResponse>(
      harness,
      "data",
      `/v1/chains/${C_CHAIN}/addresses/${BUSY_ADDRESS}/transactions?pageSize=100`,
    );
    return list.transactions
      .filter((item) => BigInt(item.nativeTransaction.blockNumber) > after)
      .map((item) => item.nativeTransaction.txHash)
      .reverse();
  }

  function cChainHead(): bigint {
    return BigInt(harness.simulator.clock().heads.find((head) => head.chainId === C_CHAIN)!.blockNumber);
  }

  it("pushes an address's new transactions once each, oldest first, with their transfers and links, from one poller", async () => {
    // Subscribed from the head: what arrives before the poller's first read comes by catch-up,
    // the rest live; the first step's events prove the first read done, so the second is live.
    const before = cChainHead();
    const variables = { chainId: C_CHAIN, address: BUSY_ADDRESS.toUpperCase().replace("0X", "0x"), after: String(before) };
    const subscriptions = await Promise.all([1, 2, 3].map(() => subscribeSse(harness, NEW_ADDRESS_TRANSACTIONS, variables)));
    try {
      let seen = 0;
      for (const seconds of [20, 30]) {
        harness.simulator.resetCounters();
        harness.simulator.advanceClock(seconds);
        const expected = (await addressTransactionsAfter(before)).slice(seen);
        expect(expected.length).toBeGreaterThan(3);
        for (const subscription of subscriptions) {
          const events = await take<AddressEvent>(subscription, expected.length);
          const items = events.map((event) => event.data!.newAddressTransactions);
          expect(items.map((item) => item.transaction.txHash)).toEqual(expected);
          expect(items.every((item) => item.transaction.chain?.chainId === C_CHAIN)).toBe(true);
          expect(items.every((item) => item.transaction.block?.blockNumber === item.transaction.blockNumber)).toBe(true);
          expect(items.some((item) => item.erc20Transfers.length > 0)).toBe(true);
        }
        seen += expected.length;
      }
      // Three subscribers, one poller: in 450 ms at 100 ms, at most 5 or 6 reads.
      harness.simulator.resetCounters();
      await new Promise((resolve) => setTimeout(resolve, 450));
      const reads = upstreamCalls(harness)[ADDRESS_ROUTE] ?? 0;
      expect(reads).toBeGreaterThanOrEqual(1);
      expect(reads).toBeLessThanOrEqual(6);
      expect(harness.gateway.liveCounts()).toEqual({ pollers: 1, subscribers: 3 });
    } finally {
      await Promise.all(subscriptions.map((subscription) => subscription.cancel()));
    }
  });

  it("takes none of the transactions already in the newest block at the first read for new ones", async () => {
    // An address with two or more transactions in the chain's newest block: the first read must
    // see them all as old, whichever of them it lists first.
    let address: string | undefined;
    for (let attempt = 0; attempt < 30 && !address; attempt += 1) {
      const head = cChainHead();
      const page = await simulatorGet<{ transactions: { from: { address: string }; to?: { address: string } }[] }>(
        harness,
        "data",
        `/v1/chains/${C_CHAIN}/blocks/${head}/transactions?pageSize=100`,
      );
      const counts = new Map<string, number>();
      for (const tx of page.transactions) counts.set(tx.from.address, (counts.get(tx.from.address) ?? 0) + 1);
      address = [...counts].find(([, count]) => count >= 2)?.[0];
      if (!address) harness.simulator.advanceClock(2);
    }
    expect(address).toBeDefined();
    const head = cChainHead();
    const fresh = await subscribeSse(harness, NEW_ADDRESS_TRANSACTIONS, { chainId: C_CHAIN, address });
    const resumed = await subscribeSse(harness, NEW_ADDRESS_TRANSACTIONS, {
      chainId: C_CHAIN,
      address,
      after: String(head - 50n),
    });
    try {
      // The resumed stream's first event comes after the shared first read.
      await take<AddressEvent>(resumed, 1);
      let expected: string[] = [];
      for (let step = 0; step < 20 && expected.length === 0; step += 1) {
        harness.simulator.advanceClock(20);
        const list = await simulatorGet<ListAddressTransactionsResponse>(
          harness,
          "data",
          `/v1/chains/${C_CHAIN}/addresses/${address}/transactions?pageSize=100`,
        );
        expected = list.transactions
          .filter((item) => BigInt(item.nativeTransaction.blockNumber) > head)
          .map((item) => item.nativeTransaction.txHash)
          .reverse();
      }
      expect(expected.length).toBeGreaterThan(0);
      const events = await take<AddressEvent>(fresh, expected.length);
      expect(events.map((event) => event.data!.newAddressTransactions.transaction.txHash)).toEqual(expected);
    } finally {
      await Promise.all([fresh.cancel(), resumed.cancel()]);
    }
  });

  it("resumes an address's stream after a block: the transactions of later blocks first, then live, none twice", async () => {
    const head = cChainHead();
    const after = head - 12n;
    const subscription = await subscribeSse(harness, NEW_ADDRESS_TRANSACTIONS, {
      chainId: C_CHAIN,
      address: BUSY_ADDRESS,
      after: String(after),
    });
    try {
      const missed = await addressTransactionsAfter(after);
      expect(missed.length).toBeGreaterThan(2);
      const first = await take<AddressEvent>(subscription, missed.length);
      expect(first.map((event) => event.data!.newAddressTransactions.transaction.txHash)).toEqual(missed);
      harness.simulator.advanceClock(20);
      const all = await addressTransactionsAfter(after);
      expect(all.length).toBeGreaterThan(missed.length);
      const live = await take<AddressEvent>(subscription, all.length - missed.length);
      expect([...first, ...live].map((event) => event.data!.newAddressTransactions.transaction.txHash)).toEqual(all);
    } finally {
      await subscription.cancel();
    }
  });

  /** The P-Chain's transactions in blocks after `after`, oldest first, as the simulator lists them. */
  async function pChainTransactionsAfter(after: bigint): Promise<PChainTransaction[]> {
    const list = await simulatorGet<{ transactions: PChainTransaction[] }>(
      harness,
      "data",
      "/v1/networks/mainnet/blockchains/p-chain/transactions?pageSize=100",
    );
    return list.transactions.filter((tx) => BigInt(tx.blockNumber) > after).reverse();
  }

  it("gives a resuming subscriber what it missed even when the poller's first read fails and is tried again", async () => {
    const head = cChainHead();
    const after = head - 8n;
    harness.simulator.resetCounters();
    harness.simulator.setKnobs({ errorRate: 1, errorStatus: 503, errorRoutes: [ADDRESS_ROUTE] });
    const subscription = await subscribeSse(harness, NEW_ADDRESS_TRANSACTIONS, {
      chainId: C_CHAIN,
      address: BUSY_ADDRESS,
      after: String(after),
    });
    try {
      await until(() => (upstreamCalls(harness)[ADDRESS_ROUTE] ?? 0) >= 1, "a first read that fails");
      harness.simulator.setKnobs({ errorRate: 0 });
      const missed = await addressTransactionsAfter(after);
      expect(missed.length).toBeGreaterThan(0);
      const events = await take<AddressEvent>(subscription, missed.length);
      expect(events.map((event) => event.data!.newAddressTransactions.transaction.txHash)).toEqual(missed);
    } finally {
      harness.simulator.setKnobs({ errorRate: 0, errorRoutes: [] });
      await subscription.cancel();
    }
  });

  it("pushes new P-Chain transactions in order; a txTypes filter shares the poller of the unfiltered stream", async () => {
    const [newest] = (await pChainTransactionsAfter(-1n)).slice(-1);
    const before = BigInt(newest!.blockNumber);
    const all = await subscribeSse(harness, NEW_P_CHAIN_TRANSACTIONS, { after: String(before) });
    const exports = await subscribeSse(harness, NEW_P_CHAIN_TRANSACTIONS, { txTypes: ["EXPORT_TX"], after: String(before) });
    try {
      let seen = 0;
      let seenExports = 0;
      for (const seconds of [300, 600]) {
        harness.simulator.advanceClock(seconds);
        const everything = await pChainTransactionsAfter(before);
        const expected = everything.slice(seen);
        const expectedExports = everything.filter((tx) => tx.txType === "ExportTx").slice(seenExports);
        expect(expected.length).toBeGreaterThan(expectedExports.length);
        expect(expectedExports.length).toBeGreaterThan(0);
        const events = await take<PChainEvent>(all, expected.length);
        expect(events.map((event) => event.data!.newPrimaryNetworkTransactions.txHash)).toEqual(expected.map((tx) => tx.txHash));
        expect(events.every((event) => event.data!.newPrimaryNetworkTransactions.__typename === "PChainTransaction")).toBe(true);
        const exported = await take<PChainEvent>(exports, expectedExports.length);
        expect(exported.map((event) => event.data!.newPrimaryNetworkTransactions.txHash)).toEqual(
          expectedExports.map((tx) => tx.txHash),
        );
        expect(exported.every((event) => event.data!.newPrimaryNetworkTransactions.txType === "EXPORT_TX")).toBe(true);
        seen += expected.length;
        seenExports += expectedExports.length;
      }
      // Two subscribers, one poller: in 450 ms at 100 ms, at most 5 or 6 reads.
      harness.simulator.resetCounters();
      await new Promise((resolve) => setTimeout(resolve, 450));
      const reads = upstreamCalls(harness)[PRIMARY_ROUTE] ?? 0;
      expect(reads).toBeGreaterThanOrEqual(1);
      expect(reads).toBeLessThanOrEqual(6);
    } finally {
      await Promise.all([all.cancel(), exports.cancel()]);
    }
  });

  it("resumes P-Chain transactions after a block height", async () => {
    const recent = await pChainTransactionsAfter(-1n);
    const after = BigInt(recent.at(-4)!.blockNumber) - 1n;
    const subscription = await subscribeSse(harness, NEW_P_CHAIN_TRANSACTIONS, { after: String(after) });
    try {
      const expected = recent.filter((tx) => BigInt(tx.blockNumber) > after);
      const events = await take<PChainEvent>(subscription, expected.length);
      expect(events.map((event) => event.data!.newPrimaryNetworkTransactions.txHash)).toEqual(expected.map((tx) => tx.txHash));
    } finally {
      await subscription.cancel();
    }
  });

  it("pushes new X-Chain transactions in order, by block height, as XChainTransaction records", async () => {
    type XEvent = { newPrimaryNetworkTransactions: { __typename: string; txHash: string } };
    const list = async () =>
      (
        await simulatorGet<{ transactions: { txHash: string; blockHeight?: number }[] }>(
          harness,
          "data",
          "/v1/networks/mainnet/blockchains/x-chain/transactions?pageSize=100",
        )
      ).transactions;
    const before = Math.max(...(await list()).map((tx) => tx.blockHeight ?? -1));
    const subscription = await subscribeSse(
      harness,
      `subscription { newPrimaryNetworkTransactions(network: MAINNET, blockchainId: "x-chain", afterBlock: "${before}") { __typename txHash } }`,
      {},
    );
    try {
      let expected: string[] = [];
      for (let step = 0; step < 20 && expected.length < 2; step += 1) {
        harness.simulator.advanceClock(300);
        expected = (await list())
          .filter((tx) => (tx.blockHeight ?? -1) > before)
          .map((tx) => tx.txHash)
          .reverse();
      }
      expect(expected.length).toBeGreaterThanOrEqual(2);
      const events = await take<XEvent>(subscription, expected.length);
      expect(events.map((event) => event.data!.newPrimaryNetworkTransactions.txHash)).toEqual(expected);
      expect(events.every((event) => event.data!.newPrimaryNetworkTransactions.__typename === "XChainTransaction")).toBe(true);
    } finally {
      await subscription.cancel();
    }
  });

  it("pushes a chain metric's latest point now, then each change of it, then the next interval's point", async () => {
    type MetricEvent = { chainMetricUpdates: { timestamp: number; value: number } };
    const subscription = await subscribeSse(
      harness,
      'subscription { chainMetricUpdates(chainId: "43114", metric: TX_COUNT, interval: HOUR) { timestamp value } }',
      {},
    );
    try {
      const [now] = await take<MetricEvent>(subscription, 1);
      const first = now!.data!.chainMetricUpdates;
      harness.simulator.advanceClock(60);
      const [grown] = await take<MetricEvent>(subscription, 1);
      expect(grown!.data!.chainMetricUpdates.timestamp).toBe(first.timestamp);
      expect(grown!.data!.chainMetricUpdates.value).toBeGreaterThan(first.value);
      harness.simulator.advanceClock(3_600);
      const [next] = await take<MetricEvent>(subscription, 1);
      expect(next!.data!.chainMetricUpdates.timestamp).toBeGreaterThan(first.timestamp);
      const point = await simulatorGet<{ results: { timestamp: number; value: number }[] }>(
        harness,
        "metrics",
        "/v2/chains/43114/metrics/txCount?timeInterval=hour&pageSize=1",
      );
      expect(next!.data!.chainMetricUpdates).toEqual(point.results[0]);
    } finally {
      await subscription.cancel();
    }
  });

  it.each([
    [
      "an address subscription on a malformed chain id",
      NEW_ADDRESS_TRANSACTIONS,
      { chainId: "c-chain", address: BUSY_ADDRESS },
      "chainId",
    ],
    ["a negative resume point", NEW_ADDRESS_TRANSACTIONS, { chainId: C_CHAIN, address: BUSY_ADDRESS, after: "-1" }, "afterBlock"],
    ["a transaction kind the P-Chain does not have", NEW_P_CHAIN_TRANSACTIONS, { txTypes: ["CREATE_ASSET_TX"] }, "txTypes"],
    [
      "an unknown chain",
      'subscription { newPrimaryNetworkTransactions(network: MAINNET, blockchainId: "d-chain") { txHash } }',
      {},
      "blockchainId",
    ],
    [
      "a malformed address filter",
      'subscription { newPrimaryNetworkTransactions(network: MAINNET, blockchainId: "p-chain", addresses: ["avax1!"]) { txHash } }',
      {},
      "addresses",
    ],
    [
      "a metric with both chainId and scope",
      'subscription { chainMetricUpdates(chainId: "43114", scope: TOTAL, metric: TX_COUNT) { value } }',
      {},
      "scope",
    ],
    [
      "a daily-only metric at an hour",
      'subscription { chainMetricUpdates(chainId: "43114", metric: CUMULATIVE_ADDRESSES, interval: HOUR) { value } }',
      {},
      "interval",
    ],
  ])("refuses %s before any upstream call, naming the argument", async (_, query, variables, argument) => {
    harness.simulator.resetCounters();
    const subscription = await subscribeSse(harness, query, variables);
    expect(subscription.refusal?.status).toBe(400);
    expect(subscription.refusal?.errors[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument });
    expect(upstreamCalls(harness)).toEqual({});
  });
});

describe("the gateway's bound on live questions", () => {
  let harness: Harness;
  let served: ServedGateway;
  beforeAll(async () => {
    harness = await startHarness({ LIVE_MAX_POLLERS: "1", RATE_LIMIT_BURST: "100000", TRUST_PROXY: "true" });
    served = await serveGateway(harness);
  });
  afterAll(async () => {
    await served.close();
    await harness.close();
  });

  /** A subscription over a real socket, whose cancel closes it as a client that goes away does. */
  async function openStream(query: string, from = "198.51.100.1"): Promise<ReadableStreamDefaultReader<Uint8Array>> {
    const response = await fetch(`http://127.0.0.1:${served.port}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", "x-forwarded-for": from },
      body: JSON.stringify({ query }),
    });
    return response.body!.getReader();
  }

  it("refuses a subscription to a new question over LIVE_MAX_POLLERS with LIVE_CAPACITY, takes one already asked, and frees the place when its clients leave", async () => {
    const blocks = 'subscription { newBlocks(chainId: "43114") { blockNumber } }';
    // Two callers: a poller no caller holds alone, which is never reclaimed for a third.
    const streams = [await openStream(blocks), await openStream(blocks, "198.51.100.2")];
    await until(() => harness.gateway.liveCounts().subscribers === 2, "both subscriptions to start");
    expect(harness.gateway.liveCounts()).toEqual({ pollers: 1, subscribers: 2 });
    const refused = await subscribeSse(harness, NEW_ADDRESS_TRANSACTIONS, { chainId: C_CHAIN, address: BUSY_ADDRESS });
    expect(refused.refusal?.errors[0]?.extensions).toMatchObject({ code: "LIVE_CAPACITY", maxPollers: 1 });
    expect(harness.gateway.liveCounts()).toEqual({ pollers: 1, subscribers: 2 });

    // The clients gone, the poller stops and its place is free for another question.
    await Promise.all(streams.map((stream) => stream.cancel()));
    await until(() => harness.gateway.liveCounts().pollers === 0, "the poller to stop");
    const address = await openStream(
      `subscription { newAddressTransactions(chainId: "43114", address: "${BUSY_ADDRESS}") { transaction { txHash } } }`,
    );
    await until(() => harness.gateway.liveCounts().subscribers === 1, "the address subscription to start");
    await address.cancel();
  });
});
