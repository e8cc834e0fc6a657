/**
 * The links between primary-network records, all through the request's loaders: a transaction's
 * block, a UTXO's creating and consuming transactions and blocks, a block's parent and
 * transactions, a vertex's parents and transactions, an L1 transaction's validators.
 */
import { EvmBlockRef } from "../schema/blocks.ts";
import { builder } from "../schema/builder.ts";
import { PrimaryNetworkBlockRef, XChainVertexRef } from "../schema/primary-network-blocks.ts";
import {
  CChainAtomicTransactionRef,
  L1ValidatorTransactionDetailsRef,
  PChainTransactionRef,
  PrimaryNetworkTransactionRef,
  XChainTransactionVertexRef,
} from "../schema/primary-network-transactions.ts";
import { isPChainUtxo, PrimaryNetworkUtxoRef } from "../schema/primary-network-utxos.ts";
import { L1ValidatorRef } from "../schema/primary-network-validators.ts";
import type { GatewayContext } from "../src/context.ts";
import { findPrimaryChain, originOf } from "../src/upstream/primary-network-api.ts";
import type {
  PChainTransaction,
  PrimaryNetworkBlock,
  PrimaryNetworkTransaction,
  PrimaryNetworkUtxo,
  XChainVertex,
} from "../src/upstream/types.ts";

/** A transaction's block by height, the key its UTXOs' blocks use too; null for one in an X-Chain vertex. */
function blockOf(tx: PrimaryNetworkTransaction, context: GatewayContext): Promise<PrimaryNetworkBlock | null> | null {
  const height = "blockNumber" in tx ? tx.blockNumber : "blockHeight" in tx ? String(tx.blockHeight) : undefined;
  if (height === undefined) return null;
  return context.loaders.primaryNetworkBlock.load({ origin: originOf(tx), id: height });
}

/** A transaction of a chain of the network a record came from; null when the chain is not one of its three. */
function transactionOn(record: object, blockchainId: string, txHash: string | undefined, context: GatewayContext) {
  const origin = findPrimaryChain(originOf(record).network, blockchainId);
  if (!origin || !txHash) return null;
  return context.loaders.primaryNetworkTransaction.load({ origin, id: txHash });
}

async function transactionBlock(tx: Promise<PrimaryNetworkTransaction | null> | null, context: GatewayContext) {
  const found = await tx;
  return found ? blockOf(found, context) : null;
}

builder.interfaceFields(PrimaryNetworkTransactionRef, (t) => ({
  block: t.field({
    type: PrimaryNetworkBlockRef,
    nullable: true,
    description: "The block that holds the transaction; null for an X-Chain transaction in a vertex.",
    resolve: (tx, _args, context) => blockOf(tx, context),
  }),
}));

builder.interfaceFields(PrimaryNetworkUtxoRef, (t) => ({
  creationTransaction: t.field({
    type: PrimaryNetworkTransactionRef,
    nullable: true,
    description: "The transaction that created the UTXO, on the chain that created it.",
    resolve: (utxo, _args, context) => creationTransaction(utxo, context),
  }),
  consumingTransaction: t.field({
    type: PrimaryNetworkTransactionRef,
    nullable: true,
    description: "The transaction that spent the UTXO; null while unspent.",
    resolve: (utxo, _args, context) => transactionOn(utxo, utxo.consumedOnChainId, utxo.consumingTxHash, context),
  }),
  creationBlock: t.field({
    type: PrimaryNetworkBlockRef,
    nullable: true,
    description: "The block of the transaction that created the UTXO; null when a vertex of the X-Chain holds that transaction.",
    resolve: (utxo, _args, context) => {
      if (!isPChainUtxo(utxo)) return transactionBlock(creationTransaction(utxo, context), context);
      const origin = findPrimaryChain(originOf(utxo).network, utxo.createdOnChainId);
      return origin ? context.loaders.primaryNetworkBlock.load({ origin, id: utxo.blockNumber }) : null;
    },
  }),
  consumingBlock: t.field({
    type: PrimaryNetworkBlockRef,
    nullable: true,
    description: "The block of the transaction that spent the UTXO; null while unspent, or when a vertex holds that transaction.",
    resolve: (utxo, _args, context) => {
      if (!isPChainUtxo(utxo)) return transactionBlock(transactionOn(utxo, utxo.consumedOnChainId, utxo.consumingTxHash, context), context);
      const origin = findPrimaryChain(originOf(utxo).network, utxo.consumedOnChainId);
      return origin && utxo.consumingBlockNumber ? context.loaders.primaryNetworkBlock.load({ origin, id: utxo.consumingBlockNumber }) : null;
    },
  }),
}));

