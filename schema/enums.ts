/**
 * Enums built from the contract's value lists. Upstream services add values over time, so an
 * output enum also has `UNKNOWN`, which a value this gateway does not know yet turns into
 * instead of failing the response.
 */
import { builder } from "./builder.ts";

export const UNKNOWN = "UNKNOWN";

/** `nftIndexing` → `NFT_INDEXING`, `ERC-721` → `ERC_721`, `non-linear` → `NON_LINEAR`. */
export function graphqlEnumName(upstreamValue: string): string {
  return upstreamValue
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/[^A-Za-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .toUpperCase();
}

export interface UpstreamEnum<Value extends string> {
  ref: ReturnType<typeof builder.enumType<string, Record<string, { value: string; description: string }>>>;
  /** The enum's internal value for an upstream value; `UNKNOWN` for one not in the contract. */
  fromUpstream(value: string | null | undefined): Value | typeof UNKNOWN | null;
}

export function upstreamEnum<const Value extends string>(
  name: string,
  values: readonly Value[],
  description: string,
  valueDescriptions: Partial<Record<Value, string>> = {},
): UpstreamEnum<Value> {
  const known = new Set<string>(values);
  const entries: Record<string, { value: string; description: string }> = {};
  for (const value of values) {
    entries[graphqlEnumName(value)] = { value, description: valueDescriptions[value] ?? `The upstream value \`${value}\`.` };
  }
  if (!known.has(UNKNOWN)) {
    entries[UNKNOWN] = { value: UNKNOWN, description: "A value the upstream added after this gateway was built." };
  }
  const ref = builder.enumType(name, { description, values: entries });
  return {
    ref,
    fromUpstream: (value) => {
      if (value === null || value === undefined) return null;
      return known.has(value) ? (value as Value) : UNKNOWN;
    },
  };
}
