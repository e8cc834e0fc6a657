import { bls12_381 } from "@noble/curves/bls12-381";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  pChainTransactionTypeValues,
  xChainTransactionTypeValues,
  type components,
} from "../../src/upstream/contract/data-api.ts";
import { generateNetwork } from "../../simulator/network/index.ts";
import { PRIMARY_CHAIN_IDS, type TransactionFilter } from "../../simulator/network/primary-network/index.ts";
import type { CTransaction, PTransaction } from "../../simulator/network/primary-network/model.ts";
import { PAGE_UTXO_THRESHOLD } from "../../simulator/routes/data/primary-network.ts";
import { startSimulator, type RunningSimulator } from "../../simulator/server.ts";
import { expectContract, getJson, postJson, type JsonResponse } from "./http.ts";

type Schemas = components["schemas"];
type Transaction =
  | Schemas["PChainTransaction"]
  | Schemas["XChainNonLinearTransaction"]
  | Schemas["XChainLinearTransaction"]
  | Schemas["CChainExportTransaction"]
  | Schemas["CChainImportTransaction"];
type TransactionList = { transactions: Transaction[]; nextPageToken?: string; chainInfo: Schemas["PrimaryNetworkChainInfo"] };
type UtxoList = {
  utxos: (Schemas["PChainUtxo"] | Schemas["Utxo"])[];
  nextPageToken?: string;
  chainInfo: Schemas["PrimaryNetworkChainInfo"];
};
type Block = Schemas["GetPrimaryNetworkBlockResponse"];
type ErrorBody = Schemas["BadRequest"];

const TRANSACTIONS = "GET /v1/networks/{network}/blockchains/{blockchainId}/transactions";
const TRANSACTION = "GET /v1/networks/{network}/blockchains/{blockchainId}/transactions/{txHash}";
const BLOCK = "GET /v1/networks/{network}/blockchains/{blockchainId}/blocks/{blockId}";
const UTXOS = "POST /v1/networks/{network}/blockchains/{blockchainId}/utxos";
const VERTICES = "GET /v1/networks/{network}/blockchains/{blockchainId}/vertices:listByHeight";
const VERTEX = "GET /v1/networks/{network}/blockchains/{blockchainId}/vertices/{vertexHash}";
const L1_VALIDATORS = "GET /v1/networks/{network}/l1Validators";
const CHAINS = ["p-chain", "x-chain", "c-chain"] as const;
const DAY = 86_400;
const EVERY_TRANSACTION: TransactionFilter = {
  addresses: undefined,
  txTypes: undefined,
  startTimestamp: undefined,
  endTimestamp: undefined,
  l1ValidationId: undefined,
  sortOrder: "asc",
};

let simulator: RunningSimulator;
let data: string;
/** Every transaction of each chain of mainnet, read through the list route, newest first. */
const history = new Map<string, Transaction[]>();

async function allTransactions(network: string, chain: string): Promise<Transaction[]> {
  const found: Transaction[] = [];
  let token: string | undefined;
  do {
    const response = await getJson(
      `${data}/v1/networks/${network}/blockchains/${chain}/transactions?pageSize=100${token ? `&pageToken=${token}` : ""}`,
    );
    expectContract(response, "data", TRANSACTIONS, 200);
    const body = response.body as TransactionList;
    found.push(...body.transactions);
    token = body.nextPageToken;
  } while (token);
  return found;
}

function utxosOf(tx: Transaction) {
  return [...("consumedUtxos" in tx ? tx.consumedUtxos : []), ...("emittedUtxos" in tx ? tx.emittedUtxos : [])];
}

function creatorOf(utxo: Schemas["PChainUtxo"] | Schemas["Utxo"]): string {
  return "txHash" in utxo ? utxo.txHash : utxo.creationTxHash;
}

beforeAll(async () => {
  simulator = await startSimulator({ dataPort: 0, metricsPort: 0 });
  data = simulator.dataUrl;
  for (const chain of CHAINS) history.set(chain, await allTransactions("mainnet", chain));
});

afterAll(() => simulator.close());

