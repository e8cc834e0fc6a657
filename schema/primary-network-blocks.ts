/** Blocks of the primary-network chains, and the vertices of the X-Chain's DAG. */
import { originOf } from "../src/upstream/primary-network-api.ts";
import { parsedOrRefused, validKey } from "../src/execution/global-ids.ts";
import { BLOCK_NUMBER, CB58_ID, HEX_32 } from "../src/upstream/identifiers.ts";
import type { PrimaryNetworkBlock, ProposerDetails, XChainVertex } from "../src/upstream/types.ts";
import { builder } from "./builder.ts";
import { dateTimeOf } from "./date-times.ts";
import { NetworkRef } from "./networks.ts";
import {
  chainInfoOf,
  chainRecordId,
  networkRecordId,
  parseChainRecordId,
  parseNetworkRecordId,
  PrimaryNetworkChainInfoRef,
  PrimaryNetworkChainName,
} from "./primary-network.ts";

export const ProposerDetailsRef = builder.objectRef<ProposerDetails>("ProposerDetails").implement({
  description: "Who proposed a block under Snowman++, and on which P-Chain view.",
  fields: (t) => ({
    proposerId: t.exposeString("proposerId", {
      nullable: true,
      description: "The id of the proposer block that wraps this block (cb58).",
    }),
    proposerParentId: t.exposeString("proposerParentId", {
      nullable: true,
      description: "The id of the proposer block before it (cb58).",
    }),
    proposerNodeId: t.exposeString("proposerNodeId", {
      nullable: true,
      description: "The node that proposed the block (`NodeID-...`).",
    }),
    proposerPChainHeight: t.expose("proposerPChainHeight", {
      type: "BigInt",
      nullable: true,
      description: "The P-Chain height whose validator set the proposer used.",
    }),
    proposerTimestamp: t.expose("proposerTimestamp", {
      type: "SafeInt",
      nullable: true,
      description: "When the block was proposed, in Unix seconds.",
    }),
    proposerTime: t.field({
      type: "DateTime",
      nullable: true,
      description: "`proposerTimestamp` as a date.",
      resolve: (parent) => dateTimeOf(parent.proposerTimestamp),
    }),
  }),
});

export const PrimaryNetworkBlockRef = builder.objectRef<PrimaryNetworkBlock>("PrimaryNetworkBlock");

builder.node(PrimaryNetworkBlockRef, {
  description:
    "A block of the P-Chain, of the X-Chain (since it has blocks) or of the C-Chain as the primary network sees it (`GET /v1/networks/{network}/blockchains/{blockchainId}/blocks/{blockId}`).",
  id: {
    resolve: (block) => chainRecordId(block, block.blockHash),
    // The block id is checked like the `block(id:)` argument of a chain.
    parse: (id) =>
      parsedOrRefused(() => {
        const key = parseChainRecordId("PrimaryNetworkBlock", id, {
          shape: "a block height or id (0x hex on the C-Chain, cb58 elsewhere)",
          valid: (blockId, origin) => BLOCK_NUMBER.test(blockId) || (origin.chain === "c-chain" ? HEX_32 : CB58_ID).test(blockId),
        });
        return key.origin.chain === "c-chain" ? { ...key, id: key.id.toLowerCase() } : key;
      }),
  },
  loadOne: (key, context) => context.loaders.primaryNetworkBlock.load(validKey(key)),
  fields: (t) => ({
    network: t.field({ type: NetworkRef, description: "The block's network.", resolve: (block) => originOf(block).network }),
    blockchainId: t.field({
      type: "String",
      description: "The block's chain (blockchain id, cb58).",
      resolve: (block) => originOf(block).blockchainId,
    }),
    chainName: t.field({
      type: PrimaryNetworkChainName.ref,
      description: "Which chain of the primary network the block is on.",
      resolve: (block) => originOf(block).chain,
    }),
    blockNumber: t.expose("blockNumber", { type: "BigInt", description: "The block's height." }),
    blockHash: t.exposeString("blockHash", { description: "The block's id: cb58 on the P- and X-Chain, 0x hex on the C-Chain." }),
    parentHash: t.exposeString("parentHash", { description: "The id of the block before this one." }),
    blockTimestamp: t.expose("blockTimestamp", { type: "SafeInt", description: "When the block was accepted, in Unix seconds." }),
    blockTime: t.field({
      type: "DateTime",
      description: "When the block was accepted, as a date (from `blockTimestamp`).",
      resolve: (block) => dateTimeOf(block.blockTimestamp),
    }),
    blockType: t.exposeString("blockType", {
      description: "The kind of block, as the Data API names it (such as `BanffStandardBlock`, `BanffProposalBlock`).",
    }),
    txCount: t.exposeInt("txCount", { description: "How many transactions the block holds (on the C-Chain, atomic ones only)." }),
    transactionHashes: t.stringList({
      description: "The hashes of the block's transactions, in block order (the record's `transactions`).",
      resolve: (block) => block.transactions,
    }),
    blockSizeBytes: t.exposeInt("blockSizeBytes", { description: "The block's size, in bytes." }),
    l1ValidatorsAccruedFees: t.expose("l1ValidatorsAccruedFees", {
      type: "BigInt",
      nullable: true,
      description: "P-Chain: the fees L1 validators have accrued up to this block, in nAVAX.",
    }),
    activeL1Validators: t.expose("activeL1Validators", {
      type: "SafeInt",
      nullable: true,
      description: "P-Chain: how many L1 validators were active at this block.",
    }),
    currentSupply: t.expose("currentSupply", {
      type: "BigInt",
      nullable: true,
      description: "P-Chain: the AVAX supply at this block, in nAVAX.",
    }),
    proposerDetails: t.expose("proposerDetails", {
      type: ProposerDetailsRef,
      nullable: true,
      description: "Who proposed the block; absent for blocks without a proposer (such as genesis).",
    }),
  }),
});

