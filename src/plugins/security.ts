/**
 * Protections applied before an operation runs: body size (useBodyLimit, which must run before
 * anything reads a body), CSRF, introspection, persisted operations, the aliases/tokens/directives
 * limits (GraphQL Armor), and cost, depth and breadth (useComplexityLimit, measured with the
 * schema's complexity plugin, which knows what a connection costs).
 */
import { readFileSync } from "node:fs";
import { EnvelopArmorPlugin } from "@escape.tech/graphql-armor";
import { useCSRFPrevention } from "@graphql-yoga/plugin-csrf-prevention";
import { useDisableIntrospection } from "@graphql-yoga/plugin-disable-introspection";
import { defaultExtractPersistedOperationId, usePersistedOperations } from "@graphql-yoga/plugin-persisted-operations";
import { GraphQLError, Kind, parse, type ExecutionArgs, type ExecutionResult, type ValidationContext } from "graphql";
import type { GraphQLParams, Plugin } from "graphql-yoga";
import type { QueryLimits, SecurityConfig } from "../config.ts";
import { operationOverLimit, type GatewayError } from "../execution/errors.ts";
import { analyzeOperation, type OperationComplexity } from "../limits/operation-analysis.ts";
import { refusal, refusalResponse } from "./refusals.ts";

/** Refuses bodies over the limit by their declared length, before Yoga reads them. */
export function useBodyLimit(maxBodyBytes: number): Plugin {
  return {
    onRequest({ request, endResponse, fetchAPI }) {
      if (request.method !== "POST") return;
      const declared = request.headers.get("content-length");
      if (declared === null) {
        endResponse(refusalResponse(fetchAPI.Response, 411, "A POST must declare its content-length", "LENGTH_REQUIRED"));
      } else if (Number(declared) > maxBodyBytes) {
        endResponse(
          refusalResponse(
            fetchAPI.Response,
            413,
            `The request body is over the limit of ${maxBodyBytes} bytes`,
            "PAYLOAD_TOO_LARGE",
          ),
        );
      }
    },
  };
}

/**
 * GraphQL Armor's refusal of an aliases, directives or tokens limit, as the gateway's other
 * limits answer: BAD_USER_INPUT naming the limit and its bound, HTTP 400. Validation limits are
 * reported as validation errors (so that Yoga remembers them with the document); the tokens
 * limit stops the parser.
 */
function armorLimit(limit: "aliases" | "directives" | "tokens", max: number) {
  return {
    n: max,
    propagateOnRejection: false,
    onReject: [
      (context: ValidationContext | null, error: GraphQLError) => {
        const actual = /found (\d+)/.exec(error.message)?.[1];
        const typed = refusal(error.message.replace(/^Syntax Error: /, ""), "BAD_USER_INPUT", 400, {
          limit,
          max,
          ...(actual ? { actual: Number(actual) } : {}),
        });
        if (!context) throw typed;
        context.reportError(typed);
      },
    ],
  };
}

/** The first limit the operation goes over, depth before breadth before cost. */
function overLimit(complexity: OperationComplexity, limits: QueryLimits): GatewayError | null {
  for (const limit of ["depth", "breadth", "cost"] as const) {
    const [max, actual] = [limits[limit], complexity[limit]];
    if (actual > max) {
      return operationOverLimit(
        limit,
        max,
        actual,
        `The operation's ${limit} is ${actual}, over the limit of ${max}; ask for fewer items (smaller first) or fewer fields`,
      );
    }
  }
  return null;
}

/**
 * Refuses an operation over MAX_QUERY_COST, MAX_QUERY_DEPTH or MAX_QUERY_BREADTH after
 * validation and before anything runs or is charged to the caller's rate limit.
 */
export function useComplexityLimit(limits: QueryLimits): Plugin {
  const check = (args: ExecutionArgs, stop: (result: ExecutionResult) => void) => {
    const { complexity } = analyzeOperation(args);
    const error = complexity && overLimit(complexity, limits);
    if (error) stop({ errors: [error] });
  };
  return {
    onExecute: ({ args, setResultAndStopExecution }) => check(args, setResultAndStopExecution),
    onSubscribe: ({ args, setResultAndStopExecution }) => check(args, setResultAndStopExecution),
  };
}

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

export function securityPlugins(security: SecurityConfig, limits: QueryLimits): Plugin[] {
  const armor = EnvelopArmorPlugin({
    // Every alias counts, `__typename` ones too (Armor lets those through by default).
    maxAliases: { ...armorLimit("aliases", limits.aliases), allowList: [] },
    maxTokens: armorLimit("tokens", limits.tokens),
    maxDirectives: armorLimit("directives", limits.directives),
    maxDepth: { enabled: false },
    costLimit: { enabled: false },
    // Suggestions are stripped from every message, field names or not, in src/plugins/refusals.ts.
    blockFieldSuggestion: { enabled: false },
  });
  const plugins: Plugin[] = [armor as Plugin, useComplexityLimit(limits)];
  if (security.csrfPrevention)
    plugins.push(useCSRFPrevention({ requestHeaders: ["x-graphql-yoga-csrf", "apollo-require-preflight"] }));
  if (!security.introspection) plugins.push(useDisableIntrospection() as Plugin);
  if (security.persistedOperationsFile) {
    const operations = loadPersistedOperations(security.persistedOperationsFile);
    plugins.push(
      usePersistedOperations({
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
