import type { CodegenConfig } from "@graphql-codegen/cli";

/** How our scalars look in TypeScript: exact numbers stay strings. */
const scalars = {
  BigInt: "string",
  Decimal: "string",
  DateTime: "string",
  SafeInt: "number",
  Hash: "string",
  EvmAddress: "string",
  JSON: "unknown",
  JSONObject: "Record<string, unknown>",
  // A federation entity's representation (`_entities(representations:)`).
  _Any: "Record<string, unknown>",
};

const clientPreset = {
  preset: "client" as const,
  presetConfig: { fragmentMasking: false },
  config: { useTypeImports: true, enumsAsTypes: true, strictScalars: true, scalars },
};

/**
 * Typed documents from the committed, printed schema: the test suite's operations, and the
 * example client's (the same setup a frontend app would use).
 */
const config: CodegenConfig = {
  schema: "schema/schema.graphql",
  ignoreNoDocuments: false,
  emitLegacyCommonJSImports: false,
  generates: {
    "test/generated/": { ...clientPreset, documents: ["test/operations/**/*.graphql"] },
    "examples/generated/": { ...clientPreset, documents: ["examples/**/*.graphql", "!examples/federation/**"] },
  },
};

export default config;
