import { createHash } from "node:crypto";

const BASE58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const CHECKSUM_LENGTH = 4;

export function sha256(...parts: (string | Uint8Array)[]): Buffer {
  const hash = createHash("sha256");
  for (const part of parts) hash.update(part);
  return hash.digest();
}

/** Avalanche's cb58: base58 of the payload followed by the last 4 bytes of its sha256. */
export function encodeCb58(payload: Uint8Array): string {
  const checksum = sha256(payload).subarray(-CHECKSUM_LENGTH);
  return encodeBase58(Buffer.concat([payload, checksum]));
}

/** The payload of a cb58 string, or undefined when it is not valid cb58. */
export function decodeCb58(text: string): Buffer | undefined {
  const bytes = decodeBase58(text);
  if (bytes === undefined || bytes.length <= CHECKSUM_LENGTH) return undefined;
  const payload = bytes.subarray(0, -CHECKSUM_LENGTH);
  const checksum = bytes.subarray(-CHECKSUM_LENGTH);
  return sha256(payload).subarray(-CHECKSUM_LENGTH).equals(checksum) ? payload : undefined;
}

/** A stable 32-byte id in cb58 form, derived from a label. */
export function derivedCb58Id(label: string): string {
  return encodeCb58(sha256(label));
}

/** A stable 0x-prefixed 20-byte address, derived from a label. */
export function derivedAddress(label: string): string {
  return `0x${sha256(label).subarray(0, 20).toString("hex")}`;
}

function encodeBase58(bytes: Uint8Array): string {
  let leadingZeros = 0;
  while (leadingZeros < bytes.length && bytes[leadingZeros] === 0) leadingZeros++;
  let value = BigInt(`0x${Buffer.from(bytes).toString("hex") || "0"}`);
  let digits = "";
  while (value > 0n) {
    digits = BASE58_ALPHABET.charAt(Number(value % 58n)) + digits;
    value /= 58n;
  }
  return "1".repeat(leadingZeros) + digits;
}

function decodeBase58(text: string): Buffer | undefined {
  let leadingZeros = 0;
  while (leadingZeros < text.length && text[leadingZeros] === "1") leadingZeros++;
  let value = 0n;
  for (const char of text) {
    const digit = BASE58_ALPHABET.indexOf(char);
    if (digit < 0) return undefined;
    value = value * 58n + BigInt(digit);
  }
  const hex = value === 0n ? "" : value.toString(16);
  return Buffer.concat([Buffer.alloc(leadingZeros), Buffer.from(hex.length % 2 === 0 ? hex : `0${hex}`, "hex")]);
}
