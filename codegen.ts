import type { CodegenConfig } from "@graphql-codegen/cli";

/** Typed documents for the operations in test/operations, from the committed, printed schema. */
const config: CodegenConfig = {
  schema: "schema/schema.graphql",
  documents: ["test/operations/**/*.graphql"],
  ignoreNoDocuments: false,
  emitLegacyCommonJSImports: false,
  generates: {
    "test/generated/": {
      preset: "client",
      presetConfig: { fragmentMasking: false },
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        strictScalars: true,
        scalars: {
          BigInt: "string",
          DateTime: "string",
          SafeInt: "number",
          Hash: "string",
          EvmAddress: "string",
          JSON: "unknown",
          JSONObject: "Record<string, unknown>",
        },
      },
    },
  },
};

export default config;
