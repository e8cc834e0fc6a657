/**
 * README's error table names every code the gateway answers with, so that it cannot drift from
 * the code: the members of `ErrorCode`, and every code the sources set (`code: "…"`, the codes
 * passed to `refusal`, `refusalResponse`, `refusalAnswer` and `GatewayError`), besides the codes
 * Yoga and its plugins set on refusals that reach a client as they are.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..");
/** Codes Yoga sets on refusals the gateway passes on (src/plugins/refusals.ts keeps a refusal's own code). */
const YOGA_CODES = ["GRAPHQL_PARSE_FAILED", "GRAPHQL_VALIDATION_FAILED", "OPERATION_RESOLUTION_FAILURE", "BAD_REQUEST"];

/** The codes in README's error table: the first cell of each row after its header. */
function tableCodes(): Set<string> {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const start = readme.indexOf("| code | meaning |");
  expect(start).toBeGreaterThan(0);
  const rows = readme.slice(start).split("\n\n")[0]!.split("\n").slice(2);
  return new Set(rows.flatMap((row) => [...row.split("|")[1]!.matchAll(/`([A-Z_]+)`/g)].map((match) => match[1]!)));
}

function sources(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return entry.name === "contract" ? [] : sources(path);
    return entry.name.endsWith(".ts") ? [readFileSync(path, "utf8")] : [];
  });
}

/** The codes the sources set: `code: "…"` and the all-capitals string arguments of the functions that make refusals and errors. */
function codesSet(): Set<string> {
  const codes = new Set<string>();
  for (const text of sources(join(ROOT, "src"))) {
    for (const [, code] of text.matchAll(/\bcode: "([A-Z][A-Z_]+)"/g)) codes.add(code!);
    for (const [, args] of text.matchAll(/\b(?:refusal|refusalResponse|refusalAnswer|GatewayError)\(([^;]*?)\)[;,\n]/g)) {
      for (const [, code] of args!.matchAll(/"([A-Z][A-Z_]{2,})"/g)) codes.add(code!);
    }
  }
  return codes;
}

function errorCodes(): string[] {
  const text = readFileSync(join(ROOT, "src/errors.ts"), "utf8");
  // The union's members, one a line, until the blank line after it; its comments left out.
  const union = text
    .slice(text.indexOf("export type ErrorCode ="))
    .split("\n\n")[0]!
    .replace(/\/\*\*.*?\*\//gs, "");
  return [...union.matchAll(/"([A-Z_]+)"/g)].map((match) => match[1]!);
}

describe("README's error table", () => {
  it("names every ErrorCode", () => {
    const codes = errorCodes();
    expect(codes.length).toBeGreaterThan(10);
    const table = tableCodes();
    expect(codes.filter((code) => !table.has(code))).toEqual([]);
  });

  it("names every code the sources set, and those of Yoga the gateway passes on", () => {
    const codes = [...codesSet(), ...YOGA_CODES];
    // What the scan must find, or it finds nothing: codes set in plugins and in the server.
    expect(codes).toEqual(
      expect.arrayContaining(["PERSISTED_QUERY_ONLY", "PAYLOAD_TOO_LARGE", "SHUTTING_DOWN", "INTERNAL_SERVER_ERROR"]),
    );
    const table = tableCodes();
    expect([...new Set(codes)].filter((code) => !table.has(code))).toEqual([]);
  });
});
