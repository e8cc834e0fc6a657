/** EVM chains: the chain record of the Data API and how the Metrics API knows the chain. */
import { malformedGlobalIdKey, validKey } from "../src/execution/global-ids.ts";
import { chainInfoEnabledFeaturesValues, chainStatusValues, vmNameValues } from "../src/upstream/contract/data-api.ts";
import type { ChainInfo, MetricsChain, NetworkToken, UtilityAddresses } from "../src/upstream/types.ts";
import { isChainId } from "../src/upstream/identifiers.ts";
import { builder } from "./builder.ts";
import { upstreamEnum } from "./enums.ts";
import { NetworkRef } from "./networks.ts";

export const ChainStatus = upstreamEnum("ChainStatus", chainStatusValues, "Whether the nodes behind an EVM chain are serving.", {
  OK: "The chain's nodes are serving.",
  UNAVAILABLE: "The chain's nodes are temporarily unavailable; fields that need them may fail with UPSTREAM_UNAVAILABLE.",
});

export const VmName = upstreamEnum("VmName", vmNameValues, "The virtual machine a chain runs.", {
  EVM: "The Ethereum Virtual Machine (subnet-evm or coreth).",
  BITCOIN: "A Bitcoin chain.",
  ETHEREUM: "An Ethereum chain.",
});

export const ApiFeature = upstreamEnum(
  "ApiFeature",
  chainInfoEnabledFeaturesValues,
  "An optional feature of the Data API for a chain.",
  {
    nftIndexing: "NFT metadata is indexed.",
    webhooks: "Webhooks can watch the chain.",
    teleporter: "Interchain (Teleporter/ICM) messages are indexed.",
  },
);

export const NetworkTokenRef = builder.objectRef<NetworkToken>("NetworkToken").implement({
  description: "The native token that pays for gas on a chain.",
  fields: (t) => ({
    name: t.exposeString("name", { description: "The token's name." }),
    symbol: t.exposeString("symbol", { description: "The token's ticker symbol." }),
    decimals: t.exposeInt("decimals", { description: "Decimal places: an amount of 10^decimals base units is one token." }),
    logoUri: t.exposeString("logoUri", { nullable: true, description: "URL of the token's logo." }),
    description: t.exposeString("description", { nullable: true, description: "A short text about the token." }),
  }),
});

export const UtilityAddressesRef = builder.objectRef<UtilityAddresses>("UtilityAddresses").implement({
  description: "Well-known contracts deployed on a chain.",
  fields: (t) => ({
    multicall: t.expose("multicall", { type: "EvmAddress", nullable: true, description: "Address of the Multicall contract." }),
  }),
});

export const ChainMetricsInfoRef = builder.objectRef<MetricsChain>("ChainMetricsInfo").implement({
  description: "How the Metrics API knows an EVM chain (`GET /v2/chains/{chainId}`).",
  fields: (t) => ({
    evmChainId: t.field({ type: "BigInt", description: "The EVM chain id.", resolve: (chain) => String(chain.evmChainId) }),
    chainName: t.exposeString("chainName", { description: "The chain's name in the Metrics API." }),
    blockchainId: t.exposeString("blockchainId", { description: "The chain's blockchain id on the P-Chain (cb58)." }),
    subnetId: t.exposeString("subnetId", { description: "The subnet (or L1) that validates the chain (cb58)." }),
    network: t.field({
      type: NetworkRef,
      description: "The network the Metrics API files the chain under (`MAINNET` or `FUJI`).",
      resolve: (chain) => (chain.network === "mainnet" ? "mainnet" : "fuji"),
    }),
  }),
});

export const EvmChainRef = builder.objectRef<ChainInfo>("EvmChain");

builder.node(EvmChainRef, {
  description: "An EVM chain the Data API indexes: the C-Chain or an Avalanche L1 (`GET /v1/chains/{chainId}`).",
  id: {
    resolve: (chain) => chain.chainId,
    // Checked like the `chain(id:)` argument.
    parse: (id) =>
      isChainId(id) ? id : malformedGlobalIdKey("EvmChain", "an EVM chain id in decimal or a blockchain id in cb58", id),
  },
  loadOne: (id, context) => context.loaders.chain.load(validKey(id)),
  fields: (t) => ({
    chainId: t.exposeString("chainId", { description: "The EVM chain id, in decimal (43114 for the mainnet C-Chain)." }),
    chainName: t.exposeString("chainName", { description: "The chain's display name." }),
    description: t.exposeString("description", { description: "A short text about the chain." }),
    status: t.field({
      type: ChainStatus.ref,
      description: "Whether the chain's nodes are serving (the chain's status; an export job's is `operationStatus`).",
      resolve: (chain) => ChainStatus.fromUpstream(chain.status) ?? "UNKNOWN",
    }),
    blockchainId: t.exposeString("platformChainId", {
      nullable: true,
      description:
        "The chain's blockchain id on the P-Chain (cb58), the `blockchainId` of the primary network and the Metrics API; accepted wherever a chain id is.",
    }),
    platformChainId: t.exposeString("platformChainId", {
      nullable: true,
      deprecationReason: "Use `blockchainId`, the name the rest of the graph gives a blockchain id.",
      description: "The chain's blockchain id on the P-Chain (cb58): the older name of `blockchainId`.",
    }),
    subnetId: t.exposeString("subnetId", { nullable: true, description: "The subnet (or L1) that validates the chain (cb58)." }),
    vmId: t.exposeString("vmId", { nullable: true, description: "The id of the virtual machine the chain runs (cb58)." }),
    vmName: t.field({
      type: VmName.ref,
      description: "The kind of virtual machine the chain runs.",
      resolve: (chain) => VmName.fromUpstream(chain.vmName) ?? "UNKNOWN",
    }),
    explorerUrl: t.exposeString("explorerUrl", { nullable: true, description: "URL of a block explorer for the chain." }),
    rpcUrl: t.exposeString("rpcUrl", { description: "URL of a public JSON-RPC endpoint of the chain." }),
    wsUrl: t.exposeString("wsUrl", { nullable: true, description: "URL of a public WebSocket endpoint of the chain." }),
    isTestnet: t.exposeBoolean("isTestnet", { description: "True for chains of the Fuji test network." }),
    network: t.field({
      type: NetworkRef,
      description: "The network the chain belongs to (`MAINNET` or `FUJI`), from `isTestnet`.",
      resolve: (chain) => (chain.isTestnet ? "fuji" : "mainnet"),
    }),
    utilityAddresses: t.expose("utilityAddresses", {
      type: UtilityAddressesRef,
      nullable: true,
      description: "Well-known contracts deployed on the chain.",
    }),
    networkToken: t.expose("networkToken", { type: NetworkTokenRef, description: "The token that pays for gas on the chain." }),
    chainLogoUri: t.exposeString("chainLogoUri", { nullable: true, description: "URL of the chain's logo." }),
    private: t.exposeBoolean("private", { nullable: true, description: "True when the chain is not open to the public." }),
    enabledFeatures: t.field({
      type: [ApiFeature.ref],
      description: "Optional Data API features enabled for the chain.",
      resolve: (chain) => (chain.enabledFeatures ?? []).map((feature) => ApiFeature.fromUpstream(feature) ?? "UNKNOWN"),
    }),
  }),
});
