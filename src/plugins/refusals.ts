/**
 * Refusals say what they are. Every request the gateway refuses is answered with JSON
 * (`{ errors: [{ message, extensions: { code } }] }`) and one status per kind, whatever the
 * `accept` header: 400 a bad request (malformed, CSRF, too deeply nested, does not parse or
 * validate, over a limit, variables that do not coerce), 405/406/415 their HTTP meanings,
 * 411/413 bodies, 429 budgets. Each refusal is logged once, truncated, and counted in
 * `gateway_refusals_total{reason}`. With introspection off, no message suggests a name ("Did
 * you mean ...?"), whichever rule wrote it. No stack trace or file path reaches a client: an
 * error that escapes a plugin's HTTP hooks is answered as a JSON 500 (withLastResort).
 */
import { GraphQLError, type GraphQLFormattedError } from "graphql";
import { isAsyncIterable, processRegularResult, type Plugin } from "graphql-yoga";
import type { Logger } from "../telemetry/logger.ts";
import { truncated } from "../telemetry/logger.ts";
import { documentShapeOf, valueNestsDeeperThan } from "../limits/document-shape.ts";
import type { GatewayMetrics, RefusalReason } from "../telemetry/metrics.ts";

export type RefusalCode =
  | "BAD_REQUEST"
  | "GRAPHQL_PARSE_FAILED"
  | "GRAPHQL_VALIDATION_FAILED"
  | "BAD_USER_INPUT"
  | "PAYLOAD_TOO_LARGE"
  | "LENGTH_REQUIRED"
  | "NOT_FOUND";

/** A refusal as a GraphQL error: its code, and the HTTP status of the whole answer. */
export function refusal(
  message: string,
  code: RefusalCode,
  status: number,
  extensions: Record<string, unknown> = {},
): GraphQLError {
  return new GraphQLError(message, { extensions: { ...extensions, code, http: { status } } });
}

/** A refusal answered before Yoga runs anything (e.g. from onRequest). */
export function refusalResponse(
  ResponseClass: typeof Response,
  status: number,
  message: string,
  code: string,
  headers: Record<string, string> = {},
): Response {
  return new ResponseClass(refusalBody(message, code), {
    status,
    headers: { ...headers, "content-type": "application/json; charset=utf-8" },
  });
}

/** The JSON body of a refusal: one error with its message and code. */
export function refusalBody(message: string, code: string): string {
  const body: { errors: GraphQLFormattedError[] } = { errors: [{ message, extensions: { code } }] };
  return JSON.stringify(body);
}

const SUGGESTION = / ?Did you mean [^?]*\?/g;
/** What a client asks for when it wants a stream. */
const STREAMING = /text\/event-stream|multipart\/mixed/i;
const CSRF_MESSAGE = "Required CSRF header(s) not present";

function reasonFor(code: unknown, status: number, extensions: Record<string, unknown>, message = ""): RefusalReason {
  if (message === CSRF_MESSAGE) return "csrf";
  if (status === 413) return "body_too_large";
  if (status === 411) return "length_required";
  if (status === 405) return "method_not_allowed";
  if (status === 415) return "unsupported_media_type";
  if (status === 406) return "not_acceptable";
  if (status === 429 || code === "RATE_LIMITED") return "rate_limited";
  if (status === 401 || status === 403 || code === "UNAUTHENTICATED" || code === "FORBIDDEN") return "forbidden";
  if (extensions.limit === "nesting") return "nesting_too_deep";
  switch (code) {
    case "GRAPHQL_PARSE_FAILED":
      return "parse_failed";
    case "GRAPHQL_VALIDATION_FAILED":
      return "validation_failed";
    case "BAD_USER_INPUT":
      return extensions.limit !== undefined ? "over_limit" : "invalid_variables";
    case "PERSISTED_QUERY_NOT_FOUND":
    case "PERSISTED_QUERY_ONLY":
      return "persisted_operation";
    case "BAD_REQUEST":
    case "OPERATION_RESOLUTION_FAILURE":
      return "malformed_request";
    case "NOT_FOUND":
      return "not_found";
    default:
      return status === 404 ? "not_found" : "other";
  }
}

interface Refused {
  reason: RefusalReason;
  /** Unknown for a JSON refusal another plugin answered before Yoga ran (its body is not read again). */
  code?: string;
  message?: string;
}

