/**
 * The links between primary-network records, all through the request's loaders: a transaction's
 * block, a UTXO's creating and consuming transactions and blocks, a block's parent and
 * transactions, a vertex's parents and transactions, an L1 transaction's validators.
 */
import type { GraphQLResolveInfo } from "graphql";
import { EvmBlockRef } from "../schema/blocks.ts";
import { builder } from "../schema/builder.ts";
import { PrimaryNetworkBlockRef, XChainVertexRef } from "../schema/primary-network-blocks.ts";
import { L1ValidatorTransactionDetailsRef, XChainTransactionVertexRef } from "../schema/primary-network-transaction-details.ts";
import {
  blockNumberOf,
  blockTimestampOf,
  CChainAtomicTransactionRef,
  PChainTransactionRef,
  PrimaryNetworkTransactionRef,
} from "../schema/primary-network-transactions.ts";
import { creationTxHashOf, isPChainUtxo, PrimaryNetworkUtxoRef } from "../schema/primary-network-utxos.ts";
import { L1ValidatorRef } from "../schema/primary-network-validators.ts";
import type { GatewayContext } from "../src/execution/context.ts";
import {
  PRIMARY_NETWORK_BLOCK_FIELDS_KNOWN_FROM_TRANSACTION,
  PRIMARY_NETWORK_BLOCK_FIELDS_KNOWN_FROM_UTXO,
  selectsOnly,
} from "../src/execution/selection.ts";
import { byImplementation, callCost, upstreamCalls, type UpstreamCost } from "../src/limits/upstream-cost-declarations.ts";
import { TYPE_SPECIFIC_LINK_SHARE } from "../src/limits/upstream-cost-rules.ts";
import { findPrimaryChain, originOf, register } from "../src/upstream/primary-network-api.ts";
import { ROUTES } from "../src/upstream/routes.ts";
import type {
  PChainTransaction,
  PrimaryNetworkBlock,
  PrimaryNetworkTransaction,
  PrimaryNetworkUtxo,
  XChainVertex,
} from "../src/upstream/types.ts";

/**
 * A transaction's block; null for one in an X-Chain vertex. When the query asks only what the
 * transaction tells of its block (height, id, time, chain), that part of the block, without a call.
 */
function blockOf(
  tx: PrimaryNetworkTransaction,
  context: GatewayContext,
  info: GraphQLResolveInfo,
): Promise<PrimaryNetworkBlock | null> | PrimaryNetworkBlock | null {
  const height = blockNumberOf(tx);
  if (height === undefined) return null;
  if (selectsOnly(info, PRIMARY_NETWORK_BLOCK_FIELDS_KNOWN_FROM_TRANSACTION)) {
    const known: Pick<PrimaryNetworkBlock, "blockNumber" | "blockHash" | "blockTimestamp"> = {
      blockNumber: height,
      blockHash: (tx as { blockHash: string }).blockHash,
      blockTimestamp: blockTimestampOf(tx),
    };
    // The partial record is safe because no other field of it is resolved.
    return register(known as PrimaryNetworkBlock, originOf(tx));
  }
  return context.loaders.primaryNetworkBlock.load({ origin: originOf(tx), id: height });
}

/**
 * A block of a P-Chain UTXO (the one that created it, or spent it) on a chain of its network; when
 * the query asks only what the UTXO tells of it (height, time, chain), that part, without a call.
 */
function utxoBlock(
  utxo: PrimaryNetworkUtxo,
  blockchainId: string,
  blockNumber: string | undefined,
  blockTimestamp: number | undefined,
  context: GatewayContext,
  info: GraphQLResolveInfo,
): Promise<PrimaryNetworkBlock | null> | PrimaryNetworkBlock | null {
  const origin = findPrimaryChain(originOf(utxo).network, blockchainId);
  if (!origin || blockNumber === undefined) return null;
  if (blockTimestamp !== undefined && selectsOnly(info, PRIMARY_NETWORK_BLOCK_FIELDS_KNOWN_FROM_UTXO)) {
    const known: Pick<PrimaryNetworkBlock, "blockNumber" | "blockTimestamp"> = { blockNumber, blockTimestamp };
    return register(known as PrimaryNetworkBlock, origin);
  }
  return context.loaders.primaryNetworkBlock.load({ origin, id: blockNumber });
}

/** A transaction of a chain of the network a record came from; null when the chain is not one of its three. */
function transactionOn(record: object, blockchainId: string, txHash: string | undefined, context: GatewayContext) {
  const origin = findPrimaryChain(originOf(record).network, blockchainId);
  if (!origin || !txHash) return null;
  return context.loaders.primaryNetworkTransaction.load({ origin, id: txHash });
}

async function transactionBlock(
  tx: Promise<PrimaryNetworkTransaction | null> | null,
  context: GatewayContext,
  info: GraphQLResolveInfo,
) {
  const found = await tx;
  return found ? blockOf(found, context, info) : null;
}

