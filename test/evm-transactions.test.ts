import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import {
  Kind,
  getNamedType,
  isObjectType,
  print,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { EvmCallType, transactionStatus } from "../schema/evm-transactions.ts";
import { InternalTransactionType, NftIndexStatus } from "../schema/evm-transfers.ts";
import { loadConfig } from "../src/config.ts";
import { schema } from "../src/schema.ts";
import type { Upstreams } from "../src/upstream/upstreams.ts";
import { createEvmLoaders, primeTransactions } from "../src/execution/loaders/evm.ts";
import { createLogger } from "../src/telemetry/logger.ts";
import type { components } from "../src/upstream/contract/data-api.ts";
import { createGateway, type Gateway } from "../src/gateway.ts";
import {
  AddressTransactionsCompleteViewsDocument,
  AddressTransactionsPageDocument,
  AddressTransactionsWithBlockDetailsDocument,
  AddressTransactionsWithLinksDocument,
  BlockTransactionsDocument,
  ChainTransactionDocument,
  TransactionNodeDocument,
} from "./generated/graphql.ts";
import { execute, simulatorGet, startHarness, upstreamCalls, type Harness } from "./support/harness.ts";

type Schemas = components["schemas"];
type RichAddress = Schemas["RichAddress"];
type Money = Schemas["Money"];
type NativeTransaction = Schemas["NativeTransaction"];
type FullNativeTransaction = Schemas["FullNativeTransactionDetails"];
type TransactionDetails = Schemas["TransactionDetails"];
type CompleteTransaction = Schemas["GetTransactionResponse"];
type ListTransactionDetailsResponse = Schemas["ListTransactionDetailsResponse"];
type ListNativeTransactionsResponse = Schemas["ListNativeTransactionsResponse"];
type EvmBlock = Schemas["EvmBlock"];

const C_CHAIN = "43114";
const ADDRESS_ROUTE = "GET /v1/chains/{chainId}/addresses/{address}/transactions";
const TRANSACTION_ROUTE = "GET /v1/chains/{chainId}/transactions/{txHash}";
const BLOCK_ROUTE = "GET /v1/chains/{chainId}/blocks/{blockId}";
const BLOCK_TRANSACTIONS_ROUTE = "GET /v1/chains/{chainId}/blocks/{blockId}/transactions";

let harness: Harness;
/** The busiest account of the C-Chain: thousands of transactions across most blocks. */
let busy: string;

beforeAll(async () => {
  harness = await startHarness();
  const { network } = harness.simulator;
  busy = network.transactions(network.chain(C_CHAIN)!).catalog.accounts[0]!;
});
afterAll(async () => {
  await harness.close();
});
beforeEach(() => {
  harness.gateway.cache.clear();
  harness.simulator.resetCounters();
});

async function restAddressTransactions(address: string, query: string): Promise<ListTransactionDetailsResponse> {
  const page = await simulatorGet<ListTransactionDetailsResponse>(
    harness,
    "data",
    `/v1/chains/${C_CHAIN}/addresses/${address}/transactions?${query}`,
  );
  harness.simulator.resetCounters();
  return page;
}

// What the gateway must answer for each upstream record: the same facts in GraphQL's shape.
const upper = (value: string) => value.replace(/-/g, "_").toUpperCase();
const richAddress = (item: RichAddress) => ({
  address: item.address,
  name: item.name ?? null,
  symbol: item.symbol ?? null,
  decimals: item.decimals ?? null,
  logoUri: item.logoUri ?? null,
});
const money = (item: Money | undefined) => (item ? { currencyCode: upper(item.currencyCode), value: item.value } : null);

function expectedNative(tx: NativeTransaction) {
  return {
    id: expect.any(String),
    chainId: tx.chainId,
    txHash: tx.txHash,
    blockNumber: tx.blockNumber,
    blockHash: tx.blockHash,
    blockIndex: tx.blockIndex,
    blockTimestamp: tx.blockTimestamp,
    blockTime: new Date(tx.blockTimestampMilliseconds ?? tx.blockTimestamp * 1000).toISOString(),
    blockTimestampMilliseconds: tx.blockTimestampMilliseconds ?? null,
    blockMinDelayExcess: tx.blockMinDelayExcess ?? null,
    txStatus: tx.txStatus === "1" ? "SUCCESS" : "FAILED",
    txType: tx.txType,
    from: richAddress(tx.from),
    to: richAddress(tx.to),
    value: tx.value,
    nonce: tx.nonce,
    gasLimit: tx.gasLimit,
    gasUsed: tx.gasUsed,
    gasPrice: tx.gasPrice,
    method: tx.method
      ? { callType: tx.method.callType, methodHash: tx.method.methodHash, methodName: tx.method.methodName ?? null }
      : null,
  };
}

function expectedTransfers(record: TransactionDetails | CompleteTransaction) {
  return {
    erc20Transfers: (record.erc20Transfers ?? []).map((transfer) => ({
      from: richAddress(transfer.from),
      to: richAddress(transfer.to),
      logIndex: transfer.logIndex,
      value: transfer.value,
      erc20Token: {
        address: transfer.erc20Token.address,
        name: transfer.erc20Token.name,
        symbol: transfer.erc20Token.symbol,
        decimals: transfer.erc20Token.decimals,
        logoUri: transfer.erc20Token.logoUri ?? null,
        ercType: upper(transfer.erc20Token.ercType),
        price: money(transfer.erc20Token.price),
      },
    })),
    erc721Transfers: (record.erc721Transfers ?? []).map((transfer) => {
      const { erc721Token: token } = transfer;
      const { metadata } = token;
      return {
        from: richAddress(transfer.from),
        to: richAddress(transfer.to),
        logIndex: transfer.logIndex,
        erc721Token: {
          address: token.address,
          name: token.name,
          symbol: token.symbol,
          ercType: upper(token.ercType),
          tokenId: token.tokenId,
          tokenUri: token.tokenUri,
          ownerAddress: token.ownerAddress ?? null,
          metadata: {
            indexStatus: metadata.indexStatus,
            metadataLastUpdatedTimestamp: metadata.metadataLastUpdatedTimestamp ?? null,
            name: metadata.name ?? null,
            symbol: metadata.symbol ?? null,
            imageUri: metadata.imageUri ?? null,
            description: metadata.description ?? null,
            animationUri: metadata.animationUri ?? null,
            externalUrl: metadata.externalUrl ?? null,
            background: metadata.background ?? null,
            attributes: metadata.attributes ?? null,
          },
        },
      };
    }),
    erc1155Transfers: (record.erc1155Transfers ?? []).map((transfer) => {
      const { erc1155Token: token } = transfer;
      const { metadata } = token;
      return {
        from: richAddress(transfer.from),
        to: richAddress(transfer.to),
        logIndex: transfer.logIndex,
        value: transfer.value,
        erc1155Token: {
          address: token.address,
          ercType: upper(token.ercType),
          tokenId: token.tokenId,
          tokenUri: token.tokenUri,
          metadata: {
            indexStatus: metadata.indexStatus,
            metadataLastUpdatedTimestamp: metadata.metadataLastUpdatedTimestamp ?? null,
            name: metadata.name ?? null,
            symbol: metadata.symbol ?? null,
            imageUri: metadata.imageUri ?? null,
            description: metadata.description ?? null,
            animationUri: metadata.animationUri ?? null,
            externalUrl: metadata.externalUrl ?? null,
            background: metadata.background ?? null,
            decimals: metadata.decimals ?? null,
            properties: metadata.properties ?? null,
          },
        },
      };
    }),
    internalTransactions: (record.internalTransactions ?? []).map((call) => ({
      from: richAddress(call.from),
      to: richAddress(call.to),
      internalTxType: call.internalTxType,
      value: call.value,
      isReverted: call.isReverted,
      gasUsed: call.gasUsed,
      gasLimit: call.gasLimit,
    })),
  };
}

function expectedCompleteView(record: CompleteTransaction) {
  const tx: FullNativeTransaction = record.nativeTransaction;
  const { networkToken, currentPrice, historicalPrice } = record.networkTokenDetails;
  const message = record.teleporterMessageInfo;
  return {
    input: tx.input,
    baseFee: tx.baseFeePerGas,
    maxFeePerGas: tx.maxFeePerGas ?? null,
    maxPriorityFeePerGas: tx.maxPriorityFeePerGas ?? null,
    ...expectedTransfers(record),
    networkTokenDetails: {
      networkToken: {
        name: networkToken.name,
        symbol: networkToken.symbol,
        decimals: networkToken.decimals,
        logoUri: networkToken.logoUri ?? null,
        description: networkToken.description ?? null,
      },
      currentPrice: money(currentPrice),
      historicalPrice: money(historicalPrice),
    },
    teleporterMessageInfo: message
      ? {
          teleporterMessageId: message.teleporterMessageId,
          direction: message.direction,
          sourceChainId: message.sourceChainId ?? null,
          destinationChainId: message.destinationChainId ?? null,
        }
      : null,
  };
}

/**
 * Coverage of a document's fields by answers, as schema coordinates (`Type.field`): every
 * field the document selects, and those that held a value (a non-empty list) at least once.
 */
class FieldCoverage {
  private readonly fragments = new Map<string, FragmentDefinitionNode>();
  private readonly selected = new Set<string>();
  private readonly filled = new Set<string>();

  constructor(private readonly document: DocumentNode) {
    for (const definition of document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) this.fragments.set(definition.name.value, definition);
    }
    this.walk(this.operation().selectionSet, schema.getQueryType()!, undefined);
  }

  add(data: unknown): void {
    this.walk(this.operation().selectionSet, schema.getQueryType()!, data);
  }

  /** The selected fields that never held a value. */
  unfilled(): string[] {
    return [...this.selected].filter((coordinate) => !this.filled.has(coordinate)).sort();
  }

  private operation(): OperationDefinitionNode {
    return this.document.definitions.find((definition) => definition.kind === Kind.OPERATION_DEFINITION)!;
  }

  private walk(selectionSet: SelectionSetNode, parent: GraphQLObjectType, value: unknown): void {
    if (Array.isArray(value)) {
      for (const item of value) this.walk(selectionSet, parent, item);
      return;
    }
    const object = value as Record<string, unknown> | null | undefined;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        if (name === "__typename") continue;
        const coordinate = `${parent.name}.${name}`;
        const child = object?.[(selection.alias ?? selection.name).value];
        if (object === undefined) this.selected.add(coordinate);
        else if (child !== null && child !== undefined && !(Array.isArray(child) && child.length === 0))
          this.filled.add(coordinate);
        const type = getNamedType(parent.getFields()[name]!.type);
        if (selection.selectionSet && (object === undefined || (child !== null && child !== undefined))) {
          this.walk(selection.selectionSet, type as GraphQLObjectType, object === undefined ? undefined : child);
        }
      } else {
        const fragment = selection.kind === Kind.INLINE_FRAGMENT ? selection : this.fragments.get(selection.name.value)!;
        const condition = fragment.typeCondition
          ? (schema.getType(fragment.typeCondition.name.value) as GraphQLObjectType)
          : parent;
        if (isObjectType(condition)) this.walk(fragment.selectionSet, condition, value);
        else this.walk(fragment.selectionSet, parent, value);
      }
    }
  }
}

