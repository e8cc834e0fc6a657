/**
 * Avalanche Warp messages in the linear codec's encoding: a uint16 codec version (0) first,
 * big-endian integers, fixed-size byte arrays as they are, byte strings and lists after a uint32
 * length, and an interface value after its uint32 type id.
 *
 * Unsigned message: version, network id (uint32), source chain id (32 bytes), payload (bytes).
 * Signed message: the unsigned message's fields, then the signature as an interface value of
 * type 0 (bit set): the signers' bit set (bytes, a big-endian number whose bit i marks the i-th
 * validator in canonical order) and the aggregate BLS signature (96 bytes).
 */

export interface UnsignedMessage {
  networkId: number;
  sourceChainId: Buffer;
  payload: Buffer;
}

export class Writer {
  private readonly parts: Buffer[] = [];

  /** Starts a document: the codec version. */
  static document(): Writer {
    return new Writer().uint16(0);
  }

  uint16(value: number): this {
    const bytes = Buffer.alloc(2);
    bytes.writeUInt16BE(value);
    return this.raw(bytes);
  }

  uint32(value: number): this {
    const bytes = Buffer.alloc(4);
    bytes.writeUInt32BE(value);
    return this.raw(bytes);
  }

  uint64(value: bigint): this {
    const bytes = Buffer.alloc(8);
    bytes.writeBigUInt64BE(value);
    return this.raw(bytes);
  }

  boolean(value: boolean): this {
    return this.raw(Buffer.from([value ? 1 : 0]));
  }

  /** A fixed-size array: the bytes alone. */
  raw(bytes: Uint8Array): this {
    this.parts.push(Buffer.from(bytes));
    return this;
  }

  /** A byte string: its length, then the bytes. */
  bytes(bytes: Uint8Array): this {
    return this.uint32(bytes.length).raw(bytes);
  }

  done(): Buffer {
    return Buffer.concat(this.parts);
  }
}

export function encodeUnsignedMessage(message: UnsignedMessage): Buffer {
  return Writer.document().uint32(message.networkId).raw(message.sourceChainId).bytes(message.payload).done();
}

export function encodeSignedMessage(unsigned: Buffer, signerIndices: readonly number[], signature: Uint8Array): Buffer {
  return Buffer.concat([unsigned, new Writer().uint32(0).bytes(bitSet(signerIndices)).raw(signature).done()]);
}

/** The big-endian bytes of a bit set, without leading zero bytes. */
export function bitSet(indices: readonly number[]): Buffer {
  const value = indices.reduce((bits, index) => bits | (1n << BigInt(index)), 0n);
  if (value === 0n) return Buffer.alloc(0);
  const hex = value.toString(16);
  return Buffer.from(hex.length % 2 === 0 ? hex : `0${hex}`, "hex");
}

/** An unsigned message, or undefined when the bytes are not exactly one. */
export function decodeUnsignedMessage(bytes: Buffer): UnsignedMessage | undefined {
  if (bytes.length < 42 || bytes.readUInt16BE(0) !== 0) return undefined;
  const networkId = bytes.readUInt32BE(2);
  const sourceChainId = bytes.subarray(6, 38);
  const length = bytes.readUInt32BE(38);
  if (bytes.length !== 42 + length) return undefined;
  return { networkId, sourceChainId, payload: bytes.subarray(42) };
}

/** An addressed call (payload type 1): a source address and a payload. */
export function addressedCall(sourceAddress: Uint8Array, payload: Uint8Array): Buffer {
  return Writer.document().uint32(1).bytes(sourceAddress).bytes(payload).done();
}
