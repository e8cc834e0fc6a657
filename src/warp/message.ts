/**
 * Signed Avalanche Warp messages. The unsigned message is the codec version (uint16), the
 * network id (uint32), the source chain id (32 bytes) and the payload (uint32 length, bytes);
 * these bytes are what validators sign. The signed message appends the signature as an
 * interface value: type id (uint32; 0 is the bit-set signature), the signers' bit set (uint32
 * length, bytes) and the aggregate BLS signature (96 bytes, a compressed G2 point).
 */
import { createHash } from "node:crypto";
import { CodecReader, WarpDecodeError } from "./reader.ts";

export const SIGNATURE_BYTES = 96;
const BIT_SET_SIGNATURE_TYPE = 0;

export interface SignedWarpMessage {
  networkId: number;
  sourceChainId: Uint8Array;
  payload: Uint8Array;
  /** The unsigned message's bytes: what the signature signs. */
  unsignedBytes: Uint8Array;
  /** The signers' bit set as encoded: a big-endian number whose bit i marks validator i. */
  signerBits: Uint8Array;
  /** Indices, ascending, into the signing subnet's canonical validator list. */
  signers: number[];
  signature: Uint8Array;
}

/** The unsigned message at the reader's start: codec version, network id, source chain id, payload. */
function readUnsignedMessage(reader: CodecReader) {
  reader.version();
  const networkId = reader.uint32();
  const sourceChainId = reader.fixed(32);
  const payload = reader.bytesWithLength();
  return { networkId, sourceChainId, payload };
}

/** Throws a WarpDecodeError unless the bytes are an unsigned Warp message, whole. */
export function checkUnsignedWarpMessage(bytes: Uint8Array): void {
  const reader = new CodecReader(bytes, "the unsigned Warp message");
  readUnsignedMessage(reader);
  reader.end();
}

export function decodeSignedWarpMessage(bytes: Uint8Array): SignedWarpMessage {
  const reader = new CodecReader(bytes, "the signed Warp message");
  const { networkId, sourceChainId, payload } = readUnsignedMessage(reader);
  const unsignedBytes = bytes.slice(0, reader.position);
  const typeAt = reader.position;
  const type = reader.uint32();
  if (type !== BIT_SET_SIGNATURE_TYPE) {
    throw new WarpDecodeError(
      `the signed Warp message has signature type ${type}; only ${BIT_SET_SIGNATURE_TYPE} (bit set) is known`,
      typeAt,
    );
  }
  const signerBits = reader.bytesWithLength();
  const signature = reader.fixed(SIGNATURE_BYTES);
  reader.end();
  return { networkId, sourceChainId, payload, unsignedBytes, signerBits, signers: bitIndices(signerBits), signature };
}

/** The indices of the set bits of a big-endian bit set, ascending. */
export function bitIndices(bits: Uint8Array): number[] {
  const indices: number[] = [];
  for (let byte = bits.length - 1; byte >= 0; byte--) {
    const value = bits[byte]!;
    for (let bit = 0; bit < 8; bit++) {
      if (value & (1 << bit)) indices.push((bits.length - 1 - byte) * 8 + bit);
    }
  }
  return indices;
}

/** The message's id: the sha256 of the unsigned message's bytes. */
export function unsignedMessageId(message: SignedWarpMessage): Uint8Array {
  return createHash("sha256").update(message.unsignedBytes).digest();
}
