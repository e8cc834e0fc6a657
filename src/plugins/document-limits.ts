import { EnvelopArmorPlugin } from "@escape.tech/graphql-armor";
import type { GraphQLError, ValidationContext } from "graphql";
import type { Plugin } from "graphql-yoga";
import type { QueryLimits } from "../config.ts";
import { refusal } from "./refusals.ts";

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

/**
 * GraphQL Armor's limits per document on aliases (MAX_QUERY_ALIASES, default 50), tokens (MAX_QUERY_TOKENS,
 * default 2,000) and directives (MAX_QUERY_DIRECTIVES, default 50); depth, breadth and cost are `useOperationLimits`'s.
 */
export function useDocumentLimits(limits: QueryLimits): Plugin {
  return EnvelopArmorPlugin({
    // Every alias counts, `__typename` ones too (Armor lets those through by default).
    maxAliases: { ...armorLimit("aliases", limits.aliases), allowList: [] },
    maxTokens: armorLimit("tokens", limits.tokens),
    maxDirectives: armorLimit("directives", limits.directives),
    maxDepth: { enabled: false },
    costLimit: { enabled: false },
    // Suggestions are stripped from every message, field names or not, in src/plugins/refusals.ts.
    blockFieldSuggestion: { enabled: false },
  }) as Plugin;
}
