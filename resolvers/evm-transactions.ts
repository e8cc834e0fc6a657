/**
 * EVM transactions: a chain's transaction by hash and an address's transactions, a block's
 * transactions, and the links from a transaction to its chain, its block and its complete view.
 */
import { EvmBlockRef } from "../schema/blocks.ts";
import { indexedChainId } from "./blocks.ts";
import { builder } from "../schema/builder.ts";
import { resumeArguments } from "../schema/renamed-arguments.ts";
import { EvmChainRef } from "../schema/chains.ts";
import {
  EvmAccountRef,
  EvmAddressTransactionConnectionRef,
  EvmAddressTransactionRef,
  EvmTransactionConnectionRef,
  EvmTransactionRef,
  SortOrderRef,
} from "../schema/evm-transactions.ts";
import {
  Erc1155TransferRef,
  Erc20TransferRef,
  Erc721TransferRef,
  EvmInternalTransactionRef,
  EvmNetworkTokenDetailsRef,
  TeleporterMessageInfoRef,
} from "../schema/evm-transfers.ts";
import type { GatewayContext } from "../src/execution/context.ts";
import { badUserInput } from "../src/errors.ts";
import { afterBlockArgument } from "../src/upstream/identifiers.ts";
import { itemOrError, liveTerms } from "../src/live/live-feed.ts";
import { toPageTokenConnection } from "../src/execution/pagination.ts";
import { BLOCK_FIELDS_KNOWN_FROM_TRANSACTION, selectsOnly } from "../src/execution/selection.ts";
import {
  CHAIN_LIST_LOOKUP,
  FROM_COMPLETE_VIEW,
  callCost,
  connectionCost,
  lookupCost,
  upstreamCalls,
} from "../src/limits/upstream-cost-declarations.ts";
import { ROUTES } from "../src/upstream/routes.ts";
import type {
  AddressTransaction,
  CompleteTransaction,
  EvmBlock,
  EvmTransactionRecord,
  FullNativeTransaction,
  NativeTransaction,
  SortOrder,
} from "../src/upstream/types.ts";

const COMPLETE_VIEW =
  "From the complete view of the transaction (`GET /v1/chains/{chainId}/transactions/{txHash}`, one call per transaction shared by all such fields, and cached)";

/** A block number argument: the route takes a non-negative number, so it must fit a double exactly. */
function blockNumberArgument(argument: string, value: string | null | undefined): number | undefined {
  if (value === null || value === undefined) return undefined;
  const number = Number(value);
  if (value.startsWith("-") || !Number.isSafeInteger(number)) {
    throw badUserInput(argument, `${argument} must be a block number from 0 to ${Number.MAX_SAFE_INTEGER}, got ${value}`);
  }
  return number;
}

function isComplete(transaction: EvmTransactionRecord): transaction is FullNativeTransaction {
  return "input" in transaction && "baseFeePerGas" in transaction;
}

/** The complete view of a transaction, through the per-request loader. */
function completeView(transaction: EvmTransactionRecord, context: GatewayContext): Promise<CompleteTransaction | null> {
  return context.loaders.completeTransaction.load({ chainId: transaction.chainId, txHash: transaction.txHash });
}

/** A list of the complete view; null when the upstream no longer knows the transaction. */
async function completeList<K extends "erc20Transfers" | "erc721Transfers" | "erc1155Transfers" | "internalTransactions">(
  transaction: EvmTransactionRecord,
  list: K,
  context: GatewayContext,
): Promise<NonNullable<CompleteTransaction[K]> | null> {
  const view = await completeView(transaction, context);
  return view ? (view[list] ?? []) : null;
}

/** A field of the complete native record: read from the record when it is one, else from the complete view. */
async function completeField<K extends "input" | "baseFeePerGas" | "maxFeePerGas" | "maxPriorityFeePerGas">(
  transaction: EvmTransactionRecord,
  field: K,
  context: GatewayContext,
): Promise<FullNativeTransaction[K] | null> {
  const record = isComplete(transaction) ? transaction : (await completeView(transaction, context))?.nativeTransaction;
  return record?.[field] ?? null;
}

