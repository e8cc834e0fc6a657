import type { ChainInfo } from "../chains.ts";
import { derivedAddress } from "../ids.ts";
import type { Money, RichAddress } from "../../../src/upstream/types.ts";

export const ZERO_ADDRESS = `0x${"0".repeat(40)}`;
/** The messenger contract of Avalanche interchain messaging has the same address on every chain. */
const TELEPORTER_MESSENGER = "0x253b2784c75e510dd0ff1da844684a1ac0aa5fcf";
const ASSETS_BASE_URL = "https://assets.avax-simulator.example";
const NFT_BASE_URL = "https://nft.avax-simulator.example";

/** EOAs per chain. Picks are skewed towards the first ones, so a few accounts are very busy. */
export const ACCOUNTS_PER_CHAIN = 400;

export interface Erc20Contract {
  address: string;
  name: string;
  symbol: string;
  decimals: number;
  logoUri: string | undefined;
  /** USD price; undefined for tokens the price feed does not know. */
  priceUsd: number | undefined;
  /** Relative frequency in transfers. */
  weight: number;
}

export interface NftCollection {
  address: string;
  name: string;
  symbol: string;
  slug: string;
  /** Token ids run from 1 to this. */
  supply: number;
}

/** The contracts and accounts of one chain: every address a generated transaction names. */
export interface ChainCatalog {
  accounts: readonly string[];
  erc20: readonly Erc20Contract[];
  /** The wrapped native token; also in `erc20`. */
  wrappedNative: Erc20Contract;
  erc721: readonly NftCollection[];
  erc1155: readonly NftCollection[];
  router: string;
  pairs: readonly string[];
  multicall: string;
  factory: string;
  teleporter: string;
  /** USD price of the native token; undefined on test networks. */
  nativePriceUsd: number | undefined;
  /** How the Data API describes an address: its contract facts, or the bare address for an account. */
  richAddress(address: string): RichAddress;
  /** Every address of the catalog, accounts first. */
  allAddresses(): string[];
}

const NATIVE_PRICES_USD: Record<string, number> = { AVAX: 25.41, HALO: 0.4172, QRY: 0.01318 };

export function chainCatalog(seed: string, info: ChainInfo): ChainCatalog {
  const chainId = info.chainId;
  const contract = (label: string) => derivedAddress(`contract:${chainId}:${label}`);
  const logo = (symbol: string) => `${ASSETS_BASE_URL}/tokens/${symbol.toLowerCase()}.svg`;
  const symbol = info.networkToken.symbol;
  const nativePriceUsd = info.isTestnet ? undefined : NATIVE_PRICES_USD[symbol];
  const token = (
    name: string,
    tokenSymbol: string,
    decimals: number,
    priceUsd: number | undefined,
    weight: number,
    withLogo = true,
  ): Erc20Contract => ({
    address: contract(`erc20:${tokenSymbol}`),
    name,
    symbol: tokenSymbol,
    decimals,
    logoUri: withLogo ? logo(tokenSymbol) : undefined,
    priceUsd: info.isTestnet ? undefined : priceUsd,
    weight,
  });
  const wrappedNative = token(`Wrapped ${info.networkToken.name}`, `W${symbol}`, 18, nativePriceUsd, 5);
  const erc20 = [
    wrappedNative,
    token("USD Coin", "USDC", 6, 0.9998, 6),
    token("Tether USD", "USDt", 6, 1.0003, 4),
    token("Bridged Ether", "WETH.e", 18, 3120.55, 2),
    token("Bridged Bitcoin", "BTC.b", 8, 97250.1, 1),
    token("Shard", "SHRD", 18, undefined, 2, false),
  ];
  const collection = (name: string, collectionSymbol: string, supply: number): NftCollection => ({
    address: contract(`nft:${collectionSymbol}`),
    name,
    symbol: collectionSymbol,
    slug: collectionSymbol.toLowerCase(),
    supply,
  });
  const erc721 = [
    collection("Summit Explorers", "SUMMIT", 5000),
    collection("Glacier Pixels", "GPIX", 10000),
    collection("Relic Keys", "RELIC", 800),
  ];
  const erc1155 = [collection("Forge Items", "FORGE", 60), collection("Event Badges", "BADGE", 12)];
  const accounts = Array.from({ length: ACCOUNTS_PER_CHAIN }, (_, index) =>
    derivedAddress(`account:${seed}:${chainId}:${index}`),
  );

  const described = new Map<string, RichAddress>();
  for (const item of erc20) {
    described.set(item.address, {
      name: item.name,
      symbol: item.symbol,
      decimals: item.decimals,
      ...(item.logoUri ? { logoUri: item.logoUri } : {}),
      address: item.address,
    });
  }
  for (const item of [...erc721, ...erc1155]) {
    described.set(item.address, {
      name: item.name,
      symbol: item.symbol,
      logoUri: `${NFT_BASE_URL}/${item.slug}/logo.png`,
      address: item.address,
    });
  }
  const router = contract("router");
  const pairs = [contract("pair:0"), contract("pair:1"), contract("pair:2")];
  const multicall = info.utilityAddresses?.multicall?.toLowerCase() ?? contract("multicall");
  const factory = contract("factory");
  described.set(router, { name: "Summit Swap Router", logoUri: `${ASSETS_BASE_URL}/dapps/summit-swap.svg`, address: router });
  pairs.forEach((pair) => described.set(pair, { name: "Summit Swap LP", symbol: "SLP", decimals: 18, address: pair }));
  described.set(multicall, { name: "Multicall3", address: multicall });
  described.set(factory, { name: "Create3 Factory", address: factory });
  described.set(TELEPORTER_MESSENGER, { name: "TeleporterMessenger", address: TELEPORTER_MESSENGER });

  return {
    accounts,
    erc20,
    wrappedNative,
    erc721,
    erc1155,
    router,
    pairs,
    multicall,
    factory,
    teleporter: TELEPORTER_MESSENGER,
    nativePriceUsd,
    richAddress: (address) => described.get(address) ?? { address },
    allAddresses: () => [...accounts, ...described.keys()],
  };
}

export function usd(value: number): Money {
  return { currencyCode: "usd", value };
}

export function tokenUri(collection: NftCollection, tokenId: number, scheme: "https" | "ftp" | "broken"): string {
  if (scheme === "ftp") return `ftp://${NFT_BASE_URL.slice("https://".length)}/${collection.slug}/${tokenId}.json`;
  if (scheme === "broken") return `${collection.slug}-token-${tokenId}`;
  return `${NFT_BASE_URL}/${collection.slug}/${tokenId}.json`;
}

export function nftImage(collection: NftCollection, tokenId: number): string {
  return `${NFT_BASE_URL}/${collection.slug}/${tokenId}.png`;
}
