/** The two Avalanche networks, as clients name them and as the upstream paths spell them. */
import type { UpstreamNetwork } from "../src/upstream/types.ts";
import { builder } from "./builder.ts";

export type NetworkName = "mainnet" | "fuji";

export const NetworkRef = builder.enumType("Network", {
  description: "An Avalanche network. `TESTNET` is another name for `FUJI`.",
  values: {
    MAINNET: { value: "mainnet", description: "The Avalanche mainnet." },
    FUJI: { value: "fuji", description: "The Fuji test network." },
    TESTNET: { value: "testnet", description: "Another name for `FUJI`; results are the same." },
  } as const,
});

/** The upstream spelling of a network argument, with `testnet` folded into `fuji`. */
export function upstreamNetwork(network: UpstreamNetwork): NetworkName;
export function upstreamNetwork(network: UpstreamNetwork | null | undefined): NetworkName | undefined;
export function upstreamNetwork(network: UpstreamNetwork | null | undefined): NetworkName | undefined {
  if (network === null || network === undefined) return undefined;
  return network === "mainnet" ? "mainnet" : "fuji";
}
