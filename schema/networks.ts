/** The two Avalanche networks, as clients name them and as the upstream paths spell them. */
import type { UpstreamNetwork } from "../src/upstream/types.ts";
import { builder } from "./builder.ts";

export type NetworkName = "mainnet" | "fuji";

/**
 * `TESTNET` keeps a value of its own: two names of one value would serialize to the last in the
 * (sorted) schema, `TESTNET`. So an argument is folded into `fuji` with `upstreamNetwork` before
 * use, and a field of this type returns a `NetworkName` (test/chains.test.ts checks the outputs).
 */
export const NETWORK_VALUES = {
  MAINNET: { value: "mainnet", description: "The Avalanche mainnet." },
  FUJI: { value: "fuji", description: "The Fuji test network." },
  TESTNET: { value: "testnet", description: "Another name for `FUJI` in arguments; results are the same and say `FUJI`." },
} as const;

export const NetworkRef = builder.enumType("Network", {
  description: "An Avalanche network. `TESTNET` is another name for `FUJI` in arguments; results always say `FUJI`.",
  values: NETWORK_VALUES,
});

/** The upstream spelling of a network argument, with `testnet` folded into `fuji`. */
export function upstreamNetwork(network: UpstreamNetwork): NetworkName;
export function upstreamNetwork(network: UpstreamNetwork | null | undefined): NetworkName | undefined;
export function upstreamNetwork(network: UpstreamNetwork | null | undefined): NetworkName | undefined {
  if (network === null || network === undefined) return undefined;
  return network === "mainnet" ? "mainnet" : "fuji";
}
