/**
 * What every refusal shares, whichever way it was answered (the plugin inside Yoga, or the
 * listener's operation lane, src/server/operation-lane.ts): its vocabulary (a code, one status
 * per kind, a JSON body), the errors of an answer as a client may see them, and the count and
 * the line each refusal gets.
 */
import { GraphQLError, type ExecutionResult, type GraphQLFormattedError } from "graphql";
import type { Logger } from "../telemetry/logger.ts";
import { truncated } from "../telemetry/logger.ts";
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
export const CSRF_MESSAGE = "Required CSRF header(s) not present";

export function reasonFor(code: unknown, status: number, extensions: Record<string, unknown>, message = ""): RefusalReason {
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

/** A request refused: why (its metric's reason), and the code and message it was refused with when known. */
export interface Refused {
  reason: RefusalReason;
  /** Unknown for a JSON refusal another plugin answered before Yoga ran (its body is not read again). */
  code?: string;
  message?: string;
}

export interface RefusalNotesOptions {
  logger: Logger;
  metrics: GatewayMetrics;
  /** Strip "Did you mean ...?" from every message (introspection off). */
  hideSuggestions: boolean;
}

export class RefusalNotes {
  constructor(private readonly options: RefusalNotesOptions) {}

  /**
   * An answer with errors as a client may see it, and the refusal it is when nothing ran (no
   * data: the errors refuse the request; with data, they belong to fields).
   */
  normalizedResult(result: ExecutionResult): { result: ExecutionResult; refused: Refused | undefined } {
    if (!result.errors?.length) return { result, refused: undefined };
    const refusesRequest = !("data" in result) || result.data === undefined;
    const errors = result.errors.map((error) => this.normalized(error, refusesRequest));
    const { message } = result.errors[0]!;
    const { extensions } = errors[0]!;
    let refused: Refused | undefined;
    if (refusesRequest && extensions.code !== "INTERNAL_SERVER_ERROR") {
      const status = (extensions.http as { status?: number } | undefined)?.status ?? 400;
      refused = { reason: reasonFor(extensions.code, status, extensions, message), code: String(extensions.code), message };
    }
    return { result: { ...result, errors }, refused };
  }

  /**
   * Counts and logs an answer that refused its request: `refused` as its errors said, else (any
   * other 4xx, a JSON body no plugin described) by its status alone.
   */
  note(status: number, refused: Refused | undefined, requestId: string | undefined, transport?: string): void {
    const entry = refused ?? (status >= 400 && status < 500 ? { reason: reasonFor(undefined, status, {}) } : undefined);
    if (!entry) return;
    this.options.metrics.refusal(entry.reason);
    this.options.logger.info(
      {
        requestId,
        ...(transport ? { transport } : {}),
        status,
        reason: entry.reason,
        code: entry.code,
        error: entry.message === undefined ? undefined : truncated(entry.message, 256),
      },
      "request refused",
    );
  }

  /** The error as a client may see it: no suggestions, no internals; and, when it refuses the request, its code and status. */
  private normalized(error: GraphQLError, refusesRequest: boolean): GraphQLError {
    const message = this.options.hideSuggestions ? error.message.replace(SUGGESTION, "") : error.message;
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
}
