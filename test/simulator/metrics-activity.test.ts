/**
 * The metrics read transactions through `ChainTransactions.blockSummaries`, not through the records
 * the Data API serves. On a network of a few days, every summary and every activity metric must be
 * what the records (the complete view of each transaction) give.
 */
import { describe, expect, it } from "vitest";
import { generateNetwork, type SimulatedChain } from "../../simulator/network/index.ts";
import { bridged, holders, openingBalances } from "../../simulator/network/metrics/balances.ts";
import { AddressBook, type Erc20Move } from "../../simulator/network/metrics/chain-activity.ts";
import { NetworkMetrics } from "../../simulator/network/metrics/index.ts";
import { intervalStart } from "../../simulator/network/metrics/time.ts";
import type { ChainMetricName, CompleteTransaction, MetricsTimeInterval } from "../../src/upstream/types.ts";

const C_CHAIN = "43114";
const ZERO_ADDRESS = `0x${"0".repeat(40)}`;
const CREATE_CALLS = new Set(["CREATE", "CREATE2", "CREATE3"]);

// 240 blocks 36 minutes apart: six days on each chain.
const network = generateNetwork({ blocksPerChain: 240 });

/** Every transaction of a chain as the Data API serves it, with its block's timestamp, in chain order. */
function* records(chain: SimulatedChain): Generator<{ timestamp: number; view: CompleteTransaction }> {
  const transactions = network.transactions(chain);
  for (let number = 0; number < chain.blocks.count; number++) {
    const list = transactions.blockTransactions(number)!;
    for (let index = 0; index < list.length; index++) {
      yield { timestamp: chain.blocks.blockTimestamp(number), view: transactions.transaction(list.at(index)!.txHash)! };
    }
  }
}

const tokenTransfersOf = (view: CompleteTransaction) => [
  ...(view.erc20Transfers ?? []).map((item) => ({
    standard: "ERC-20",
    token: item.erc20Token.address,
    from: item.from.address,
    to: item.to.address,
    value: item.value,
  })),
  ...(view.erc721Transfers ?? []).map((item) => ({
    standard: "ERC-721",
    token: item.erc721Token.address,
    from: item.from.address,
    to: item.to.address,
  })),
  ...(view.erc1155Transfers ?? []).map((item) => ({
    standard: "ERC-1155",
    token: item.erc1155Token.address,
    from: item.from.address,
    to: item.to.address,
    value: item.value,
  })),
];

interface RecordedInterval {
  participants: Set<string>;
  senders: Set<string>;
  deployers: Set<string>;
  contracts: number;
  gasPrices: bigint[];
  fees: bigint;
}

/** Mints come from the zero address, which is nobody's. */
function add(set: Set<string>, address: string): void {
  if (address !== ZERO_ADDRESS) set.add(address.toLowerCase());
}

/** The activity of some chains per interval, read from the records of their transactions. */
function recordedActivity(chains: readonly SimulatedChain[], interval: MetricsTimeInterval): Map<number, RecordedInterval> {
  const intervals = new Map<number, RecordedInterval>();
  for (const chain of chains) {
    for (const { timestamp, view } of records(chain)) {
      const start = intervalStart(timestamp, interval);
      let found = intervals.get(start);
      if (found === undefined) {
        found = { participants: new Set(), senders: new Set(), deployers: new Set(), contracts: 0, gasPrices: [], fees: 0n };
        intervals.set(start, found);
      }
      const tx = view.nativeTransaction;
      for (const item of [{ from: tx.from.address, to: tx.to.address }, ...tokenTransfersOf(view)]) {
        add(found.participants, item.from);
        add(found.participants, item.to);
        add(found.senders, item.from);
      }
      found.gasPrices.push(BigInt(tx.gasPrice));
      found.fees += BigInt(tx.gasUsed) * BigInt(tx.gasPrice);
      for (const call of view.internalTransactions ?? []) {
        if (!CREATE_CALLS.has(call.internalTxType) || call.isReverted) continue;
        found.contracts++;
        add(found.deployers, call.from.address);
      }
    }
  }
  return intervals;
}

/** A metric's values, oldest first, over the given interval starts. */
function recordedValues(
  metric: ChainMetricName,
  starts: readonly number[],
  intervals: ReadonlyMap<number, RecordedInterval>,
): (number | bigint)[] {
  const at = starts.map((start) => intervals.get(start));
  const union = (pick: (found: RecordedInterval) => Set<string>) => {
    const seen = new Set<string>();
    return at.map((found) => {
      for (const address of found ? pick(found) : []) seen.add(address);
      return seen.size;
    });
  };
  let contractsBefore = 0;
  switch (metric) {
    case "activeAddresses":
      return at.map((found) => found?.participants.size ?? 0);
    case "activeSenders":
      return at.map((found) => found?.senders.size ?? 0);
    case "cumulativeAddresses":
      return union((found) => found.participants);
    case "contracts":
      return at.map((found) => found?.contracts ?? 0);
    case "cumulativeContracts":
      return at.map((found) => {
        const before = contractsBefore;
        contractsBefore += found?.contracts ?? 0;
        return before;
      });
    case "deployers":
      return at.map((found) => found?.deployers.size ?? 0);
    case "cumulativeDeployers":
      return union((found) => found.deployers);
    case "avgGasPrice":
      return at.map((found) =>
        found?.gasPrices.length ? Number(found.gasPrices.reduce((a, b) => a + b, 0n)) / found.gasPrices.length : 0,
      );
    // Wei amounts, exact: the routes send them with every digit.
    case "maxGasPrice":
      return at.map((found) => found?.gasPrices.reduce((a, b) => (b > a ? b : a), 0n) ?? 0n);
    case "feesPaid":
      return at.map((found) => found?.fees ?? 0n);
    default:
      throw new Error(`no recorded values for ${metric}`);
  }
}

