import { createHash } from "node:crypto";

/** A seeded pseudo-random source; the same seed and stream always give the same sequence. */
export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  /** True with the given probability (0 is never, 1 is always). */
  chance(probability: number): boolean;
}

/**
 * sfc32 seeded from sha256(seed, stream). Separate streams keep independent
 * parts of the network (one per chain, the fault injector) from shifting each
 * other when one of them draws more or fewer numbers.
 */
export function createRandom(seed: string, stream: string): Random {
  const digest = createHash("sha256").update(seed).update("\0").update(stream).digest();
  let a = digest.readUInt32LE(0);
  let b = digest.readUInt32LE(4);
  let c = digest.readUInt32LE(8);
  let d = digest.readUInt32LE(12);

  const next = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  // The first outputs of sfc32 are poorly mixed; discard them.
  for (let i = 0; i < 12; i++) next();

  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (probability) => next() < probability,
  };
}