describe("EvmChain.address(...).transactions", () => {
  it("serves 25 transactions with their blocks' timestamps, chain names and transfers from one address call and one chain list call", async () => {
    const reference = await restAddressTransactions(busy, "pageSize=25");
    const cold = await execute(harness, AddressTransactionsWithLinksDocument, { chainId: C_CHAIN, address: busy, first: 25 });
    expect(cold.body.errors).toBeUndefined();
    // The block fields asked are all on the transaction record, and every chain comes from
    // the one chain list that `chain(id:)` loads anyway: no block call at all.
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/chains": 1, [ADDRESS_ROUTE]: 1 });

    const nodes = cold.body.data!.chain!.address.transactions!.nodes;
    expect(nodes).toHaveLength(25);
    nodes.forEach((node, index) => {
      const item = reference.transactions[index]!;
      const tx = item.nativeTransaction;
      expect(node.transaction.txHash).toBe(tx.txHash);
      expect(node.transaction.chain?.chainName).toBe("Avalanche (C-Chain)");
      expect(node.transaction.block).toEqual({
        blockNumber: tx.blockNumber,
        blockTimestamp: tx.blockTimestamp,
        blockTime: new Date(tx.blockTimestampMilliseconds!).toISOString(),
      });
      expect(node.erc20Transfers).toEqual(
        (item.erc20Transfers ?? []).map((t) => ({ value: t.value, erc20Token: { symbol: t.erc20Token.symbol } })),
      );
      expect(node.erc721Transfers).toEqual(
        (item.erc721Transfers ?? []).map((t) => ({ erc721Token: { tokenId: t.erc721Token.tokenId } })),
      );
      expect(node.erc1155Transfers).toEqual((item.erc1155Transfers ?? []).map((t) => ({ value: t.value })));
      expect(node.internalTransactions).toEqual((item.internalTransactions ?? []).map((t) => ({ value: t.value })));
    });
    // The page spans many blocks and has transfers of several kinds.
    expect(new Set(reference.transactions.map((item) => item.nativeTransaction.blockNumber)).size).toBeGreaterThan(5);
    expect(nodes.some((node) => node.erc20Transfers.length > 0)).toBe(true);

    harness.simulator.resetCounters();
    const warm = await execute(harness, AddressTransactionsWithLinksDocument, { chainId: C_CHAIN, address: busy, first: 25 });
    expect(warm.body).toEqual(cold.body);
    // Only the list itself, which grows with new blocks, is asked again.
    expect(upstreamCalls(harness)).toEqual({ [ADDRESS_ROUTE]: 1 });
  });

  it("fetches each distinct block of the page once when block fields the transaction does not tell are asked, and not again while cached", async () => {
    const reference = await restAddressTransactions(busy, "pageSize=40");
    const distinctBlocks = new Set(reference.transactions.map((item) => item.nativeTransaction.blockHash));
    expect(distinctBlocks.size).toBeLessThan(40);

    const cold = await execute(harness, AddressTransactionsWithBlockDetailsDocument, {
      chainId: C_CHAIN,
      address: busy,
      first: 40,
    });
    expect(cold.body.errors).toBeUndefined();
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/chains": 1, [ADDRESS_ROUTE]: 1, [BLOCK_ROUTE]: distinctBlocks.size });
    const blocks = new Map<string, EvmBlock>();
    for (const hash of distinctBlocks)
      blocks.set(hash, await simulatorGet<EvmBlock>(harness, "data", `/v1/chains/${C_CHAIN}/blocks/${hash}`));
    for (const node of cold.body.data!.chain!.address.transactions!.nodes) {
      const block = blocks.get(node.transaction.block!.blockHash)!;
      expect(node.transaction.block).toEqual({ blockHash: block.blockHash, txCount: block.txCount, gasUsed: block.gasUsed });
    }

    harness.simulator.resetCounters();
    const warm = await execute(harness, AddressTransactionsWithBlockDetailsDocument, {
      chainId: C_CHAIN,
      address: busy,
      first: 40,
    });
    expect(warm.body).toEqual(cold.body);
    expect(upstreamCalls(harness)).toEqual({ [ADDRESS_ROUTE]: 1 });
  });

  it("answers every field of every record as the simulator's REST answer has it", async () => {
    const coverage = new FieldCoverage(AddressTransactionsPageDocument);
    let after: string | undefined;
    const items: TransactionDetails[] = [];
    // The cost limit allows about 20 fully expanded items per page.
    const reference = await restAddressTransactions(busy, "pageSize=100&sortOrder=asc");
    const next = await restAddressTransactions(busy, `pageSize=100&sortOrder=asc&pageToken=${reference.nextPageToken}`);
    const expected = [...reference.transactions, ...next.transactions];
    for (let page = 0; page < 12; page += 1) {
      const result = await execute(harness, AddressTransactionsPageDocument, {
        chainId: C_CHAIN,
        address: busy,
        first: 15,
        after,
        sortOrder: "ASC",
      });
      expect(result.body.errors).toBeUndefined();
      const account = result.body.data!.chain!.address;
      expect(account.address).toBe(busy);
      expect(account.chain.chainId).toBe(C_CHAIN);
      const connection = account.transactions!;
      connection.edges.forEach((edge, index) => {
        const item = expected[page * 15 + index]!;
        items.push(item);
        expect(edge.node).toEqual({ transaction: expectedNative(item.nativeTransaction), ...expectedTransfers(item) });
      });
      expect(connection.nodes.map((node) => node.transaction.txHash)).toEqual(
        connection.edges.map((edge) => edge.node.transaction.txHash),
      );
      coverage.add(result.body.data);
      after = connection.pageInfo.endCursor!;
    }
    expect(coverage.unfilled()).toEqual([]);
    // The arrays show only what the address sent or received.
    for (const item of items) {
      for (const transfer of [
        ...(item.erc20Transfers ?? []),
        ...(item.erc721Transfers ?? []),
        ...(item.internalTransactions ?? []),
      ]) {
        expect([transfer.from.address, transfer.to.address]).toContain(busy);
      }
    }
    // The chain list stays cached between requests: one call; then one address call per page.
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/chains": 1, [ADDRESS_ROUTE]: 12 });
  });

  it("pages forward through a block range in either order exactly like the simulator, resuming after any edge", async () => {
    for (const sortOrder of ["ASC", "DESC"] as const) {
      const reference = await restAddressTransactions(
        busy,
        `pageSize=100&startBlock=1200&endBlock=1250&sortOrder=${sortOrder.toLowerCase()}`,
      );
      const seen: string[] = [];
      let after: string | undefined;
      let hasNextPage = true;
      let calls = 0;
      while (hasNextPage) {
        const result = await execute(harness, AddressTransactionsPageDocument, {
          chainId: C_CHAIN,
          address: busy,
          first: 15,
          after,
          startBlock: "1200",
          endBlock: "1250",
          sortOrder,
        });
        expect(result.body.errors).toBeUndefined();
        const connection = result.body.data!.chain!.address.transactions!;
        seen.push(...connection.edges.map((edge) => edge.node.transaction.txHash));
        ({ hasNextPage } = connection.pageInfo);
        after = connection.pageInfo.endCursor ?? undefined;
        calls += 1;
      }
      expect(reference.nextPageToken).toBeUndefined();
      expect(seen).toEqual(reference.transactions.map((item) => item.nativeTransaction.txHash));
      expect(upstreamCalls(harness)[ADDRESS_ROUTE]).toBe(calls);
      const numbers = reference.transactions.map((item) => Number(item.nativeTransaction.blockNumber));
      expect(Math.min(...numbers)).toBeGreaterThanOrEqual(1200);
      expect(Math.max(...numbers)).toBeLessThan(1250);
      expect(numbers).toEqual([...numbers].sort((a, b) => (sortOrder === "ASC" ? a - b : b - a)));
      harness.simulator.resetCounters();
    }

    // Any edge's cursor resumes right after that edge, with the page size it came from.
    const reference = await restAddressTransactions(busy, "pageSize=30&startBlock=100");
    const page = await execute(harness, AddressTransactionsPageDocument, {
      chainId: C_CHAIN,
      address: busy,
      first: 10,
      startBlock: "100",
    });
    const middle = page.body.data!.chain!.address.transactions!.edges[4]!;
    const resumed = await execute(harness, AddressTransactionsPageDocument, {
      chainId: C_CHAIN,
      address: busy,
      first: 15,
      startBlock: "100",
      after: middle.cursor,
    });
    expect(resumed.body.data!.chain!.address.transactions!.edges.map((edge) => edge.node.transaction.txHash)).toEqual(
      reference.transactions.slice(5, 20).map((item) => item.nativeTransaction.txHash),
    );
  });

  it("refuses a cursor used with other filters, and bad block ranges, before the address call", async () => {
    const page = await execute(harness, AddressTransactionsPageDocument, { chainId: C_CHAIN, address: busy, first: 3 });
    const cursor = page.body.data!.chain!.address.transactions!.pageInfo.endCursor!;
    const cases: { variables: Record<string, unknown>; argument: string; message: RegExp }[] = [
      { variables: { after: cursor, sortOrder: "ASC" }, argument: "after", message: /another list/ },
      { variables: { after: cursor, startBlock: "5" }, argument: "after", message: /another list/ },
      { variables: { startBlock: "-1" }, argument: "startBlock", message: /startBlock must be a block number from 0/ },
      { variables: { endBlock: "9007199254740993" }, argument: "endBlock", message: /endBlock must be a block number/ },
      {
        variables: { startBlock: "20", endBlock: "20" },
        argument: "endBlock",
        message: /endBlock must be greater than startBlock/,
      },
    ];
    for (const testCase of cases) {
      harness.simulator.resetCounters();
      const result = await execute(harness, AddressTransactionsPageDocument, {
        chainId: C_CHAIN,
        address: busy,
        first: 3,
        ...testCase.variables,
      });
      expect(result.body.data!.chain!.address.transactions).toBeNull();
      expect(result.body.errors).toHaveLength(1);
      expect(result.body.errors![0]!.message).toMatch(testCase.message);
      expect(result.body.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: testCase.argument });
      expect(result.body.errors![0]!.path).toEqual(["chain", "address", "transactions"]);
      expect(upstreamCalls(harness)[ADDRESS_ROUTE]).toBeUndefined();
    }
    for (const first of [-1, 101]) {
      harness.simulator.resetCounters();
      const result = await execute(harness, AddressTransactionsWithBlockDetailsDocument, {
        chainId: C_CHAIN,
        address: busy,
        first,
      });
      expect(result.body.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "first", min: 0, max: 100 });
      expect(upstreamCalls(harness)[ADDRESS_ROUTE]).toBeUndefined();
    }
  });

  it("gives an empty page for an address without transactions, in any letter case", async () => {
    const result = await execute(harness, AddressTransactionsPageDocument, {
      chainId: C_CHAIN,
      address: `0x${"AB".repeat(20)}`,
      first: 5,
    });
    expect(result.body.errors).toBeUndefined();
    expect(result.body.data!.chain!.address.transactions).toMatchObject({
      edges: [],
      pageInfo: { hasNextPage: false, endCursor: null },
    });

    const mixedCase = `0x${busy.slice(2).toUpperCase()}`;
    const upperCase = await execute(harness, AddressTransactionsWithLinksDocument, {
      chainId: C_CHAIN,
      address: mixedCase,
      first: 3,
    });
    const lowerCase = await execute(harness, AddressTransactionsWithLinksDocument, { chainId: C_CHAIN, address: busy, first: 3 });
    expect(upperCase.body).toEqual(lowerCase.body);
  });
});

