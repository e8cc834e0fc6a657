/**
 * What happens inside an EVM transaction: ERC-20, ERC-721 and ERC-1155 transfers with their
 * tokens, internal calls, prices, and the interchain message a transaction sends or receives.
 */
import {
  currencyCodeValues,
  erc1155TokenErcTypeValues,
  erc20TokenErcTypeValues,
  erc721TokenErcTypeValues,
  internalTransactionOpCallValues,
  nftTokenMetadataStatusValues,
  transactionDirectionTypeValues,
} from "../src/upstream/contract/data-api.ts";
import type {
  Erc1155Token,
  Erc1155TokenMetadata,
  Erc1155Transfer,
  Erc20Token,
  Erc20Transfer,
  Erc721Token,
  Erc721TokenMetadata,
  Erc721Transfer,
  InternalTransaction,
  Money,
  NetworkTokenDetails,
  RichAddress,
  TeleporterMessageInfo,
} from "../src/upstream/types.ts";
import { builder } from "./builder.ts";
import { dateTimeOf } from "./date-times.ts";
import { NetworkTokenRef } from "./chains.ts";
import { upstreamEnum } from "./enums.ts";

export const ErcType = upstreamEnum(
  "ErcType",
  [...erc20TokenErcTypeValues, ...erc721TokenErcTypeValues, ...erc1155TokenErcTypeValues],
  "The token standard a contract implements.",
  {
    "ERC-20": "A fungible token (ERC-20).",
    "ERC-721": "A non-fungible token collection, one owner per token id (ERC-721).",
    "ERC-1155": "A multi-token contract: each token id has a balance per owner (ERC-1155).",
  },
);

export const InternalTransactionType = upstreamEnum(
  "InternalTransactionType",
  internalTransactionOpCallValues,
  "The EVM operation that made an internal call.",
  {
    UNKNOWN: "An operation the upstream could not classify, or one it added after this gateway was built.",
    CALL: "A message call, which can carry value.",
    CREATE: "A contract creation with CREATE (address from sender and nonce).",
    CREATE2: "A contract creation with CREATE2 (address from sender, salt and code).",
    CREATE3: "A contract creation through a CREATE3 factory (address from sender and salt only).",
    CALLCODE: "A call that runs the callee's code in the caller's storage, keeping the caller's value (legacy).",
    DELEGATECALL: "A call that runs the callee's code in the caller's storage and context.",
    STATICCALL: "A read-only call that cannot change state.",
  },
);

export const NftIndexStatus = upstreamEnum(
  "NftIndexStatus",
  nftTokenMetadataStatusValues,
  "How far the Data API got in indexing an NFT's metadata from its token URI.",
  {
    UNKNOWN: "The state is not known, or the upstream added it after this gateway was built.",
    MISSING_TOKEN: "The contract does not know the token id.",
    INVALID_TOKEN_URI: "The token URI is not a valid URI.",
    INVALID_TOKEN_URI_SCHEME: "The token URI uses a scheme the indexer does not fetch.",
    UNREACHABLE_TOKEN_URI: "The token URI could not be reached.",
    THROTTLED_TOKEN_URI: "The host of the token URI throttled the indexer; it will retry.",
    METADATA_CONTENT_TOO_LARGE: "The metadata document is too large to index.",
    INVALID_METADATA: "The metadata document does not follow the metadata standard.",
    INVALID_METADATA_JSON: "The metadata document is not valid JSON.",
    INDEXED: "The metadata was fetched and indexed; its fields are filled in.",
    UNINDEXED: "The metadata has not been fetched yet.",
  },
);

export const CurrencyCode = upstreamEnum("CurrencyCode", currencyCodeValues, "The currency a price is given in.", {
  usd: "US dollar.",
  eur: "Euro.",
  aud: "Australian dollar.",
  cad: "Canadian dollar.",
  chf: "Swiss franc.",
  clp: "Chilean peso.",
  cny: "Chinese yuan.",
  czk: "Czech koruna.",
  dkk: "Danish krone.",
  gbp: "Pound sterling.",
  hkd: "Hong Kong dollar.",
  huf: "Hungarian forint.",
  jpy: "Japanese yen.",
  nzd: "New Zealand dollar.",
});

export const TeleporterMessageDirection = upstreamEnum(
  "TeleporterMessageDirection",
  transactionDirectionTypeValues,
  "Which side of an interchain (Teleporter/ICM) message a transaction is.",
  {
    SOURCE_TRANSACTION: "The transaction sent the message from this chain.",
    DESTINATION_TRANSACTION: "The transaction delivered the message on this chain.",
  },
);

