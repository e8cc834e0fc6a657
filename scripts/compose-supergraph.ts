/**
 * Composes the gateway's subgraph SDL (schema/subgraph.graphql) with the example labels subgraph
 * into examples/federation/supergraph.graphql, with @theguild/federation-composition.
 *   npm run supergraph         write it
 *   npm run supergraph:check   fail on a composition error, or when the committed file is stale
 *
 * The subgraph URLs are the defaults of `npm start` and of the labels example; a router in front of
 * other addresses overrides them (see examples/federation/README.md).
 */
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { parse } from "graphql";
import { composeServices, compositionHasErrors } from "@theguild/federation-composition";
import { LABELS_SDL } from "../examples/federation/labels-subgraph.ts";

const SUBGRAPH_URLS = {
  avalanche: "http://localhost:4000/graphql",
  labels: "http://localhost:4001/graphql",
} as const;

const gatewaySdl = fileURLToPath(new URL("../schema/subgraph.graphql", import.meta.url));
const target = fileURLToPath(new URL("../examples/federation/supergraph.graphql", import.meta.url));

const result = composeServices([
  { name: "avalanche", url: SUBGRAPH_URLS.avalanche, typeDefs: parse(await readFile(gatewaySdl, "utf8")) },
  { name: "labels", url: SUBGRAPH_URLS.labels, typeDefs: parse(LABELS_SDL) },
]);

if (compositionHasErrors(result)) {
  console.error("the gateway and the labels subgraph do not compose:");
  for (const error of result.errors) console.error(`- ${error.message}`);
  process.exit(1);
}

const composed = `${result.supergraphSdl.trimEnd()}\n`;
if (process.argv.includes("--check")) {
  const committed = await readFile(target, "utf8").catch(() => "");
  if (committed !== composed) {
    console.error("examples/federation/supergraph.graphql is stale: run `npm run supergraph` and commit the result");
    process.exit(1);
  }
  console.log("examples/federation/supergraph.graphql is up to date");
} else {
  await writeFile(target, composed);
  console.log(`wrote ${target}`);
}
