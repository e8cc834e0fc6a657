// @ts-check
import js from "@eslint/js";
import importPlugin from "eslint-plugin-import";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "dist/**",
      "node_modules/**",
      "src/upstream/contract/**",
      "test/generated/**",
      "examples/generated/**",
      "bench/profiles/**",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    plugins: { import: importPlugin },
    settings: {
      // Imports name their files with the .ts extension, which Node's resolver finds as they are.
      "import/parsers": { "@typescript-eslint/parser": [".ts"] },
      "import/resolver": { node: { extensions: [".ts", ".js"] } },
    },
    rules: {
      "import/no-cycle": ["error", { ignoreExternal: true }],
      "import/no-self-import": "error",
      "import/no-useless-path-segments": "error",
      "import/no-duplicates": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
      "@typescript-eslint/consistent-type-imports": "error",
    },
  },
);
