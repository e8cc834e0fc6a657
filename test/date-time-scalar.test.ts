import { describe, expect, it } from "vitest";
import { isoDateTime } from "../schema/scalars.ts";

describe("DateTime's output", () => {
  it("is what Date#toISOString writes, at the ends of four-digit years and around leap days", () => {
    const instants = [
      -62_167_219_200_000, 253_402_300_799_999, 0, -1, 1, 951_782_400_000, 951_868_800_000, 951_868_799_999, 4_107_542_400_000,
      -2_203_891_200_000, 1_709_164_800_000, 1_798_761_599_999,
    ];
    for (const ms of instants) expect(isoDateTime(ms)).toBe(new Date(ms).toISOString());
  });

  it("is what Date#toISOString writes for 200,000 instants spread over years 0 to 9999", () => {
    let seed = 42;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const mismatches: number[] = [];
    for (let index = 0; index < 200_000; index += 1) {
      const ms = Math.floor(-62_167_219_200_000 + next() * 315_569_520_000_000);
      if (isoDateTime(ms) !== new Date(ms).toISOString()) mismatches.push(ms);
    }
    expect(mismatches).toEqual([]);
  });

  it("leaves years beyond four digits, and fractions of a millisecond, to toISOString", () => {
    for (const ms of [-62_167_219_200_001, 253_402_300_800_000, 8.64e15, 1.5]) {
      expect(isoDateTime(ms)).toBe(new Date(ms).toISOString());
    }
    expect(() => isoDateTime(Number.NaN)).toThrow(RangeError);
  });
});
