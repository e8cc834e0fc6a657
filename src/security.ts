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
import { usePersistedOperations } from "@graphql-yoga/plugin-persisted-operations";
import type { ExecutionArgs, ExecutionResult } from "graphql";
import type { Plugin } from "graphql-yoga";
import type { QueryLimits, SecurityConfig } from "./config.ts";
import { operationOverLimit, type GatewayError } from "./errors.ts";
import { analyzeOperation, type OperationComplexity } from "./operation-analysis.ts";

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

/** The first limit the operation goes over, depth before breadth before cost. */
function overLimit(complexity: OperationComplexity, limits: QueryLimits): GatewayError | null {
  for (const limit of ["depth", "breadth", "cost"] as const) {
    const [max, actual] = [limits[limit], complexity[limit]];
    if (actual > max) {
      return operationOverLimit(limit, max, actual, `The operation's ${limit} is ${actual}, over the limit of ${max}; ask for fewer items (smaller first) or fewer fields`);
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
  const plugins: Plugin[] = [armor as Plugin, useComplexityLimit(limits)];
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
