/** Avalanche's cb58 text form of ids: base58 of the bytes followed by the last 4 bytes of their sha256. */
import { createHash } from "node:crypto";

const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const CHECKSUM_BYTES = 4;

function checksum(bytes: Uint8Array): Buffer {
  return createHash("sha256").update(bytes).digest().subarray(-CHECKSUM_BYTES);
}

export function encodeCb58(bytes: Uint8Array): string {
  const all = Buffer.concat([bytes, checksum(bytes)]);
  let zeros = 0;
  while (zeros < all.length && all[zeros] === 0) zeros++;
  let value = BigInt(`0x${all.toString("hex") || "0"}`);
  let digits = "";
  while (value > 0n) {
    digits = ALPHABET[Number(value % 58n)]! + digits;
    value /= 58n;
  }
  return "1".repeat(zeros) + digits;
}

/** The bytes of a cb58 string, or undefined when it is not cb58 or its checksum is wrong. */
export function decodeCb58(text: string): Buffer | undefined {
  let zeros = 0;
  while (zeros < text.length && text[zeros] === "1") zeros++;
  let value = 0n;
  for (const char of text) {
    const digit = ALPHABET.indexOf(char);
    if (digit < 0) return undefined;
    value = value * 58n + BigInt(digit);
  }
  const hex = value === 0n ? "" : value.toString(16);
  const all = Buffer.concat([Buffer.alloc(zeros), Buffer.from(hex.length % 2 === 0 ? hex : `0${hex}`, "hex")]);
  if (all.length <= CHECKSUM_BYTES) return undefined;
  const bytes = all.subarray(0, -CHECKSUM_BYTES);
  return checksum(bytes).equals(all.subarray(-CHECKSUM_BYTES)) ? bytes : undefined;
}
