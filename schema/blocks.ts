/** EVM blocks, as the Data API lists them and returns them one by one. */
import { malformedGlobalIdKey, parsedOrRefused, validKey } from "../src/execution/global-ids.ts";
import type { EvmBlock } from "../src/upstream/types.ts";
import { blockIdOf, isChainId } from "../src/upstream/identifiers.ts";
import { builder } from "./builder.ts";

export const EvmBlockRef = builder.objectRef<EvmBlock>("EvmBlock");

type SchemaTypes = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer Types> ? Types : never;

/** What a block and each transaction in it tell of the block's time. */
interface BlockTimed {
  blockTimestamp: number;
  blockTimestampMilliseconds?: number;
  blockMinDelayExcess?: number;
}

/** The time fields of a block, on the block itself and on the records that carry its time. */
export function blockTimeFields<Parent extends BlockTimed>(
  t: PothosSchemaTypes.ObjectFieldBuilder<SchemaTypes, Parent>,
  whose: string,
) {
  return {
    blockTimestamp: t.field({
      type: "SafeInt",
      description: `When ${whose} was proposed, in Unix seconds.`,
      resolve: (parent) => parent.blockTimestamp,
    }),
    blockTime: t.field({
      type: "DateTime",
      description: `When ${whose} was proposed, as a date (from \`blockTimestampMilliseconds\` where known, else \`blockTimestamp\`).`,
      resolve: (parent) => new Date(parent.blockTimestampMilliseconds ?? parent.blockTimestamp * 1000),
    }),
    blockTimestampMilliseconds: t.field({
      type: "SafeInt",
      nullable: true,
      description: `When ${whose} was proposed, in Unix milliseconds; only for blocks after the Granite upgrade.`,
      resolve: (parent) => parent.blockTimestampMilliseconds ?? null,
    }),
    blockMinDelayExcess: t.field({
      type: "SafeInt",
      nullable: true,
      description: `The minimum block delay excess of ${whose}, in milliseconds; only for blocks after the Granite upgrade.`,
      resolve: (parent) => parent.blockMinDelayExcess ?? null,
    }),
  };
}

/** The global id of a block: its chain and hash, which is all the block route needs. */
export function evmBlockId(block: Pick<EvmBlock, "chainId" | "blockHash">): string {
  return `${block.chainId}:${block.blockHash}`;
}

/** The key of a block's global id, checked like the `chain(id:)` and `block(id:)` arguments. */
export function parseEvmBlockId(id: string): { chainId: string; blockId: string } {
  const separator = id.indexOf(":");
  const chainId = id.slice(0, Math.max(separator, 0));
  const blockId = blockIdOf(id.slice(separator + 1));
  if (separator <= 0 || !isChainId(chainId) || blockId === undefined) {
    throw malformedGlobalIdKey("EvmBlock", "an EVM chain id and a block hash or number, joined by a colon", id);
  }
  return { chainId, blockId };
}

builder.node(EvmBlockRef, {
  description: "A block of an EVM chain (`GET /v1/chains/{chainId}/blocks/{blockId}`).",
  id: { resolve: evmBlockId, parse: (id) => parsedOrRefused(() => parseEvmBlockId(id)) },
  loadOne: (key, context) => context.loaders.block.load(validKey(key)),
  fields: (t) => ({
    chainId: t.exposeString("chainId", { description: "The EVM chain id of the block's chain, in decimal." }),
    blockNumber: t.expose("blockNumber", { type: "BigInt", description: "The block's height." }),
    blockHash: t.expose("blockHash", { type: "Hash", description: "The block's hash." }),
    parentHash: t.expose("parentHash", { type: "Hash", description: "The hash of the block before this one." }),
    ...blockTimeFields(t, "the block"),
    txCount: t.exposeInt("txCount", { description: "How many transactions the block holds." }),
    baseFee: t.expose("baseFee", { type: "BigInt", description: "The base fee per gas of the block, in wei." }),
    gasUsed: t.expose("gasUsed", { type: "BigInt", description: "Gas used by the block's transactions." }),
    gasLimit: t.expose("gasLimit", { type: "BigInt", description: "The most gas the block's transactions may use." }),
    gasCost: t.expose("gasCost", { type: "BigInt", description: "The gas cost of the block, in wei." }),
    feesSpent: t.expose("feesSpent", {
      type: "BigInt",
      description: "Fees paid (burned) by the block's transactions, in wei.",
    }),
    cumulativeTransactions: t.expose("cumulativeTransactions", {
      type: "BigInt",
      description: "Transactions on the chain up to and including this block.",
    }),
  }),
});

export const EvmBlockConnectionRef = builder.connectionObject(
  {
    type: EvmBlockRef,
    name: "EvmBlockConnection",
    description: "A page of blocks, newest first.",
  },
  { name: "EvmBlockEdge", description: "A block and the cursor that continues after it." },
);
