/** Records of the simulator's sample network that tests build their inputs from. */
import type { PTransaction } from "../../simulator/network/primary-network/model.ts";
import type { RunningSimulator } from "../../simulator/server.ts";

/** The P-Chain transactions of one kind (`ConvertSubnetToL1Tx`, ...) on a network, oldest first. */
export function l1Transactions(simulator: RunningSimulator, network: "mainnet" | "fuji", txType: string): PTransaction[] {
  return simulator.network.primaryNetwork(network).transactions("P", {
    addresses: undefined,
    txTypes: new Set([txType]),
    startTimestamp: undefined,
    endTimestamp: undefined,
    l1ValidationId: undefined,
    sortOrder: "asc",
  }) as PTransaction[];
}
