/**
 * Derives the facts-only upstream contract from the operator's OpenAPI specs in
 * ../shared/upstream-openapi and generates TypeScript types from it.
 *
 * Kept: paths, methods, operation ids, parameters (names, locations, required, schemas),
 * request bodies, response statuses and schemas, components, enums, bounds, formats.
 * Dropped: every piece of prose (descriptions, summaries, examples, titles, tags,
 * code samples) and vendor extensions.
 *
 *   npm run contract            regenerate src/upstream/contract/*
 *   npm run contract -- --check fail when the committed files are stale
 */
import { readFile, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import openapiTS, { astToString } from "openapi-typescript";

const here = dirname(fileURLToPath(import.meta.url));
const specDir = resolve(here, "../../shared/upstream-openapi");
const outDir = resolve(here, "../src/upstream/contract");

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const PROSE_KEYS = new Set([
  "description",
  "summary",
  "example",
  "examples",
  "title",
  "tags",
  "externalDocs",
  "contact",
  "license",
  "termsOfService",
]);

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Removes prose and vendor extensions, recursively. Property names inside `properties` are data, never prose. */
function factsOnly(value: Json, parentKey = ""): Json {
  if (Array.isArray(value)) return value.map((item) => factsOnly(item));
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(value)) {
    const isNameMap =
      parentKey === "properties" ||
      parentKey === "schemas" ||
      parentKey === "paths" ||
      parentKey === "responses" ||
      parentKey === "content" ||
      parentKey === "securitySchemes";
    if (!isNameMap && (PROSE_KEYS.has(key) || key.startsWith("x-"))) continue;
    out[key] = factsOnly(child, key);
  }
  return out;
}

async function readSpec(name: string): Promise<JsonObject> {
  return JSON.parse(await readFile(join(specDir, name), "utf8")) as JsonObject;
}

/** Every `#/components/schemas/X` that `value` refers to, transitively through `schemas`. */
function referencedSchemas(value: Json, schemas: JsonObject, found = new Set<string>()): Set<string> {
  if (Array.isArray(value)) {
    for (const item of value) referencedSchemas(item, schemas, found);
  } else if (isObject(value)) {
    for (const [key, child] of Object.entries(value)) {
      if (key === "$ref" && typeof child === "string" && child.startsWith("#/components/schemas/")) {
        const name = child.slice("#/components/schemas/".length);
        if (!found.has(name)) {
          found.add(name);
          const schema = schemas[name];
          if (schema !== undefined) referencedSchemas(schema, schemas, found);
        }
      } else {
        referencedSchemas(child, schemas, found);
      }
    }
  }
  return found;
}

function baseDocument(spec: JsonObject): JsonObject {
  const info = spec.info as JsonObject;
  return {
    openapi: spec.openapi as string,
    info: { title: info.title as string, version: info.version as string },
    servers: (spec.servers as Json[] | undefined) ?? [],
    ...(spec.security ? { security: spec.security } : {}),
  };
}

async function dataContract(): Promise<JsonObject> {
  const spec = await readSpec("data-api.json");
  return factsOnly({ ...baseDocument(spec), paths: spec.paths as Json, components: spec.components as Json }) as JsonObject;
}

/**
 * The newest Metrics spec, plus the routes that only the 2025-11-18 spec still has
 * (contract balances, NFT holders, the v1 looking-glass query) with the schemas they use,
 * the orphan `Legacy*` schemas, and the legacy average-TPS route that answers with them.
 */
async function metricsContract(): Promise<JsonObject> {
  const newest = await readSpec("metrics-api.json");
  const older = await readSpec("metrics-api.2025-11-18.json");
  const paths = { ...(newest.paths as JsonObject) };
  const newestComponents = newest.components as JsonObject;
  const olderComponents = older.components as JsonObject;
  const schemas = { ...(newestComponents.schemas as JsonObject) };
  const olderSchemas = olderComponents.schemas as JsonObject;

  const onlyInOlder = Object.keys(older.paths as JsonObject).filter((path) => !(path in paths));
  for (const path of onlyInOlder) {
    const item = (older.paths as JsonObject)[path] as JsonObject;
    paths[path] = item;
    for (const name of referencedSchemas(item, olderSchemas)) {
      if (!(name in schemas)) schemas[name] = olderSchemas[name] as Json;
    }
  }
  for (const name of Object.keys(olderSchemas).filter((n) => n.startsWith("Legacy"))) {
    schemas[name] = olderSchemas[name] as Json;
  }
  // The legacy average-TPS route is in no published spec; its body is the `Legacy*` schemas.
  // Its cursor is `nextPageToken` in the service documentation and `nextPageStartKey` in the
  // older spec, so the response schema carries both.
  const legacyResponse = schemas.LegacyEvmMetricsResponse as JsonObject;
  schemas.LegacyEvmMetricsResponse = {
    ...legacyResponse,
    properties: { ...(legacyResponse.properties as JsonObject), nextPageToken: { type: "string" } },
  };
  paths["/v1/avg_tps/{chainId}"] = {
    get: {
      operationId: "getLegacyAvgTps",
      parameters: [
        { name: "chainId", required: true, in: "path", schema: { type: "string" } },
        { name: "pageToken", required: false, in: "query", schema: { type: "string" } },
      ],
      responses: {
        "200": { content: { "application/json": { schema: { $ref: "#/components/schemas/LegacyEvmMetricsResponse" } } } },
        "400": { content: { "application/json": { schema: { $ref: "#/components/schemas/BadRequest" } } } },
        "404": { content: { "application/json": { schema: { $ref: "#/components/schemas/NotFound" } } } },
      },
    },
  };
  return factsOnly({
    ...baseDocument(newest),
    paths,
    components: { ...newestComponents, schemas },
  }) as JsonObject;
}

async function typesFor(contract: JsonObject, banner: string): Promise<string> {
  const ast = await openapiTS(contract as never, { alphabetize: false, exportType: true, enumValues: true });
  return `${banner}\n${astToString(ast)}`;
}

const BANNER =
  "// Generated by `npm run contract` from the facts-only contract beside this file. Do not edit.\n/* eslint-disable */";

async function main(): Promise<void> {
  const check = process.argv.includes("--check");
  const data = await dataContract();
  const metrics = await metricsContract();
  const files: Record<string, string> = {
    "data-api.json": `${JSON.stringify(data, null, 2)}\n`,
    "metrics-api.json": `${JSON.stringify(metrics, null, 2)}\n`,
    "data-api.ts": await typesFor(data, BANNER),
    "metrics-api.ts": await typesFor(metrics, BANNER),
  };
  let stale = 0;
  for (const [name, text] of Object.entries(files)) {
    const path = join(outDir, name);
    if (check) {
      const current = await readFile(path, "utf8").catch(() => "");
      if (current !== text) {
        console.error(`stale: ${path} (run npm run contract)`);
        stale += 1;
      }
    } else {
      await writeFile(path, text);
      console.log(`wrote ${path}`);
    }
  }
  if (stale > 0) process.exit(1);
}

await main();
