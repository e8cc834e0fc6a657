import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { components } from "../../src/upstream/contract/data-api.ts";
import { generateNetwork, type SampleNetwork } from "../../simulator/network/index.ts";
import { startSimulator, type RunningSimulator } from "../../simulator/server.ts";
import { expectContract, getJson } from "./http.ts";
import type { CompleteTransaction } from "../../src/upstream/types.ts";

type Schemas = components["schemas"];
type ListTransactionDetailsResponse = Schemas["ListTransactionDetailsResponse"];
type ListNativeTransactionsResponse = Schemas["ListNativeTransactionsResponse"];
type ErrorBody = Schemas["BadRequest"];

const ADDRESS_ROUTE = "GET /v1/chains/{chainId}/addresses/{address}/transactions";
const BLOCK_ROUTE = "GET /v1/chains/{chainId}/blocks/{blockId}/transactions";
const TRANSACTION_ROUTE = "GET /v1/chains/{chainId}/transactions/{txHash}";
const ZERO_ADDRESS = `0x${"0".repeat(40)}`;

/** Every transaction of a chain, complete, in chain order. */
function allTransactions(network: SampleNetwork, chainId: string): CompleteTransaction[] {
  const chain = network.chain(chainId)!;
  const transactions = network.transactions(chain);
  const found: CompleteTransaction[] = [];
  for (let number = 0; number < chain.blocks.count; number++) {
    const block = transactions.blockTransactions(number)!;
    for (let index = 0; index < block.length; index++) found.push(transactions.transaction(block.at(index)!.txHash)!);
  }
  return found;
}

function touchedBy(transaction: CompleteTransaction): Set<string> {
  const { nativeTransaction: tx } = transaction;
  const parties = [tx.from, tx.to];
  for (const list of [
    transaction.erc20Transfers,
    transaction.erc721Transfers,
    transaction.erc1155Transfers,
    transaction.internalTransactions,
  ]) {
    for (const item of list ?? []) parties.push(item.from, item.to);
  }
  return new Set(parties.map((party) => party.address).filter((address) => address !== ZERO_ADDRESS));
}

