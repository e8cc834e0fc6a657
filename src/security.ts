/**
 * Protections applied before an operation runs: body size (useBodyLimit, which must run before
 * anything reads a body), CSRF, introspection, persisted
 * operations, and the aliases/tokens/directives limits (GraphQL Armor). Cost, depth and
 * breadth are checked by the schema's complexity plugin, which knows what a connection costs.
 */
import { readFileSync } from "node:fs";
import { EnvelopArmorPlugin } from "@escape.tech/graphql-armor";
import { useCSRFPrevention } from "@graphql-yoga/plugin-csrf-prevention";
import { useDisableIntrospection } from "@graphql-yoga/plugin-disable-introspection";
import { usePersistedOperations } from "@graphql-yoga/plugin-persisted-operations";
import type { Plugin } from "graphql-yoga";
import type { QueryLimits, SecurityConfig } from "./config.ts";

/** Refuses bodies over the limit by their declared length, before Yoga reads them. */
export function useBodyLimit(maxBodyBytes: number): Plugin {
  return {
    onRequest({ request, endResponse, fetchAPI }) {
      if (request.method !== "POST") return;
      const declared = request.headers.get("content-length");
      const status = declared === null ? 411 : Number(declared) > maxBodyBytes ? 413 : 0;
      if (status === 0) return;
      const message =
        status === 411
          ? "A POST must declare its content-length"
          : `The request body is over the limit of ${maxBodyBytes} bytes`;
      endResponse(
        new fetchAPI.Response(JSON.stringify({ errors: [{ message, extensions: { code: "BAD_USER_INPUT" } }] }), {
          status,
          headers: { "content-type": "application/json" },
        }),
      );
    },
  };
}

/** A JSON file mapping sha256 hashes of documents to the documents. */
function loadPersistedOperations(path: string): Map<string, string> {
  const entries = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  const operations = new Map<string, string>();
  for (const [hash, document] of Object.entries(entries)) {
    if (typeof document !== "string") throw new Error(`${path}: the operation ${hash} is not a string`);
    operations.set(hash, document);
  }
  return operations;
}

export function securityPlugins(security: SecurityConfig, limits: QueryLimits): Plugin[] {
  const armor = EnvelopArmorPlugin({
    maxAliases: { n: limits.aliases },
    maxTokens: { n: limits.tokens },
    maxDirectives: { n: limits.directives },
    maxDepth: { enabled: false },
    costLimit: { enabled: false },
    blockFieldSuggestion: { enabled: !security.introspection },
  });
  const plugins: Plugin[] = [armor as Plugin];
  if (security.csrfPrevention) plugins.push(useCSRFPrevention({ requestHeaders: ["x-graphql-yoga-csrf", "apollo-require-preflight"] }));
  if (!security.introspection) plugins.push(useDisableIntrospection() as Plugin);
  if (security.persistedOperationsFile) {
    const operations = loadPersistedOperations(security.persistedOperationsFile);
    plugins.push(
      usePersistedOperations({
        getPersistedOperation: (hash) => operations.get(hash) ?? null,
        allowArbitraryOperations: !security.persistedOperationsOnly,
        customErrors: {
          notFound: { message: "No persisted operation has this hash", extensions: { code: "PERSISTED_QUERY_NOT_FOUND" } },
          persistedQueryOnly: {
            message: "Only persisted operations run on this gateway",
            extensions: { code: "PERSISTED_QUERY_ONLY" },
          },
        },
      }) as Plugin,
    );
  }
  return plugins;
}
