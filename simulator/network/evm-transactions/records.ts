/** Turns a transaction's plan and its place in the chain into the contract's records. */
import { nftTokenMetadataStatusValues, type components } from "../../../src/upstream/contract/data-api.ts";
import type { ChainInfo } from "../chains.ts";
import { nftImage, tokenUri, usd, type ChainCatalog, type NftCollection } from "./catalog.ts";
import { NATIVE_TRANSFER_GAS, TxRandom, mix32, touches, type TxPlan } from "./plans.ts";
import type {
  AddressTransaction,
  EvmBlock,
  CompleteTransaction,
  Erc1155TokenMetadata,
  Erc1155Transfer,
  Erc20Transfer,
  Erc721TokenMetadata,
  Erc721Transfer,
  FullNativeTransaction,
  InternalTransaction,
  NativeTransaction,
} from "../../../src/upstream/types.ts";

type Schemas = components["schemas"];
type NftTokenMetadataStatus = Schemas["NftTokenMetadataStatus"];

const GWEI = 1_000_000_000n;
const DAY_SECONDS = 86_400;

/** Where a transaction sits and the facts that depend on its neighbours. */
export interface TxPlace {
  block: EvmBlock;
  index: number;
  hash: string;
  /** How many transactions its sender sent before it on this chain. */
  nonce: number;
  gasUsed: number;
  /** The block-wide index of its first log. */
  logStart: number;
}

export interface RecordContext {
  info: ChainInfo;
  catalog: ChainCatalog;
  /** Blockchain ids of the other chains of the network, for interchain messages. */
  peers: readonly string[];
  /** The network's "now", in Unix seconds. */
  headTime: number;
}

export interface Transfers {
  erc20Transfers: Erc20Transfer[];
  erc721Transfers: Erc721Transfer[];
  erc1155Transfers: Erc1155Transfer[];
  internalTransactions: InternalTransaction[];
}

export function nativeTransaction(plan: TxPlan, place: TxPlace, context: RecordContext): NativeTransaction {
  const { block } = place;
  const { catalog } = context;
  return {
    blockNumber: block.blockNumber,
    blockTimestamp: block.blockTimestamp,
    ...(block.blockTimestampMilliseconds === undefined ? {} : { blockTimestampMilliseconds: block.blockTimestampMilliseconds }),
    ...(block.blockMinDelayExcess === undefined ? {} : { blockMinDelayExcess: block.blockMinDelayExcess }),
    blockHash: block.blockHash,
    chainId: block.chainId,
    blockIndex: place.index,
    txHash: place.hash,
    txStatus: plan.failed ? "0" : "1",
    txType: plan.legacy ? 0 : 2,
    gasLimit: String(gasLimit(plan, place.gasUsed)),
    gasUsed: String(place.gasUsed),
    gasPrice: gasPrice(BigInt(block.baseFee), plan).toString(),
    nonce: String(place.nonce),
    from: catalog.richAddress(plan.from),
    to: catalog.richAddress(plan.to),
    method: { ...plan.method },
    value: plan.value,
  };
}

/** What the transaction paid per unit of gas, in wei: its block's base fee and its tip. */
export function gasPrice(baseFee: bigint, plan: TxPlan): bigint {
  return baseFee + BigInt(plan.tipGwei) * GWEI;
}

export function fullNativeTransaction(plan: TxPlan, place: TxPlace, context: RecordContext): FullNativeTransaction {
  const baseFee = BigInt(place.block.baseFee);
  const tip = BigInt(plan.tipGwei) * GWEI;
  return {
    ...nativeTransaction(plan, place, context),
    input: input(plan),
    baseFeePerGas: baseFee.toString(),
    ...(plan.legacy ? {} : { maxFeePerGas: (2n * baseFee + tip).toString(), maxPriorityFeePerGas: tip.toString() }),
  };
}