builder.objectFields(EvmChainRef, (t) => ({
  transaction: t.field({
    type: EvmTransactionRef,
    nullable: true,
    extensions: upstreamCalls({ ...lookupCost(ROUTES.transaction), holds: "complete transaction" }),
    description:
      "One transaction of the chain by hash, with its complete view: every transfer and internal call, the native token's price, any interchain message (`GET /v1/chains/{chainId}/transactions/{txHash}`). Null when the chain has no such transaction.",
    args: { hash: t.arg({ type: "Hash", required: true, description: "The transaction's hash." }) },
    resolve: async (chain, args, context) => {
      const found = await context.loaders.completeTransaction.load({ chainId: chain.chainId, txHash: args.hash });
      return found?.nativeTransaction ?? null;
    },
  }),
  address: t.field({
    type: EvmAccountRef,
    description:
      "An address (an account or a contract) on this chain, to list its transactions. Costs no upstream call by itself.",
    args: {
      address: t.arg({ type: "EvmAddress", required: true, description: "The address: 0x and 40 hex digits, any letter case." }),
    },
    resolve: (chain, args) => ({ chainId: chain.chainId, address: args.address, chain }),
  }),
}));

builder.objectFields(EvmAccountRef, (t) => ({
  transactions: t.field({
    type: EvmAddressTransactionConnectionRef,
    nullable: true,
    extensions: upstreamCalls(connectionCost(ROUTES.addressTransactions)),
    description: `The transactions in which the address sent or received native tokens, a token or an internal call, each with only the transfers and calls that concern the address (\`GET /v1/chains/{chainId}/addresses/{address}/transactions\`). ${ROUTES.addressTransactions.firstText}`,
    args: {
      ...t.arg.connectionArgs(),
      startBlock: t.arg({
        type: "BigInt",
        description: "Only transactions in this block or later (inclusive). Without `endBlock`, up to the latest block.",
      }),
      endBlock: t.arg({
        type: "BigInt",
        description:
          "Only transactions before this block (exclusive); must be greater than `startBlock`. Without `startBlock`, from genesis.",
      }),
      sortOrder: t.arg({
        type: SortOrderRef,
        defaultValue: "desc",
        description: "The order by block and position in the block: `DESC` (default) newest first, `ASC` oldest first.",
      }),
    },
    resolve: async (account, args, context) => {
      const startBlock = blockNumberArgument("startBlock", args.startBlock);
      const endBlock = blockNumberArgument("endBlock", args.endBlock);
      if (startBlock !== undefined && endBlock !== undefined && startBlock >= endBlock) {
        throw badUserInput(
          "endBlock",
          `endBlock must be greater than startBlock (${startBlock}): the range includes startBlock and excludes endBlock`,
        );
      }
      const sortOrder: SortOrder = args.sortOrder ?? "desc";
      const chainId = account.chainId;
      const address = account.address.toLowerCase();
      const connection = await toPageTokenConnection(args, {
        bounds: ROUTES.addressTransactions.page,
        filters: {
          field: "EvmAccount.transactions",
          chainId,
          address,
          startBlock: startBlock ?? null,
          endBlock: endBlock ?? null,
          sortOrder,
        },
        nodeKey: (item: AddressTransaction) => item.nativeTransaction.txHash,
        fetchPage: async (page) => {
          const response = await context.loaders.evmPages.addressTransactions(
            chainId,
            address,
            { startBlock, endBlock, sortOrder },
            page,
          );
          return { items: response.transactions, nextPageToken: response.nextPageToken };
        },
      });
      return connection;
    },
  }),
}));

