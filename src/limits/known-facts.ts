/**
 * What the gateway knows beside an operation's document, handed to each estimate of its upstream
 * calls (src/limits/upstream-calls.ts) by the caller, never kept there: the chain list it holds,
 * whose size `chains { … }` multiplies by (per network and feature when `chains(network:, feature:)`
 * filters it). Without it, the chain list is assumed `ASSUMED_CHAIN_COUNT` long, and the estimate
 * says it would know better with it (`wantsChainList`): the rate limiter then has the list
 * fetched, the call the operation makes first anyway, and estimates again.
 */
import type { ChainInfo } from "../upstream/types.ts";

/**
 * How many chains `chains { … }` is assumed to list while the gateway holds no chain list (every
 * chain the Data API indexes, of both networks, with room to grow).
 */
export const ASSUMED_CHAIN_COUNT = 100;

/** What a chain record tells the estimate: whether `chains(network:, feature:)` lists it. */
export type KnownChain = Pick<ChainInfo, "chainId" | "isTestnet" | "enabledFeatures">;

/** What the gateway knows beside the document, handed to each estimate. */
export interface KnownFacts {
  /** The chain list (`GET /v1/chains` without filters) when the gateway holds it. */
  readonly chains?: readonly KnownChain[] | undefined;
}

export const NO_FACTS: KnownFacts = {};

/** The chains of a list that `chains(network:, feature:)` would keep. */
export function countChains(chains: readonly KnownChain[], args: Record<string, unknown>): number {
  const network = args.network as string | null | undefined;
  const feature = args.feature as string | null | undefined;
  return chains.filter(
    (chain) =>
      (network == null || chain.isTestnet === (network !== "mainnet")) &&
      (feature == null || (chain.enabledFeatures ?? []).includes(feature as never)),
  ).length;
}