export const EvmAddressInfoRef = builder.objectRef<RichAddress>("EvmAddressInfo").implement({
  description:
    "An address as the Data API names it in transactions and transfers: the address, plus the name, symbol, decimals and logo when it is a contract the Data API knows.",
  fields: (t) => ({
    address: t.expose("address", { type: "EvmAddress", description: "The address." }),
    name: t.exposeString("name", {
      nullable: true,
      description: "The contract's name; null for an account or an unknown contract.",
    }),
    symbol: t.exposeString("symbol", { nullable: true, description: "The token symbol of the contract, if it has one." }),
    decimals: t.exposeInt("decimals", {
      nullable: true,
      description: "Decimal places of the contract's token: an amount of 10^decimals base units is one token.",
    }),
    logoUri: t.exposeString("logoUri", { nullable: true, description: "URL of the contract's logo." }),
  }),
});

export const MoneyRef = builder.objectRef<Money>("Money").implement({
  description: "A price: an amount of a currency.",
  fields: (t) => ({
    currencyCode: t.field({
      type: CurrencyCode.ref,
      description: "The currency of `value`.",
      resolve: (money) => CurrencyCode.fromUpstream(money.currencyCode) ?? "UNKNOWN",
    }),
    value: t.exposeFloat("value", { description: "The amount, in whole units of the currency (for example 25.41)." }),
  }),
});

export const Erc20TokenRef = builder.objectRef<Erc20Token>("Erc20Token").implement({
  description: "An ERC-20 token contract, as a transfer names it.",
  fields: (t) => ({
    address: t.expose("address", { type: "EvmAddress", description: "The token contract's address." }),
    name: t.exposeString("name", { description: "The token's name." }),
    symbol: t.exposeString("symbol", { description: "The token's symbol." }),
    decimals: t.exposeInt("decimals", { description: "Decimal places: an amount of 10^decimals base units is one token." }),
    logoUri: t.exposeString("logoUri", { nullable: true, description: "URL of the token's logo." }),
    ercType: t.field({
      type: ErcType.ref,
      description: "The token standard: `ERC_20`.",
      resolve: (token) => ErcType.fromUpstream(token.ercType) ?? "UNKNOWN",
    }),
    price: t.expose("price", {
      type: MoneyRef,
      nullable: true,
      description: "The token's current price, when the Data API's price feed knows it.",
    }),
  }),
});

const nftMetadataFields = {
  indexStatus: "How far the metadata was indexed; the other fields are filled in when `INDEXED`.",
  metadataLastUpdatedTimestamp: "When the indexer last tried the metadata, in Unix seconds.",
  name: "The token's name, from its metadata.",
  symbol: "The token's symbol, from its metadata.",
  imageUri: "URL of the token's image.",
  description: "The token's description, from its metadata.",
  animationUri: "URL of the token's animation or video.",
  externalUrl: "URL of a page about the token.",
  background: "The background color the metadata asks for, as hex digits without #.",
} as const;

/** What the metadata of ERC-721 and ERC-1155 tokens have in common. */
export const NftTokenMetadataRef = builder
  .interfaceRef<Erc721TokenMetadata | Erc1155TokenMetadata>("NftTokenMetadata")
  .implement({
    description: "The metadata of an NFT (ERC-721 or ERC-1155), as far as the Data API indexed it.",
    fields: (t) => ({
      indexStatus: t.field({
        type: NftIndexStatus.ref,
        description: nftMetadataFields.indexStatus,
        resolve: (metadata) => NftIndexStatus.fromUpstream(metadata.indexStatus) ?? "UNKNOWN",
      }),
      metadataLastUpdatedTimestamp: t.expose("metadataLastUpdatedTimestamp", {
        type: "SafeInt",
        nullable: true,
        description: nftMetadataFields.metadataLastUpdatedTimestamp,
      }),
      metadataLastUpdatedTime: t.field({
        type: "DateTime",
        nullable: true,
        description: "`metadataLastUpdatedTimestamp` as a date.",
        resolve: (parent) => dateTimeOf(parent.metadataLastUpdatedTimestamp),
      }),
      name: t.exposeString("name", { nullable: true, description: nftMetadataFields.name }),
      symbol: t.exposeString("symbol", { nullable: true, description: nftMetadataFields.symbol }),
      imageUri: t.exposeString("imageUri", { nullable: true, description: nftMetadataFields.imageUri }),
      description: t.exposeString("description", { nullable: true, description: nftMetadataFields.description }),
      animationUri: t.exposeString("animationUri", { nullable: true, description: nftMetadataFields.animationUri }),
      externalUrl: t.exposeString("externalUrl", { nullable: true, description: nftMetadataFields.externalUrl }),
      background: t.exposeString("background", { nullable: true, description: nftMetadataFields.background }),
    }),
  });

