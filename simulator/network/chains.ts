import type { components as DataComponents } from "../../src/upstream/contract/data-api.ts";
import type { components as MetricsComponents } from "../../src/upstream/contract/metrics-api.ts";
import { derivedAddress, derivedCb58Id } from "./ids.ts";

export type ChainInfo = DataComponents["schemas"]["ChainInfo"];
export type MetricsChain = MetricsComponents["schemas"]["Chain"];
type ApiFeature = DataComponents["schemas"]["ApiFeature"];
type ChainStatus = DataComponents["schemas"]["ChainStatus"];

/** A network as the simulator stores it; the contract's `testnet` is an alias of `fuji`. */
export type NetworkName = Exclude<DataComponents["schemas"]["Network"], "testnet">;

export const PRIMARY_NETWORK_SUBNET_ID = "11111111111111111111111111111111LpoYY";
const CORETH_VM_ID = "mgj786NP7uDwBCcq6YwThhaN8FLyybkCa4zBWTQbNgmK6k9A6";
const SUBNET_EVM_VM_ID = "srEXiWaHuhNyGwPUi444Tu47ZEDwxTWrbQiuD7FmgSAQ6X7Dy";
const MULTICALL3_ADDRESS = "0xcA11bde05977b3631167028862bE2a173976CA11";
const ASSETS_BASE_URL = "https://assets.avax-simulator.example";

/** How a chain produces blocks: the parameters of its block generator. */
export interface BlockProfile {
  /**
   * The chain's rhythm: the time between consecutive blocks is drawn uniformly from this range, then
   * scaled so that its mean is the network's `blockIntervalSeconds`.
   */
  intervalMs: { min: number; max: number };
  /** The rhythm of the blocks that come after the head time in live mode, unscaled. */
  liveIntervalMs: { min: number; max: number };
  gasLimit: number;
  /** Base fee bounds in wei; it moves with the parent block's gas use, EIP-1559 style. */
  baseFeeWei: { initial: number; min: number; max: number };
  emptyBlockRate: number;
  maxTxPerBlock: number;
  gasPerTx: { min: number; max: number };
  /** Block gas cost charged per millisecond a block's unscaled interval falls short of the target; 0 disables it. */
  blockGasCostPerMs: number;
  targetIntervalMs: number;
  minDelayExcess: number;
}

export interface ChainDefinition {
  network: NetworkName;
  info: ChainInfo;
  metrics: MetricsChain;
  profile: BlockProfile;
}

const C_CHAIN_PROFILE: BlockProfile = {
  intervalMs: { min: 1000, max: 2600 },
  liveIntervalMs: { min: 1500, max: 2500 },
  gasLimit: 15_000_000,
  baseFeeWei: { initial: 25_000_000_000, min: 1_000_000_000, max: 100_000_000_000 },
  emptyBlockRate: 0.08,
  maxTxPerBlock: 40,
  gasPerTx: { min: 21_000, max: 250_000 },
  blockGasCostPerMs: 0,
  targetIntervalMs: 2000,
  minDelayExcess: 7_477_290,
};

interface CChainIds {
  network: NetworkName;
  evmChainId: number;
  blockchainId: string;
  rpcHost: string;
  explorerUrl: string;
}

function cChain({ network, evmChainId, blockchainId, rpcHost, explorerUrl }: CChainIds): ChainDefinition {
  const isTestnet = network === "fuji";
  const chainName = isTestnet ? "Avalanche Fuji (C-Chain)" : "Avalanche (C-Chain)";
  return {
    network,
    info: {
      chainId: String(evmChainId),
      status: "OK",
      chainName,
      description: isTestnet
        ? "Test network instance of the Avalanche Contract Chain."
        : "The EVM chain of the Avalanche primary network.",
      platformChainId: blockchainId,
      subnetId: PRIMARY_NETWORK_SUBNET_ID,
      vmId: CORETH_VM_ID,
      vmName: "EVM",
      explorerUrl,
      rpcUrl: `https://${rpcHost}/ext/bc/C/rpc`,
      wsUrl: `wss://${rpcHost}/ext/bc/C/ws`,
      isTestnet,
      utilityAddresses: { multicall: MULTICALL3_ADDRESS },
      networkToken: {
        name: "Avalanche",
        symbol: "AVAX",
        decimals: 18,
        logoUri: `${ASSETS_BASE_URL}/tokens/avax.svg`,
        description: "Native token of the Avalanche primary network.",
      },
      chainLogoUri: `${ASSETS_BASE_URL}/chains/avalanche-c-chain.svg`,
      private: false,
      enabledFeatures: ["nftIndexing", "webhooks", "teleporter"],
    },
    metrics: {
      evmChainId,
      chainName,
      blockchainId,
      subnetId: PRIMARY_NETWORK_SUBNET_ID,
      network: isTestnet ? "testnet" : "mainnet",
    },
    profile: C_CHAIN_PROFILE,
  };
}

interface L1Description {
  network: NetworkName;
  evmChainId: number;
  chainName: string;
  /** Short lowercase name used in URLs and as the seed of the chain's ids. */
  slug: string;
  description: string;
  status: ChainStatus;
  enabledFeatures: ApiFeature[];
  token: { name: string; symbol: string; description: string };
  profile: BlockProfile;
}