export const XChainVertexRef = builder.objectRef<XChainVertex>("XChainVertex");

builder.node(XChainVertexRef, {
  description:
    "A vertex of the X-Chain's DAG, from before the X-Chain moved to blocks (`GET /v1/networks/{network}/blockchains/{blockchainId}/vertices/{vertexHash}`).",
  id: {
    resolve: (vertex) => networkRecordId(vertex, vertex.vertexHash),
    // Checked like the `vertex(hash:)` argument.
    parse: (id) =>
      parsedOrRefused(() =>
        parseNetworkRecordId("XChainVertex", id, { shape: "a vertex id in cb58", valid: (hash) => CB58_ID.test(hash) }),
      ),
  },
  loadOne: (key, context) => context.loaders.xChainVertex.load(validKey(key)),
  fields: (t) => ({
    network: t.field({ type: NetworkRef, description: "The vertex's network.", resolve: (vertex) => originOf(vertex).network }),
    vertexHash: t.exposeString("vertexHash", { description: "The vertex's id (cb58)." }),
    parentHashes: t.exposeStringList("parentHashes", { description: "The ids of the vertices this one builds on." }),
    vertexHeight: t.field({
      type: "BigInt",
      description: "The vertex's height in the DAG: one more than its parents'.",
      resolve: (vertex) => String(vertex.vertexHeight),
    }),
    vertexIndex: t.exposeInt("vertexIndex", { description: "The vertex's position in the order the X-Chain accepted vertices." }),
    vertexTimestamp: t.expose("vertexTimestamp", {
      type: "SafeInt",
      description: "When the vertex was accepted, in Unix seconds.",
    }),
    vertexTime: t.field({
      type: "DateTime",
      description: "`vertexTimestamp` as a date.",
      resolve: (parent) => dateTimeOf(parent.vertexTimestamp),
    }),
    txCount: t.exposeInt("txCount", { description: "How many transactions the vertex holds." }),
    transactionHashes: t.stringList({
      description: "The hashes of the vertex's transactions (the record's `transactions`).",
      resolve: (vertex) => vertex.transactions,
    }),
    vertexSizeBytes: t.exposeInt("vertexSizeBytes", { description: "The vertex's size, in bytes." }),
  }),
});

export const XChainVertexConnectionRef = builder.connectionObject(
  {
    type: XChainVertexRef,
    name: "XChainVertexConnection",
    description: "A page of X-Chain vertices at one height.",
    fields: (t) => ({
      chainInfo: t.field({
        type: PrimaryNetworkChainInfoRef,
        description: "The chain and network that answered.",
        resolve: chainInfoOf,
      }),
    }),
  },
  { name: "XChainVertexEdge", description: "A vertex and the cursor that continues after it." },
);