export const Erc721TokenMetadataRef = builder.objectRef<Erc721TokenMetadata>("Erc721TokenMetadata").implement({
  description: "The metadata of an ERC-721 token, as far as the Data API indexed it.",
  interfaces: [NftTokenMetadataRef],
  fields: (t) => ({
    attributes: t.exposeString("attributes", {
      nullable: true,
      description: "The token's attributes (traits) as the JSON text of the metadata.",
    }),
  }),
});

export const Erc1155TokenMetadataRef = builder.objectRef<Erc1155TokenMetadata>("Erc1155TokenMetadata").implement({
  description: "The metadata of an ERC-1155 token, as far as the Data API indexed it.",
  interfaces: [NftTokenMetadataRef],
  fields: (t) => ({
    decimals: t.exposeInt("decimals", {
      nullable: true,
      description: "Decimal places of the token's balances, from its metadata (0 for indivisible items).",
    }),
    properties: t.exposeString("properties", {
      nullable: true,
      description: "The token's properties as the JSON text of the metadata.",
    }),
  }),
});

export const Erc721TokenRef = builder.objectRef<Erc721Token>("Erc721Token").implement({
  description: "One token of an ERC-721 collection, as a transfer names it.",
  fields: (t) => ({
    address: t.expose("address", { type: "EvmAddress", description: "The collection contract's address." }),
    name: t.exposeString("name", { description: "The collection's name." }),
    symbol: t.exposeString("symbol", { description: "The collection's symbol." }),
    ercType: t.field({
      type: ErcType.ref,
      description: "The token standard: `ERC_721`.",
      resolve: (token) => ErcType.fromUpstream(token.ercType) ?? "UNKNOWN",
    }),
    tokenId: t.expose("tokenId", { type: "BigInt", description: "The token's id within the collection." }),
    tokenUri: t.exposeString("tokenUri", { description: "Where the token's metadata lives, as the contract reports it." }),
    metadata: t.expose("metadata", {
      type: Erc721TokenMetadataRef,
      description: "The token's metadata, as far as it was indexed.",
    }),
    ownerAddress: t.expose("ownerAddress", {
      type: "EvmAddress",
      nullable: true,
      description: "The token's owner, as the Data API last indexed it.",
    }),
  }),
});

export const Erc1155TokenRef = builder.objectRef<Erc1155Token>("Erc1155Token").implement({
  description: "One token id of an ERC-1155 contract, as a transfer names it.",
  fields: (t) => ({
    address: t.expose("address", { type: "EvmAddress", description: "The contract's address." }),
    ercType: t.field({
      type: ErcType.ref,
      description: "The token standard: `ERC_1155`.",
      resolve: (token) => ErcType.fromUpstream(token.ercType) ?? "UNKNOWN",
    }),
    tokenId: t.expose("tokenId", { type: "BigInt", description: "The token id within the contract." }),
    tokenUri: t.exposeString("tokenUri", { description: "Where the token's metadata lives, as the contract reports it." }),
    metadata: t.expose("metadata", {
      type: Erc1155TokenMetadataRef,
      description: "The token's metadata, as far as it was indexed.",
    }),
  }),
});

export const Erc20TransferRef = builder.objectRef<Erc20Transfer>("Erc20Transfer").implement({
  description: "An ERC-20 transfer emitted by a transaction.",
  fields: (t) => ({
    from: t.expose("from", { type: EvmAddressInfoRef, description: "Whose tokens moved (the zero address for a mint)." }),
    to: t.expose("to", { type: EvmAddressInfoRef, description: "Who received them (the zero address for a burn)." }),
    logIndex: t.exposeInt("logIndex", { description: "The position of the transfer's log within its block." }),
    value: t.expose("value", {
      type: "BigInt",
      description: "The amount, in the token's base units (divide by 10^decimals for whole tokens).",
    }),
    erc20Token: t.expose("erc20Token", { type: Erc20TokenRef, description: "The token that moved, with its price." }),
  }),
});