describe("EvmChain.transaction", () => {
  /** Hashes of C-Chain transactions of every kind the simulator makes. */
  function variedHashes(): string[] {
    const { network } = harness.simulator;
    const transactions = network.transactions(network.chain(C_CHAIN)!);
    const wanted = new Map<string, string>();
    const mark = (kind: string, hash: string) => {
      if (!wanted.has(kind)) wanted.set(kind, hash);
    };
    for (let number = 4000; number < 4999 && wanted.size < 12; number += 1) {
      const block = transactions.blockTransactions(number)!;
      for (let index = 0; index < block.length; index += 1) {
        const { txHash } = block.at(index)!;
        const view = transactions.transaction(txHash)!;
        const tx = view.nativeTransaction;
        if (view.teleporterMessageInfo?.direction === "SOURCE_TRANSACTION") mark("icm-source", txHash);
        if (view.teleporterMessageInfo?.direction === "DESTINATION_TRANSACTION") mark("icm-destination", txHash);
        if (view.erc721Transfers?.some((t) => t.erc721Token.metadata.animationUri && t.erc721Token.metadata.background))
          mark("erc721-full", txHash);
        if (view.erc721Transfers?.some((t) => t.erc721Token.metadata.indexStatus === "UNINDEXED"))
          mark("erc721-unindexed", txHash);
        if (view.erc1155Transfers?.some((t) => t.erc1155Token.metadata.animationUri && t.erc1155Token.metadata.background))
          mark("erc1155-full", txHash);
        if (view.erc20Transfers?.some((t) => t.erc20Token.price === undefined)) mark("erc20-unpriced", txHash);
        if ((view.erc20Transfers?.length ?? 0) > 1) mark("swap", txHash);
        if (view.internalTransactions?.some((t) => t.isReverted)) mark("reverted-call", txHash);
        if (tx.txStatus === "0") mark("failed", txHash);
        if (tx.method?.callType === "CONTRACT_CREATION") mark("creation", txHash);
        if (tx.txType === 0) mark("legacy", txHash);
        if (tx.method?.callType === "NATIVE_TRANSFER") mark("native", txHash);
      }
    }
    expect(wanted.size).toBe(12);
    return [...wanted.values()];
  }

  it("answers the complete view, every field as the simulator has it, with one call per transaction", async () => {
    const coverage = new FieldCoverage(ChainTransactionDocument);
    for (const hash of variedHashes()) {
      const reference = await simulatorGet<CompleteTransaction>(harness, "data", `/v1/chains/${C_CHAIN}/transactions/${hash}`);
      harness.simulator.resetCounters();
      harness.gateway.cache.clear();
      const result = await execute(harness, ChainTransactionDocument, { chainId: C_CHAIN, hash });
      expect(result.body.errors).toBeUndefined();
      const { chain: linkedChain, block, ...transaction } = result.body.data!.chain!.transaction!;
      expect(transaction).toEqual({ ...expectedNative(reference.nativeTransaction), ...expectedCompleteView(reference) });
      expect(linkedChain).toEqual({ chainId: C_CHAIN, chainName: "Avalanche (C-Chain)" });
      expect(block?.blockHash).toBe(reference.nativeTransaction.blockHash);
      // The complete view serves all its fields; the block is fetched for its txCount.
      expect(upstreamCalls(harness)).toEqual({ "GET /v1/chains": 1, [TRANSACTION_ROUTE]: 1, [BLOCK_ROUTE]: 1 });
      coverage.add(result.body.data);
    }
    expect(coverage.unfilled()).toEqual([]);
  });

  it("is null for an unknown hash and keeps a found transaction for later requests", async () => {
    const missing = await execute(harness, ChainTransactionDocument, { chainId: C_CHAIN, hash: `0x${"12".repeat(32)}` });
    expect(missing.body.errors).toBeUndefined();
    expect(missing.body.data!.chain!.transaction).toBeNull();

    const { network } = harness.simulator;
    const halcyon = network.transactions(network.chain("73310")!);
    let number = 4321;
    while (halcyon.blockTransactions(number)!.length === 0) number += 1;
    const hash = halcyon.blockTransactions(number)!.at(0)!.txHash;
    const viaOtherChain = await execute(harness, ChainTransactionDocument, { chainId: C_CHAIN, hash });
    expect(viaOtherChain.body.data!.chain!.transaction).toBeNull();

    harness.simulator.resetCounters();
    const first = await execute(harness, ChainTransactionDocument, { chainId: "73310", hash });
    expect(first.body.data!.chain!.transaction!.txHash).toBe(hash);
    expect(upstreamCalls(harness)[TRANSACTION_ROUTE]).toBe(1);
    harness.simulator.resetCounters();
    const again = await execute(harness, ChainTransactionDocument, {
      chainId: "73310",
      hash: hash.toUpperCase().replace("0X", "0x"),
    });
    expect(again.body.data!.chain!.transaction!.txHash).toBe(hash);
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("refuses a malformed hash or address with BAD_USER_INPUT before any upstream call", async () => {
    const cases: [string, Record<string, unknown> | undefined][] = [
      [`{ chain(id: "43114") { transaction(hash: "0x1234") { txHash } } }`, undefined],
      [`query ($hash: Hash!) { chain(id: "43114") { transaction(hash: $hash) { txHash } } }`, { hash: `0x${"zz".repeat(32)}` }],
      [`{ chain(id: "43114") { address(address: "0x12") { address } } }`, undefined],
      [
        `query ($address: EvmAddress!) { chain(id: "43114") { address(address: $address) { address } } }`,
        { address: `${busy}00` },
      ],
      [`{ chain(id: "43114") { transaction(hash: 42) { txHash } } }`, undefined],
    ];
    for (const [query, variables] of cases) {
      harness.simulator.resetCounters();
      const result = await execute(harness, query, variables);
      expect(result.body.data ?? null).toBeNull();
      expect(result.body.errors).toHaveLength(1);
      expect(result.body.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT" });
      expect(result.body.errors![0]!.message).toMatch(/(Hash|EvmAddress) must be 0x followed by (64|40) hex digits/);
      expect(upstreamCalls(harness)).toEqual({});
    }
  });

  it("refetches a transaction by its node id, from the cache once it was loaded", async () => {
    const { network } = harness.simulator;
    const hash = network.transactions(network.chain(C_CHAIN)!).blockTransactions(3210)!.at(1)!.txHash;
    const loaded = await execute(harness, ChainTransactionDocument, { chainId: C_CHAIN, hash });
    const { id, blockNumber } = loaded.body.data!.chain!.transaction!;

    harness.simulator.resetCounters();
    const refetched = await execute(harness, TransactionNodeDocument, { id });
    expect(refetched.body.errors).toBeUndefined();
    expect(refetched.body.data!.node).toMatchObject({
      __typename: "EvmTransaction",
      id,
      txHash: hash,
      chainId: C_CHAIN,
      blockNumber,
      input: expect.stringMatching(/^0x/),
    });
    expect(upstreamCalls(harness)).toEqual({});

    harness.gateway.cache.clear();
    const cold = await execute(harness, TransactionNodeDocument, { id });
    expect(cold.body.data!.node).toMatchObject({ txHash: hash });
    expect(upstreamCalls(harness)).toEqual({ [TRANSACTION_ROUTE]: 1 });

    const notATransaction = await execute(harness, TransactionNodeDocument, {
      id: Buffer.from("EvmTransaction:43114:0x12").toString("base64"),
    });
    expect(notATransaction.body.data!.node).toBeNull();
  });

  it("answers the complete view of a page's transactions with one call per transaction", async () => {
    const reference = await restAddressTransactions(busy, "pageSize=6");
    const result = await execute(harness, AddressTransactionsCompleteViewsDocument, {
      chainId: C_CHAIN,
      address: busy,
      first: 6,
    });
    expect(result.body.errors).toBeUndefined();
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/chains": 1, [ADDRESS_ROUTE]: 1, [TRANSACTION_ROUTE]: 6 });
    const nodes = result.body.data!.chain!.address.transactions!.nodes;
    for (const [index, node] of nodes.entries()) {
      const complete = await simulatorGet<CompleteTransaction>(
        harness,
        "data",
        `/v1/chains/${C_CHAIN}/transactions/${node.transaction.txHash}`,
      );
      const { txHash, ...view } = node.transaction;
      expect(txHash).toBe(reference.transactions[index]!.nativeTransaction.txHash);
      expect(view).toEqual(expectedCompleteView(complete));
      // The complete view can hold more transfers than the address's own.
      expect(view.erc20Transfers!.length).toBeGreaterThanOrEqual(node.erc20Transfers.length);
    }
  });
});

describe("EvmBlock.transactions", () => {
  it("gives a whole block by default, in block order, as the simulator does; warm, nothing is asked again", async () => {
    const block = await simulatorGet<EvmBlock>(harness, "data", `/v1/chains/${C_CHAIN}/blocks/4444`);
    const reference = await simulatorGet<ListNativeTransactionsResponse>(
      harness,
      "data",
      `/v1/chains/${C_CHAIN}/blocks/4444/transactions?pageSize=100`,
    );
    expect(block.txCount).toBeGreaterThan(3);
    harness.simulator.resetCounters();

    const cold = await execute(harness, BlockTransactionsDocument, { chainId: C_CHAIN, blockId: "4444" });
    expect(cold.body.errors).toBeUndefined();
    const transactions = cold.body.data!.chain!.block!.transactions!;
    expect(transactions.pageInfo.hasNextPage).toBe(false);
    expect(transactions.edges.map((edge) => edge.node)).toEqual(
      reference.transactions.map((tx) => ({
        ...expectedNative(tx),
        block: { blockHash: block.blockHash, txCount: block.txCount },
      })),
    );
    expect(transactions.edges.map((edge) => edge.node.blockIndex)).toEqual([...Array(block.txCount).keys()]);
    // The block is fetched once and is every transaction's block too.
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/chains": 1, [BLOCK_ROUTE]: 1, [BLOCK_TRANSACTIONS_ROUTE]: 1 });

    harness.simulator.resetCounters();
    const warm = await execute(harness, BlockTransactionsDocument, { chainId: C_CHAIN, blockId: "4444" });
    expect(warm.body).toEqual(cold.body);
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("pages through a block with first and after", async () => {
    const reference = await simulatorGet<ListNativeTransactionsResponse>(
      harness,
      "data",
      `/v1/chains/${C_CHAIN}/blocks/4445/transactions?pageSize=100`,
    );
    harness.simulator.resetCounters();
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const result = await execute(harness, BlockTransactionsDocument, { chainId: C_CHAIN, blockId: "4445", first: 4, after });
      const transactions = result.body.data!.chain!.block!.transactions!;
      seen.push(...transactions.edges.map((edge) => edge.node.txHash));
      if (!transactions.pageInfo.hasNextPage) break;
      after = transactions.pageInfo.endCursor!;
    }
    expect(seen).toEqual(reference.transactions.map((tx) => tx.txHash));
  });

  it("answers an empty block without asking for its transactions", async () => {
    const { network } = harness.simulator;
    const { blocks } = network.chain(C_CHAIN)!;
    const empty = Array.from({ length: 200 }, (_, index) => blocks.block(4000 + index)!).find((block) => block.txCount === 0)!;
    const result = await execute(harness, BlockTransactionsDocument, { chainId: C_CHAIN, blockId: empty.blockNumber });
    expect(result.body.errors).toBeUndefined();
    expect(result.body.data!.chain!.block!.transactions).toEqual({
      edges: [],
      pageInfo: { hasNextPage: false, endCursor: null },
    });
    expect(upstreamCalls(harness)).toEqual({ "GET /v1/chains": 1, [BLOCK_ROUTE]: 1 });
  });

  it("takes first from 0 to 100: first: 0 answers an empty page without asking for the transactions", async () => {
    const zero = await execute(harness, BlockTransactionsDocument, { chainId: C_CHAIN, blockId: "4444", first: 0 });
    expect(zero.body.errors).toBeUndefined();
    expect(zero.body.data!.chain!.block!.transactions).toEqual({ edges: [], pageInfo: { hasNextPage: false, endCursor: null } });
    expect(upstreamCalls(harness)[BLOCK_TRANSACTIONS_ROUTE]).toBeUndefined();

    harness.simulator.resetCounters();
    const tooMany = await execute(harness, BlockTransactionsDocument, { chainId: C_CHAIN, blockId: "4444", first: 101 });
    expect(tooMany.body.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "first", min: 0, max: 100 });
    expect(upstreamCalls(harness)[BLOCK_TRANSACTIONS_ROUTE]).toBeUndefined();
  });
});

describe("loaders", () => {
  it("a page's transactions prime the transaction loader, so a refetch by id costs nothing", async () => {
    let calls = 0;
    const upstreams = {
      evm: {
        getTransaction: async () => {
          calls += 1;
          return null;
        },
      },
    } as unknown as Upstreams;
    const batches: [string, number][] = [];
    const loaders = createEvmLoaders(upstreams, {}, (loader, keys) => batches.push([loader, keys]));
    const reference = await restAddressTransactions(busy, "pageSize=3");
    primeTransactions(
      loaders,
      reference.transactions.map((item) => item.nativeTransaction),
    );
    const tx = reference.transactions[2]!.nativeTransaction;
    expect(await loaders.transaction.load({ chainId: tx.chainId, txHash: tx.txHash.toUpperCase().replace("0X", "0x") })).toBe(tx);
    expect(calls).toBe(0);
    expect(await loaders.transaction.load({ chainId: tx.chainId, txHash: `0x${"34".repeat(32)}` })).toBeNull();
    expect(calls).toBe(1);
    // Only the unprimed key reached a batch: one for the native record, one for the complete view.
    expect(batches).toEqual([
      ["transaction", 1],
      ["completeTransaction", 1],
    ]);
  });
});

describe("values the upstream adds later", () => {
  it("fromUpstream turns a value outside the contract into UNKNOWN", () => {
    expect(EvmCallType.fromUpstream("CONTRACT_CALL")).toBe("CONTRACT_CALL");
    expect(EvmCallType.fromUpstream("CONTRACT_DELEGATION")).toBe("UNKNOWN");
    expect(EvmCallType.fromUpstream(undefined)).toBeNull();
    expect(InternalTransactionType.fromUpstream("EXTCALL")).toBe("UNKNOWN");
    expect(NftIndexStatus.fromUpstream("INDEXED")).toBe("INDEXED");
    expect(transactionStatus("1")).toBe("success");
    expect(transactionStatus("0")).toBe("failed");
    expect(transactionStatus("2")).toBe("UNKNOWN");
  });

  it("an upstream answer with values unknown to the contract resolves them as UNKNOWN, without an error", async () => {
    // A Data API that already sends values this gateway's contract does not have yet, and a
    // price at the time of the transaction: the simulator behind a rewriting proxy.
    const rewrites: [RegExp, string][] = [
      [/"callType":"CONTRACT_CALL"/g, '"callType":"CONTRACT_DELEGATION"'],
      [/"internalTxType":"CALL"/g, '"internalTxType":"EXTCALL"'],
      [/"indexStatus":"INDEXED"/g, '"indexStatus":"REFRESHING"'],
      [/"ercType":"ERC-20"/g, '"ercType":"ERC-7984"'],
      [/"currencyCode":"usd"/g, '"currencyCode":"sgd"'],
      [/"direction":"(SOURCE|DESTINATION)_TRANSACTION"/g, '"direction":"RELAYED"'],
      [/"txStatus":"1"/g, '"txStatus":"pending"'],
      [/,"historicalPrice":\{[^{}]*\}/g, ""],
      [/"networkTokenDetails":\{/g, '"networkTokenDetails":{"historicalPrice":{"currencyCode":"eur","value":21.5},'],
    ];
    const proxy = await startRewritingProxy(harness.simulator.dataUrl, rewrites);
    const gateway = createGateway(
      loadConfig({ LOG_LEVEL: "silent", RESPONSE_CACHE_TTL_MS: "0" }),
      { dataApiUrl: proxy.url, metricsApiUrl: harness.simulator.metricsUrl },
      createLogger("silent"),
    );
    try {
      const hashes = new Map<string, string>();
      const { network } = harness.simulator;
      const transactions = network.transactions(network.chain(C_CHAIN)!);
      for (let number = 4500; number < 4999 && hashes.size < 4; number += 1) {
        const block = transactions.blockTransactions(number)!;
        for (let index = 0; index < block.length; index += 1) {
          const { txHash } = block.at(index)!;
          const view = transactions.transaction(txHash)!;
          const ok = view.nativeTransaction.txStatus === "1";
          if (ok && view.teleporterMessageInfo) hashes.set("icm", txHash);
          if (ok && view.erc721Transfers?.some((t) => t.erc721Token.metadata.indexStatus === "INDEXED"))
            hashes.set("nft", txHash);
          if (ok && view.erc20Transfers?.some((t) => t.erc20Token.price)) hashes.set("erc20", txHash);
          if (ok && view.internalTransactions?.some((t) => t.internalTxType === "CALL")) hashes.set("call", txHash);
        }
      }
      expect(hashes.size).toBe(4);
      for (const hash of hashes.values()) {
        const result = await executeOn(gateway, ChainTransactionDocument, { chainId: C_CHAIN, hash });
        expect(result.errors).toBeUndefined();
        const tx = result.data!.chain!.transaction!;
        expect(tx.txStatus).toBe("UNKNOWN");
        expect(tx.networkTokenDetails!.currentPrice!.currencyCode).toBe("UNKNOWN");
        expect(tx.networkTokenDetails!.historicalPrice).toEqual({ currencyCode: "EUR", value: 21.5 });
        if (tx.method!.callType !== "NATIVE_TRANSFER") expect(tx.method!.callType).toBe("UNKNOWN");
        for (const transfer of tx.erc20Transfers!) {
          expect(transfer.erc20Token.ercType).toBe("UNKNOWN");
          if (transfer.erc20Token.price) expect(transfer.erc20Token.price.currencyCode).toBe("UNKNOWN");
        }
        for (const transfer of tx.erc721Transfers!) expect(transfer.erc721Token.metadata.indexStatus).not.toBe("INDEXED");
        for (const call of tx.internalTransactions!) expect(call.internalTxType).not.toBe("CALL");
        if (tx.teleporterMessageInfo) expect(tx.teleporterMessageInfo.direction).toBe("UNKNOWN");
      }
    } finally {
      await gateway.close();
      await proxy.close();
    }
  });
});

async function executeOn<T, V extends Record<string, unknown>>(
  gateway: Gateway,
  document: TypedDocumentNode<T, V>,
  variables: V,
) {
  const response = await gateway.yoga.fetch("http://gateway.test/graphql", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/graphql-response+json" },
    body: JSON.stringify({ query: print(document), variables }),
  });
  return (await response.json()) as { data?: T; errors?: unknown[] };
}

async function startRewritingProxy(
  target: string,
  rewrites: [RegExp, string][],
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    fetch(`${target}${request.url}`, { headers: { accept: "application/json" } })
      .then(async (upstream) => {
        let body = await upstream.text();
        for (const [pattern, replacement] of rewrites) body = body.replace(pattern, replacement);
        response.writeHead(upstream.status, { "content-type": "application/json" });
        response.end(body);
      })
      .catch(() => {
        response.writeHead(502);
        response.end();
      });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
