/** The gateway's Warp decoding and verification on hand-made messages and keys. */
import { bls12_381 } from "@noble/curves/bls12-381";
import { describe, expect, it } from "vitest";
import { decodeCb58, encodeCb58 } from "../src/upstream/cb58.ts";
import { bitIndices, decodeSignedWarpMessage } from "../src/warp/message.ts";
import { decodeWarpPayload } from "../src/warp/payload.ts";
import { WarpDecodeError } from "../src/warp/reader.ts";
import { canonicalValidatorSet, verifyWarpSignature, type ValidatorEntry } from "../src/warp/verify.ts";

const DST = "BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_";
const signatures = bls12_381.longSignatures;

const u16 = (value: number) => Buffer.from([value >> 8, value & 0xff]);
const u32 = (value: number) => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value);
  return bytes;
};
const u64 = (value: bigint) => {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64BE(value);
  return bytes;
};
const withLength = (bytes: Buffer) => Buffer.concat([u32(bytes.length), bytes]);
const filled = (length: number, first: number) => Buffer.from(Array.from({ length }, (_, index) => (first + index) & 0xff));

function unsigned(networkId: number, sourceChainId: Buffer, payload: Buffer): Buffer {
  return Buffer.concat([u16(0), u32(networkId), sourceChainId, withLength(payload)]);
}

function signed(unsignedBytes: Buffer, bits: Buffer, signature: Uint8Array): Buffer {
  return Buffer.concat([unsignedBytes, u32(0), withLength(bits), Buffer.from(signature)]);
}

function secretKey(seed: number): Uint8Array {
  const key = new Uint8Array(32);
  key[31] = seed;
  key[0] = 1;
  return key;
}

describe("cb58", () => {
  it("encodes the P-Chain's all-zero id as the well-known string, and round-trips", () => {
    expect(encodeCb58(Buffer.alloc(32))).toBe("11111111111111111111111111111111LpoYY");
    const bytes = filled(32, 7);
    expect(decodeCb58(encodeCb58(bytes))).toEqual(bytes);
    expect(decodeCb58("11111111111111111111111111111111LpoYZ")).toBeUndefined();
  });
});

