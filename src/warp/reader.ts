/**
 * Reads the encoding Avalanche's linear codec writes: big-endian integers, fixed-size arrays
 * as their bytes, variable-size byte strings and lists after a uint32 length, an interface value
 * after its uint32 type id, and the whole document after a uint16 codec version.
 */

/** Bytes that are not what the format says, with the offset where reading stopped. */
export class WarpDecodeError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
    this.name = "WarpDecodeError";
  }
}

export class CodecReader {
  private offset = 0;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly what: string,
  ) {}

  get position(): number {
    return this.offset;
  }

  /** The codec version every document starts with; only version 0 exists. */
  version(): void {
    const version = this.uint16();
    if (version !== 0) throw new WarpDecodeError(`${this.what} has codec version ${version}; only 0 is known`, this.offset - 2);
  }

  uint16(): number {
    return this.view(2).readUInt16BE(0);
  }

  uint32(): number {
    return this.view(4).readUInt32BE(0);
  }

  uint64(): bigint {
    return this.view(8).readBigUInt64BE(0);
  }

  boolean(): boolean {
    const value = this.view(1)[0]!;
    if (value > 1) throw new WarpDecodeError(`${this.what} has ${value} where a boolean (0 or 1) belongs`, this.offset - 1);
    return value === 1;
  }

  fixed(length: number): Uint8Array {
    return Uint8Array.from(this.view(length));
  }

  /** A byte string after its uint32 length. */
  bytesWithLength(): Uint8Array {
    const lengthAt = this.offset;
    const length = this.uint32();
    if (length > this.bytes.length - this.offset) {
      throw new WarpDecodeError(
        `${this.what} declares ${length} bytes at offset ${lengthAt}, but only ${this.bytes.length - this.offset} follow`,
        lengthAt,
      );
    }
    return this.fixed(length);
  }

  /** Fails when bytes are left after the document. */
  end(): void {
    const left = this.bytes.length - this.offset;
    if (left > 0) throw new WarpDecodeError(`${this.what} has ${left} bytes after its end`, this.offset);
  }

  private view(length: number): Buffer {
    if (this.offset + length > this.bytes.length) {
      throw new WarpDecodeError(
        `${this.what} ends at byte ${this.bytes.length}, before the ${length} bytes expected at offset ${this.offset}`,
        this.offset,
      );
    }
    const view = Buffer.from(this.bytes.buffer, this.bytes.byteOffset + this.offset, length);
    this.offset += length;
    return view;
  }
}
