/** Fixed values of the simulated primary network: units, fees, supply and well-known ids. */
import type { NetworkName } from "../../chains.ts";

export const DAY = 86_400;
export const NANO_AVAX = 1_000_000_000n;
export const TX_FEE = 1_000_000n;
export const ATOMIC_FEE = 280_000n;
export const INITIAL_SUPPLY = 720_000_000n * NANO_AVAX;
export const L1_FEE_PER_SECOND = 512;
export const ZERO_ID = "11111111111111111111111111111111LpoYY";
export const SUBNET_EVM_VM_ID = "srEXiWaHuhNyGwPUi444Tu47ZEDwxTWrbQiuD7FmgSAQ6X7Dy";

export const AVAX_ASSET_IDS: Record<NetworkName, string> = {
  mainnet: "FvwEAhmxKfeiG8SnEvq42hc6whRyY3EFYAvebMqDNDGCgxN5Z",
  fuji: "U8iRqJoiJm8xZHAacmvYyZVwqQx6uDNtQQP3CQ6fcgQk3JqnK",
};
export const ADDRESS_HRP: Record<NetworkName, string> = { mainnet: "avax", fuji: "fuji" };
