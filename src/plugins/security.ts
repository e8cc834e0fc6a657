/**
 * The protections that run before an operation, in their order: the document limits (aliases,
 * tokens, directives), depth, breadth and cost (its estimated upstream calls:
 * src/plugins/operation-limits.ts), CSRF prevention (CSRF_PREVENTION, default on; a native
 * EventSource's GET subscription passes without its header: src/plugins/csrf-prevention.ts),
 * introspection off (INTROSPECTION=false; on by default), persisted documents. The body limit is not here: it
 * must run before anything reads a body (src/gateway.ts puts it first).
 */
import { useDisableIntrospection } from "@graphql-yoga/plugin-disable-introspection";
import type { Plugin } from "graphql-yoga";
import type { QueryLimits, SecurityConfig } from "../config.ts";
import { useCsrfPrevention } from "./csrf-prevention.ts";
import { useDocumentLimits } from "./document-limits.ts";
import { useOperationLimits } from "./operation-limits.ts";
import { usePersistedDocuments } from "./persisted-documents.ts";

export function securityPlugins(security: SecurityConfig, limits: QueryLimits): Plugin[] {
  const plugins: Plugin[] = [useDocumentLimits(limits), useOperationLimits(limits)];
  if (security.csrfPrevention) plugins.push(useCsrfPrevention());
  if (!security.introspection) plugins.push(useDisableIntrospection() as Plugin);
  const persisted = usePersistedDocuments(security);
  if (persisted) plugins.push(persisted);
  return plugins;
}