describe("sample network: transactions", () => {
  const small = generateNetwork({ blocksPerChain: 400 });

  it("fills each block with txCount transactions whose gas adds up to the block's, in block order, found again by hash", () => {
    const problems: string[] = [];
    const check = (ok: boolean, what: string) => {
      if (!ok && problems.length < 10) problems.push(what);
    };
    for (const chain of small.chains) {
      const transactions = small.transactions(chain);
      const hashes = new Set<string>();
      for (let number = 0; number < chain.blocks.count; number++) {
        const block = chain.blocks.block(number)!;
        const list = transactions.blockTransactions(number)!;
        check(list.length === block.txCount, `${chain.evmChainId}/${number}: txCount`);
        let gas = 0n;
        for (let index = 0; index < list.length; index++) {
          const tx = list.at(index)!;
          const where = `${chain.evmChainId}/${number}/${index}`;
          gas += BigInt(tx.gasUsed);
          check(
            tx.blockIndex === index && tx.blockHash === block.blockHash && tx.blockNumber === block.blockNumber,
            `${where}: place`,
          );
          check(
            tx.blockTimestamp === block.blockTimestamp && tx.blockTimestampMilliseconds === block.blockTimestampMilliseconds,
            `${where}: time`,
          );
          check(BigInt(tx.gasUsed) >= 21_000n && BigInt(tx.gasLimit) >= BigInt(tx.gasUsed), `${where}: gas`);
          check(BigInt(tx.gasPrice) >= BigInt(block.baseFee), `${where}: gas price below the base fee`);
          check(/^0x[0-9a-f]{64}$/.test(tx.txHash) && !hashes.has(tx.txHash), `${where}: hash`);
          hashes.add(tx.txHash);
          const complete = transactions.transaction(tx.txHash.toUpperCase().replace("0X", "0x"));
          const { input, baseFeePerGas, maxFeePerGas, maxPriorityFeePerGas, ...native } = complete!.nativeTransaction;
          check(JSON.stringify(native) === JSON.stringify(tx), `${where}: complete view`);
          check(baseFeePerGas === block.baseFee && input.startsWith("0x"), `${where}: fee details`);
          check(
            (tx.txType === 0) === (maxFeePerGas === undefined && maxPriorityFeePerGas === undefined),
            `${where}: type ${tx.txType}`,
          );
          if (tx.method?.callType === "NATIVE_TRANSFER")
            check(tx.gasUsed === "21000" && input === "0x", `${where}: native transfer`);
        }
        check(gas === BigInt(block.gasUsed), `${chain.evmChainId}/${number}: gas ${gas} != ${block.gasUsed}`);
      }
      // A hash of another chain, or with one digit changed, finds nothing.
      const sample =
        transactions.blockTransactions(chain.blocks.count - 1)!.at(0) ??
        transactions.blockTransactions(chain.blocks.count - 2)!.at(0)!;
      check(
        transactions.transaction(`${sample.txHash.slice(0, -1)}${sample.txHash.endsWith("0") ? "1" : "0"}`) === undefined,
        "changed hash",
      );
      for (const other of small.chains.filter((peer) => peer !== chain)) {
        check(
          small.transactions(other).transaction(sample.txHash) === undefined,
          `${chain.evmChainId} hash on ${other.evmChainId}`,
        );
      }
    }
    expect(problems).toEqual([]);
  });

  it("counts each sender's nonces up from 0 in chain order", () => {
    const next = new Map<string, number>();
    for (const { nativeTransaction: tx } of allTransactions(small, "43114")) {
      const expected = next.get(tx.from.address) ?? 0;
      expect(tx.nonce).toBe(String(expected));
      next.set(tx.from.address, expected + 1);
    }
    expect(next.size).toBeGreaterThan(100);
  });

  it("lists for an address exactly the transactions that touch it, each with only the address's transfers and calls", () => {
    for (const chainId of ["43114", "51289"]) {
      const complete = allTransactions(small, chainId);
      const byAddress = new Map<string, CompleteTransaction[]>();
      for (const transaction of complete) {
        for (const address of touchedBy(transaction)) byAddress.set(address, [...(byAddress.get(address) ?? []), transaction]);
      }
      const transactions = small.transactions(small.chain(chainId)!);
      for (const [address, expected] of byAddress) {
        const listed = transactions.addressTransactions(address, { sortOrder: "asc" });
        const items = Array.from({ length: listed.length }, (_, index) => listed.at(index)!);
        expect(items.map((item) => item.nativeTransaction.txHash)).toEqual(expected.map((view) => view.nativeTransaction.txHash));
        items.forEach((item, index) => {
          const view = expected[index]!;
          const mine = <T extends { from: { address: string }; to: { address: string } }>(list: T[] | undefined) =>
            (list ?? []).filter((entry) => entry.from.address === address || entry.to.address === address);
          expect(item.erc20Transfers ?? []).toEqual(mine(view.erc20Transfers));
          expect(item.erc721Transfers ?? []).toEqual(mine(view.erc721Transfers));
          expect(item.erc1155Transfers ?? []).toEqual(mine(view.erc1155Transfers));
          expect(item.internalTransactions ?? []).toEqual(mine(view.internalTransactions));
        });
      }
      // A few addresses are very busy: a page of 25 of theirs spans many blocks.
      const busiest = [...byAddress.values()].sort((a, b) => b.length - a.length)[0]!;
      expect(busiest.length).toBeGreaterThan(complete.length / 20);
    }
  });

  it("makes every kind of transaction, transfer, call and metadata state the contract describes", () => {
    const network = generateNetwork({ blocksPerChain: 1500 });
    const seen = new Map<string, Set<string>>();
    const see = (what: string, value: unknown) => {
      if (!seen.has(what)) seen.set(what, new Set());
      seen.get(what)!.add(String(value));
    };
    for (const chainId of ["43114", "73310", "51288"]) {
      for (const view of allTransactions(network, chainId)) {
        const tx = view.nativeTransaction;
        see("callType", tx.method?.callType);
        see("txStatus", tx.txStatus);
        see("txType", tx.txType);
        for (const call of view.internalTransactions ?? []) {
          see("internalTxType", call.internalTxType);
          see("isReverted", call.isReverted);
        }
        for (const transfer of view.erc20Transfers ?? []) see("erc20 price", transfer.erc20Token.price !== undefined);
        for (const transfer of view.erc721Transfers ?? []) see("erc721 indexStatus", transfer.erc721Token.metadata.indexStatus);
        for (const transfer of view.erc1155Transfers ?? [])
          see("erc1155 indexStatus", transfer.erc1155Token.metadata.indexStatus);
        see(`${chainId} teleporter`, view.teleporterMessageInfo?.direction ?? "none");
      }
    }
    expect(seen.get("callType")).toEqual(new Set(["NATIVE_TRANSFER", "CONTRACT_CALL", "CONTRACT_CREATION"]));
    expect(seen.get("txStatus")).toEqual(new Set(["0", "1"]));
    expect(seen.get("txType")).toEqual(new Set(["0", "2"]));
    expect(seen.get("internalTxType")).toEqual(
      new Set(["CALL", "CREATE", "CREATE2", "CREATE3", "CALLCODE", "DELEGATECALL", "STATICCALL"]),
    );
    expect(seen.get("isReverted")).toEqual(new Set(["true", "false"]));
    expect(seen.get("erc20 price")).toEqual(new Set(["true", "false"]));
    expect(seen.get("erc721 indexStatus")!.size).toBeGreaterThanOrEqual(8);
    expect(seen.get("erc1155 indexStatus")!.size).toBeGreaterThanOrEqual(3);
    // Interchain messages only on chains with the teleporter feature.
    expect(seen.get("43114 teleporter")).toEqual(new Set(["none", "SOURCE_TRANSACTION", "DESTINATION_TRANSACTION"]));
    expect(seen.get("73310 teleporter")).toEqual(new Set(["none", "SOURCE_TRANSACTION", "DESTINATION_TRANSACTION"]));
    expect(seen.get("51288 teleporter")).toEqual(new Set(["none"]));
  });

  it("is deterministic for a seed and differs between seeds", () => {
    const same = generateNetwork({ blocksPerChain: 400 });
    const other = generateNetwork({ blocksPerChain: 400, seed: "another seed" });
    const at = (network: SampleNetwork) => {
      const chain = network.chain("43114")!;
      const transactions = network.transactions(chain);
      let number = 300;
      while (transactions.blockTransactions(number)!.length === 0) number++;
      return transactions.transaction(transactions.blockTransactions(number)!.at(0)!.txHash);
    };
    expect(at(same)).toEqual(at(small));
    expect(at(other)).not.toEqual(at(small));
  });

  it("keeps start-up free of transactions and builds a chain's index on first use, quickly", () => {
    const started = performance.now();
    const network = generateNetwork({ seed: "timing" });
    const generated = performance.now();
    expect(generated - started).toBeLessThan(1000);
    for (const chain of network.chains) {
      const before = performance.now();
      expect(network.transactions(chain).count).toBe(Number(chain.blocks.latestFirst.at(0)!.cumulativeTransactions));
      expect(performance.now() - before).toBeLessThan(1000);
    }
  });
});

