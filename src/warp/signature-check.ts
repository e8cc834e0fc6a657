/**
 * One Warp signature check as a pure function of plain data, so that it can run on a worker
 * thread: the validator list as the Data API gave it in, the outcome out, with the canonical set
 * (without curve points) and the signers as indices into it. Canonical sets are remembered by
 * the digest of the list they come from: decompressing and checking a key takes some 2.5 ms, and
 * messages of one subnet share its set.
 */
import { LRUCache } from "lru-cache";
import type { SignedWarpMessage } from "./message.ts";
import {
  canonicalValidatorSet,
  verifyWarpSignature,
  type CanonicalValidator,
  type CanonicalValidatorSet,
  type SigningValidator,
  type ValidatorEntry,
} from "./verify.ts";

export interface SignatureCheckRequest {
  message: SignedWarpMessage;
  entries: readonly ValidatorEntry[];
  /** The network the message must be for. */
  networkId: number;
  /** A digest of `entries`, under which their canonical set is remembered. */
  setDigest: string;
}

export interface SignatureCheck {
  set: CanonicalValidatorSet;
  /** Indices into `set.validators` of the signers. */
  signers: number[];
  signedWeight: bigint;
  valid: boolean;
  problem: string | null;
}

/** Validators' keys held as points, across the sets remembered. */
const REMEMBERED_VALIDATORS = 5_000;

const sets = new LRUCache<string, CanonicalValidatorSet<SigningValidator>>({
  max: 64,
  maxSize: REMEMBERED_VALIDATORS,
  sizeCalculation: (set) => Math.max(1, set.validators.length),
});

export function checkSignature({ message, entries, networkId, setDigest }: SignatureCheckRequest): SignatureCheck {
  let set = sets.get(setDigest);
  if (!set) {
    set = canonicalValidatorSet(entries);
    sets.set(setDigest, set);
  }
  const result = verifyWarpSignature(message, set, networkId);
  const validators: CanonicalValidator[] = set.validators.map(({ publicKey, weight, nodeIds }) => ({
    publicKey,
    weight,
    nodeIds,
  }));
  return {
    set: { validators, totalWeight: set.totalWeight },
    signers: result.signers.map((signer) => set.validators.indexOf(signer)),
    signedWeight: result.signedWeight,
    valid: result.valid,
    problem: result.problem,
  };
}
