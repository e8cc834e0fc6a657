/**
 * EVM transactions: the native transaction record, the address-scoped list item that carries an
 * address's transfers next to it, and the account an address list hangs from.
 */
import { malformedGlobalIdKey, parsedOrRefused, validKey } from "../src/execution/global-ids.ts";
import { transactionMethodTypeValues, transactionStatusValues } from "../src/upstream/contract/data-api.ts";
import type { AddressTransaction, ChainInfo, EvmTransactionRecord, TransactionMethod } from "../src/upstream/types.ts";
import { HEX_32, isChainId } from "../src/upstream/identifiers.ts";
import { blockTimeFields } from "./blocks.ts";
import { builder } from "./builder.ts";
import { upstreamEnum } from "./enums.ts";
import {
  Erc1155TransferRef,
  Erc20TransferRef,
  Erc721TransferRef,
  EvmAddressInfoRef,
  EvmInternalTransactionRef,
} from "./evm-transfers.ts";

export const EvmCallType = upstreamEnum(
  "EvmCallType",
  transactionMethodTypeValues,
  "What a transaction does with its receiver.",
  {
    NATIVE_TRANSFER: "Sends native tokens without call data.",
    CONTRACT_CALL: "Calls a contract method.",
    CONTRACT_CREATION: "Deploys a contract; the receiver is the new contract.",
  },
);

export const EvmTransactionStatus = upstreamEnum(
  "EvmTransactionStatus",
  transactionStatusValues,
  "Whether a transaction's execution succeeded. Either way it is in its block and paid its gas.",
  {
    success: "It ran to the end; its effects stand.",
    failed: "It reverted; its effects were undone (fees are still paid).",
  },
);

/** The native record says `1` or `0` where the status enum of the contract says `success` or `failed`. */
const TX_STATUS_VALUES: Record<string, string> = { "1": "success", "0": "failed" };

export function transactionStatus(txStatus: string): string {
  return EvmTransactionStatus.fromUpstream(TX_STATUS_VALUES[txStatus] ?? txStatus) ?? "UNKNOWN";
}

/** Shared by every list the upstream sorts on request; the list's argument says by what. */
export const SortOrderRef = builder.enumType("SortOrder", {
  description: "The direction a list is sorted in; the argument that takes it says by what.",
  values: {
    ASC: { value: "asc", description: "Ascending: oldest or smallest first." },
    DESC: { value: "desc", description: "Descending: newest or largest first." },
  } as const,
});

/**
 * An address on one chain: the parent of `EvmAccount`, not an upstream record. The chain's record
 * when the account was reached from it; else (a transaction's sender, an entity) only its id.
 */
export interface EvmAccountScope {
  chainId: string;
  address: string;
  chain?: ChainInfo;
}

export const EvmTransactionMethodRef = builder.objectRef<TransactionMethod>("EvmTransactionMethod").implement({
  description: "What a transaction calls: the kind of call and, for a contract call, the method.",
  fields: (t) => ({
    callType: t.field({
      type: EvmCallType.ref,
      description: "Whether it is a native transfer, a contract call or a contract creation.",
      resolve: (method) => EvmCallType.fromUpstream(method.callType) ?? "UNKNOWN",
    }),
    methodHash: t.exposeString("methodHash", {
      description: "The 4-byte method selector (0x and 8 hex digits) of a contract call; empty for the other call types.",
    }),
    methodName: t.exposeString("methodName", {
      nullable: true,
      description:
        "The method's signature when the Data API knows it, such as `transfer(address,uint256)`; a label for the other call types.",
    }),
  }),
});

export const EvmTransactionRef = builder.objectRef<EvmTransactionRecord>("EvmTransaction");

/** The global id of a transaction: its chain and hash, which is all the transaction route needs. */
export function evmTransactionId(transaction: Pick<EvmTransactionRecord, "chainId" | "txHash">): string {
  return `${transaction.chainId}:${transaction.txHash}`;
}

/** The key of a transaction's global id, checked like the `chain(id:)` and `transaction(hash:)` arguments. */
export function parseEvmTransactionId(id: string): { chainId: string; txHash: string } {
  const separator = id.indexOf(":");
  const chainId = id.slice(0, Math.max(separator, 0));
  const txHash = id.slice(separator + 1);
  if (separator <= 0 || !isChainId(chainId) || !HEX_32.test(txHash)) {
    throw malformedGlobalIdKey(
      "EvmTransaction",
      "an EVM chain id and a transaction hash (0x and 64 hex digits), joined by a colon",
      id,
    );
  }
  return { chainId, txHash };
}

