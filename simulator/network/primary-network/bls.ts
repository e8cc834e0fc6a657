/**
 * BLS keys of validators (min-pk: 48-byte compressed G1 public keys, 96-byte G2 signatures), as
 * Avalanche uses them. Secret keys derive from the seed; the public key and the proof of
 * possession are computed on first use, because hashing to G2 costs tens of milliseconds.
 */
import { bls12_381 } from "@noble/curves/bls12-381";
import { createHash } from "node:crypto";

/** The domain separation tag of proofs of possession (a signature over the public key). */
const PROOF_OF_POSSESSION_DST = "BLS_POP_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_";
const ORDER = bls12_381.params.r;
const signatures = bls12_381.longSignatures;

export class BlsKey {
  /** The 32-byte big-endian secret key. Used to sign; never served. */
  readonly secretKey: Uint8Array;
  private publicKeyBytes: Uint8Array | undefined;
  private proofBytes: Uint8Array | undefined;

  constructor(seed: string, label: string) {
    const wide = BigInt(`0x${createHash("sha512").update(seed).update("\0bls\0").update(label).digest("hex")}`);
    const scalar = (wide % (ORDER - 1n)) + 1n;
    this.secretKey = Buffer.from(scalar.toString(16).padStart(64, "0"), "hex");
  }

  /** The compressed G1 public key (48 bytes). */
  get publicKey(): Uint8Array {
    this.publicKeyBytes ??= signatures.getPublicKey(this.secretKey).toBytes(true);
    return this.publicKeyBytes;
  }

  /** A signature over the public key under the proof-of-possession tag (96 bytes). */
  get proofOfPossession(): Uint8Array {
    if (this.proofBytes === undefined) {
      const message = signatures.hash(this.publicKey, PROOF_OF_POSSESSION_DST);
      this.proofBytes = signatures.Signature.toBytes(signatures.sign(message, this.secretKey));
    }
    return this.proofBytes;
  }

  /** The credentials as the Data API shows them: 0x-prefixed hex. */
  credentials(): { publicKey: string; proofOfPossession: string } {
    return { publicKey: toHex(this.publicKey), proofOfPossession: toHex(this.proofOfPossession) };
  }
}

function toHex(bytes: Uint8Array): string {
  return `0x${Buffer.from(bytes).toString("hex")}`;
}
