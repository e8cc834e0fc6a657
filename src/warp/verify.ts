/**
 * Checks a Warp signature against a validator set, as avalanchego does. The set is put in its
 * canonical order: validators that share a BLS public key merge into one (weights summed), those
 * without a key cannot sign but their weight still counts in the total, and the rest are sorted
 * by the bytes of their uncompressed public key. Bit i of the signers' bit set marks the i-th
 * validator of that order. The aggregate signature is a BLS12-381 signature in G2 over the
 * unsigned message's bytes, with public keys in G1, under the proof-of-possession scheme's
 * signing tag; it must verify against the sum of the signers' public keys.
 */
import { bls12_381 } from "@noble/curves/bls12-381";
import type { SignedWarpMessage } from "./message.ts";

const SIGNATURE_DST = "BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_";
const signatures = bls12_381.longSignatures;
type PublicKeyPoint = ReturnType<typeof signatures.getPublicKey>;

/** One validator as the validator list shows it; `publicKey` is the compressed G1 key, null when it has none or cannot sign. */
export interface ValidatorEntry {
  nodeId: string;
  weight: bigint;
  publicKey: Uint8Array | null;
}

export interface CanonicalValidator {
  /** The compressed public key (48 bytes). */
  publicKey: Uint8Array;
  weight: bigint;
  nodeIds: string[];
}

/** A validator with its public key as a curve point, as a check needs it. */
export interface SigningValidator extends CanonicalValidator {
  point: PublicKeyPoint;
}

export interface CanonicalValidatorSet<Validator extends CanonicalValidator = CanonicalValidator> {
  validators: Validator[];
  /** The weight of every validator, with or without a key. */
  totalWeight: bigint;
}

export interface WarpVerification<Validator extends CanonicalValidator = CanonicalValidator> {
  /** The validators the bit set names, in canonical order. */
  signers: Validator[];
  signedWeight: bigint;
  totalWeight: bigint;
  /** True when the aggregate signature verifies for exactly these signers and this message. */
  valid: boolean;
  /** Why it does not verify; null when it does. */
  problem: string | null;
}

export function canonicalValidatorSet(entries: readonly ValidatorEntry[]): CanonicalValidatorSet<SigningValidator> {
  const byKey = new Map<string, SigningValidator & { sortKey: Buffer }>();
  let totalWeight = 0n;
  for (const entry of entries) {
    totalWeight += entry.weight;
    const point = entry.publicKey === null ? null : publicKeyPoint(entry.publicKey);
    if (point === null) continue;
    const sortKey = Buffer.from(point.toBytes(false));
    const id = sortKey.toString("hex");
    const found = byKey.get(id);
    if (found) {
      found.weight += entry.weight;
      found.nodeIds.push(entry.nodeId);
    } else {
      byKey.set(id, { publicKey: point.toBytes(true), weight: entry.weight, nodeIds: [entry.nodeId], point, sortKey });
    }
  }
  const validators = [...byKey.values()]
    .sort((a, b) => Buffer.compare(a.sortKey, b.sortKey))
    .map(({ sortKey: _, ...validator }) => validator);
  return { validators, totalWeight };
}

/** A public key that is a valid G1 point other than the identity, else null. */
function publicKeyPoint(bytes: Uint8Array): PublicKeyPoint | null {
  try {
    const point = bls12_381.G1.Point.fromBytes(bytes);
    point.assertValidity();
    return point.is0() ? null : point;
  } catch {
    return null;
  }
}

export function verifyWarpSignature(
  message: SignedWarpMessage,
  set: CanonicalValidatorSet<SigningValidator>,
  networkId: number,
): WarpVerification<SigningValidator> {
  const signers = message.signers.filter((index) => index < set.validators.length).map((index) => set.validators[index]!);
  const signedWeight = signers.reduce((sum, signer) => sum + signer.weight, 0n);
  const result = (problem: string | null): WarpVerification<SigningValidator> => ({
    signers,
    signedWeight,
    totalWeight: set.totalWeight,
    valid: problem === null,
    problem,
  });

  if (message.networkId !== networkId) {
    return result(`the message is for network ${message.networkId}, not ${networkId}`);
  }
  if (message.signerBits.length > 0 && message.signerBits[0] === 0) {
    return result("the signers' bit set has leading zero bytes");
  }
  const beyond = message.signers.find((index) => index >= set.validators.length);
  if (beyond !== undefined) {
    return result(
      `the bit set names validator ${beyond}, but the signing subnet has ${set.validators.length} validators with a BLS key`,
    );
  }
  if (signers.length === 0) return result("the bit set names no signer");
  let signature;
  try {
    signature = signatures.Signature.fromBytes(message.signature);
  } catch {
    return result("the aggregate signature is not a valid BLS12-381 G2 point");
  }
  const aggregateKey = signatures.aggregatePublicKeys(signers.map((signer) => signer.point));
  const hashed = signatures.hash(message.unsignedBytes, SIGNATURE_DST);
  return result(
    signatures.verify(signature, hashed, aggregateKey)
      ? null
      : "the aggregate signature does not verify for these signers and this message",
  );
}