builder.node(EvmTransactionRef, {
  description:
    "A transaction on an EVM chain (`GET /v1/chains/{chainId}/transactions/{txHash}`): the native transaction, and through the fields marked as such, the complete view with all its transfers and calls.",
  id: { resolve: evmTransactionId, parse: (id) => parsedOrRefused(() => parseEvmTransactionId(id)) },
  loadOne: (key, context) => context.loaders.transaction.load(validKey(key)),
  fields: (t) => ({
    chainId: t.exposeString("chainId", { description: "The EVM chain id of the transaction's chain, in decimal." }),
    txHash: t.expose("txHash", { type: "Hash", description: "The transaction's hash." }),
    blockNumber: t.expose("blockNumber", { type: "BigInt", description: "The height of the transaction's block." }),
    blockHash: t.expose("blockHash", { type: "Hash", description: "The hash of the transaction's block." }),
    blockIndex: t.exposeInt("blockIndex", { description: "The transaction's position in its block, from 0." }),
    ...blockTimeFields(t, "the transaction's block"),
    txStatus: t.field({
      type: EvmTransactionStatus.ref,
      description: "Whether the transaction succeeded or reverted (upstream `1` or `0`).",
      resolve: (tx) => transactionStatus(tx.txStatus),
    }),
    txType: t.exposeInt("txType", {
      description:
        "The transaction's envelope type (EIP-2718): 0 legacy, 1 with an access list, 2 with EIP-1559 fees; a number, where a primary-network transaction's `txType` is its kind.",
    }),
    from: t.expose("from", { type: EvmAddressInfoRef, description: "The account that signed and sent the transaction." }),
    to: t.expose("to", {
      type: EvmAddressInfoRef,
      description: "The receiver: an account, the called contract, or the contract the transaction created.",
    }),
    value: t.expose("value", { type: "BigInt", description: "Native tokens sent with the transaction, in wei." }),
    nonce: t.expose("nonce", { type: "BigInt", description: "How many transactions the sender had sent before this one." }),
    gasLimit: t.expose("gasLimit", { type: "BigInt", description: "The most gas the sender allowed the transaction." }),
    gasUsed: t.expose("gasUsed", { type: "BigInt", description: "Gas the transaction used." }),
    gasPrice: t.expose("gasPrice", {
      type: "BigInt",
      description: "The price paid per unit of gas, in wei (the fee is gasUsed × gasPrice).",
    }),
    method: t.expose("method", {
      type: EvmTransactionMethodRef,
      nullable: true,
      description: "What the transaction calls.",
    }),
  }),
});

export const EvmAddressTransactionRef = builder.objectRef<AddressTransaction>("EvmAddressTransaction").implement({
  description:
    "A transaction in an address's list, with the transfers and internal calls in which that address is the sender or the receiver. The lists show only those: the transaction may have more, which `transaction` gives in full (`erc20Transfers` and the other fields of the complete view).",
  fields: (t) => ({
    transaction: t.expose("nativeTransaction", { type: EvmTransactionRef, description: "The native transaction." }),
    erc20Transfers: t.field({
      type: [Erc20TransferRef],
      description: "The ERC-20 transfers of the transaction that the address sent or received.",
      resolve: (item) => item.erc20Transfers ?? [],
    }),
    erc721Transfers: t.field({
      type: [Erc721TransferRef],
      description: "The ERC-721 transfers of the transaction that the address sent or received.",
      resolve: (item) => item.erc721Transfers ?? [],
    }),
    erc1155Transfers: t.field({
      type: [Erc1155TransferRef],
      description: "The ERC-1155 transfers of the transaction that the address sent or received.",
      resolve: (item) => item.erc1155Transfers ?? [],
    }),
    internalTransactions: t.field({
      type: [EvmInternalTransactionRef],
      description: "The internal calls of the transaction that the address made or received.",
      resolve: (item) => item.internalTransactions ?? [],
    }),
  }),
});

export const EvmAccountRef = builder.objectRef<EvmAccountScope>("EvmAccount").implement({
  description: "An address (an account or a contract) on one EVM chain: the entry to what the Data API lists for it.",
  fields: (t) => ({
    address: t.expose("address", { type: "EvmAddress", description: "The address, as it was asked for." }),
    chainId: t.exposeString("chainId", {
      description: "The EVM chain id of the chain the address is looked at on, in decimal (as `chain { chainId }`).",
    }),
  }),
});

export const EvmTransactionConnectionRef = builder.connectionObject(
  {
    type: EvmTransactionRef,
    name: "EvmTransactionConnection",
    description: "A page of transactions.",
  },
  { name: "EvmTransactionEdge", description: "A transaction and the cursor that continues after it." },
);

export const EvmAddressTransactionConnectionRef = builder.connectionObject(
  {
    type: EvmAddressTransactionRef,
    name: "EvmAddressTransactionConnection",
    description: "A page of an address's transactions, each with that address's transfers.",
  },
  { name: "EvmAddressTransactionEdge", description: "A transaction of the address and the cursor that continues after it." },
);