builder.objectFields(EvmBlockRef, (t) => ({
  transactions: t.field({
    type: EvmTransactionConnectionRef,
    nullable: true,
    extensions: upstreamCalls(connectionCost(ROUTES.blockTransactions)),
    description: `The block's transactions in block order (\`GET /v1/chains/{chainId}/blocks/{blockId}/transactions\`). ${ROUTES.blockTransactions.firstText} Without an upstream call: \`first: 0\`, and a block whose \`txCount\` is 0.`,
    args: { ...t.arg.connectionArgs() },
    resolve: async (block, args, context) => {
      const connection = await toPageTokenConnection(args, {
        bounds: ROUTES.blockTransactions.page,
        filters: { field: "EvmBlock.transactions", chainId: block.chainId, blockHash: block.blockHash.toLowerCase() },
        nodeKey: (transaction: NativeTransaction) => transaction.txHash,
        fetchPage: async (page) => {
          if (block.txCount === 0) return { items: [] };
          const response = await context.loaders.evmPages.blockTransactions(block.chainId, block.blockHash, page);
          return { items: response.transactions, nextPageToken: response.nextPageToken };
        },
      });
      return connection;
    },
  }),
}));

builder.objectFields(EvmTransactionRef, (t) => ({
  chain: t.field({
    type: EvmChainRef,
    nullable: true,
    extensions: upstreamCalls(CHAIN_LIST_LOOKUP),
    description: "The chain the transaction belongs to.",
    resolve: (transaction, _args, context) => context.loaders.chain.load(transaction.chainId),
  }),
  block: t.field({
    type: EvmBlockRef,
    nullable: true,
    // A block's transactions are listed by the block, which the request holds (the page that
    // listed the block primed the block loader, a block looked up is in the shared cache).
    // Elsewhere (an address's page) transactions share blocks.
    extensions: upstreamCalls(
      callCost(ROUTES.block, {
        freeWhenSelectingOnly: BLOCK_FIELDS_KNOWN_FROM_TRANSACTION,
        heldWhenListedBy: new Set(["EvmBlock.transactions"]),
        pool: "evm block",
      }),
    ),
    description:
      "The block that holds the transaction. Fetched only when a field is asked that the transaction does not already tell (its number, hash and timestamps).",
    resolve: (transaction, _args, context, info) => {
      if (selectsOnly(info, BLOCK_FIELDS_KNOWN_FROM_TRANSACTION)) {
        // The partial record is safe because no other field of it is resolved.
        const known: Pick<
          EvmBlock,
          "chainId" | "blockNumber" | "blockHash" | "blockTimestamp" | "blockTimestampMilliseconds" | "blockMinDelayExcess"
        > = {
          chainId: transaction.chainId,
          blockNumber: transaction.blockNumber,
          blockHash: transaction.blockHash,
          blockTimestamp: transaction.blockTimestamp,
          blockTimestampMilliseconds: transaction.blockTimestampMilliseconds,
          blockMinDelayExcess: transaction.blockMinDelayExcess,
        };
        return known as EvmBlock;
      }
      return context.loaders.block.load({ chainId: transaction.chainId, blockId: transaction.blockHash });
    },
  }),
  input: t.string({
    nullable: true,
    extensions: upstreamCalls(FROM_COMPLETE_VIEW),
    description: `The call data sent with the transaction, as 0x and hex digits (0x alone for a plain transfer). ${COMPLETE_VIEW}.`,
    resolve: (transaction, _args, context) => completeField(transaction, "input", context),
  }),
  baseFee: t.field({
    type: "BigInt",
    nullable: true,
    extensions: upstreamCalls(FROM_COMPLETE_VIEW),
    description: `The base fee per gas of the transaction's block, in wei (the block's \`baseFee\`): the part of gasPrice that is burned. ${COMPLETE_VIEW}.`,
    resolve: (transaction, _args, context) => completeField(transaction, "baseFeePerGas", context),
  }),
  baseFeePerGas: t.field({
    type: "BigInt",
    nullable: true,
    extensions: upstreamCalls(FROM_COMPLETE_VIEW),
    deprecationReason: "Use `baseFee`, the name the block gives it.",
    description: `The older name of \`baseFee\`. ${COMPLETE_VIEW}.`,
    resolve: (transaction, _args, context) => completeField(transaction, "baseFeePerGas", context),
  }),
  maxFeePerGas: t.field({
    type: "BigInt",
    nullable: true,
    extensions: upstreamCalls(FROM_COMPLETE_VIEW),
    description: `The most the sender would pay per gas, in wei; null for a transaction with a legacy gas price. ${COMPLETE_VIEW}.`,
    resolve: (transaction, _args, context) => completeField(transaction, "maxFeePerGas", context),
  }),
  maxPriorityFeePerGas: t.field({
    type: "BigInt",
    nullable: true,
    extensions: upstreamCalls(FROM_COMPLETE_VIEW),
    description: `The most the sender would pay per gas above the base fee, in wei; null for a transaction with a legacy gas price. ${COMPLETE_VIEW}.`,
    resolve: (transaction, _args, context) => completeField(transaction, "maxPriorityFeePerGas", context),
  }),
  erc20Transfers: t.field({
    type: [Erc20TransferRef],
    nullable: true,
    extensions: upstreamCalls(FROM_COMPLETE_VIEW),
    description: `Every ERC-20 transfer of the transaction. ${COMPLETE_VIEW}.`,
    resolve: (transaction, _args, context) => completeList(transaction, "erc20Transfers", context),
  }),
  erc721Transfers: t.field({
    type: [Erc721TransferRef],
    nullable: true,
    extensions: upstreamCalls(FROM_COMPLETE_VIEW),
    description: `Every ERC-721 transfer of the transaction. ${COMPLETE_VIEW}.`,
    resolve: (transaction, _args, context) => completeList(transaction, "erc721Transfers", context),
  }),
  erc1155Transfers: t.field({
    type: [Erc1155TransferRef],
    nullable: true,
    extensions: upstreamCalls(FROM_COMPLETE_VIEW),
    description: `Every ERC-1155 transfer of the transaction. ${COMPLETE_VIEW}.`,
    resolve: (transaction, _args, context) => completeList(transaction, "erc1155Transfers", context),
  }),
  internalTransactions: t.field({
    type: [EvmInternalTransactionRef],
    nullable: true,
    extensions: upstreamCalls(FROM_COMPLETE_VIEW),
    description: `Every internal call of the transaction. ${COMPLETE_VIEW}.`,
    resolve: (transaction, _args, context) => completeList(transaction, "internalTransactions", context),
  }),
  networkTokenDetails: t.field({
    type: EvmNetworkTokenDetailsRef,
    nullable: true,
    extensions: upstreamCalls(FROM_COMPLETE_VIEW),
    description: `The chain's native token, with its price now and when the transaction ran. ${COMPLETE_VIEW}.`,
    resolve: async (transaction, _args, context) => (await completeView(transaction, context))?.networkTokenDetails ?? null,
  }),
  teleporterMessageInfo: t.field({
    type: TeleporterMessageInfoRef,
    nullable: true,
    extensions: upstreamCalls(FROM_COMPLETE_VIEW),
    description: `The interchain (Teleporter/ICM) message the transaction sent or delivered; null when none. ${COMPLETE_VIEW}.`,
    resolve: async (transaction, _args, context) => (await completeView(transaction, context))?.teleporterMessageInfo ?? null,
  }),
}));

