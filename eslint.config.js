// @ts-check
import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import js from "@eslint/js";
import importPlugin from "eslint-plugin-import";
import tseslint from "typescript-eslint";

/**
 * The rooms of src/, lowest first: a module may import from its own room and the rooms below it,
 * never from one above. The order is the request path read from its end: the configuration,
 * the error vocabulary every room answers with and the JSON text written by hand; the
 * telemetry everything reports to; the upstream clients (with the identifier rules and page
 * bounds they check a value against before it goes upstream); the Warp codec and signature check; the
 * live pollers; execution (the context carries the clients and the live services, the loaders
 * read through the clients); the Redis-backed shared state, which implements what the caches,
 * the pollers and the response cache below it ask of a shared tier; the limits (their buckets run
 * on that Redis); the Yoga plugins that admit, cache and log a request; and at the top the
 * listener and the gateway that assembles it all. Live sits below execution, not above it, and
 * shared state above live and execution, not below them: so the imports that exist point down.
 */
const ROOMS = [
  ["./src/config.ts", "./src/config-env.ts", "./src/config-shape.ts", "./src/errors.ts", "./src/json-text.ts"],
  ["./src/telemetry"],
  ["./src/upstream"],
  ["./src/warp"],
  ["./src/live"],
  ["./src/execution"],
  ["./src/shared-state"],
  ["./src/limits"],
  ["./src/plugins"],
  [
    "./src/schema.ts",
    "./src/gateway.ts",
    "./src/gateway-parts.ts",
    "./src/gateway-plugins.ts",
    "./src/server",
    "./src/server.ts",
  ],
];
const layers = ROOMS.flatMap((room, floor) =>
  room.flatMap((target) =>
    ROOMS.slice(floor + 1)
      .flat()
      .map((from) => ({
        target,
        from,
        message: `${target} sits below ${from}: imports point down the rooms of src/ (eslint.config.js)`,
      })),
  ),
);

/**
 * import/no-cycle skips type-only imports (eslint-plugin-import 2.32 has no option to count them,
 * docs/rules/no-cycle.md), so this rule follows every relative import, `import type` included,
 * and refuses one from which the importing file can be reached again.
 */
const RELATIVE_IMPORT =
  /(?:^|[\n;])\s*(?:import|export)\s[^;]*?\sfrom\s+["'](\.{1,2}\/[^"']+)["']|import\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g;
const importsOf = new Map();
function relativeImports(file) {
  let found = importsOf.get(file);
  if (found) return found;
  found = [];
  importsOf.set(file, found);
  if (!existsSync(file)) return found;
  for (const match of readFileSync(file, "utf8").matchAll(RELATIVE_IMPORT)) {
    const target = resolve(dirname(file), match[1] ?? match[2]);
    if (target.endsWith(".ts") && existsSync(target)) found.push(target);
  }
  return found;
}
function reaches(from, goal) {
  const seen = new Set();
  const stack = [from];
  while (stack.length > 0) {
    const file = stack.pop();
    if (file === goal) return true;
    if (seen.has(file)) continue;
    seen.add(file);
    stack.push(...relativeImports(file));
  }
  return false;
}
const noCycleCountingTypes = {
  meta: { type: "problem", schema: [], messages: { cycle: "{{source}} imports this module back (type-only imports counted)" } },
  create(context) {
    const me = resolve(context.filename);
    const check = (node) => {
      const source = node.source?.value;
      if (typeof source !== "string" || !source.startsWith(".")) return;
      const target = resolve(dirname(me), source);
      if (target !== me && target.endsWith(".ts") && reaches(target, me)) {
        context.report({ node, messageId: "cycle", data: { source } });
      }
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};

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
    plugins: { import: importPlugin, layers: { rules: { "no-cycle-counting-types": noCycleCountingTypes } } },
    settings: {
      // Imports name their files with the .ts extension, which Node's resolver finds as they are.
      "import/parsers": { "@typescript-eslint/parser": [".ts"] },
      "import/resolver": { node: { extensions: [".ts", ".js"] } },
    },
    rules: {
      "import/no-cycle": ["error", { ignoreExternal: true }],
      "layers/no-cycle-counting-types": "error",
      "import/no-restricted-paths": ["error", { zones: layers }],
      "import/no-self-import": "error",
      "import/no-useless-path-segments": "error",
      "import/no-duplicates": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
      "@typescript-eslint/consistent-type-imports": "error",
    },
  },
);
