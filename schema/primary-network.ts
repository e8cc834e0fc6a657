/**
 * The primary network of a network: its P-, X- and C-Chain, and what their records share
 * (asset amounts, the chain stamp of list answers, global ids).
 */
import { JSONObjectResolver, JSONResolver } from "graphql-scalars";
import { malformedGlobalIdKey } from "../src/execution/global-ids.ts";
import { primaryNetworkAssetTypeValues, primaryNetworkChainNameValues } from "../src/upstream/contract/data-api.ts";
import {
  findPrimaryChain,
  originOf,
  primaryChain,
  type PrimaryNetworkName,
  type PrimaryNetworkOrigin,
} from "../src/upstream/primary-network-api.ts";
import type { AssetAmount, PrimaryNetworkChainInfo } from "../src/upstream/types.ts";
import { builder } from "./builder.ts";
import { upstreamEnum } from "./enums.ts";
import { NetworkRef, upstreamNetwork } from "./networks.ts";

builder.addScalarType("JSON", JSONResolver, {
  description: "Any JSON value, passed on as the upstream sent it: for record members the Data API leaves open.",
});
builder.addScalarType("JSONObject", JSONObjectResolver, {
  description: "A JSON object, passed on as the upstream sent it: for objects whose members the Data API leaves open.",
});

export const PrimaryNetworkChainName = upstreamEnum(
  "PrimaryNetworkChainName",
  primaryNetworkChainNameValues,
  "One of the three chains of the Avalanche primary network.",
  {
    "p-chain": "The Platform Chain: validators, subnets and L1s, staking.",
    "x-chain": "The Exchange Chain: AVAX and other assets, first as a DAG of vertices, now in blocks.",
    "c-chain": "The Contract Chain (EVM); here only its atomic imports and exports with the other two chains.",
  },
);

export const PrimaryNetworkAssetType = upstreamEnum(
  "PrimaryNetworkAssetType",
  primaryNetworkAssetTypeValues,
  "How an asset of the primary network is held.",
  {
    secp256k1: "A fungible asset held by secp256k1 keys, such as AVAX.",
    nft: "A non-fungible asset: each UTXO is one token of a collection.",
  },
);

export const AssetAmountRef = builder.objectRef<AssetAmount>("AssetAmount").implement({
  description: "An amount of one asset of the primary network.",
  fields: (t) => ({
    assetId: t.exposeString("assetId", { description: "The asset's id (cb58); for AVAX, the id of the network's AVAX." }),
    name: t.exposeString("name", { description: "The asset's name." }),
    symbol: t.exposeString("symbol", { description: "The asset's ticker symbol." }),
    denomination: t.exposeInt("denomination", {
      description:
        "Decimal places: `amount` counts units of 10^-denomination of the asset (9 for AVAX, whose unit is the nAVAX).",
    }),
    type: t.field({
      type: PrimaryNetworkAssetType.ref,
      description: "How the asset is held.",
      resolve: (amount) => PrimaryNetworkAssetType.fromUpstream(amount.type) ?? "UNKNOWN",
    }),
    amount: t.expose("amount", { type: "BigInt", description: "The amount, in the asset's smallest unit." }),
  }),
});

export const PrimaryNetworkChainInfoRef = builder.objectRef<PrimaryNetworkChainInfo>("PrimaryNetworkChainInfo").implement({
  description: "The chain and network that answered a list, as the Data API stamps its answers.",
  fields: (t) => ({
    chainName: t.field({
      type: PrimaryNetworkChainName.ref,
      description: "The chain that answered.",
      resolve: (info) => PrimaryNetworkChainName.fromUpstream(info.chainName) ?? "UNKNOWN",
    }),
    network: t.field({
      type: NetworkRef,
      description: "The network that answered (`FUJI` where the Data API says testnet).",
      resolve: (info) => upstreamNetwork(info.network),
    }),
  }),
});

/** The chain stamp of the upstream answer behind a connection (`meta` of its last page). */
export function chainInfoOf(connection: object): PrimaryNetworkChainInfo {
  return (connection as { meta: PrimaryNetworkChainInfo }).meta;
}

/** The parent of `PrimaryNetwork`: a network, not an upstream record. */
interface PrimaryNetworkScope {
  network: PrimaryNetworkName;
}

export const PrimaryNetworkRef = builder.objectRef<PrimaryNetworkScope>("PrimaryNetwork");
export const PrimaryNetworkChainRef = builder.interfaceRef<PrimaryNetworkOrigin>("PrimaryNetworkChain");
export const PChainRef = builder.objectRef<PrimaryNetworkOrigin>("PChain");
export const XChainRef = builder.objectRef<PrimaryNetworkOrigin>("XChain");
export const CChainRef = builder.objectRef<PrimaryNetworkOrigin>("CChain");