export const Erc721TransferRef = builder.objectRef<Erc721Transfer>("Erc721Transfer").implement({
  description: "An ERC-721 transfer emitted by a transaction: one token changed owner.",
  fields: (t) => ({
    from: t.expose("from", { type: EvmAddressInfoRef, description: "The previous owner (the zero address for a mint)." }),
    to: t.expose("to", { type: EvmAddressInfoRef, description: "The new owner (the zero address for a burn)." }),
    logIndex: t.exposeInt("logIndex", { description: "The position of the transfer's log within its block." }),
    erc721Token: t.expose("erc721Token", { type: Erc721TokenRef, description: "The token that moved, with its metadata." }),
  }),
});

export const Erc1155TransferRef = builder.objectRef<Erc1155Transfer>("Erc1155Transfer").implement({
  description: "An ERC-1155 transfer emitted by a transaction: an amount of one token id moved.",
  fields: (t) => ({
    from: t.expose("from", { type: EvmAddressInfoRef, description: "Whose tokens moved (the zero address for a mint)." }),
    to: t.expose("to", { type: EvmAddressInfoRef, description: "Who received them (the zero address for a burn)." }),
    logIndex: t.exposeInt("logIndex", { description: "The position of the transfer's log within its block." }),
    value: t.expose("value", { type: "BigInt", description: "How many units of the token id moved." }),
    erc1155Token: t.expose("erc1155Token", { type: Erc1155TokenRef, description: "The token that moved, with its metadata." }),
  }),
});

export const EvmInternalTransactionRef = builder.objectRef<InternalTransaction>("EvmInternalTransaction").implement({
  description: "A call one contract made to another address while a transaction ran (from the transaction's trace).",
  fields: (t) => ({
    from: t.expose("from", { type: EvmAddressInfoRef, description: "The calling contract (or the sender, for a creation)." }),
    to: t.expose("to", { type: EvmAddressInfoRef, description: "The called address, or the created contract." }),
    internalTxType: t.field({
      type: InternalTransactionType.ref,
      description: "The operation that made the call.",
      resolve: (call) => InternalTransactionType.fromUpstream(call.internalTxType) ?? "UNKNOWN",
    }),
    value: t.expose("value", { type: "BigInt", description: "Native tokens sent with the call, in wei." }),
    isReverted: t.exposeBoolean("isReverted", {
      description: "True when the call reverted: its effects, value included, were undone.",
    }),
    gasUsed: t.expose("gasUsed", { type: "BigInt", description: "Gas the call used." }),
    gasLimit: t.expose("gasLimit", { type: "BigInt", description: "Gas the call was given." }),
  }),
});

export const EvmNetworkTokenDetailsRef = builder.objectRef<NetworkTokenDetails>("EvmNetworkTokenDetails").implement({
  description: "The native token of a transaction's chain, with its price now and when the transaction ran.",
  fields: (t) => ({
    networkToken: t.expose("networkToken", { type: NetworkTokenRef, description: "The chain's native token." }),
    currentPrice: t.expose("currentPrice", {
      type: MoneyRef,
      nullable: true,
      description: "The token's price now; null when the price feed does not know the token.",
    }),
    historicalPrice: t.expose("historicalPrice", {
      type: MoneyRef,
      nullable: true,
      description: "The token's price when the transaction ran; given only for transactions more than a day old.",
    }),
  }),
});

export const TeleporterMessageInfoRef = builder.objectRef<TeleporterMessageInfo>("TeleporterMessageInfo").implement({
  description: "The interchain (Teleporter/ICM) message a transaction sent or delivered.",
  fields: (t) => ({
    teleporterMessageId: t.exposeString("teleporterMessageId", { description: "The message's id." }),
    direction: t.field({
      type: TeleporterMessageDirection.ref,
      description: "Whether the transaction sent or delivered the message.",
      resolve: (info) => TeleporterMessageDirection.fromUpstream(info.direction) ?? "UNKNOWN",
    }),
    sourceChainId: t.exposeString("sourceChainId", {
      nullable: true,
      description: "The chain the message came from; given when the transaction delivered it.",
    }),
    destinationChainId: t.exposeString("destinationChainId", {
      nullable: true,
      description: "The chain the message goes to; given when the transaction sent it.",
    }),
  }),
});
