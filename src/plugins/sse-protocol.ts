/**
 * graphql-sse's single-connection requests and answers as the gateway reads and writes them
 * (src/plugins/sse-single-connection.ts): which requests are the mode's, the token they name, the
 * bodies an operation's POST is read into, and graphql-sse's answers with a code on each refusal.
 */
import { TOKEN_HEADER_KEY, TOKEN_QUERY_KEY, type Response as SseAnswer } from "graphql-sse";
import type { GraphQLFormattedError } from "graphql";
import type { FetchAPI } from "graphql-yoga";
import { nestsDeeperThan } from "../limits/document-shape.ts";
import { refusalBody } from "./refusals.ts";

export const JSON_TYPE = "application/json; charset=utf-8";

/** The stream's token a request names, in its header or its query string (`url`, when parsed already). */
export function tokenOf(request: Request, url = new URL(request.url)): string | undefined {
  return request.headers.get(TOKEN_HEADER_KEY) ?? url.searchParams.get(TOKEN_QUERY_KEY) ?? undefined;
}

/** A request of this mode: a PUT, or a request that names a stream's token. */
export function isSingleConnectionRequest(request: Request, url: URL, endpoint: string): boolean {
  if (url.pathname !== endpoint) return false;
  return request.method === "PUT" || (["GET", "POST", "DELETE"].includes(request.method) && tokenOf(request, url) !== undefined);
}

/** graphql-sse's answer as a Response; its own refusals (JSON without a code) get one, as every refusal has (one without a body gets it from src/plugins/refusals.ts). */
export function responseOf(fetchAPI: FetchAPI, [body, init]: SseAnswer): Response {
  if (init.status < 400 || typeof body !== "string") {
    return new fetchAPI.Response(typeof body === "string" ? body : null, { status: init.status, headers: init.headers });
  }
  let errors: GraphQLFormattedError[] = [];
  try {
    errors = (JSON.parse(body) as { errors?: GraphQLFormattedError[] }).errors ?? [];
  } catch {
    // Answered below with its status's message.
  }
  if (errors[0]?.extensions?.code !== undefined)
    return new fetchAPI.Response(body, { status: init.status, headers: init.headers });
  const message = errors[0]?.message ?? `The request was refused (HTTP ${init.status})`;
  const code = init.status === 404 ? "NOT_FOUND" : "BAD_REQUEST";
  return new fetchAPI.Response(refusalBody(message, code), {
    status: init.status,
    headers: { ...init.headers, "content-type": JSON_TYPE },
  });
}

/**
 * The body graphql-sse reads (a query and the operation's id are all it needs) and the body the
 * pipeline gets (the POST's, without the id); undefined for a body that is no JSON object, or nests
 * deeper than MAX_NESTING_DEPTH (it could not be written again).
 */
export function bodiesOf(
  text: string,
  maxNestingDepth: number,
): { forHandler: string; forPipeline: string; operationId: string } | undefined {
  let parsed: unknown;
  try {
    parsed = nestsDeeperThan(text, maxNestingDepth) ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined;
  const { extensions, ...params } = parsed as { extensions?: unknown };
  if (typeof extensions !== "object" || extensions === null || Array.isArray(extensions)) {
    return { forHandler: JSON.stringify({ query: "" }), forPipeline: text, operationId: "" };
  }
  const { operationId, ...rest } = extensions as Record<string, unknown>;
  return {
    forHandler: JSON.stringify({ query: "", extensions: { operationId } }),
    forPipeline: JSON.stringify(Object.keys(rest).length > 0 ? { ...params, extensions: rest } : params),
    // As graphql-sse reads it.
    operationId: String(operationId ?? ""),
  };
}