/** The transfers and calls of a transaction; with `address`, only those it sends or receives. */
export function transfers(plan: TxPlan, place: TxPlace, context: RecordContext, address?: string): Transfers {
  const { catalog } = context;
  const keep = (item: { from: string; to: string }) => address === undefined || touches(item, address);
  let logIndex = place.logStart;
  const erc20Transfers: Erc20Transfer[] = [];
  for (const move of plan.erc20) {
    const here = logIndex++;
    if (!keep(move)) continue;
    const { token } = move;
    erc20Transfers.push({
      from: catalog.richAddress(move.from),
      to: catalog.richAddress(move.to),
      logIndex: here,
      value: move.value,
      erc20Token: {
        address: token.address,
        name: token.name,
        symbol: token.symbol,
        decimals: token.decimals,
        ...(token.logoUri ? { logoUri: token.logoUri } : {}),
        ercType: "ERC-20",
        ...(token.priceUsd === undefined ? {} : { price: usd(token.priceUsd) }),
      },
    });
  }
  const erc721Transfers: Erc721Transfer[] = [];
  for (const move of plan.erc721) {
    const here = logIndex++;
    if (!keep(move)) continue;
    const { collection, tokenId } = move;
    const status = metadataStatus(collection, tokenId);
    erc721Transfers.push({
      from: catalog.richAddress(move.from),
      to: catalog.richAddress(move.to),
      logIndex: here,
      erc721Token: {
        address: collection.address,
        name: collection.name,
        symbol: collection.symbol,
        ercType: "ERC-721",
        tokenId: String(tokenId),
        tokenUri: tokenUri(collection, tokenId, uriScheme(status)),
        metadata: erc721Metadata(collection, tokenId, status, context.headTime),
        ...(status === "MISSING_TOKEN" ? {} : { ownerAddress: move.to }),
      },
    });
  }
  const erc1155Transfers: Erc1155Transfer[] = [];
  for (const move of plan.erc1155) {
    const here = logIndex++;
    if (!keep(move)) continue;
    const { collection, tokenId } = move;
    const status = metadataStatus(collection, tokenId);
    erc1155Transfers.push({
      from: catalog.richAddress(move.from),
      to: catalog.richAddress(move.to),
      logIndex: here,
      value: move.value,
      erc1155Token: {
        address: collection.address,
        ercType: "ERC-1155",
        tokenId: String(tokenId),
        tokenUri: tokenUri(collection, tokenId, uriScheme(status)),
        metadata: erc1155Metadata(collection, tokenId, status, context.headTime),
      },
    });
  }
  const internalTransactions: InternalTransaction[] = [];
  for (const item of plan.internal) {
    if (!keep(item)) continue;
    const used = Math.floor(place.gasUsed * item.gasShare);
    internalTransactions.push({
      from: catalog.richAddress(item.from),
      to: catalog.richAddress(item.to),
      internalTxType: item.type,
      value: item.value,
      isReverted: item.reverted,
      gasUsed: String(used),
      gasLimit: String(item.reverted ? used : used + Math.floor(used / 2)),
    });
  }
  return { erc20Transfers, erc721Transfers, erc1155Transfers, internalTransactions };
}

/** The logs a transaction emits: one per token transfer. */
export function logCount(plan: TxPlan): number {
  return plan.erc20.length + plan.erc721.length + plan.erc1155.length;
}

export function completeTransaction(plan: TxPlan, place: TxPlace, context: RecordContext): CompleteTransaction {
  const { info, catalog, headTime } = context;
  const price = catalog.nativePriceUsd;
  const age = headTime - place.block.blockTimestamp;
  const response: CompleteTransaction = {
    ...transfers(plan, place, context),
    networkTokenDetails: {
      networkToken: info.networkToken,
      ...(price === undefined ? {} : { currentPrice: usd(price) }),
      // A price at the time of the transaction is only known for transactions over a day old.
      ...(price !== undefined && age > DAY_SECONDS
        ? { historicalPrice: usd(historicalPrice(price, place.block.blockTimestamp)) }
        : {}),
    },
    nativeTransaction: fullNativeTransaction(plan, place, context),
  };
  if (plan.icm) {
    const peer = context.peers[plan.icm.peer]!;
    response.teleporterMessageInfo = {
      teleporterMessageId: plan.icm.messageId,
      direction: plan.icm.direction,
      ...(plan.icm.direction === "SOURCE_TRANSACTION" ? { destinationChainId: peer } : { sourceChainId: peer }),
    };
  }
  return response;
}

export function addressTransaction(plan: TxPlan, place: TxPlace, context: RecordContext, address: string): AddressTransaction {
  const scoped = transfers(plan, place, context, address);
  return {
    nativeTransaction: nativeTransaction(plan, place, context),
    // Empty lists are left out, as the contract allows.
    ...(scoped.erc20Transfers.length > 0 ? { erc20Transfers: scoped.erc20Transfers } : {}),
    ...(scoped.erc721Transfers.length > 0 ? { erc721Transfers: scoped.erc721Transfers } : {}),
    ...(scoped.erc1155Transfers.length > 0 ? { erc1155Transfers: scoped.erc1155Transfers } : {}),
    ...(scoped.internalTransactions.length > 0 ? { internalTransactions: scoped.internalTransactions } : {}),
  };
}

function gasLimit(plan: TxPlan, gasUsed: number): number {
  if (plan.kind === "native") return NATIVE_TRANSFER_GAS;
  return Math.max(gasUsed, Math.ceil(gasUsed * plan.gasLimitFactor));
}