/** Answers that pass on the refusal of a request they carried (graphql-sse's POST, its operation's): counted and logged as that one's. */
const passedOn = new WeakSet<Request>();
export const passOnRefusal = (request: Request): void => void passedOn.add(request);

export interface RefusalOptions {
  logger: Logger;
  metrics: GatewayMetrics;
  /** MAX_NESTING_DEPTH: JSON in variables and extensions, and a document's brackets. */
  maxNestingDepth: number;
  /**
   * Whether the parse cache holds this query text: then it was measured when it was first sent
   * (a document nested too deep is refused before it is parsed), and is not read again.
   */
  isParsed(source: string): boolean;
  /** Strip "Did you mean ...?" from every message (introspection off). */
  hideSuggestions: boolean;
  requestIdOf(request: Request): string | undefined;
}

/** Refuses too deeply nested requests, and gives every refusal its code, status, log line and count. */
export function useRefusals(options: RefusalOptions): Plugin {
  const { maxNestingDepth: max } = options;
  const refused = new WeakMap<Request, Refused>();

  /** The error as a client may see it: no suggestions, no internals; and, when it refuses the request, its code and status. */
  function normalized(error: GraphQLError, refusesRequest: boolean): GraphQLError {
    const message = options.hideSuggestions ? error.message.replace(SUGGESTION, "") : error.message;
    const { originalError: _internal, ...extensions } = (error.extensions ?? {}) as Record<string, unknown>;
    if (refusesRequest) {
      const http = (extensions.http ?? {}) as { status?: number; spec?: boolean; headers?: Record<string, string> };
      let code = extensions.code;
      let status = http.spec ? undefined : http.status;
      if (error.message === CSRF_MESSAGE) {
        code = "BAD_REQUEST";
        status = 400;
      } else if (code === undefined) {
        code = error.message.startsWith('Variable "$') ? "BAD_USER_INPUT" : "BAD_REQUEST";
      }
      // An unexpected error keeps its 500; every other refusal without a status of its own is a bad request.
      if (code !== "INTERNAL_SERVER_ERROR") {
        extensions.code = code;
        extensions.http = { ...(http.headers ? { headers: http.headers } : {}), status: status ?? 400 };
      }
    }
    if (message === error.message && !("originalError" in (error.extensions ?? {})) && !refusesRequest) return error;
    return new GraphQLError(message, {
      nodes: error.nodes,
      source: error.source,
      positions: error.positions,
      path: error.path,
      originalError: error.originalError,
      extensions,
    });
  }

  return {
    onParams({ params, request, setResult }) {
      const query = params.query;
      if (typeof query === "string" && !options.isParsed(query) && documentShapeOf(request, query).depth > max) {
        setResult({
          errors: [
            refusal(`The document nests brackets deeper than the limit of ${max}`, "GRAPHQL_PARSE_FAILED", 400, {
              limit: "nesting",
              max,
            }),
          ],
        });
        return;
      }
      for (const [name, value] of [
        ["variables", params.variables],
        ["extensions", params.extensions],
      ] as const) {
        if (valueNestsDeeperThan(value, max)) {
          setResult({
            errors: [
              refusal(`The ${name} nest deeper than the limit of ${max}`, "BAD_REQUEST", 400, {
                argument: name,
                limit: "nesting",
                max,
              }),
            ],
          });
          return;
        }
      }
    },

    onResultProcess({ request, result, setResult, setResultProcessor }) {
      if (Array.isArray(result) || isAsyncIterable(result) || !result.errors?.length) return;
      // No data: nothing ran, so the errors refuse the request; with data, they belong to fields.
      const refusesRequest = !("data" in result) || result.data === undefined;
      const errors = result.errors.map((error) => normalized(error as GraphQLError, refusesRequest));
      setResult({ ...result, errors });
      // A refusal is JSON whatever was asked for: a client that asked for an event stream or
      // multipart (graphql-sse, meros) reads a refusal from the status and a JSON body, as
      // graphql-sse's own server answers one.
      if (refusesRequest && STREAMING.test(request.headers.get("accept") ?? "")) {
        setResultProcessor(processRegularResult, "application/json");
      }
      const { message } = result.errors[0]!;
      const { extensions } = errors[0]!;
      if (refusesRequest && extensions.code !== "INTERNAL_SERVER_ERROR") {
        const status = (extensions.http as { status?: number } | undefined)?.status ?? 400;
        refused.set(request, {
          reason: reasonFor(extensions.code, status, extensions, message),
          code: String(extensions.code),
          message,
        });
      }
    },

    async onResponse({ request, response, setResponse, fetchAPI, serverContext }) {
      if (passedOn.has(request)) return;
      const { status } = response;
      let entry = refused.get(request);
      if (!entry && status >= 400 && status < 500) {
        if (response.headers.get("content-type")?.includes("json")) {
          entry = { reason: reasonFor(undefined, status, {}) };
        } else {
          // Yoga answers an unknown path, media type or accept header with an empty body.
          const code = status === 404 ? "NOT_FOUND" : "BAD_REQUEST";
          const message = refusalMessage(status);
          const headers = Object.fromEntries(
            [...response.headers].filter(([name]) => name !== "content-length" && name !== "content-type"),
          );
          await response.body?.cancel().catch(() => {});
          setResponse(refusalResponse(fetchAPI.Response, status, message, code, headers));
          entry = { reason: reasonFor(code, status, {}), code, message };
        }
      }
      if (!entry) return;
      options.metrics.refusal(entry.reason);
      const transport = (serverContext as { transport?: string } | undefined)?.transport;
      options.logger.info(
        {
          requestId: options.requestIdOf(request),
          ...(transport ? { transport } : {}),
          status,
          reason: entry.reason,
          code: entry.code,
          error: entry.message === undefined ? undefined : truncated(entry.message, 256),
        },
        "request refused",
      );
    },
  };
}

