/**
 * Bech32 (BIP-173), the encoding of P-Chain and X-Chain addresses such as `avax1...`: a fact of
 * the upstream the gateway checks addresses against and the simulator writes them in.
 */

const CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";
const GENERATOR = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];

function polymod(values: readonly number[]): number {
  let checksum = 1;
  for (const value of values) {
    const top = checksum >>> 25;
    checksum = ((checksum & 0x1ffffff) << 5) ^ value;
    for (let bit = 0; bit < 5; bit++) if ((top >>> bit) & 1) checksum ^= GENERATOR[bit]!;
  }
  return checksum;
}

function expandHrp(hrp: string): number[] {
  const codes = [...hrp].map((char) => char.charCodeAt(0));
  return [...codes.map((code) => code >>> 5), 0, ...codes.map((code) => code & 31)];
}

function convertBits(data: Uint8Array | readonly number[], from: number, to: number, pad: boolean): number[] | undefined {
  let accumulator = 0;
  let bits = 0;
  const result: number[] = [];
  const mask = (1 << to) - 1;
  for (const value of data) {
    accumulator = (accumulator << from) | value;
    bits += from;
    while (bits >= to) {
      bits -= to;
      result.push((accumulator >>> bits) & mask);
    }
  }
  if (pad) {
    if (bits > 0) result.push((accumulator << (to - bits)) & mask);
  } else if (bits >= from || ((accumulator << (to - bits)) & mask) !== 0) {
    return undefined;
  }
  return result;
}

export function encodeBech32(hrp: string, payload: Uint8Array): string {
  const words = convertBits(payload, 8, 5, true)!;
  const checksum = polymod([...expandHrp(hrp), ...words, 0, 0, 0, 0, 0, 0]) ^ 1;
  const checksumWords = Array.from({ length: 6 }, (_, index) => (checksum >>> (5 * (5 - index))) & 31);
  return `${hrp}1${[...words, ...checksumWords].map((word) => CHARSET[word]).join("")}`;
}

/** The human-readable part and payload of a bech32 string, or undefined when it is not valid bech32. */
export function decodeBech32(text: string): { hrp: string; payload: Buffer } | undefined {
  if (text !== text.toLowerCase() && text !== text.toUpperCase()) return undefined;
  const lower = text.toLowerCase();
  const separator = lower.lastIndexOf("1");
  if (separator < 1 || lower.length - separator < 7) return undefined;
  const hrp = lower.slice(0, separator);
  const words: number[] = [];
  for (const char of lower.slice(separator + 1)) {
    const word = CHARSET.indexOf(char);
    if (word < 0) return undefined;
    words.push(word);
  }
  if (polymod([...expandHrp(hrp), ...words]) !== 1) return undefined;
  const payload = convertBits(words.slice(0, -6), 5, 8, false);
  return payload === undefined ? undefined : { hrp, payload: Buffer.from(payload) };
}
