/**
 * What an upstream outcome means, decided once: for each status the services answer with (or
 * none, when no answer came), the GraphQL code a client sees, and what the gateway does next.
 * The HTTP client (retries, the breaker), the record cache (stale-if-error) and the live pollers
 * (ride it out or end the streams) all read this table.
 *
 * A 4xx is an answer about the request (its input, its key, its rate), never about the service's
 * health: no caller can open the breaker for everyone by sending requests the service refuses.
 * The words an error carries are made here too: the upstream's own message, or what kept an
 * answer from coming.
 */
import { errors as undiciErrors } from "undici";
import { GatewayError, UpstreamError, type ErrorCode } from "../errors.ts";

export interface OutcomeMeaning {
  /** The `extensions.code` a client sees. */
  code: ErrorCode;
  /** A GET may be sent again, within the retry budget and the request's deadline. */
  retryable: boolean;
  /** Counts as a failure of the service for its circuit breaker. */
  countsAgainstService: boolean;
  /** The record cache may answer with an expired record instead (stale-if-error). */
  staleIfError: boolean;
  /** A live poller reads again (a bounded number of times) instead of ending its streams. */
  transientForPollers: boolean;
}

interface OutcomeRow extends OutcomeMeaning {
  /** What the row is, for a reader and for a test's message. */
  outcome: string;
  matches(status: number | null): boolean;
}

const is =
  (...statuses: number[]) =>
  (status: number | null) =>
    status !== null && statuses.includes(status);
const within = (low: number, high: number) => (status: number | null) => status !== null && status >= low && status <= high;

const REFUSED = { retryable: false, countsAgainstService: false, staleIfError: false, transientForPollers: false };
const UNWELL = { countsAgainstService: true, staleIfError: true, transientForPollers: true };

/** The first row that matches a status wins. */
export const UPSTREAM_OUTCOMES: readonly OutcomeRow[] = [
  {
    outcome: "no answer: connection failed or reset, timed out, the request's deadline passed, breaker open",
    matches: (status) => status === null,
    code: "UPSTREAM_UNAVAILABLE",
    retryable: true,
    ...UNWELL,
  },
  {
    outcome: "a 2xx whose body is not the contract's JSON",
    matches: within(200, 299),
    code: "UPSTREAM_ERROR",
    retryable: false,
    countsAgainstService: true,
    staleIfError: true,
    transientForPollers: true,
  },
  { outcome: "401: the key was refused", matches: is(401), code: "UNAUTHENTICATED", ...REFUSED },
  { outcome: "403: the key may not do this", matches: is(403), code: "FORBIDDEN", ...REFUSED },
  { outcome: "404, 410: no such record", matches: is(404, 410), code: "NOT_FOUND", ...REFUSED },
  {
    outcome: "408: the service timed the request out",
    matches: is(408),
    code: "UPSTREAM_UNAVAILABLE",
    retryable: false,
    ...UNWELL,
  },
  {
    outcome: "429: the caller's rate at the service",
    matches: is(429),
    code: "RATE_LIMITED",
    retryable: true,
    countsAgainstService: false,
    staleIfError: true,
    transientForPollers: true,
  },
  {
    outcome: "502, 503: a gateway or the service is down",
    matches: is(502, 503),
    code: "UPSTREAM_UNAVAILABLE",
    retryable: true,
    ...UNWELL,
  },
  { outcome: "504: a gateway timed out", matches: is(504), code: "UPSTREAM_UNAVAILABLE", retryable: false, ...UNWELL },
  // 400, 405, 409, 413, 414, 422, 431, ...: the request as sent was refused.
  { outcome: "another 4xx: the request was refused", matches: within(400, 499), code: "BAD_USER_INPUT", ...REFUSED },
  { outcome: "another 5xx: the service failed", matches: within(500, 599), code: "UPSTREAM_ERROR", retryable: false, ...UNWELL },
  {
    outcome: "1xx or 3xx, which the gateway never asks for",
    matches: () => true,
    code: "UPSTREAM_ERROR",
    retryable: false,
    countsAgainstService: false,
    staleIfError: true,
    transientForPollers: true,
  },
];

export function outcomeOfStatus(status: number | null): OutcomeRow {
  return UPSTREAM_OUTCOMES.find((row) => row.matches(status))!;
}

/** The meaning of an upstream error; undefined for anything the upstream did not answer. */
function meaningOf(error: unknown): OutcomeMeaning | undefined {
  if (!(error instanceof UpstreamError)) return undefined;
  // An answer the gateway re-codes (an expired page token: a 400 that is CURSOR_EXPIRED) means what its status means.
  return outcomeOfStatus(error.status);
}

export function countsAgainstService(error: unknown): boolean {
  // The gateway's own refusals never reach the service; anything else is unexpected.
  return meaningOf(error)?.countsAgainstService ?? !(error instanceof GatewayError);
}

export function isRetryable(error: unknown): error is UpstreamError {
  return meaningOf(error)?.retryable ?? false;
}

export function allowsStaleRecord(error: unknown): boolean {
  return meaningOf(error)?.staleIfError ?? false;
}

export function isTransientForPollers(error: unknown): boolean {
  return meaningOf(error)?.transientForPollers ?? false;
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
  const { code } = outcomeOfStatus(status);
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
  return new UpstreamError(`The ${service} could not be reached: ${cause}`, outcomeOfStatus(null).code, {
    service,
    status: null,
    message: null,
  });
}

/** The error for a 2xx answer whose body is not the JSON the contract promises. */
export function upstreamMalformed(service: string, status: number): UpstreamError {
  return new UpstreamError(`The ${service} sent a malformed response`, outcomeOfStatus(status).code, {
    service,
    status,
    message: null,
  });
}

interface ErrorBody {
  message?: unknown;
}

/** The message of an upstream's error body, when it is JSON that carries one. */
export function upstreamMessage(body: string): string | null {
  try {
    const parsed = JSON.parse(body) as ErrorBody;
    if (typeof parsed.message === "string") return parsed.message;
    if (Array.isArray(parsed.message)) return parsed.message.map(String).join("; ");
  } catch {
    // not JSON: no message rather than echo an arbitrary body
  }
  return null;
}

/** What went wrong with a call that got no answer, in words a client may see (no address, no key). */
export function describeNetworkError(error: unknown): string {
  if (error instanceof undiciErrors.ConnectTimeoutError) return "connect timeout";
  if (error instanceof undiciErrors.HeadersTimeoutError) return "no response headers before the request's deadline";
  if (error instanceof undiciErrors.BodyTimeoutError) return "the response body stalled past the request's deadline";
  if (error instanceof undiciErrors.RequestAbortedError) return "the request's deadline passed";
  if (error instanceof DOMException && (error.name === "TimeoutError" || error.name === "AbortError")) {
    return "the request's deadline passed";
  }
  if (error instanceof undiciErrors.SocketError) return "connection closed";
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") return code;
  return error instanceof Error ? error.name : "unknown error";
}
