/** Checks of identifier arguments, made before any upstream call. */
import { LRUCache } from "lru-cache";
import { decodeBech32 } from "./bech32.ts";
import { decodeCb58, encodeCb58 } from "./cb58.ts";
import { badUserInput } from "../errors.ts";

/** An EVM chain id in decimal (such as 43114). */
export const EVM_CHAIN_ID = /^[1-9][0-9]{0,19}$/;
/** A 32-byte id in cb58 (base58 with a checksum): 37 characters for the all-zero primary network id, ~50 otherwise. */
export const CB58_ID = /^[1-9A-HJ-NP-Za-km-z]{36,60}$/;
/** A 32-byte hash (block, transaction) or id in hex: 0x and 64 hex digits. */
export const HEX_32 = /^0x[0-9a-fA-F]{64}$/;
/** An EVM account or contract address: 0x and 40 hex digits. */
export const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
/** A block number (height) in decimal. */
export const BLOCK_NUMBER = /^(0|[1-9][0-9]{0,19})$/;
/** A primary-network address in bech32, with or without its chain's prefix (P-, X-, C-). */
export const BECH32_ADDRESS = /^(?:[PXC]-)?[a-z]{1,83}1[02-9ac-hj-np-z]{6,}$/;
/** A node id: NodeID- and the node's id in cb58. */
export const NODE_ID = /^NodeID-[1-9A-HJ-NP-Za-km-z]{20,40}$/;
/** Text in the base58 alphabet, of any length (its checksum and size are checked by decoding it). */
export const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;
/** 32 bytes in hex, with or without 0x. */
const HEX_32_OPTIONAL_PREFIX = /^(?:0x)?([0-9a-fA-F]{64})$/;
/** Bytes in hex (pairs of digits), with or without 0x. */
const HEX_BYTES = /^(?:0x)?((?:[0-9a-fA-F]{2})+)$/;

export function isChainId(value: string): boolean {
  return EVM_CHAIN_ID.test(value) || CB58_ID.test(value);
}

/** A block number as it is, or a block hash in lower case (as the Data API keys it); undefined when it is neither. */
export function blockIdOf(value: string): string | undefined {
  if (BLOCK_NUMBER.test(value)) return value;
  return HEX_32.test(value) ? value.toLowerCase() : undefined;
}

/** An EVM chain id in decimal, or a blockchain id in cb58. */
export function chainIdArgument(argument: string, value: string): string {
  if (isChainId(value)) return value;
  throw badUserInput(
    argument,
    `${argument} must be an EVM chain id in decimal (such as 43114) or a blockchain id in cb58, got ${quoted(value)}`,
  );
}

/** A block number in decimal, or a block hash. */
export function blockIdArgument(argument: string, value: string): string {
  const blockId = blockIdOf(value);
  if (blockId === undefined) {
    throw badUserInput(
      argument,
      `${argument} must be a block number in decimal or a block hash (0x and 64 hex digits), got ${quoted(value)}`,
    );
  }
  return blockId;
}

/** A 32-byte id in cb58 (by its form), or, with `allowHex`, as 0x and 64 hex digits; returned as given. */
export function cb58IdArgument(argument: string, value: string, what: string, allowHex = false): string {
  if (CB58_ID.test(value) || (allowHex && HEX_32.test(value))) return value;
  throw badUserInput(
    argument,
    `${argument} must be ${what} in cb58${allowHex ? " or as 0x and 64 hex digits" : ""}, got ${JSON.stringify(value)}`,
  );
}

/** Whether text is a 32-byte id in cb58 whose checksum holds. */
export function isCheckedCb58Id(value: string): boolean {
  return BASE58.test(value) && decodeCb58(value)?.length === 32;
}

/** A 32-byte id in cb58 (with a valid checksum) or in hex (with or without 0x), returned in cb58. */
export function anyFormId32Argument(argument: string, value: string): string {
  const hex = HEX_32_OPTIONAL_PREFIX.exec(value)?.[1];
  if (hex !== undefined) return encodeCb58(Buffer.from(hex, "hex"));
  if (isCheckedCb58Id(value)) return value;
  throw badUserInput(
    argument,
    `${argument} must be a 32-byte id in cb58 or hex (64 digits, with or without 0x), got ${JSON.stringify(value)}`,
  );
}

/** Bytes in hex (with or without 0x); undefined when absent. */
export function hexBytesArgument(argument: string, value: string | null | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (HEX_BYTES.test(value)) return value;
  throw badUserInput(
    argument,
    `${argument} must be hex (pairs of hex digits, with or without 0x), got ${JSON.stringify(value.slice(0, 80))}`,
  );
}

/** A node id: NodeID- and 20 bytes in cb58 whose checksum holds (the route refuses any other). */
export function nodeIdArgument(argument: string, value: string): string {
  if (NODE_ID.test(value) && decodeCb58(value.slice("NodeID-".length))?.length === 20) return value;
  throw badUserInput(
    argument,
    `${argument} must be NodeID- followed by a 20-byte node id in cb58 (its checksum included), got ${quoted(value)}`,
  );
}

/**
 * The most addresses one address argument holds: the GET routes take them comma-joined in the
 * query, and 100 (some 4,800 characters) keep every request well within the request line the
 * gateway sends (`MAX_REQUEST_TARGET_LENGTH`, src/upstream/request-target.ts).
 */
export const MAX_ADDRESSES = 100;

