/**
 * Prints the schema, sorted, to schema/schema.graphql, and the subgraph SDL exactly as
 * `_service { sdl }` serves it (what a federation composer reads: `@link`, `@key`s) to
 * schema/subgraph.graphql.
 *   npm run schema         write them
 *   npm run schema:check   fail when a committed file is stale
 */
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { graphql, lexicographicSortSchema, printSchema } from "graphql";
import { schema } from "../src/schema.ts";

const served = await graphql({ schema, source: "{ _service { sdl } }" });
const sdl = (served.data?._service as { sdl?: unknown } | undefined)?.sdl;
if (typeof sdl !== "string") throw new Error(`_service { sdl } answered no SDL: ${JSON.stringify(served.errors)}`);

const printed: Record<string, string> = {
  "schema.graphql": `${printSchema(lexicographicSortSchema(schema))}\n`,
  "subgraph.graphql": `${sdl}\n`,
};

let stale = false;
for (const [name, text] of Object.entries(printed)) {
  const target = fileURLToPath(new URL(`../schema/${name}`, import.meta.url));
  if (process.argv.includes("--check")) {
    const committed = await readFile(target, "utf8").catch(() => "");
    if (committed === text) console.log(`schema/${name} is up to date`);
    else {
      console.error(`schema/${name} is stale: run \`npm run schema\` and commit the result`);
      stale = true;
    }
  } else {
    await writeFile(target, text);
    console.log(`wrote ${target}`);
  }
}
if (stale) process.exit(1);