function input(plan: TxPlan): string {
  if (plan.method.callType === "NATIVE_TRANSFER") return "0x";
  const random = new TxRandom(plan.inputSeed, 0, 0, 2);
  if (plan.method.callType === "CONTRACT_CREATION") return `0x6080604052${random.hex(96)}`;
  const word = (hex: string) => hex.padStart(64, "0");
  const transfer = plan.erc20[0];
  if (plan.method.methodName === "transfer(address,uint256)" && transfer) {
    return `${plan.method.methodHash}${word(transfer.to.slice(2))}${word(BigInt(transfer.value).toString(16))}`;
  }
  return `${plan.method.methodHash}${random.hex(32 * random.int(1, 5))}`;
}

function historicalPrice(current: number, timestamp: number): number {
  const drift = (mix32(Math.floor(timestamp / DAY_SECONDS)) % 2001) / 10_000 - 0.1;
  return Math.round(current * (1 + drift) * 10_000) / 10_000;
}

/** The index state of a token's metadata: most are indexed, the rest spread over the failure states. */
function metadataStatus(collection: NftCollection, tokenId: number): NftTokenMetadataStatus {
  const draw = mix32(mix32(Number.parseInt(collection.address.slice(2, 10), 16)) ^ tokenId) % 100;
  if (draw < 70) return "INDEXED";
  if (draw < 80) return "UNINDEXED";
  const failures = nftTokenMetadataStatusValues.filter((status) => status !== "INDEXED" && status !== "UNINDEXED");
  return failures[(draw - 80) % failures.length]!;
}

function uriScheme(status: NftTokenMetadataStatus): "https" | "ftp" | "broken" {
  if (status === "INVALID_TOKEN_URI_SCHEME") return "ftp";
  if (status === "INVALID_TOKEN_URI") return "broken";
  return "https";
}

function lastUpdated(collection: NftCollection, tokenId: number, headTime: number): number {
  return headTime - (mix32(tokenId * 31 + collection.supply) % (30 * DAY_SECONDS));
}

const RARITIES = ["Common", "Uncommon", "Rare", "Epic", "Legendary"];

function erc721Metadata(
  collection: NftCollection,
  tokenId: number,
  status: NftTokenMetadataStatus,
  headTime: number,
): Erc721TokenMetadata {
  if (status === "UNINDEXED") return { indexStatus: status };
  const metadataLastUpdatedTimestamp = lastUpdated(collection, tokenId, headTime);
  if (status !== "INDEXED") return { indexStatus: status, metadataLastUpdatedTimestamp };
  const trait = mix32(tokenId);
  return {
    indexStatus: status,
    metadataLastUpdatedTimestamp,
    name: `${collection.name} #${tokenId}`,
    symbol: collection.symbol,
    imageUri: nftImage(collection, tokenId),
    description: `Token ${tokenId} of the ${collection.name} collection.`,
    ...(trait % 4 === 0 ? { animationUri: nftImage(collection, tokenId).replace(/\.png$/, ".mp4") } : {}),
    externalUrl: `https://${collection.slug}.avax-simulator.example/tokens/${tokenId}`,
    ...(trait % 3 === 0 ? {} : { background: (trait & 0xffffff).toString(16).padStart(6, "0") }),
    attributes: JSON.stringify([
      { trait_type: "Rarity", value: RARITIES[trait % RARITIES.length] },
      { trait_type: "Level", value: 1 + (trait % 50) },
    ]),
  };
}

function erc1155Metadata(
  collection: NftCollection,
  tokenId: number,
  status: NftTokenMetadataStatus,
  headTime: number,
): Erc1155TokenMetadata {
  if (status === "UNINDEXED") return { indexStatus: status };
  const metadataLastUpdatedTimestamp = lastUpdated(collection, tokenId, headTime);
  if (status !== "INDEXED") return { indexStatus: status, metadataLastUpdatedTimestamp };
  const trait = mix32(tokenId + collection.supply);
  return {
    indexStatus: status,
    metadataLastUpdatedTimestamp,
    name: `${collection.name}: item ${tokenId}`,
    symbol: collection.symbol,
    imageUri: nftImage(collection, tokenId),
    description: `Item ${tokenId} of ${collection.name}.`,
    ...(trait % 4 === 0 ? { animationUri: nftImage(collection, tokenId).replace(/\.png$/, ".mp4") } : {}),
    externalUrl: `https://${collection.slug}.avax-simulator.example/items/${tokenId}`,
    ...(trait % 3 === 0 ? {} : { background: (trait & 0xffffff).toString(16).padStart(6, "0") }),
    decimals: 0,
    properties: JSON.stringify({ rarity: RARITIES[trait % RARITIES.length], stackable: trait % 2 === 0 }),
  };
}