function creationTransaction(utxo: PrimaryNetworkUtxo, context: GatewayContext) {
  return transactionOn(utxo, utxo.createdOnChainId, isPChainUtxo(utxo) ? utxo.txHash : utxo.creationTxHash, context);
}

function pChainTransaction(tx: PChainTransaction, txHash: string | undefined, context: GatewayContext) {
  if (!txHash) return null;
  return context.loaders.primaryNetworkTransaction.load({ origin: originOf(tx), id: txHash }) as Promise<PChainTransaction | null>;
}

builder.objectFields(PChainTransactionRef, (t) => ({
  rewardTransaction: t.field({
    type: PChainTransactionRef,
    nullable: true,
    description: "Validator and delegator transactions: the RewardValidatorTx that ended the staking period, once there is one.",
    resolve: (tx, _args, context) => pChainTransaction(tx, tx.rewardTxHash, context),
  }),
  stakingTransaction: t.field({
    type: PChainTransactionRef,
    nullable: true,
    description: "RewardValidatorTx: the validator or delegator transaction whose staking period it ends.",
    resolve: (tx, _args, context) => pChainTransaction(tx, tx.stakingTxHash, context),
  }),
}));

builder.objectFields(L1ValidatorTransactionDetailsRef, (t) => ({
  validator: t.field({
    type: L1ValidatorRef,
    nullable: true,
    description: "The L1 validator as it is now.",
    resolve: (details, _args, context) => context.loaders.l1Validator.load({ network: originOf(details).network, id: details.validationId }),
  }),
}));

builder.objectFields(XChainTransactionVertexRef, (t) => ({
  vertex: t.field({
    type: XChainVertexRef,
    nullable: true,
    description: "The vertex itself.",
    resolve: (vertex, _args, context) => context.loaders.xChainVertex.load({ network: originOf(vertex).network, id: vertex.hash }),
  }),
}));

builder.objectFields(CChainAtomicTransactionRef, (t) => ({
  evmBlock: t.field({
    type: EvmBlockRef,
    nullable: true,
    description: "The C-Chain block that holds the transaction, as an EVM block.",
    resolve: (tx, _args, context) => context.loaders.block.load({ chainId: originOf(tx).blockchainId, blockId: tx.blockHash }),
  }),
}));

builder.objectFields(PrimaryNetworkBlockRef, (t) => ({
  parent: t.field({
    type: PrimaryNetworkBlockRef,
    nullable: true,
    description: "The block before this one; null for the first block (the X-Chain's first block follows its last vertex).",
    resolve: (block, _args, context) => {
      if (block.blockNumber === "0") return null;
      return context.loaders.primaryNetworkBlock.load({ origin: originOf(block), id: (BigInt(block.blockNumber) - 1n).toString() });
    },
  }),
  transactions: t.field({
    type: [PrimaryNetworkTransactionRef],
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
    description: "The vertices this one builds on, one look-up each (none for the first vertex).",
    resolve: async (vertex, _args, context) => {
      const { network } = originOf(vertex);
      const found = await context.loaders.xChainVertex.loadMany(vertex.parentHashes.map((id) => ({ network, id })));
      return found.filter((parent): parent is XChainVertex => parent !== null && !(parent instanceof Error));
    },
  }),
  transactions: t.field({
    type: [PrimaryNetworkTransactionRef],
    description: "The vertex's transactions, one look-up each; a transaction the chain cannot find is left out.",
    resolve: async (vertex, _args, context) => {
      const origin = originOf(vertex);
      const found = await context.loaders.primaryNetworkTransaction.loadMany(vertex.transactions.map((id) => ({ origin, id })));
      return found.filter((tx): tx is PrimaryNetworkTransaction => tx !== null && !(tx instanceof Error));
    },
  }),
}));