function l1Chain(l1: L1Description): ChainDefinition {
  const isTestnet = l1.network === "fuji";
  const blockchainId = derivedCb58Id(`blockchain:${l1.slug}`);
  const subnetId = derivedCb58Id(`subnet:${l1.slug}`);
  const rpcHost = isTestnet ? "api.avax-test.network" : "api.avax.network";
  const explorerHost = isTestnet ? "subnets-test.avax.network" : "subnets.avax.network";
  return {
    network: l1.network,
    info: {
      chainId: String(l1.evmChainId),
      status: l1.status,
      chainName: l1.chainName,
      description: l1.description,
      platformChainId: blockchainId,
      subnetId,
      vmId: SUBNET_EVM_VM_ID,
      vmName: "EVM",
      explorerUrl: `https://${explorerHost}/${l1.slug}`,
      rpcUrl: `https://${rpcHost}/ext/bc/${blockchainId}/rpc`,
      wsUrl: `wss://${rpcHost}/ext/bc/${blockchainId}/ws`,
      isTestnet,
      utilityAddresses: { multicall: derivedAddress(`multicall:${l1.slug}`) },
      networkToken: {
        ...l1.token,
        decimals: 18,
        logoUri: `${ASSETS_BASE_URL}/tokens/${l1.token.symbol.toLowerCase()}.svg`,
      },
      chainLogoUri: `${ASSETS_BASE_URL}/chains/${l1.slug}.svg`,
      private: false,
      enabledFeatures: l1.enabledFeatures,
    },
    metrics: {
      evmChainId: l1.evmChainId,
      chainName: l1.chainName,
      blockchainId,
      subnetId,
      network: isTestnet ? "testnet" : "mainnet",
    },
    profile: l1.profile,
  };
}

const HALCYON_PROFILE: BlockProfile = {
  intervalMs: { min: 1800, max: 3000 },
  liveIntervalMs: { min: 3000, max: 7000 },
  gasLimit: 20_000_000,
  baseFeeWei: { initial: 2_000_000_000, min: 1_000_000_000, max: 40_000_000_000 },
  emptyBlockRate: 0.35,
  maxTxPerBlock: 25,
  gasPerTx: { min: 21_000, max: 400_000 },
  blockGasCostPerMs: 100,
  targetIntervalMs: 2000,
  minDelayExcess: 6_100_000,
};

const QUARRY_PROFILE: BlockProfile = {
  intervalMs: { min: 1000, max: 1600 },
  liveIntervalMs: { min: 2000, max: 4000 },
  gasLimit: 12_000_000,
  baseFeeWei: { initial: 30_000_000, min: 25_000_000, max: 5_000_000_000 },
  emptyBlockRate: 0.5,
  maxTxPerBlock: 12,
  gasPerTx: { min: 21_000, max: 120_000 },
  blockGasCostPerMs: 0,
  targetIntervalMs: 1000,
  minDelayExcess: 4_200_000,
};

/** Every chain of the sample network: the C-Chain of each network under its real ids, and invented L1s. */
export const CHAIN_DEFINITIONS: readonly ChainDefinition[] = [
  cChain({
    network: "mainnet",
    evmChainId: 43114,
    blockchainId: "2q9e4r6Mu3U68nU1fYjgbR6JvwrRx36CohpAX5UQxse55x1Q5",
    rpcHost: "api.avax.network",
    explorerUrl: "https://subnets.avax.network/c-chain",
  }),
  l1Chain({
    network: "mainnet",
    evmChainId: 73310,
    chainName: "Halcyon L1",
    slug: "halcyon",
    description: "Sample gaming L1 with its own validator set.",
    status: "OK",
    enabledFeatures: ["nftIndexing", "teleporter"],
    token: { name: "Halcyon", symbol: "HALO", description: "Gas token of the Halcyon L1." },
    profile: HALCYON_PROFILE,
  }),
  l1Chain({
    network: "mainnet",
    evmChainId: 51288,
    chainName: "Quarry L1",
    slug: "quarry",
    description: "Sample payments L1 with fast blocks.",
    status: "OK",
    enabledFeatures: ["webhooks"],
    token: { name: "Quarry", symbol: "QRY", description: "Gas token of the Quarry L1." },
    profile: QUARRY_PROFILE,
  }),
  cChain({
    network: "fuji",
    evmChainId: 43113,
    blockchainId: "yH8D7ThNJkxmtkuv2jgBa4P1Rn3Qpr4pPr7QYNfcdoS6k6HWp",
    rpcHost: "api.avax-test.network",
    explorerUrl: "https://subnets-test.avax.network/c-chain",
  }),
  l1Chain({
    network: "fuji",
    evmChainId: 73311,
    chainName: "Halcyon Testnet",
    slug: "halcyon-testnet",
    description: "Test network of the sample Halcyon L1.",
    status: "OK",
    enabledFeatures: ["teleporter"],
    token: { name: "Test Halcyon", symbol: "THALO", description: "Gas token of the Halcyon testnet." },
    profile: HALCYON_PROFILE,
  }),
  l1Chain({
    network: "fuji",
    evmChainId: 51289,
    chainName: "Quarry Testnet",
    slug: "quarry-testnet",
    description: "Test network of the sample Quarry L1.",
    status: "UNAVAILABLE",
    enabledFeatures: [],
    token: { name: "Test Quarry", symbol: "TQRY", description: "Gas token of the Quarry testnet." },
    profile: QUARRY_PROFILE,
  }),
];
