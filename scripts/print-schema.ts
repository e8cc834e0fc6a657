/**
 * Prints the schema, sorted, to schema/schema.graphql.
 *   npm run schema         write it
 *   npm run schema:check   fail when the committed file is stale
 */
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { lexicographicSortSchema, printSchema } from "graphql";
import { schema } from "../src/schema.ts";

const target = fileURLToPath(new URL("../schema/schema.graphql", import.meta.url));
const printed = `${printSchema(lexicographicSortSchema(schema))}\n`;

if (process.argv.includes("--check")) {
  const committed = await readFile(target, "utf8").catch(() => "");
  if (committed !== printed) {
    console.error("schema/schema.graphql is stale: run `npm run schema` and commit the result");
    process.exit(1);
  }
  console.log("schema/schema.graphql is up to date");
} else {
  await writeFile(target, printed);
  console.log(`wrote ${target}`);
}
