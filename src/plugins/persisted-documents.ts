import { readFileSync } from "node:fs";
import { defaultExtractPersistedOperationId, usePersistedOperations } from "@graphql-yoga/plugin-persisted-operations";
import { GraphQLError, Kind, parse } from "graphql";
import type { GraphQLParams, Plugin } from "graphql-yoga";
import type { SecurityConfig } from "../config.ts";

/**
 * A JSON file mapping documents' ids to the documents: sha256 hashes (bare hex, or `sha256:<hex>`
 * as gql.tada and the GraphQL-over-HTTP convention write them) or ids of the operator's own.
 */
function loadPersistedOperations(path: string): Map<string, string> {
  const entries = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  const operations = new Map<string, string>();
  for (const [id, document] of Object.entries(entries)) {
    if (typeof document !== "string") throw new Error(`${path}: the operation ${id} is not a string`);
    operations.set(id, document);
  }
  return operations;
}

const SHA256_HEX = /^[0-9a-f]{64}$/i;

/** Finds a document by its id in either sha256 form, whichever the file holds. */
function persistedDocumentLookup(operations: Map<string, string>): (id: string) => string | null {
  return (id) => {
    const found = operations.get(id);
    if (found !== undefined) return found;
    if (id.startsWith("sha256:")) return operations.get(id.slice("sha256:".length)) ?? null;
    return SHA256_HEX.test(id) ? (operations.get(`sha256:${id}`) ?? null) : null;
  };
}

/**
 * The id a request names its persisted document by: `documentId` in a JSON body or in the query
 * string of a GET (the GraphQL-over-HTTP convention, as Relay and gql.tada send it), else Apollo's
 * `extensions.persistedQuery.sha256Hash`.
 */
function persistedDocumentId(
  params: GraphQLParams & { documentId?: unknown },
  request: Request,
  context: Record<string, unknown>,
): string | null {
  if (typeof params.documentId === "string") return params.documentId;
  if (request.method === "GET") {
    const inQuery = new URL(request.url, "http://gateway").searchParams.get("documentId");
    if (inQuery) return inQuery;
  }
  return defaultExtractPersistedOperationId(params, request, context);
}

/** Whether a request names its document by `documentId` (rather than by Apollo's hash extension). */
function sendsDocumentId(params: GraphQLParams & { documentId?: unknown }, request: Request): boolean {
  return (
    typeof params.documentId === "string" ||
    (request.method === "GET" && new URL(request.url, "http://gateway").searchParams.has("documentId"))
  );
}

/** The names of the persisted operations: they keep their own label in the GraphQL metrics. */
export function persistedOperationNames(path: string | undefined): string[] {
  if (!path) return [];
  const names: string[] = [];
  for (const document of loadPersistedOperations(path).values()) {
    for (const definition of parse(document).definitions) {
      if (definition.kind === Kind.OPERATION_DEFINITION && definition.name) names.push(definition.name.value);
    }
  }
  return names;
}

/**
 * Persisted documents (PERSISTED_OPERATIONS_FILE): a request may name its document by
 * `documentId` or by Apollo's hash instead of sending it; with PERSISTED_OPERATIONS_ONLY, only
 * those run. Off (no plugin) without a file.
 */
export function usePersistedDocuments(security: SecurityConfig): Plugin | undefined {
  if (!security.persistedOperationsFile) return undefined;
  const operations = loadPersistedOperations(security.persistedOperationsFile);
  return usePersistedOperations({
    getPersistedOperation: persistedDocumentLookup(operations),
    extractPersistedOperationId: persistedDocumentId,
    allowArbitraryOperations: !security.persistedOperationsOnly,
    customErrors: {
      // A `documentId` that names no document is a 404, as the convention has it; Apollo's
      // hash form keeps the 400 of every other refusal (src/plugins/refusals.ts).
      notFound: ({ params, request }) =>
        sendsDocumentId(params, request)
          ? new GraphQLError("No persisted document has this id", {
              extensions: { code: "PERSISTED_QUERY_NOT_FOUND", http: { status: 404 } },
            })
          : new GraphQLError("No persisted operation has this hash", { extensions: { code: "PERSISTED_QUERY_NOT_FOUND" } }),
      // As without persisted documents, where such a request is a bad request too.
      keyNotFound: {
        message: "The request has no query and names no persisted document (documentId, or extensions.persistedQuery)",
        extensions: { code: "BAD_REQUEST" },
      },
      persistedQueryOnly: {
        message: "Only persisted operations run on this gateway",
        extensions: { code: "PERSISTED_QUERY_ONLY" },
      },
    },
  }) as Plugin;
}