/** A link only one family of P-Chain transaction types has: on a share of a page's transactions. */
const TYPE_SPECIFIC_LINK: UpstreamCost = callCost(ROUTES.primaryNetworkTransaction, { presentOnShare: TYPE_SPECIFIC_LINK_SHARE });
/** One look-up per item of the list the field returns. */
const ONE_TRANSACTION_PER_ITEM: UpstreamCost = callCost(ROUTES.primaryNetworkTransaction, { callsPerItem: true });

// A page of UTXOs shares the transactions that created and spent them, and their blocks.
const POOLED_TRANSACTION: UpstreamCost = callCost(ROUTES.primaryNetworkTransaction, { pool: "primary-network transaction" });
// A P-Chain UTXO names its blocks; the others' blocks are those of their transactions, which the
// request loads once for both fields (and which tell some of their block's fields).
const POOLED_BLOCK_OF_UTXO: UpstreamCost = callCost(ROUTES.primaryNetworkBlock, {
  pool: "primary-network block",
  freeWhenSelectingOnly: PRIMARY_NETWORK_BLOCK_FIELDS_KNOWN_FROM_UTXO,
});
const blockOfUtxoTransaction = (transaction: "creation transaction" | "consuming transaction"): UpstreamCost =>
  callCost(ROUTES.primaryNetworkBlock, {
    sharedPerObject: transaction,
    pool: "primary-network block",
    freeWhenSelectingOnly: PRIMARY_NETWORK_BLOCK_FIELDS_KNOWN_FROM_TRANSACTION,
  });

builder.interfaceFields(PrimaryNetworkTransactionRef, (t) => ({
  block: t.field({
    type: PrimaryNetworkBlockRef,
    nullable: true,
    extensions: upstreamCalls(
      callCost(ROUTES.primaryNetworkBlock, { freeWhenSelectingOnly: PRIMARY_NETWORK_BLOCK_FIELDS_KNOWN_FROM_TRANSACTION }),
    ),
    description:
      "The block that holds the transaction; null for an X-Chain transaction in a vertex. Fetched only when a field is asked that the transaction does not already tell (its block's height, id and time).",
    resolve: (tx, _args, context, info) => blockOf(tx, context, info),
  }),
}));

builder.interfaceFields(PrimaryNetworkUtxoRef, (t) => ({
  creationTransaction: t.field({
    type: PrimaryNetworkTransactionRef,
    nullable: true,
    extensions: upstreamCalls(
      byImplementation({ PChainUtxo: POOLED_TRANSACTION, Utxo: { calls: 0, sharedPerObject: "creation transaction" } }),
    ),
    description: "The transaction that created the UTXO, on the chain that created it.",
    resolve: (utxo, _args, context) => creationTransaction(utxo, context),
  }),
  consumingTransaction: t.field({
    type: PrimaryNetworkTransactionRef,
    nullable: true,
    extensions: upstreamCalls(
      byImplementation({ PChainUtxo: POOLED_TRANSACTION, Utxo: { calls: 0, sharedPerObject: "consuming transaction" } }),
    ),
    description: "The transaction that spent the UTXO; null while unspent.",
    resolve: (utxo, _args, context) => transactionOn(utxo, utxo.consumedOnChainId, utxo.consumingTxHash, context),
  }),
  creationBlock: t.field({
    type: PrimaryNetworkBlockRef,
    nullable: true,
    extensions: upstreamCalls(
      byImplementation({ PChainUtxo: POOLED_BLOCK_OF_UTXO, Utxo: blockOfUtxoTransaction("creation transaction") }),
    ),
    description:
      "The block of the transaction that created the UTXO; null when a vertex of the X-Chain holds that transaction. A P-Chain UTXO tells its block's height and time, so asking only those (and the chain) costs no call; an X- or C-Chain UTXO's block is found through its transaction.",
    resolve: (utxo, _args, context, info) => {
      if (!isPChainUtxo(utxo)) return transactionBlock(creationTransaction(utxo, context), context, info);
      return utxoBlock(utxo, utxo.createdOnChainId, utxo.blockNumber, utxo.blockTimestamp, context, info);
    },
  }),
  consumingBlock: t.field({
    type: PrimaryNetworkBlockRef,
    nullable: true,
    extensions: upstreamCalls(
      byImplementation({ PChainUtxo: POOLED_BLOCK_OF_UTXO, Utxo: blockOfUtxoTransaction("consuming transaction") }),
    ),
    description:
      "The block of the transaction that spent the UTXO; null while unspent, or when a vertex holds that transaction. As for `creationBlock`, a P-Chain UTXO's height and time cost no call.",
    resolve: (utxo, _args, context, info) => {
      if (!isPChainUtxo(utxo))
        return transactionBlock(transactionOn(utxo, utxo.consumedOnChainId, utxo.consumingTxHash, context), context, info);
      return utxoBlock(utxo, utxo.consumedOnChainId, utxo.consumingBlockNumber, utxo.consumingBlockTimestamp, context, info);
    },
  }),
}));

function creationTransaction(utxo: PrimaryNetworkUtxo, context: GatewayContext) {
  return transactionOn(utxo, utxo.createdOnChainId, creationTxHashOf(utxo), context);
}