/** The human-readable part of each network's addresses (`TESTNET` is another name of Fuji). */
const ADDRESS_PREFIXES: Readonly<Record<"mainnet" | "fuji", readonly string[]>> = {
  mainnet: ["avax"],
  fuji: ["fuji", "testnet"],
};

/** An address list's length within `MAX_ADDRESSES`. */
export function addressCountArgument(argument: string, addresses: readonly unknown[]): void {
  if (addresses.length > MAX_ADDRESSES) {
    throw badUserInput(argument, `${argument} must hold at most ${MAX_ADDRESSES} addresses, got ${addresses.length}`, {
      max: MAX_ADDRESSES,
    });
  }
}

/**
 * Why text of the bech32 address form (`BECH32_ADDRESS`) is no address of `network` (of either
 * network when undefined): its checksum, its 20 bytes, its network's prefix; undefined when it is one.
 */
export function bech32AddressProblem(value: string, network?: "mainnet" | "fuji"): string | undefined {
  const key = `${network ?? "*"}:${value}`;
  // `get`, not `has`: an address asked for again stays among the most recent.
  if (knownAddresses.get(key)) return undefined;
  const problem = addressProblem(value, network);
  if (problem === undefined) knownAddresses.set(key, true);
  return problem;
}

/**
 * Addresses that passed, by network: a wallet asks for the same few again and again, and a
 * bech32 checksum costs more than finding the address here. Bounded, so a caller sending new
 * addresses only costs itself the checks.
 */
const knownAddresses = new LRUCache<string, true>({ max: 10_000 });

function addressProblem(value: string, network: "mainnet" | "fuji" | undefined): string | undefined {
  const decoded = decodeBech32(value.replace(/^[PXC]-/, ""));
  if (decoded === undefined) return "its bech32 checksum does not hold";
  if (decoded.payload.length !== 20) return `it holds ${decoded.payload.length} bytes, not 20`;
  const prefixes = network === undefined ? Object.values(ADDRESS_PREFIXES).flat() : ADDRESS_PREFIXES[network];
  if (!prefixes.includes(decoded.hrp)) {
    return `its prefix ${decoded.hrp} is not ${prefixes.join(" or ")}${network === undefined ? "" : ` (${network})`}`;
  }
  return undefined;
}

export function isZeroHash(hash: string): boolean {
  return /^0x0*$/.test(hash);
}

/**
 * An export job's id as the Data API issues it (a UUID; any token of these characters is
 * accepted), never a dot segment.
 */
const OPERATION_ID = /^(?!\.{1,2}$)[A-Za-z0-9._:-]{1,128}$/;

export function operationIdArgument(argument: string, value: string): string {
  if (OPERATION_ID.test(value)) return value;
  throw badUserInput(
    argument,
    `${argument} must be an operation id as exportTransactions returned it (up to 128 letters, digits and ._:-), got ${quoted(value)}`,
    { maxLength: 128 },
  );
}

/** The most characters of an upstream page token the gateway passes on. */
export const MAX_PAGE_TOKEN_LENGTH = 1024;
/** Printable ASCII without spaces: what opaque tokens (base64, UUIDs, JSON) are written in. */
const PAGE_TOKEN = new RegExp(`^[\\x21-\\x7e]{1,${MAX_PAGE_TOKEN_LENGTH}}$`);

/** A page token from a cursor, checked before it goes into an upstream query. */
export function pageTokenArgument(argument: string, value: string): string {
  if (PAGE_TOKEN.test(value)) return value;
  throw badUserInput(
    argument,
    `${argument} is not a cursor of this gateway: its page token must be 1 to ${MAX_PAGE_TOKEN_LENGTH} printable characters`,
    {
      maxLength: MAX_PAGE_TOKEN_LENGTH,
    },
  );
}

/** A client's value in a message: JSON-quoted, and cut so that no refusal echoes kilobytes. */
export function quoted(value: string, max = 80): string {
  return value.length <= max ? JSON.stringify(value) : `${JSON.stringify(value.slice(0, max))}... (${value.length} characters)`;
}

/**
 * An argument given by its name or by its deprecated older name, with the name it came by
 * (refusals name that one); undefined when neither is given, refused when both are.
 */
export function renamedArgument<Value>(
  args: Readonly<Record<string, unknown>>,
  name: string,
  olderName: string,
): { name: string; value: Value } | undefined {
  const given = [name, olderName].filter((key) => args[key] !== null && args[key] !== undefined);
  if (given.length > 1) throw badUserInput(olderName, `give ${name} or its deprecated name ${olderName}, not both`);
  return given.length === 0 ? undefined : { name: given[0]!, value: args[given[0]!] as Value };
}

/** A live subscription's resume point: the last block number its client saw. */
export function afterBlockArgument(args: { afterBlock?: unknown; after?: unknown }): bigint | undefined {
  const given = renamedArgument<string>(args, "afterBlock", "after");
  if (given === undefined) return undefined;
  const after = BigInt(given.value);
  if (after < 0n) throw badUserInput(given.name, `${given.name} must be a block number, 0 or more, got ${after}`);
  return after;
}

/** An L1 validation id filter: `validationId`, or its deprecated name `l1ValidationId` (cb58 or 0x hex). */
export function validationIdFilter(args: { validationId?: string | null; l1ValidationId?: string | null }): string | undefined {
  const given = renamedArgument<string>(args, "validationId", "l1ValidationId");
  return given && cb58IdArgument(given.name, given.value, "a validation id", true);
}
