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
  | "SLOW_SUBSCRIBER"
  /** The gateway polls as many live questions as LIVE_MAX_POLLERS allows; a subscription to a new one waits. */
  | "LIVE_CAPACITY";

export interface UpstreamErrorDetails {
  service: string;
  status: number | null;
  message: string | null;
}

/**
 * Runs `make` with no stack frames captured. The gateway's own errors are answers, not faults: no
 * one reads where in the code they were raised, and capturing that place (then formatting it when
 * the next wrapper copies `stack`) was most of what an error answer cost the process.
 */
export function withoutStackFrames<T>(make: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

export class GatewayError extends GraphQLError {
  readonly code: ErrorCode;

  constructor(message: string, code: ErrorCode, extensions: Record<string, unknown> = {}) {
    // withoutStackFrames, written out: `super` cannot be called from a closure.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(message, { extensions: { ...extensions, code } });
    } finally {
      Error.stackTraceLimit = limit;
    }
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