describe("decodeSignedWarpMessage", () => {
  const payload = Buffer.from("hello warp");
  const source = filled(32, 1);
  const message = unsigned(5, source, payload);

  it("reads the unsigned fields, the bit set and the signature, and keeps the signed bytes", () => {
    const decoded = decodeSignedWarpMessage(signed(message, Buffer.from([0x01, 0x02, 0x03]), filled(96, 0x40)));
    expect(decoded.networkId).toBe(5);
    expect(Buffer.from(decoded.sourceChainId)).toEqual(source);
    expect(Buffer.from(decoded.payload)).toEqual(payload);
    expect(Buffer.from(decoded.unsignedBytes)).toEqual(message);
    expect(message.length).toBe(42 + payload.length);
    // Bit i is 2^i of the big-endian number: 0x010203 has bits 0, 1, 9 and 16.
    expect(decoded.signers).toEqual([0, 1, 9, 16]);
    expect(Buffer.from(decoded.signature)).toEqual(filled(96, 0x40));
  });

  it.each([
    ["another codec version", () => Buffer.concat([u16(1), signed(message, Buffer.from([1]), filled(96, 0)).subarray(2)]), 0],
    [
      "a signature type other than the bit set",
      () => Buffer.concat([message, u32(1), withLength(Buffer.from([1])), filled(96, 0)]),
      message.length,
    ],
    ["a truncated signature", () => signed(message, Buffer.from([1]), filled(95, 0)), message.length + 9],
    [
      "bytes after the end",
      () => Buffer.concat([signed(message, Buffer.from([1]), filled(96, 0)), Buffer.from([0])]),
      message.length + 9 + 96,
    ],
    ["a payload longer than the message", () => Buffer.concat([u16(0), u32(5), source, u32(1000), payload]), 38],
  ])("fails with the offset for %s", (_, bytes, offset) => {
    let error: unknown;
    try {
      decodeSignedWarpMessage(bytes());
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(WarpDecodeError);
    expect((error as WarpDecodeError).offset).toBe(offset);
  });

  it("lists no signer for an empty bit set", () => {
    expect(bitIndices(new Uint8Array())).toEqual([]);
    expect(bitIndices(Uint8Array.from([0x80, 0x00]))).toEqual([15]);
  });
});

describe("decodeWarpPayload", () => {
  const validationId = filled(32, 0x11);

  it("reads a hash payload and an addressed call with a P-Chain message of each type", () => {
    expect(decodeWarpPayload(Buffer.concat([u16(0), u32(0), validationId]))).toEqual({
      kind: "hash",
      hash: Uint8Array.from(validationId),
    });

    const call = (inner: Buffer) => Buffer.concat([u16(0), u32(1), withLength(Buffer.alloc(0)), withLength(inner)]);
    const weight = Buffer.concat([u16(0), u32(3), validationId, u64(2n), u64(500n)]);
    expect(decodeWarpPayload(call(weight))).toMatchObject({
      kind: "addressedCall",
      platformMessage: { kind: "l1ValidatorWeight", validationId: Uint8Array.from(validationId), nonce: 2n, weight: 500n },
    });
    const registration = Buffer.concat([u16(0), u32(2), validationId, Buffer.from([1])]);
    expect(decodeWarpPayload(call(registration))).toMatchObject({
      platformMessage: { kind: "l1ValidatorRegistration", registered: true },
    });
    const conversion = Buffer.concat([u16(0), u32(0), validationId]);
    expect(decodeWarpPayload(call(conversion))).toMatchObject({ platformMessage: { kind: "subnetToL1Conversion" } });
    const owner = (threshold: number, address: number) => Buffer.concat([u32(threshold), u32(1), filled(20, address)]);
    const register = Buffer.concat([
      u16(0),
      u32(1),
      filled(32, 1),
      withLength(filled(20, 0x21)),
      filled(48, 0x35),
      u64(1_800_000_000n),
      owner(1, 0x71),
      owner(2, 0x89),
      u64(100n),
    ]);
    expect(decodeWarpPayload(call(register))).toMatchObject({
      platformMessage: {
        kind: "registerL1Validator",
        nodeId: Uint8Array.from(filled(20, 0x21)),
        expiry: 1_800_000_000n,
        remainingBalanceOwner: { threshold: 1, addresses: [Uint8Array.from(filled(20, 0x71))] },
        disableOwner: { threshold: 2 },
        weight: 100n,
      },
    });
  });

  it("answers null for an unknown type, and an addressed call without a known inner message", () => {
    expect(decodeWarpPayload(Buffer.concat([u16(0), u32(7)]))).toBeNull();
    expect(decodeWarpPayload(Buffer.from("not a payload"))).toBeNull();
    const opaque = Buffer.concat([u16(0), u32(1), withLength(filled(20, 9)), withLength(Buffer.from("abi-encoded call"))]);
    expect(decodeWarpPayload(opaque)).toMatchObject({ kind: "addressedCall", platformMessage: null });
  });
});

describe("verifyWarpSignature", () => {
  const keys = [3, 5, 8, 13].map(secretKey);
  const entries: ValidatorEntry[] = keys.map((key, index) => ({
    nodeId: `NodeID-${index}`,
    weight: BigInt(10 * (index + 1)),
    publicKey: signatures.getPublicKey(key).toBytes(true),
  }));
  const message = unsigned(1, filled(32, 2), Buffer.from("payload"));

  function signedBy(order: Uint8Array[], indices: number[]): Buffer {
    const hashed = signatures.hash(message, DST);
    const aggregate = signatures.aggregateSignatures(indices.map((index) => signatures.sign(hashed, order[index]!)));
    const bits = indices.reduce((value, index) => value | (1n << BigInt(index)), 0n).toString(16);
    return signed(message, Buffer.from(bits.length % 2 ? `0${bits}` : bits, "hex"), signatures.Signature.toBytes(aggregate));
  }

  it("orders validators by uncompressed public key, merges shared keys, and counts keyless weight in the total", () => {
    const set = canonicalValidatorSet([
      ...entries,
      { nodeId: "NodeID-x", weight: 7n, publicKey: null },
      { ...entries[0]!, nodeId: "NodeID-dup" },
    ]);
    const uncompressed = set.validators.map((validator) => Buffer.from(validator.point.toBytes(false)).toString("hex"));
    expect(uncompressed).toEqual([...uncompressed].sort());
    expect(set.validators).toHaveLength(4);
    expect(set.totalWeight).toBe(10n + 20n + 30n + 40n + 7n + 10n);
    expect(set.validators.find((validator) => validator.nodeIds.includes("NodeID-dup"))).toMatchObject({
      nodeIds: ["NodeID-0", "NodeID-dup"],
      weight: 20n,
    });
  });

  it("verifies a signature of the signers the bit set names, and says why another does not", () => {
    const set = canonicalValidatorSet(entries);
    const keyOf = (index: number) =>
      keys[entries.findIndex((entry) => Buffer.from(entry.publicKey!).equals(Buffer.from(set.validators[index]!.publicKey)))]!;
    const order = set.validators.map((_, index) => keyOf(index));
    const good = decodeSignedWarpMessage(signedBy(order, [0, 2, 3]));
    const result = verifyWarpSignature(good, set, 1);
    expect(result).toMatchObject({ valid: true, problem: null });
    expect(result.signedWeight).toBe(set.validators[0]!.weight + set.validators[2]!.weight + set.validators[3]!.weight);

    expect(verifyWarpSignature(good, set, 5)).toMatchObject({ valid: false, problem: "the message is for network 1, not 5" });
    const flipped = decodeSignedWarpMessage(signedBy(order, [0, 2, 3]));
    flipped.signers = [1, 2, 3];
    flipped.signerBits = Uint8Array.from([0x0e]);
    expect(verifyWarpSignature(flipped, set, 1)).toMatchObject({
      valid: false,
      problem: "the aggregate signature does not verify for these signers and this message",
    });
    const beyond = { ...good, signers: [0, 4], signerBits: Uint8Array.from([0x11]) };
    expect(verifyWarpSignature(beyond, set, 1).problem).toMatch(/names validator 4, but the signing subnet has 4 validators/);
    expect(verifyWarpSignature({ ...good, signerBits: Uint8Array.from([0, 0x0d]) }, set, 1).problem).toBe(
      "the signers' bit set has leading zero bytes",
    );
    expect(verifyWarpSignature({ ...good, signers: [], signerBits: new Uint8Array() }, set, 1).problem).toBe(
      "the bit set names no signer",
    );
    const badPoint = Uint8Array.from(good.signature);
    badPoint[10]! ^= 1;
    expect(verifyWarpSignature({ ...good, signature: badPoint }, set, 1).valid).toBe(false);
  });
});