function refusalMessage(status: number): string {
  switch (status) {
    case 404:
      return "Not found: the GraphQL endpoint is /graphql";
    case 406:
      return "Not acceptable: ask for application/json, application/graphql-response+json or text/event-stream";
    case 415:
      return "Unsupported media type: send application/json or application/graphql";
    default:
      return `The request was refused (HTTP ${status})`;
  }
}

const INTERNAL_MESSAGE = "Unexpected error.";

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

/**
 * The same plugins, except that an error thrown by one of their HTTP hooks (onRequest,
 * onResponse) is logged and answered with a JSON 500 instead of the server adapter's text/plain
 * stack trace. Plugins they add at init are guarded too.
 */
export function withLastResort<P extends object>(plugins: P[], logger: Logger): P[] {
  const internal = (ResponseClass: typeof Response, error: unknown) => {
    logger.error({ err: error }, "unexpected error in an HTTP hook");
    return refusalResponse(ResponseClass, 500, INTERNAL_MESSAGE, "INTERNAL_SERVER_ERROR");
  };
  const guard = <T extends object>(given: T): T => {
    // Typed as a plain plugin: the context type plays no part in the HTTP hooks.
    const plugin = given as unknown as Plugin;
    if (!plugin || typeof plugin !== "object") return given;
    const { onRequest, onResponse, onPluginInit } = plugin;
    if (!onRequest && !onResponse && !onPluginInit) return given;
    const guarded: Plugin = { ...plugin };
    if (onRequest) {
      guarded.onRequest = (payload) => {
        const fail = (error: unknown) => payload.endResponse(internal(payload.fetchAPI.Response, error));
        try {
          const pending = onRequest.call(plugin, payload);
          return isThenable(pending) ? Promise.resolve(pending).catch(fail) : pending;
        } catch (error) {
          fail(error);
        }
      };
    }
    if (onResponse) {
      guarded.onResponse = (payload) => {
        const fail = (error: unknown) => payload.setResponse(internal(payload.fetchAPI.Response, error));
        try {
          const pending = onResponse.call(plugin, payload);
          return isThenable(pending) ? Promise.resolve(pending).catch(fail) : pending;
        } catch (error) {
          fail(error);
        }
      };
    }
    if (onPluginInit) {
      guarded.onPluginInit = (payload) =>
        onPluginInit.call(plugin, { ...payload, addPlugin: (added) => payload.addPlugin(guard(added)) });
    }
    return guarded as unknown as T;
  };
  return plugins.map(guard);
}