describe("primary network: the sample history", () => {
  it("generates both networks' primary networks quickly, on first use", () => {
    const started = performance.now();
    const network = generateNetwork({ seed: "primary-network timing" });
    const generated = performance.now();
    const mainnet = network.primaryNetwork("mainnet");
    const fuji = network.primaryNetwork("fuji");
    const done = performance.now();
    expect(network.primaryNetwork("mainnet")).toBe(mainnet);
    expect(done - generated).toBeLessThan(1000);
    expect(generated - started).toBeLessThan(1000);
    expect(mainnet.chainIds).toEqual(PRIMARY_CHAIN_IDS.mainnet);
    expect(fuji.wallets[0]!.address).toMatch(/^fuji1/);
  });

  it("holds transactions of every type of the contract", async () => {
    for (const network of ["mainnet", "fuji"]) {
      const types = async (chain: string) =>
        new Set((network === "mainnet" ? history.get(chain)! : await allTransactions(network, chain)).map((tx) => tx.txType));
      expect([...(await types("p-chain"))].sort()).toEqual([...pChainTransactionTypeValues].sort());
      expect([...(await types("x-chain"))].sort()).toEqual(
        xChainTransactionTypeValues.filter((type) => type !== "UNKNOWN").sort(),
      );
      expect([...(await types("c-chain"))].sort()).toEqual(["ExportTx", "ImportTx"]);
    }
  });

  it("creates every UTXO by a transaction, spends it at most once and later, on the chain it names", async () => {
    const ids = PRIMARY_CHAIN_IDS.mainnet;
    const chainOfId = new Map(CHAINS.map((chain, index) => [[ids.P, ids.X, ids.C][index]!, chain]));
    const byHash = new Map<string, { chain: string; tx: Transaction }>();
    for (const [chain, transactions] of history)
      for (const tx of transactions) byHash.set(`${chain}:${tx.txHash}`, { chain, tx });
    const problems: string[] = [];
    const check = (ok: boolean, what: string) => {
      if (!ok && problems.length < 10) problems.push(what);
    };
    for (const [chain, transactions] of history) {
      for (const tx of transactions) {
        for (const utxo of "emittedUtxos" in tx ? tx.emittedUtxos : []) {
          check(creatorOf(utxo) === tx.txHash, `${tx.txHash}: emitted ${utxo.utxoId} names another creator`);
          check(chainOfId.get(utxo.createdOnChainId) === chain, `${utxo.utxoId}: created on the wrong chain`);
        }
        for (const utxo of "consumedUtxos" in tx ? tx.consumedUtxos : []) {
          check(utxo.consumingTxHash === tx.txHash, `${tx.txHash}: consumed ${utxo.utxoId} names another spender`);
          check(chainOfId.get(utxo.consumedOnChainId) === chain, `${utxo.utxoId}: spent on the wrong chain`);
          const creator = byHash.get(`${chainOfId.get(utxo.createdOnChainId)}:${creatorOf(utxo)}`);
          check(creator !== undefined, `${utxo.utxoId}: its creating transaction is unknown`);
          const created = creator && "emittedUtxos" in creator.tx ? creator.tx.emittedUtxos.map((u) => u.utxoId) : [];
          check(created.includes(utxo.utxoId), `${utxo.utxoId}: not among its creator's outputs`);
        }
        for (const utxo of utxosOf(tx)) {
          const created = "blockTimestamp" in utxo ? utxo.blockTimestamp : utxo.timestamp;
          const spent = "txHash" in utxo ? utxo.consumingBlockTimestamp : utxo.consumingTxTimestamp;
          check(spent === undefined || spent >= created, `${utxo.utxoId}: spent before it was created`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it("puts every transaction in a block (or an X-Chain vertex) that lists it", async () => {
    for (const chain of CHAINS) {
      for (const tx of history.get(chain)!.filter((_, index) => index % 7 === 0)) {
        if ("vertices" in tx) {
          const vertex = await getJson(`${data}/v1/networks/mainnet/blockchains/x-chain/vertices/${tx.vertices[0]!.hash}`);
          expect((vertex.body as Schemas["XChainVertex"]).transactions).toContain(tx.txHash);
          continue;
        }
        const height = "blockNumber" in tx ? tx.blockNumber : String(tx.blockHeight);
        const response = await getJson(`${data}/v1/networks/mainnet/blockchains/${chain}/blocks/${height}`);
        expectContract(response, "data", BLOCK, 200);
        const block = response.body as Block;
        expect(block.blockHash).toBe(tx.blockHash);
        expect(block.transactions).toContain(tx.txHash);
        expect(block.txCount).toBe(block.transactions.length);
      }
    }
    const cChain = simulator.network.chain("43114")!.blocks;
    for (const tx of history.get("c-chain")!) {
      if (!("blockHeight" in tx)) continue;
      expect(cChain.block(tx.blockHeight)!.blockHash).toBe(tx.blockHash);
    }
  });

  it("spreads each network's history over the 40 days up to the head, with C-Chain transactions where the C-Chain has blocks", () => {
    const networks = [
      ["default", simulator.network],
      ["400 blocks a chain", generateNetwork({ blocksPerChain: 400 })],
      ["2 s blocks", generateNetwork({ blockIntervalSeconds: 2 })],
    ] as const;
    for (const [label, network] of networks) {
      const { headTime } = network.options;
      for (const name of ["mainnet", "fuji"] as const) {
        const primary = network.primaryNetwork(name);
        const cBlocks = network.chain(PRIMARY_CHAIN_IDS[name].C)!.blocks;
        const where = `${name}, ${label}`;
        const days = new Map<number, number>();
        const pChain = primary.transactions("P", EVERY_TRANSACTION);
        for (const tx of pChain) {
          expect(tx.timestamp, where).toBeGreaterThanOrEqual(headTime - 40 * DAY);
          expect(tx.timestamp, where).toBeLessThanOrEqual(headTime);
          const day = Math.floor((headTime - tx.timestamp) / DAY);
          days.set(day, (days.get(day) ?? 0) + 1);
        }
        expect(days.size, where).toBeGreaterThanOrEqual(30);
        // The C-Chain's window may be hours (2 s blocks): the history crowds into it, never more than a third.
        expect(Math.max(...days.values()), where).toBeLessThan(pChain.length / 3);
        for (const tx of primary.transactions("C", EVERY_TRANSACTION) as CTransaction[]) {
          expect(tx.timestamp, where).toBe(cBlocks.blockTimestamp(tx.blockNumber));
        }
      }
    }
  });

  it("rewards each staking period that has ended, when it ends", () => {
    const { headTime } = simulator.network.options;
    for (const name of ["mainnet", "fuji"] as const) {
      const primary = simulator.network.primaryNetwork(name);
      const staking = (primary.transactions("P", EVERY_TRANSACTION) as PTransaction[]).filter((tx) =>
        /^Add(Permissionless)?(Validator|Delegator)Tx$/.test(tx.txType),
      );
      let rewarded = 0;
      for (const tx of staking) {
        const { startTimestamp, endTimestamp, rewardTxHash } = tx.fields;
        expect(startTimestamp!).toBeGreaterThan(tx.timestamp);
        expect(endTimestamp! - startTimestamp!).toBeGreaterThanOrEqual(DAY);
        if (endTimestamp! > headTime) {
          expect(rewardTxHash).toBeUndefined();
          continue;
        }
        const reward = primary.transaction("P", rewardTxHash!)!;
        expect(reward.txType).toBe("RewardValidatorTx");
        expect(reward.timestamp - endTimestamp!).toBeGreaterThanOrEqual(0);
        expect(reward.timestamp - endTimestamp!).toBeLessThan(3600);
        rewarded++;
      }
      expect(rewarded).toBeGreaterThan(10);
    }
  });

  it("keeps Fuji's L1s able to sign at the default quorum with a buffer, while mainnet's L1 cannot", () => {
    const activeShare = (name: "mainnet" | "fuji", subnetId: string) => {
      const members = simulator.network.primaryNetwork(name).l1Validators.filter((validator) => validator.subnetId === subnetId);
      const weight = (list: typeof members) => list.reduce((total, validator) => total + validator.weight, 0);
      return weight(members.filter((validator) => validator.remainingBalance > 0)) / weight(members);
    };
    const subnets = (name: "mainnet" | "fuji") =>
      new Set(simulator.network.primaryNetwork(name).l1Validators.map((validator) => validator.subnetId));
    for (const subnetId of subnets("fuji")) expect(activeShare("fuji", subnetId)).toBeGreaterThanOrEqual(0.85);
    const [first] = simulator.network
      .primaryNetwork("mainnet")
      .transactions("P", { ...EVERY_TRANSACTION, txTypes: new Set(["ConvertSubnetToL1Tx"]) });
    expect(activeShare("mainnet", (first as PTransaction).fields.subnetId!)).toBeLessThan(0.6);
  });

  it("answers the same for the same seed and differently for another", async () => {
    const [same, other] = await Promise.all([startSimulator({}), startSimulator({ seed: "another primary network" })]);
    try {
      const path = "/v1/networks/mainnet/blockchains/p-chain/transactions?pageSize=20";
      const ours = await (await fetch(`${data}${path}`)).text();
      expect(await (await fetch(`${same.dataUrl}${path}`)).text()).toBe(ours);
      expect(await (await fetch(`${other.dataUrl}${path}`)).text()).not.toBe(ours);
    } finally {
      await Promise.all([same.close(), other.close()]);
    }
  });
});

describe("primary network: latest transactions", () => {
  it("ends a page early when its UTXOs pass the threshold, with a token that continues without gap", async () => {
    const first = await getJson(`${data}/v1/networks/mainnet/blockchains/p-chain/transactions?pageSize=100`);
    const body = first.body as TransactionList;
    expect(body.transactions.length).toBeLessThan(100);
    expect(body.nextPageToken).toBeTypeOf("string");
    const utxos = body.transactions.reduce((sum, tx) => sum + utxosOf(tx).length, 0);
    expect(utxos).toBeLessThanOrEqual(PAGE_UTXO_THRESHOLD);
    expect(utxos + utxosOf(history.get("p-chain")![body.transactions.length]!).length).toBeGreaterThan(PAGE_UTXO_THRESHOLD);
    expect(body.chainInfo).toEqual({ chainName: "p-chain", network: "mainnet" });
    const next = (
      await getJson(`${data}/v1/networks/mainnet/blockchains/p-chain/transactions?pageSize=5&pageToken=${body.nextPageToken}`)
    ).body as TransactionList;
    expect(next.transactions.map((tx) => tx.txHash)).toEqual(
      history
        .get("p-chain")!
        .slice(body.transactions.length, body.transactions.length + 5)
        .map((tx) => tx.txHash),
    );
  });

  it("filters by address (with or without its chain letter), type and time, and sorts oldest first on request", async () => {
    const wallet = simulator.network.primaryNetwork("mainnet").wallets[0]!.address;
    const base = `${data}/v1/networks/mainnet/blockchains/p-chain/transactions?pageSize=100`;
    const bare = (await getJson(`${base}&addresses=${wallet}`)).body as TransactionList;
    const prefixed = (await getJson(`${base}&addresses=P-${wallet}`)).body as TransactionList;
    expect(prefixed.transactions).toEqual(bare.transactions);
    expect(bare.transactions.length).toBeGreaterThan(10);
    for (const tx of bare.transactions) {
      const named = "blockTimestamp" in tx ? [...(tx.rewardAddresses ?? []), ...(tx.subnetOwnershipInfo?.addresses ?? [])] : [];
      const touched = utxosOf(tx).some((utxo) => utxo.addresses.includes(wallet)) || named.includes(wallet);
      expect(touched, tx.txHash).toBeTruthy();
    }
    const some = bare.transactions[5]!;
    const timed = (
      await getJson(
        `${base}&addresses=${wallet}&txTypes=BaseTx,ImportTx&endTimestamp=${(some as Schemas["PChainTransaction"]).blockTimestamp}`,
      )
    ).body as TransactionList;
    expect(timed.transactions.length).toBeGreaterThan(0);
    for (const tx of timed.transactions) {
      expect(["BaseTx", "ImportTx"]).toContain(tx.txType);
      expect((tx as Schemas["PChainTransaction"]).blockTimestamp).toBeLessThanOrEqual(
        (some as Schemas["PChainTransaction"]).blockTimestamp,
      );
    }
    const ascending = (await getJson(`${base}&addresses=${wallet}&sortOrder=asc`)).body as TransactionList;
    expect(ascending.transactions[0]!.txType).toBe("BaseTx");
    expect(ascending.transactions[0]!.txHash).toBe(history.get("p-chain")!.at(-1)!.txHash);
  });

  it("finds every transaction of an L1 validation, also by type, without addresses", async () => {
    const validator = simulator.network.primaryNetwork("mainnet").l1Validators[0]!;
    const base = `${data}/v1/networks/mainnet/blockchains/p-chain/transactions?l1ValidationId=${validator.validationId}`;
    const response = await getJson(base);
    expectContract(response, "data", TRANSACTIONS, 200);
    const found = (response.body as TransactionList).transactions as Schemas["PChainTransaction"][];
    expect(found.length).toBeGreaterThan(0);
    for (const tx of found)
      expect(tx.l1ValidatorDetails?.map((details) => details.validationId)).toContain(validator.validationId);
    expect(found.at(-1)!.txType).toBe("ConvertSubnetToL1Tx");
    const byHex = (
      await getJson(`${data}/v1/networks/mainnet/blockchains/p-chain/transactions?l1ValidationId=${validator.validationIdHex}`)
    ).body;
    expect(byHex).toEqual(response.body);
    const typed = await getJson(`${base}&txTypes=ConvertSubnetToL1Tx`);
    expect((typed.body as TransactionList).transactions.map((tx) => tx.txType)).toEqual(["ConvertSubnetToL1Tx"]);
  });

  it.each([
    ["p-chain", "txTypes=BaseTx", "txTypes can only be used together with addresses"],
    ["x-chain", "startTimestamp=1", "startTimestamp can only be used together with addresses"],
    ["c-chain", "endTimestamp=1", "endTimestamp can only be used together with addresses"],
    [
      "x-chain",
      "l1ValidationId=2V9BUiTySpKzTj1t55kZzSFgQMZyu5LvErxgcZuCAzSkxy2K1X",
      "l1ValidationId is only supported on the P-Chain",
    ],
    [
      "p-chain",
      "addresses=fuji1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq",
      'each value in addresses must be a avax address, got "fuji1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq"',
    ],
    ["p-chain", "pageSize=101", "pageSize must not be greater than 100"],
    [
      "p-chain",
      "startTimestamp=-1&addresses=avax1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq",
      "startTimestamp must not be less than 0",
    ],
    ["p-chain", "txTypes=MintTx&addresses=x", "each value in txTypes must be one of the following values"],
  ])("refuses on the %s: %s", async (chain, query, message) => {
    const response = await getJson(`${data}/v1/networks/mainnet/blockchains/${chain}/transactions?${query}`);
    expectContract(response, "data", TRANSACTIONS, 400);
    expect((response.body as ErrorBody).message).toContain(message);
  });

  it("accepts 0x accounts on the C-Chain", async () => {
    const evm = simulator.network.primaryNetwork("mainnet").wallets.map((wallet) => wallet.evmAddress);
    const response = await getJson(
      `${data}/v1/networks/mainnet/blockchains/c-chain/transactions?addresses=${evm.join(",")}&pageSize=100`,
    );
    expectContract(response, "data", TRANSACTIONS, 200);
    expect((response.body as TransactionList).transactions.length).toBe(history.get("c-chain")!.length);
  });

  it("gets a transaction by hash on its own chain only", async () => {
    for (const chain of CHAINS) {
      const tx = history.get(chain)![3]!;
      const response = await getJson(`${data}/v1/networks/mainnet/blockchains/${chain}/transactions/${tx.txHash}`);
      expectContract(response, "data", TRANSACTION, 200);
      expect(response.body).toEqual(tx);
      const elsewhere = await getJson(
        `${data}/v1/networks/mainnet/blockchains/${chain === "p-chain" ? "x-chain" : "p-chain"}/transactions/${tx.txHash}`,
      );
      expectContract(elsewhere, "data", TRANSACTION, 404);
    }
    const malformed = await getJson(`${data}/v1/networks/mainnet/blockchains/p-chain/transactions/0xzz`);
    expectContract(malformed, "data", TRANSACTION, 400);
  });

  it("serves Fuji under fuji and testnet alike, with Fuji's ids", async () => {
    const fuji = await getJson(`${data}/v1/networks/fuji/blockchains/${PRIMARY_CHAIN_IDS.fuji.X}/transactions?pageSize=3`);
    const testnet = await getJson(`${data}/v1/networks/testnet/blockchains/x-chain/transactions?pageSize=3`);
    expectContract(fuji, "data", TRANSACTIONS, 200);
    expect((testnet.body as TransactionList).transactions).toEqual((fuji.body as TransactionList).transactions);
    const wrongNetwork = await getJson(`${data}/v1/networks/mainnet/blockchains/${PRIMARY_CHAIN_IDS.fuji.X}/transactions`);
    expectContract(wrongNetwork, "data", TRANSACTIONS, 400);
    expect((wrongNetwork.body as ErrorBody).message).toMatch(/^blockchainId /);
  });
});

describe("primary network: blocks", () => {
  it("gets P-, X- and C-Chain blocks by height and by hash, chained by parent", async () => {
    for (const chain of CHAINS) {
      const byHeight = await getJson(`${data}/v1/networks/mainnet/blockchains/${chain}/blocks/12`);
      expectContract(byHeight, "data", BLOCK, 200);
      const block = byHeight.body as Block;
      const byHash = await getJson(`${data}/v1/networks/mainnet/blockchains/${chain}/blocks/${block.blockHash}`);
      expect(byHash.body).toEqual(block);
      const parent = (await getJson(`${data}/v1/networks/mainnet/blockchains/${chain}/blocks/11`)).body as Block;
      expect(block.parentHash).toBe(parent.blockHash);
      expect(parent.blockTimestamp).toBeLessThanOrEqual(block.blockTimestamp);
    }
    const pBlock = (await getJson(`${data}/v1/networks/mainnet/blockchains/p-chain/blocks/40`)).body as Block;
    expect(pBlock).toMatchObject({ proposerDetails: expect.any(Object), currentSupply: expect.any(String) });
  });

  it.each([
    ["p-chain", "999999", 404],
    ["x-chain", "2wx1bZz5oNAzRprQi3bxMVv2PaajoqTWE4s3uibNb9yFH5xW4v", 404],
    ["c-chain", `0x${"ab".repeat(32)}`, 404],
    ["p-chain", "0xnope", 400],
    ["c-chain", "cb58NotAllowedHere", 400],
  ])("answers %s block %s with %i", async (chain, blockId, status) => {
    const response = await getJson(`${data}/v1/networks/mainnet/blockchains/${chain}/blocks/${blockId}`);
    expectContract(response, "data", BLOCK, status);
  });
});

describe("primary network: UTXOs", () => {
  const post = (chain: string, query: string, body: unknown): Promise<JsonResponse> =>
    postJson(`${data}/v1/networks/mainnet/blockchains/${chain}/utxos${query}`, body);

  it("lists an address's UTXOs on each chain, with or without the chain letter, unspent unless asked", async () => {
    const wallet = simulator.network.primaryNetwork("mainnet").wallets[0]!.address;
    for (const [chain, letter] of [
      ["p-chain", "P"],
      ["x-chain", "X"],
      ["c-chain", "C"],
    ] as const) {
      const all = await post(chain, "?pageSize=1024&includeSpent=true", { addresses: wallet });
      expectContract(all, "data", UTXOS, 200);
      const body = all.body as UtxoList;
      expect(body.chainInfo.chainName).toBe(chain);
      expect(body.utxos.length).toBeGreaterThan(0);
      expect(body.utxos.some((utxo) => utxo.consumingTxHash !== undefined)).toBe(true);
      const prefixed = await post(chain, "?pageSize=1024&includeSpent=true", { addresses: `${letter}-${wallet}` });
      expect(prefixed.body).toEqual(all.body);
      const unspent = (await post(chain, "?pageSize=1024", { addresses: wallet })).body as UtxoList;
      expect(unspent.utxos.map((utxo) => utxo.utxoId)).toEqual(
        body.utxos.filter((utxo) => utxo.consumingTxHash === undefined).map((utxo) => utxo.utxoId),
      );
    }
  });

  it("sorts by amount and filters X-Chain UTXOs by asset", async () => {
    const wallets = simulator.network
      .primaryNetwork("mainnet")
      .wallets.map((wallet) => wallet.address)
      .join(",");
    const sorted = (await post("x-chain", "?pageSize=200&includeSpent=true&sortBy=amount&sortOrder=asc", { addresses: wallets }))
      .body as UtxoList;
    const amounts = sorted.utxos.map((utxo) => BigInt(utxo.asset.amount));
    expect(amounts).toEqual([...amounts].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    const token = sorted.utxos.find((utxo) => utxo.asset.symbol.startsWith("SIM"))!;
    const ofAsset = await post("x-chain", `?pageSize=1024&includeSpent=true&assetId=${token.asset.assetId}`, {
      addresses: wallets,
    });
    expectContract(ofAsset, "data", UTXOS, 200);
    const found = (ofAsset.body as UtxoList).utxos;
    expect(found.length).toBeGreaterThan(0);
    expect(found.every((utxo) => utxo.asset.assetId === token.asset.assetId)).toBe(true);
    expect(
      (await post("x-chain", "?pageSize=1024&includeSpent=true&assetId=nothing", { addresses: wallets })).body,
    ).toMatchObject({ utxos: [] });
  });

  it("ties page tokens to the addresses of the body", async () => {
    const [first, second] = simulator.network.primaryNetwork("mainnet").wallets;
    const page = (await post("p-chain", "?pageSize=2&includeSpent=true", { addresses: first!.address })).body as UtxoList;
    expect(page.nextPageToken).toBeTypeOf("string");
    const same = await post("p-chain", `?pageSize=2&includeSpent=true&pageToken=${page.nextPageToken}`, {
      addresses: first!.address,
    });
    expect(same.status).toBe(200);
    const other = await post("p-chain", `?pageSize=2&includeSpent=true&pageToken=${page.nextPageToken}`, {
      addresses: second!.address,
    });
    expectContract(other, "data", UTXOS, 400);
    expect((other.body as ErrorBody).message).toMatch(/^pageToken /);
  });

  it.each([
    ["no body addresses", "", {}, "addresses should not be empty"],
    ["a malformed address", "", { addresses: "avax1nope" }, "each value in addresses must be a avax address"],
    ["a page size over 1024", "?pageSize=1025", { addresses: "avax1nope" }, "pageSize must not be greater than 1024"],
    ["a zero page size", "?pageSize=0", { addresses: "avax1nope" }, "pageSize must not be less than 1"],
    [
      "an unknown sort",
      "?sortBy=size",
      { addresses: "avax1nope" },
      "sortBy must be one of the following values: timestamp, amount",
    ],
  ])("refuses %s", async (_, query, body, message) => {
    const response = await post("p-chain", query, body);
    expectContract(response, "data", UTXOS, 400);
    expect((response.body as ErrorBody).message).toContain(message);
  });
});

describe("primary network: X-Chain vertices", () => {
  it("lists the vertices at a height, whose parents are the vertices one level down", async () => {
    for (const height of [1, 2, 3, 4]) {
      const response = await getJson(
        `${data}/v1/networks/mainnet/blockchains/x-chain/vertices:listByHeight?vertexHeight=${height}`,
      );
      expectContract(response, "data", VERTICES, 200);
      const { vertices, chainInfo } = response.body as Schemas["ListXChainVerticesResponse"];
      expect(chainInfo).toEqual({ chainName: "x-chain", network: "mainnet" });
      const below = (
        await getJson(`${data}/v1/networks/mainnet/blockchains/x-chain/vertices:listByHeight?vertexHeight=${height - 1}`)
      ).body as Schemas["ListXChainVerticesResponse"];
      for (const vertex of vertices) {
        expect(vertex.vertexHeight).toBe(height);
        expect([...vertex.parentHashes].sort()).toEqual(below.vertices.map((parent) => parent.vertexHash).sort());
        const one = await getJson(
          `${data}/v1/networks/mainnet/blockchains/${PRIMARY_CHAIN_IDS.mainnet.X}/vertices/${vertex.vertexHash}`,
        );
        expectContract(one, "data", VERTEX, 200);
        expect(one.body).toEqual(vertex);
      }
    }
  });

  it("refuses vertex routes off the X-Chain and answers 404 for an unknown vertex", async () => {
    const onP = await getJson(`${data}/v1/networks/mainnet/blockchains/p-chain/vertices:listByHeight?vertexHeight=1`);
    expectContract(onP, "data", VERTICES, 400);
    expect((onP.body as ErrorBody).message).toMatch(/^blockchainId must be one of/);
    const negative = await getJson(`${data}/v1/networks/mainnet/blockchains/x-chain/vertices:listByHeight?vertexHeight=-1`);
    expectContract(negative, "data", VERTICES, 400);
    const missing = await getJson(
      `${data}/v1/networks/mainnet/blockchains/x-chain/vertices/2wx1bZz5oNAzRprQi3bxMVv2PaajoqTWE4s3uibNb9yFH5xW4v`,
    );
    expectContract(missing, "data", VERTEX, 404);
  });
});

describe("primary network: L1 validators", () => {
  it("lists the active ones by default and all on request, as of the P-Chain's height", async () => {
    const primary = simulator.network.primaryNetwork("mainnet");
    const active = await getJson(`${data}/v1/networks/mainnet/l1Validators?pageSize=100`);
    expectContract(active, "data", L1_VALIDATORS, 200);
    const all = await getJson(`${data}/v1/networks/mainnet/l1Validators?pageSize=100&includeInactiveL1Validators=true`);
    const activeList = (active.body as Schemas["ListL1ValidatorsResponse"]).validators;
    const allList = (all.body as Schemas["ListL1ValidatorsResponse"]).validators;
    expect(allList).toHaveLength(primary.l1Validators.length);
    expect(activeList.length).toBeLessThan(allList.length);
    expect(activeList.every((validator) => validator.remainingBalance > 0)).toBe(true);
    expect((active.body as Schemas["ListL1ValidatorsResponse"]).blockHeight).toBe(String(primary.pChainHeight));
    const one = allList.find((validator) => validator.remainingBalance === 0)!;
    const filtered = (
      await getJson(
        `${data}/v1/networks/mainnet/l1Validators?includeInactiveL1Validators=true&nodeId=${one.nodeId}&subnetId=${one.subnetId}`,
      )
    ).body as Schemas["ListL1ValidatorsResponse"];
    expect(filtered.validators).toEqual([one]);
    const bad = await getJson(`${data}/v1/networks/mainnet/l1Validators?nodeId=${one.nodeId.replace("NodeID-", "Node-")}`);
    expectContract(bad, "data", L1_VALIDATORS, 400);
    expect((bad.body as ErrorBody).message).toMatch(/^nodeId /);
  });

  it("gives each validator a real BLS key: the secret key stays on the network object, the proof of possession verifies", async () => {
    const primary = simulator.network.primaryNetwork("mainnet");
    const response = await getJson(`${data}/v1/networks/mainnet/l1Validators?pageSize=100&includeInactiveL1Validators=true`);
    const text = JSON.stringify(response.body);
    const signatures = bls12_381.longSignatures;
    for (const [index, validator] of primary.l1Validators.entries()) {
      const { publicKey, proofOfPossession } = (response.body as Schemas["ListL1ValidatorsResponse"]).validators.find(
        (served) => served.validationId === validator.validationId,
      )!.blsCredentials as unknown as { publicKey: string; proofOfPossession: string };
      expect(publicKey).toMatch(/^0x[0-9a-f]{96}$/);
      expect(proofOfPossession).toMatch(/^0x[0-9a-f]{192}$/);
      expect(Buffer.from(signatures.getPublicKey(validator.bls.secretKey).toBytes(true)).toString("hex")).toBe(
        publicKey.slice(2),
      );
      expect(text).not.toContain(Buffer.from(validator.bls.secretKey).toString("hex"));
      if (index < 2) {
        const message = signatures.hash(Buffer.from(publicKey.slice(2), "hex"), "BLS_POP_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_");
        expect(
          signatures.verify(Buffer.from(proofOfPossession.slice(2), "hex"), message, Buffer.from(publicKey.slice(2), "hex")),
        ).toBe(true);
      }
    }
  });
});
