/**
 * Typed GraphQL errors. Every error a client can see carries `extensions.code`; errors
 * caused by an upstream answer also carry `extensions.upstream` with its status and message.
 * Upstream statuses never go into `extensions.http`: one failing field must not change the
 * status of the whole response.
 */
import { GraphQLError } from "graphql";

export type ErrorCode =
  | "BAD_USER_INPUT"
  | "UNAUTHENTICATED"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "RATE_LIMITED"
  | "UPSTREAM_UNAVAILABLE"
  | "UPSTREAM_ERROR"
  | "CURSOR_EXPIRED"
  /** The request ran past REQUEST_TIMEOUT_MS; answered with what was known by then. */
  | "TIMEOUT"
  /** A live stream could not fill a gap between two reads, or a resume point, within its bound; the stream goes on. */
  | "LIVE_GAP"
  /** A live stream's client fell too far behind; the stream ended. */
  | "SLOW_SUBSCRIBER";

export interface UpstreamErrorDetails {
  service: string;
  status: number | null;
  message: string | null;
}

export class GatewayError extends GraphQLError {
  readonly code: ErrorCode;

  constructor(message: string, code: ErrorCode, extensions: Record<string, unknown> = {}) {
    super(message, { extensions: { ...extensions, code } });
    this.code = code;
  }
}

/** A client argument that breaks a rule; names the argument so clients can point at it. */
export function badUserInput(argument: string, message: string, details: Record<string, unknown> = {}): GatewayError {
  return new GatewayError(message, "BAD_USER_INPUT", { argument, ...details });
}

/** An operation refused before it runs for going over one of the gateway's limits (HTTP 400). */
export function operationOverLimit(limit: string, max: number, actual: number, message: string): GatewayError {
  return new GatewayError(message, "BAD_USER_INPUT", { limit, max, actual, http: { status: 400 } });
}

/** An error answer (or no answer) from an upstream service. */
export class UpstreamError extends GatewayError {
  readonly status: number | null;

  constructor(message: string, code: ErrorCode, upstream: UpstreamErrorDetails, extra: Record<string, unknown> = {}) {
    super(message, code, { upstream, ...extra });
    this.status = upstream.status;
  }
}

export function isNotFound(error: unknown): boolean {
  return error instanceof UpstreamError && error.code === "NOT_FOUND";
}

/** The record, or null when the upstream says it does not exist. */
export async function nullIfNotFound<T>(request: Promise<T>): Promise<T | null> {
  try {
    return await request;
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

/**
 * What an upstream status says. A 4xx is an answer about the request (its input, its key, its
 * rate), never about the service's health: only 5xx, 408 and answers that never came mean the
 * service is unwell (see `countsAgainstService` in src/upstream/http.ts).
 */
function codeForStatus(status: number): ErrorCode {
  if (status === 401) return "UNAUTHENTICATED";
  if (status === 403) return "FORBIDDEN";
  if (status === 404 || status === 410) return "NOT_FOUND";
  if (status === 429) return "RATE_LIMITED";
  if (status === 408 || status === 502 || status === 503 || status === 504) return "UPSTREAM_UNAVAILABLE";
  // 400, 405, 409, 413, 414, 422, 431, ...: the request as sent was refused.
  if (status >= 400 && status < 500) return "BAD_USER_INPUT";
  return "UPSTREAM_ERROR";
}

/** Seconds to wait, from a `retry-after` header (delta-seconds or an HTTP date). */
export function parseRetryAfter(header: string | undefined, now = Date.now()): number | null {
  if (!header) return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds);
  const date = Date.parse(header);
  if (Number.isNaN(date)) return null;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

/** The error for an upstream answer with a non-2xx status. */
export function upstreamStatusError(
  service: string,
  status: number,
  upstreamMessage: string | null,
  retryAfterSeconds: number | null,
): UpstreamError {
  const code = codeForStatus(status);
  const upstream = { service, status, message: upstreamMessage };
  const detail = upstreamMessage ? `: ${upstreamMessage}` : "";
  switch (code) {
    case "RATE_LIMITED":
      return new UpstreamError(
        `The ${service} rate limit was exceeded${retryAfterSeconds !== null ? `; retry after ${retryAfterSeconds} s` : ""}`,
        code,
        upstream,
        { retryAfter: retryAfterSeconds },
      );
    case "UPSTREAM_UNAVAILABLE":
      return new UpstreamError(`The ${service} is unavailable (HTTP ${status})${detail}`, code, upstream);
    case "UPSTREAM_ERROR":
      return new UpstreamError(`The ${service} failed (HTTP ${status})${detail}`, code, upstream);
    default:
      return new UpstreamError(`The ${service} refused the request (HTTP ${status})${detail}`, code, upstream);
  }
}

/** The error for an upstream that could not be reached or did not answer in time. */
export function upstreamUnreachable(service: string, cause: string): UpstreamError {
  return new UpstreamError(`The ${service} could not be reached: ${cause}`, "UPSTREAM_UNAVAILABLE", {
    service,
    status: null,
    message: null,
  });
}

/** The error for a 2xx answer whose body is not the JSON the contract promises. */
export function upstreamMalformed(service: string, status: number): UpstreamError {
  return new UpstreamError(`The ${service} sent a malformed response`, "UPSTREAM_ERROR", {
    service,
    status,
    message: null,
  });
}