function pChainTransaction(tx: PChainTransaction, txHash: string | undefined, context: GatewayContext) {
  if (!txHash) return null;
  return context.loaders.primaryNetworkTransaction.load({
    origin: originOf(tx),
    id: txHash,
  }) as Promise<PChainTransaction | null>;
}

builder.objectFields(PChainTransactionRef, (t) => ({
  rewardTransaction: t.field({
    type: PChainTransactionRef,
    nullable: true,
    extensions: upstreamCalls(TYPE_SPECIFIC_LINK),
    description: "Validator and delegator transactions: the RewardValidatorTx that ended the staking period, once there is one.",
    resolve: (tx, _args, context) => pChainTransaction(tx, tx.rewardTxHash, context),
  }),
  stakingTransaction: t.field({
    type: PChainTransactionRef,
    nullable: true,
    extensions: upstreamCalls(TYPE_SPECIFIC_LINK),
    description: "RewardValidatorTx: the validator or delegator transaction whose staking period it ends.",
    resolve: (tx, _args, context) => pChainTransaction(tx, tx.stakingTxHash, context),
  }),
}));

builder.objectFields(L1ValidatorTransactionDetailsRef, (t) => ({
  validator: t.field({
    type: L1ValidatorRef,
    nullable: true,
    extensions: upstreamCalls(callCost(ROUTES.l1Validators, { presentOnShare: TYPE_SPECIFIC_LINK_SHARE })),
    description: "The L1 validator as it is now.",
    resolve: (details, _args, context) =>
      context.loaders.l1Validator.load({ network: originOf(details).network, id: details.validationId }),
  }),
}));

builder.objectFields(XChainTransactionVertexRef, (t) => ({
  vertex: t.field({
    type: XChainVertexRef,
    nullable: true,
    extensions: upstreamCalls(callCost(ROUTES.vertex)),
    description: "The vertex itself.",
    resolve: (vertex, _args, context) =>
      context.loaders.xChainVertex.load({ network: originOf(vertex).network, id: vertex.hash }),
  }),
}));

builder.objectFields(CChainAtomicTransactionRef, (t) => ({
  evmBlock: t.field({
    type: EvmBlockRef,
    nullable: true,
    extensions: upstreamCalls(callCost(ROUTES.block)),
    description: "The C-Chain block that holds the transaction, as an EVM block.",
    resolve: (tx, _args, context) => context.loaders.block.load({ chainId: originOf(tx).blockchainId, blockId: tx.blockHash }),
  }),
}));

builder.objectFields(PrimaryNetworkBlockRef, (t) => ({
  parent: t.field({
    type: PrimaryNetworkBlockRef,
    nullable: true,
    extensions: upstreamCalls(callCost(ROUTES.primaryNetworkBlock)),
    description: "The block before this one; null for the first block (the X-Chain's first block follows its last vertex).",
    resolve: (block, _args, context) => {
      if (block.blockNumber === "0") return null;
      return context.loaders.primaryNetworkBlock.load({
        origin: originOf(block),
        id: (BigInt(block.blockNumber) - 1n).toString(),
      });
    },
  }),
  transactions: t.field({
    type: [PrimaryNetworkTransactionRef],
    nullable: true,
    extensions: upstreamCalls(ONE_TRANSACTION_PER_ITEM),
    description: "The block's transactions, one look-up each; a transaction the chain cannot find is left out.",
    resolve: async (block, _args, context) => {
      const origin = originOf(block);
      const found = await context.loaders.primaryNetworkTransaction.loadMany(block.transactions.map((id) => ({ origin, id })));
      return found.filter((tx): tx is PrimaryNetworkTransaction => tx !== null && !(tx instanceof Error));
    },
  }),
}));

builder.objectFields(XChainVertexRef, (t) => ({
  parents: t.field({
    type: [XChainVertexRef],
    nullable: true,
    extensions: upstreamCalls(callCost(ROUTES.vertex, { callsPerItem: true })),
    description: "The vertices this one builds on, one look-up each (none for the first vertex).",
    resolve: async (vertex, _args, context) => {
      const { network } = originOf(vertex);
      const found = await context.loaders.xChainVertex.loadMany(vertex.parentHashes.map((id) => ({ network, id })));
      return found.filter((parent): parent is XChainVertex => parent !== null && !(parent instanceof Error));
    },
  }),
  transactions: t.field({
    type: [PrimaryNetworkTransactionRef],
    nullable: true,
    extensions: upstreamCalls(ONE_TRANSACTION_PER_ITEM),
    description: "The vertex's transactions, one look-up each; a transaction the chain cannot find is left out.",
    resolve: async (vertex, _args, context) => {
      const origin = originOf(vertex);
      const found = await context.loaders.primaryNetworkTransaction.loadMany(vertex.transactions.map((id) => ({ origin, id })));
      return found.filter((tx): tx is PrimaryNetworkTransaction => tx !== null && !(tx instanceof Error));
    },
  }),
}));
