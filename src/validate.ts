/** Checks of identifier arguments, made before any upstream call. */
import { badUserInput } from "./errors.ts";

const EVM_CHAIN_ID = /^[1-9][0-9]{0,19}$/;
/** A 32-byte id in cb58 (base58 with a checksum): 37 characters for the all-zero primary network id, ~50 otherwise. */
export const CB58_ID = /^[1-9A-HJ-NP-Za-km-z]{36,60}$/;
/** A 32-byte hash (block, transaction) or id in hex: 0x and 64 hex digits. */
export const HEX_32 = /^0x[0-9a-fA-F]{64}$/;
/** An EVM account or contract address: 0x and 40 hex digits. */
export const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const BLOCK_NUMBER = /^(0|[1-9][0-9]{0,19})$/;

/** An EVM chain id in decimal, or a blockchain id in cb58. */
export function chainIdArgument(argument: string, value: string): string {
  if (EVM_CHAIN_ID.test(value) || CB58_ID.test(value)) return value;
  throw badUserInput(argument, `${argument} must be an EVM chain id in decimal (such as 43114) or a blockchain id in cb58, got ${JSON.stringify(value)}`);
}

/** A block number in decimal, or a block hash. */
export function blockIdArgument(argument: string, value: string): string {
  if (BLOCK_NUMBER.test(value)) return value;
  if (HEX_32.test(value)) return value.toLowerCase();
  throw badUserInput(argument, `${argument} must be a block number in decimal or a block hash (0x and 64 hex digits), got ${JSON.stringify(value)}`);
}

export function isZeroHash(hash: string): boolean {
  return /^0x0*$/.test(hash);
}