describe("Data API: EVM transaction routes", () => {
  let simulator: RunningSimulator;
  let data: string;
  let busy: string;

  beforeAll(async () => {
    simulator = await startSimulator({ dataPort: 0, metricsPort: 0 });
    data = simulator.dataUrl;
    busy = simulator.network.transactions(simulator.network.chain("43114")!).catalog.accounts[1]!;
  });
  afterAll(() => simulator.close());

  it("lists an address's transactions newest first, 10 by default, paging with tokens", async () => {
    const first = await getJson(`${data}/v1/chains/43114/addresses/${busy}/transactions`);
    expectContract(first, "data", ADDRESS_ROUTE, 200);
    const page = first.body as ListTransactionDetailsResponse;
    expect(page.transactions).toHaveLength(10);
    const all = (await getJson(`${data}/v1/chains/43114/addresses/${busy}/transactions?pageSize=100`))
      .body as ListTransactionDetailsResponse;
    const next = await getJson(
      `${data}/v1/chains/43114/addresses/${busy}/transactions?pageSize=90&pageToken=${page.nextPageToken}`,
    );
    expectContract(next, "data", ADDRESS_ROUTE, 200);
    const hashes = [...page.transactions, ...(next.body as ListTransactionDetailsResponse).transactions].map(
      (item) => item.nativeTransaction.txHash,
    );
    expect(hashes).toEqual(all.transactions.map((item) => item.nativeTransaction.txHash));
    const keys = all.transactions.map(
      (item) => Number(item.nativeTransaction.blockNumber) * 1000 + item.nativeTransaction.blockIndex,
    );
    expect(keys).toEqual([...keys].sort((a, b) => b - a));
    expect(new Set(all.transactions.map((item) => item.nativeTransaction.blockNumber)).size).toBeGreaterThan(50);
  });

  it("filters by block range, startBlock inclusive and endBlock exclusive, in either order", async () => {
    const ascending = await getJson(
      `${data}/v1/chains/43114/addresses/${busy}/transactions?pageSize=100&startBlock=2000&endBlock=2100&sortOrder=asc`,
    );
    expectContract(ascending, "data", ADDRESS_ROUTE, 200);
    const up = (ascending.body as ListTransactionDetailsResponse).transactions.map((item) => item.nativeTransaction);
    expect(up.length).toBeGreaterThan(5);
    expect(up.every((tx) => Number(tx.blockNumber) >= 2000 && Number(tx.blockNumber) < 2100)).toBe(true);
    const down = (
      await getJson(
        `${data}/v1/chains/43114/addresses/${busy}/transactions?pageSize=100&startBlock=2000&endBlock=2100&sortOrder=desc`,
      )
    ).body as ListTransactionDetailsResponse;
    expect(down.nextPageToken).toBeUndefined();
    expect(down.transactions.map((item) => item.nativeTransaction.txHash)).toEqual(up.map((tx) => tx.txHash).reverse());

    const [firstBlock] = up;
    const only = (
      await getJson(
        `${data}/v1/chains/43114/addresses/${busy}/transactions?startBlock=${firstBlock!.blockNumber}&endBlock=${Number(firstBlock!.blockNumber) + 1}`,
      )
    ).body as ListTransactionDetailsResponse;
    expect(only.transactions.every((item) => item.nativeTransaction.blockNumber === firstBlock!.blockNumber)).toBe(true);
    expect(only.transactions.length).toBeGreaterThan(0);

    const fromStart = (
      await getJson(`${data}/v1/chains/43114/addresses/${busy}/transactions?endBlock=300&sortOrder=asc&pageSize=100`)
    ).body as ListTransactionDetailsResponse;
    expect(Number(fromStart.transactions.at(-1)!.nativeTransaction.blockNumber)).toBeLessThan(300);
    const toHead = (await getJson(`${data}/v1/chains/43114/addresses/${busy}/transactions?startBlock=4900`))
      .body as ListTransactionDetailsResponse;
    expect(toHead.transactions.every((item) => Number(item.nativeTransaction.blockNumber) >= 4900)).toBe(true);
  });

  it("answers an address without transactions with an empty list, in any letter case", async () => {
    const empty = await getJson(`${data}/v1/chains/43114/addresses/0x${"ab".repeat(20)}/transactions`);
    expectContract(empty, "data", ADDRESS_ROUTE, 200);
    expect(empty.body).toEqual({ transactions: [] });
    const upper = (await getJson(`${data}/v1/chains/43114/addresses/0x${busy.slice(2).toUpperCase()}/transactions`))
      .body as ListTransactionDetailsResponse;
    const lower = (await getJson(`${data}/v1/chains/43114/addresses/${busy}/transactions`))
      .body as ListTransactionDetailsResponse;
    expect(upper.transactions).toEqual(lower.transactions);
  });

  it.each([
    ["address=0x12", "/v1/chains/43114/addresses/0x12/transactions", /^address must be an EVM address/],
    [
      "startBlock=-1",
      `/v1/chains/43114/addresses/{busy}/transactions?startBlock=-1`,
      /^startBlock must be a non-negative integer$/,
    ],
    ["endBlock=2.5", `/v1/chains/43114/addresses/{busy}/transactions?endBlock=2.5`, /^endBlock must be a non-negative integer$/],
    [
      "startBlock=7&endBlock=7",
      `/v1/chains/43114/addresses/{busy}/transactions?startBlock=7&endBlock=7`,
      /^startBlock must be less than endBlock$/,
    ],
    ["startBlock=ten", `/v1/chains/43114/addresses/{busy}/transactions?startBlock=ten`, /^startBlock must be a number/],
    ["pageSize=0", `/v1/chains/43114/addresses/{busy}/transactions?pageSize=0`, /^pageSize must not be less than 1$/],
    [
      "sortOrder=up",
      `/v1/chains/43114/addresses/{busy}/transactions?sortOrder=up`,
      /^sortOrder must be one of the following values: asc, desc$/,
    ],
  ])("refuses %s on the address route", async (_, path, message) => {
    const response = await getJson(`${data}${path.replace("{busy}", busy)}`);
    expectContract(response, "data", ADDRESS_ROUTE, 400);
    expect((response.body as ErrorBody).message).toMatch(message);
  });

  it("ties page tokens to the address, the range and the order", async () => {
    const { nextPageToken } = (await getJson(`${data}/v1/chains/43114/addresses/${busy}/transactions?startBlock=100`))
      .body as ListTransactionDetailsResponse;
    expect(
      (await getJson(`${data}/v1/chains/43114/addresses/${busy}/transactions?startBlock=100&pageToken=${nextPageToken}`)).status,
    ).toBe(200);
    const other = simulator.network.transactions(simulator.network.chain("43114")!).catalog.accounts[2]!;
    for (const path of [
      `/v1/chains/43114/addresses/${busy}/transactions?startBlock=101&pageToken=${nextPageToken}`,
      `/v1/chains/43114/addresses/${busy}/transactions?startBlock=100&sortOrder=asc&pageToken=${nextPageToken}`,
      `/v1/chains/43114/addresses/${other}/transactions?startBlock=100&pageToken=${nextPageToken}`,
    ]) {
      const response = await getJson(`${data}${path}`);
      expectContract(response, "data", ADDRESS_ROUTE, 400);
      expect((response.body as ErrorBody).message).toMatch(/^pageToken /);
    }
  });

  it("answers 404 for the transactions of an unknown chain", async () => {
    expectContract(await getJson(`${data}/v1/chains/999/addresses/${busy}/transactions`), "data", ADDRESS_ROUTE, 404);
    expectContract(await getJson(`${data}/v1/chains/999/blocks/1/transactions`), "data", BLOCK_ROUTE, 404);
    expectContract(await getJson(`${data}/v1/chains/999/transactions/0x${"1".repeat(64)}`), "data", TRANSACTION_ROUTE, 404);
  });

  it("lists a block's transactions: none by default, then in block order by number or hash", async () => {
    const block = simulator.network.chain("73310")!.blocks.block(3000)!;
    const byDefault = await getJson(`${data}/v1/chains/73310/blocks/3000/transactions`);
    expectContract(byDefault, "data", BLOCK_ROUTE, 200);
    expect((byDefault.body as ListNativeTransactionsResponse).transactions).toEqual([]);
    expect(typeof (byDefault.body as ListNativeTransactionsResponse).nextPageToken).toBe(
      block.txCount > 0 ? "string" : "undefined",
    );

    const byNumber = await getJson(`${data}/v1/chains/73310/blocks/3000/transactions?pageSize=100`);
    expectContract(byNumber, "data", BLOCK_ROUTE, 200);
    const body = byNumber.body as ListNativeTransactionsResponse;
    expect(body.transactions.map((tx) => tx.blockIndex)).toEqual([...Array(block.txCount).keys()]);
    expect(body).not.toHaveProperty("nextPageToken");
    const byHash = (
      await getJson(
        `${data}/v1/chains/73310/blocks/${block.blockHash.toUpperCase().replace("0X", "0x")}/transactions?pageSize=100`,
      )
    ).body;
    expect(byHash).toEqual(body);
  });

  it.each([
    ["pageSize=101", "/v1/chains/43114/blocks/10/transactions?pageSize=101", 400],
    ["a block id that is neither number nor hash", "/v1/chains/43114/blocks/latest/transactions", 400],
    ["a block past the head", "/v1/chains/43114/blocks/5000/transactions", 404],
    ["an unknown block hash", `/v1/chains/43114/blocks/0x${"12".repeat(32)}/transactions`, 404],
  ])("answers %s on the block route with its error", async (_, path, status) => {
    expectContract(await getJson(`${data}${path}`), "data", BLOCK_ROUTE, status);
  });

  it("answers the complete view of any transaction, valid against the contract", async () => {
    const chain = simulator.network.chain("43114")!;
    const transactions = simulator.network.transactions(chain);
    let checked = 0;
    for (let number = 4000; number < 4060; number++) {
      const block = transactions.blockTransactions(number)!;
      for (let index = 0; index < block.length; index++) {
        const response = await getJson(`${data}/v1/chains/43114/transactions/${block.at(index)!.txHash}`);
        expectContract(response, "data", TRANSACTION_ROUTE, 200);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(300);
    // Address pages of a few addresses hold transfers of every kind.
    for (const address of transactions.catalog.accounts.slice(0, 4)) {
      let path = `/v1/chains/43114/addresses/${address}/transactions?pageSize=100`;
      for (let page = 0; page < 3; page++) {
        const response = await getJson(`${data}${path}`);
        expectContract(response, "data", ADDRESS_ROUTE, 200);
        path = `/v1/chains/43114/addresses/${address}/transactions?pageSize=100&pageToken=${(response.body as ListTransactionDetailsResponse).nextPageToken}`;
      }
    }
  });

  it.each([
    ["a malformed hash", "/v1/chains/43114/transactions/0x1234", 400],
    ["an unknown hash", `/v1/chains/43114/transactions/0x${"ab".repeat(32)}`, 404],
  ])("answers %s on the transaction route with its error", async (_, path, status) => {
    const response = await getJson(`${data}${path}`);
    expectContract(response, "data", TRANSACTION_ROUTE, status);
    if (status === 400) expect((response.body as ErrorBody).message).toMatch(/^txHash /);
  });

  it("answers 404 for the hash of another chain's transaction", async () => {
    const fuji = simulator.network.transactions(simulator.network.chain("43113")!);
    let number = 100;
    while (fuji.blockTransactions(number)!.length === 0) number++;
    const hash = fuji.blockTransactions(number)!.at(0)!.txHash;
    expectContract(await getJson(`${data}/v1/chains/43113/transactions/${hash}`), "data", TRANSACTION_ROUTE, 200);
    expectContract(await getJson(`${data}/v1/chains/43114/transactions/${hash}`), "data", TRANSACTION_ROUTE, 404);
  });
});
