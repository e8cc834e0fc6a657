/**
 * One HTTP client per upstream service: an undici Pool with keep-alive and explicit
 * timeouts, JSON in and out, upstream errors mapped to typed GraphQL errors, and identical
 * concurrent GETs coalesced into one request.
 */
import { Pool, errors as undiciErrors } from "undici";
import type { Dispatcher } from "undici";
import type { UpstreamConfig } from "../config.ts";
import { parseRetryAfter, upstreamMalformed, upstreamStatusError, upstreamUnreachable } from "../errors.ts";

export const API_KEY_HEADER = "x-glacier-api-key";

export type QueryValue = string | number | boolean | null | undefined;

export interface CallOptions {
  /** The caller's API key, else the configured one. Sent only to this service's own origin. */
  apiKey?: string | undefined;
  requestId?: string | undefined;
  signal?: AbortSignal | undefined;
}

/** One page of an upstream list: `pageSize` within the route's bounds, `pageToken` from the previous page. */
export interface PageRequest {
  pageSize: number;
  pageToken?: string | undefined;
}

export interface UpstreamCall {
  /** Route template from the contract, e.g. `/v1/chains/{chainId}`; also the metrics label. */
  route: string;
  /** Values for the template's `{placeholders}`; always percent-encoded. */
  params?: Record<string, string | number>;
  query?: Record<string, QueryValue>;
}

/** Fills a route template; every value is encoded so that no argument can reach another path. */
export function buildPath(route: string, params: Record<string, string | number> = {}): string {
  return route.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`missing path parameter ${name} for ${route}`);
    return encodeURIComponent(String(value));
  });
}

export function buildQuery(query: Record<string, QueryValue> = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    search.append(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

interface ErrorBody {
  message?: unknown;
}

function upstreamMessage(body: string): string | null {
  try {
    const parsed = JSON.parse(body) as ErrorBody;
    if (typeof parsed.message === "string") return parsed.message;
    if (Array.isArray(parsed.message)) return parsed.message.map(String).join("; ");
  } catch {
    // not JSON: fall through to no message rather than echo an arbitrary body
  }
  return null;
}

function describeNetworkError(error: unknown): string {
  if (error instanceof undiciErrors.ConnectTimeoutError) return "connect timeout";
  if (error instanceof undiciErrors.HeadersTimeoutError) return "no response headers in time";
  if (error instanceof undiciErrors.BodyTimeoutError) return "response body stalled";
  if (error instanceof undiciErrors.RequestAbortedError) return "request aborted";
  if (error instanceof undiciErrors.SocketError) return "connection closed";
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") return code;
  return error instanceof Error ? error.name : "unknown error";
}

export class UpstreamService {
  readonly name: string;
  private readonly origin: string;
  private readonly basePath: string;
  private readonly pool: Pool;
  private readonly defaultApiKey: string | undefined;
  private readonly inFlight = new Map<string, Promise<unknown>>();

  constructor(name: string, baseUrl: string, config: UpstreamConfig, defaultApiKey?: string) {
    const url = new URL(baseUrl);
    this.name = name;
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, "");
    this.defaultApiKey = defaultApiKey;
    this.pool = new Pool(this.origin, {
      connections: config.connections,
      pipelining: 1,
      connectTimeout: config.connectTimeoutMs,
      headersTimeout: config.headersTimeoutMs,
      bodyTimeout: config.bodyTimeoutMs,
      keepAliveTimeout: config.keepAliveTimeoutMs,
    });
  }

  /** GET a JSON document; identical concurrent GETs (same URL and key) share one request. */
  get<T>(call: UpstreamCall, options: CallOptions = {}): Promise<T> {
    const path = this.basePath + buildPath(call.route, call.params) + buildQuery(call.query);
    const apiKey = options.apiKey ?? this.defaultApiKey;
    const coalesceKey = `${apiKey ?? ""}\u0000${path}`;
    const pending = this.inFlight.get(coalesceKey);
    if (pending) return pending as Promise<T>;
    // A coalesced request serves several callers, so no single caller's signal may abort it.
    const request = this.send<T>("GET", path, undefined, apiKey, { ...options, signal: undefined }).finally(() => {
      this.inFlight.delete(coalesceKey);
    });
    this.inFlight.set(coalesceKey, request);
    return request;
  }

  /** POST a JSON body; never coalesced. */
  post<T>(call: UpstreamCall, body: unknown, options: CallOptions = {}): Promise<T> {
    const path = this.basePath + buildPath(call.route, call.params) + buildQuery(call.query);
    return this.send<T>("POST", path, JSON.stringify(body), options.apiKey ?? this.defaultApiKey, options);
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  private async send<T>(
    method: "GET" | "POST",
    path: string,
    body: string | undefined,
    apiKey: string | undefined,
    options: CallOptions,
  ): Promise<T> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (apiKey) headers[API_KEY_HEADER] = apiKey;
    if (options.requestId) headers["x-request-id"] = options.requestId;

    let response: Dispatcher.ResponseData;
    try {
      response = await this.pool.request({ method, path, headers, body, signal: options.signal });
    } catch (error) {
      throw upstreamUnreachable(this.name, describeNetworkError(error));
    }

    const { statusCode } = response;
    let text: string;
    try {
      text = await response.body.text();
    } catch (error) {
      throw upstreamUnreachable(this.name, describeNetworkError(error));
    }

    if (statusCode < 200 || statusCode >= 300) {
      const retryAfter = response.headers["retry-after"];
      throw upstreamStatusError(
        this.name,
        statusCode,
        upstreamMessage(text),
        parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter),
      );
    }
    try {
      return JSON.parse(text) as T;
    } catch {
      throw upstreamMalformed(this.name, statusCode);
    }
  }
}