PrimaryNetworkChainRef.implement({
  description:
    "A chain of the primary network (`P-Chain`, `X-Chain` or `C-Chain`) of one network. Each chain has its own transaction and UTXO shapes: `transaction(hash:)` answers any chain's, and the lists (`transactions`, `utxos`) are on the chain's own type, whose filters and kinds differ.",
  resolveType: (chain) => ({ "p-chain": "PChain", "x-chain": "XChain", "c-chain": "CChain" })[chain.chain],
  fields: (t) => ({
    network: t.expose("network", { type: NetworkRef, description: "The network of the chain (`MAINNET` or `FUJI`)." }),
    blockchainId: t.exposeString("blockchainId", {
      description: "The chain's blockchain id (cb58). The P-Chain's is the same on both networks.",
    }),
    chainName: t.field({
      type: PrimaryNetworkChainName.ref,
      description: "Which of the three chains this is.",
      resolve: (chain) => chain.chain,
    }),
  }),
});

const chainDescriptions = {
  PChain: "The P-Chain of a network: staking, subnets, L1s and their validators, and AVAX moving to and from the other chains.",
  XChain: "The X-Chain of a network: AVAX and other assets; its history holds a DAG of vertices before its blocks.",
  CChain:
    "The C-Chain of a network as the primary network sees it: the atomic transactions that move AVAX between it and the P- and X-Chain, and the UTXOs waiting to be imported into it.",
};
for (const ref of [PChainRef, XChainRef, CChainRef]) {
  ref.implement({
    description: chainDescriptions[ref.name as keyof typeof chainDescriptions],
    interfaces: [PrimaryNetworkChainRef],
  });
}

PrimaryNetworkRef.implement({
  description: "The Avalanche primary network of one network: the P-, X- and C-Chain, and the network's L1 validators.",
  fields: (t) => ({
    network: t.expose("network", { type: NetworkRef, description: "The network (`MAINNET` or `FUJI`)." }),
    pChain: t.field({ type: PChainRef, description: "The P-Chain.", resolve: (scope) => primaryChain(scope.network, "p-chain") }),
    xChain: t.field({ type: XChainRef, description: "The X-Chain.", resolve: (scope) => primaryChain(scope.network, "x-chain") }),
    cChain: t.field({ type: CChainRef, description: "The C-Chain.", resolve: (scope) => primaryChain(scope.network, "c-chain") }),
  }),
});

/**
 * The global id of a record of one chain: network, blockchain id and the record's own id (a
 * block or transaction hash), which is all its route needs.
 */
export function chainRecordId(record: object, id: string): string {
  const origin = originOf(record);
  return `${origin.network}:${origin.blockchainId}:${id}`;
}

/** How a type's own record ids look, checked like the direct argument for the same record. */
export interface RecordIdRule<Scope> {
  shape: string;
  valid: (id: string, scope: Scope) => boolean;
}

/** The key of a chain record's global id, or BAD_USER_INPUT when any part of it is malformed. */
export function parseChainRecordId(
  typename: string,
  text: string,
  rule: RecordIdRule<PrimaryNetworkOrigin>,
): { origin: PrimaryNetworkOrigin; id: string } {
  const [network, blockchainId, id, ...rest] = text.split(":");
  const origin =
    rest.length === 0 && (network === "mainnet" || network === "fuji")
      ? findPrimaryChain(network, blockchainId ?? "")
      : undefined;
  if (!origin || !id || !rule.valid(id, origin)) {
    throw malformedGlobalIdKey(
      typename,
      `mainnet or fuji, the blockchain id of one of its P-, X- and C-Chain, and ${rule.shape}, joined by colons`,
      text,
    );
  }
  return { origin, id };
}

/** The global id of a record of a network (a vertex, an L1 validator): network and the record's id. */
export function networkRecordId(record: object, id: string): string {
  return `${originOf(record).network}:${id}`;
}

/** The key of a network record's global id, or BAD_USER_INPUT when any part of it is malformed. */
export function parseNetworkRecordId(
  typename: string,
  text: string,
  rule: RecordIdRule<PrimaryNetworkName>,
): { network: PrimaryNetworkName; id: string } {
  const [network, id, ...rest] = text.split(":");
  if (rest.length > 0 || !id || (network !== "mainnet" && network !== "fuji") || !rule.valid(id, network)) {
    throw malformedGlobalIdKey(typename, `mainnet or fuji and ${rule.shape}, joined by a colon`, text);
  }
  return { network, id };
}