describe("transaction summaries", () => {
  it("say of every transaction what its complete view says", () => {
    let compared = 0;
    for (const chain of network.chains) {
      const transactions = network.transactions(chain);
      for (let number = 0; number < chain.blocks.count; number++) {
        const list = transactions.blockTransactions(number)!;
        const summaries = transactions.blockSummaries(number)!;
        expect(summaries).toHaveLength(list.length);
        summaries.forEach((summary, index) => {
          const view = transactions.transaction(list.at(index)!.txHash)!;
          const tx = view.nativeTransaction;
          expect(summary).toEqual({
            from: tx.from.address,
            to: tx.to.address,
            gasUsed: Number(tx.gasUsed),
            gasPrice: BigInt(tx.gasPrice),
            tokenTransfers: tokenTransfersOf(view),
            contractCreations: (view.internalTransactions ?? [])
              .filter((call) => CREATE_CALLS.has(call.internalTxType))
              .map((call) => ({ deployer: call.from.address, reverted: call.isReverted })),
          });
          compared++;
        });
      }
      expect(transactions.blockSummaries(chain.blocks.count)).toBeUndefined();
    }
    expect(compared).toBeGreaterThan(5_000);
  });
});

describe("activity metrics", () => {
  const daily: ChainMetricName[] = [
    "activeAddresses",
    "activeSenders",
    "cumulativeAddresses",
    "contracts",
    "cumulativeContracts",
    "deployers",
    "cumulativeDeployers",
    "avgGasPrice",
    "maxGasPrice",
    "feesPaid",
  ];
  const scopes = [
    [C_CHAIN, [network.chain(C_CHAIN)!]],
    ["mainnet", network.chainsOn("mainnet")],
    ["total", network.chains],
  ] as const;

  it.each(scopes)("of %s equal what the transaction records give, day by day", async (scope, chains) => {
    const metrics = new NetworkMetrics(network);
    const recorded = recordedActivity(chains, "day");
    for (const metric of daily) {
      const series = [...(await metrics.chainMetric(scope, chains, metric, "day"))].reverse();
      expect(series.length).toBeGreaterThanOrEqual(5);
      const starts = series.map((point) => point.timestamp);
      expect(
        series.map((point) => point.value),
        metric,
      ).toEqual(recordedValues(metric, starts, recorded));
    }
    expect(recordedValues("contracts", [...recorded.keys()], recorded).some((count) => count > 0)).toBe(true);
  });

  it.each(["hour", "week", "month"] as const)("count addresses and senders per %s as the records do", async (interval) => {
    const metrics = new NetworkMetrics(network);
    const recorded = recordedActivity(network.chains, interval);
    for (const metric of ["activeAddresses", "activeSenders"] as const) {
      const series = [...(await metrics.chainMetric("total", network.chains, metric, interval))].reverse();
      expect(series.map((point) => point.value)).toEqual(
        recordedValues(
          metric,
          series.map((point) => point.timestamp),
          recorded,
        ),
      );
    }
  });

  it("list each token's holders and the BTC.b bridgers as the records' ERC-20 transfers give them", async () => {
    const metrics = new NetworkMetrics(network);
    const chain = network.chain(C_CHAIN)!;
    const book = new AddressBook();
    const moves = new Map<string, Erc20Move[]>();
    for (const { timestamp, view } of records(chain)) {
      for (const transfer of view.erc20Transfers ?? []) {
        const token = transfer.erc20Token.address.toLowerCase();
        if (!moves.has(token)) moves.set(token, []);
        moves.get(token)!.push({
          timestamp,
          from: book.id(transfer.from.address),
          to: book.id(transfer.to.address),
          value: BigInt(transfer.value),
        });
      }
    }
    const middle = chain.blocks.blockTimestamp(chain.blocks.count >> 1);
    const queries = [
      { threshold: 0n, start: undefined, end: undefined },
      { threshold: 10n ** 6n, start: middle - 86_400, end: middle },
    ];
    for (const token of network.transactions(chain).catalog.erc20) {
      const tokenMoves = moves.get(token.address) ?? [];
      expect(tokenMoves.length, token.symbol).toBeGreaterThan(0);
      for (const query of queries) {
        expect(await metrics.tokenHolders(chain, token.address, query)).toEqual(
          holders(tokenMoves, openingBalances(tokenMoves), query, book),
        );
      }
      if (token.symbol === "BTC.b")
        expect(await metrics.bridgedBtcb(chain, 0n)).toEqual(bridged(openingBalances(tokenMoves), 0n, book));
    }
  });
});
