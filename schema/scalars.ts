/** Scalars: exact decimal integers, timestamps, and hex identifiers validated at the gateway. */
import { GraphQLError, Kind, type ValueNode } from "graphql";
import { DateTimeResolver, SafeIntResolver } from "graphql-scalars";
import { builder } from "./builder.ts";

function invalid(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: "BAD_USER_INPUT" } });
}

const DECIMAL = /^-?(0|[1-9][0-9]*)$/;

function decimal(value: unknown): string {
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number" && Number.isSafeInteger(value)) return String(value);
  if (typeof value === "string" && DECIMAL.test(value)) return value;
  throw invalid(`BigInt must be an integer written in decimal digits, got ${JSON.stringify(String(value))}`);
}

builder.scalarType("BigInt", {
  description:
    'An integer of any size, as a string of decimal digits (for example "1000000000000000000"): amounts, gas, block numbers and nonces stay exact. Input accepts the string or an Int.',
  serialize: (value) => decimal(value),
  parseValue: (value) => decimal(value),
  parseLiteral: (node: ValueNode) => {
    if (node.kind === Kind.STRING || node.kind === Kind.INT) return decimal(node.value);
    throw invalid("BigInt must be a string of decimal digits or an Int");
  },
});

function hexScalar(name: "Hash" | "EvmAddress", bytes: number, description: string) {
  const pattern = new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`);
  const parse = (value: unknown): string => {
    if (typeof value === "string" && pattern.test(value)) return value;
    throw invalid(`${name} must be 0x followed by ${bytes * 2} hex digits, got ${JSON.stringify(String(value))}`);
  };
  builder.scalarType(name, {
    description,
    // Output is passed on as the upstream sent it: a record must never fail on its own id.
    serialize: (value) => String(value),
    parseValue: parse,
    parseLiteral: (node: ValueNode) => parse(node.kind === Kind.STRING ? node.value : undefined),
  });
}

hexScalar("Hash", 32, "A 32-byte hash written as 0x and 64 hex digits: a block or transaction hash. Checked on input.");
hexScalar("EvmAddress", 20, "An EVM account or contract address written as 0x and 40 hex digits. Checked on input.");

const MS_PER_DAY = 86_400_000;
const TWO_DIGITS = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, "0"));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, n) => String(n).padStart(3, "0"));
/** 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z: the years written with four digits. */
const FOUR_DIGIT_YEARS = { from: -62_167_219_200_000, to: 253_402_300_799_999 };

/**
 * The instants written lately: clients read the same pages again, and a string kept has been
 * flattened by the first response's JSON.stringify, which copies it fastest then (a string built
 * by concatenation is a rope it must flatten first). Emptied when full.
 */
const written = new Map<number, string>();
const MAX_WRITTEN = 4096;

/** What `Date#toISOString` writes for `ms`, in a fraction of its time: a page of points or transactions writes one per record. */
export function isoDateTime(ms: number): string {
  let text = written.get(ms);
  if (text === undefined) {
    text = formatIsoDateTime(ms);
    if (written.size >= MAX_WRITTEN) written.clear();
    written.set(ms, text);
  }
  return text;
}

/** Days are turned into a civil date as in Howard Hinnant's `civil_from_days`; years beyond four digits are left to `toISOString`. */
function formatIsoDateTime(ms: number): string {
  if (!(ms >= FOUR_DIGIT_YEARS.from && ms <= FOUR_DIGIT_YEARS.to) || !Number.isInteger(ms)) return new Date(ms).toISOString();
  const days = Math.floor(ms / MS_PER_DAY);
  const time = ms - days * MS_PER_DAY;
  const shifted = days + 719_468;
  const era = Math.floor(shifted / 146_097);
  const dayOfEra = shifted - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const hours = Math.floor(time / 3_600_000);
  const minutes = Math.floor((time % 3_600_000) / 60_000);
  const seconds = Math.floor((time % 60_000) / 1000);
  const digits = (n: number) => TWO_DIGITS[n]!;
  return `${digits(Math.floor(year / 100))}${digits(year % 100)}-${digits(month)}-${digits(day)}T${digits(hours)}:${digits(minutes)}:${digits(seconds)}.${THREE_DIGITS[time % 1000]!}Z`;
}

builder.addScalarType("DateTime", DateTimeResolver, {
  description: "A date and time in UTC, as an RFC 3339 string (for example 2026-11-01T00:00:00.000Z).",
  // graphql-scalars checks the value and answers a Date, which the response's JSON.stringify
  // would turn into this same string through Date#toJSON, seven times slower per page of points.
  // A valid Date, what the resolvers give, is written out at once.
  serialize: (value) => {
    const date = value instanceof Date && !Number.isNaN(value.getTime()) ? value : (DateTimeResolver.serialize(value) as Date);
    return isoDateTime(date.getTime());
  },
});
builder.addScalarType("SafeInt", SafeIntResolver, {
  description:
    "An integer up to 2^53 - 1 in size: Unix timestamps in seconds or milliseconds, and other counts that outgrow 32 bits.",
});
