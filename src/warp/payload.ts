/**
 * The payloads Avalanche defines for Warp messages, each an interface value after the codec
 * version: type 0 is a 32-byte hash, type 1 an addressed call (source address and payload,
 * each after a uint32 length). The P-Chain's messages about L1s travel as an addressed call
 * with an empty source address whose payload is, again after the codec version and a type id:
 * 0 a subnet-to-L1 conversion, 1 an L1 validator to register, 2 a registration's outcome,
 * 3 a validator's weight.
 */
import { CodecReader, WarpDecodeError } from "./reader.ts";

export interface PChainOwner {
  threshold: number;
  /** 20-byte address ids. */
  addresses: Uint8Array[];
}

export type PlatformMessage =
  | { kind: "subnetToL1Conversion"; conversionId: Uint8Array }
  | {
      kind: "registerL1Validator";
      subnetId: Uint8Array;
      nodeId: Uint8Array;
      blsPublicKey: Uint8Array;
      expiry: bigint;
      remainingBalanceOwner: PChainOwner;
      disableOwner: PChainOwner;
      weight: bigint;
    }
  | { kind: "l1ValidatorRegistration"; validationId: Uint8Array; registered: boolean }
  | { kind: "l1ValidatorWeight"; validationId: Uint8Array; nonce: bigint; weight: bigint };

export type WarpPayload =
  | { kind: "hash"; hash: Uint8Array }
  | { kind: "addressedCall"; sourceAddress: Uint8Array; payload: Uint8Array; platformMessage: PlatformMessage | null };

const BLS_PUBLIC_KEY_BYTES = 48;

/** The payload decoded, or null when it is not one of the known payload types. */
export function decodeWarpPayload(bytes: Uint8Array): WarpPayload | null {
  return attempt(() => {
    const reader = new CodecReader(bytes, "the Warp payload");
    reader.version();
    const type = reader.uint32();
    let payload: WarpPayload;
    if (type === 0) {
      payload = { kind: "hash", hash: reader.fixed(32) };
    } else if (type === 1) {
      const sourceAddress = reader.bytesWithLength();
      const inner = reader.bytesWithLength();
      payload = { kind: "addressedCall", sourceAddress, payload: inner, platformMessage: decodePlatformMessage(inner) };
    } else {
      return null;
    }
    reader.end();
    return payload;
  });
}

function decodePlatformMessage(bytes: Uint8Array): PlatformMessage | null {
  return attempt(() => {
    const reader = new CodecReader(bytes, "the platform message");
    reader.version();
    const type = reader.uint32();
    let message: PlatformMessage;
    switch (type) {
      case 0:
        message = { kind: "subnetToL1Conversion", conversionId: reader.fixed(32) };
        break;
      case 1:
        message = {
          kind: "registerL1Validator",
          subnetId: reader.fixed(32),
          nodeId: reader.bytesWithLength(),
          blsPublicKey: reader.fixed(BLS_PUBLIC_KEY_BYTES),
          expiry: reader.uint64(),
          remainingBalanceOwner: owner(reader),
          disableOwner: owner(reader),
          weight: reader.uint64(),
        };
        break;
      case 2:
        message = { kind: "l1ValidatorRegistration", validationId: reader.fixed(32), registered: reader.boolean() };
        break;
      case 3:
        message = { kind: "l1ValidatorWeight", validationId: reader.fixed(32), nonce: reader.uint64(), weight: reader.uint64() };
        break;
      default:
        return null;
    }
    reader.end();
    return message;
  });
}

function owner(reader: CodecReader): PChainOwner {
  const threshold = reader.uint32();
  const count = reader.uint32();
  const addresses: Uint8Array[] = [];
  for (let index = 0; index < count; index++) addresses.push(reader.fixed(20));
  return { threshold, addresses };
}

/** A payload that is not one of these types is not an error: it is opaque to the gateway. */
function attempt<T>(decode: () => T | null): T | null {
  try {
    return decode();
  } catch (error) {
    if (error instanceof WarpDecodeError) return null;
    throw error;
  }
}