builder.subscriptionFields((t) => ({
  newAddressTransactions: t.field({
    type: EvmAddressTransactionRef,
    nullable: true,
    // A subscription is charged once, for its first read.
    extensions: upstreamCalls(callCost(ROUTES.addressTransactions)),
    description: `Each new transaction of an address on an EVM chain as it lands, oldest first, each once, with the transfers and internal calls that concern the address, as its transaction list gives them (\`EvmAccount.transactions\`). ${liveTerms(ROUTES.addressTransactions, "LIVE_ADDRESS_POLL_MS", "one address on one chain")}`,
    args: {
      chainId: t.arg.id({ required: true, description: "The chain's EVM chain id in decimal (such as 43114)." }),
      address: t.arg({ type: "EvmAddress", required: true, description: "The address: 0x and 40 hex digits, any letter case." }),
      ...resumeArguments(t.arg, "The last block number whose transactions were seen"),
    },
    subscribe: async (_root, args, context) => {
      const after = afterBlockArgument(args);
      const chainId = await indexedChainId(args.chainId, context);
      return context.live.feed.subscribe(context.live.questions.addressTransactions(chainId, args.address.toLowerCase()), {
        after,
        call: context.call,
        chargeRead: context.chargeRead,
        caller: context.liveCaller,
      });
    },
    resolve: itemOrError,
  }),
}));
