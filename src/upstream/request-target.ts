/**
 * What an upstream call asks for, and the path and query it is sent as: every path value
 * encoded and bounded, a page token checked like an argument, the whole target bounded, so that
 * nothing a client sends reaches another path or an over-long request.
 */
import { GatewayError, badUserInput } from "../errors.ts";
import { pageTokenArgument } from "./identifiers.ts";

/** A query parameter's value; a list goes as the parameter repeated (OpenAPI's default `form` style, exploded). */
export type QueryValue = string | number | boolean | readonly (string | number | boolean)[] | null | undefined;

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

/** Longest value of one path segment: the ids routes take are at most 128 characters (an operation id). */
export const MAX_PATH_VALUE_LENGTH = 256;
/** Longest path and query sent upstream: well under the 16 kB request head that servers accept (else 431). */
export const MAX_REQUEST_TARGET_LENGTH = 8192;

/**
 * Fills a route template; every value is encoded so that no argument can reach another path.
 * Arguments are validated before they get here; this holds on its own as well: an empty value,
 * a dot segment or an over-long value is refused, never sent.
 */
export function buildPath(route: string, params: Record<string, string | number> = {}): string {
  return route.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`missing path parameter ${name} for ${route}`);
    const text = String(value);
    if (text === "" || text === "." || text === ".." || text.length > MAX_PATH_VALUE_LENGTH) {
      throw badUserInput(name, `${name} must be 1 to ${MAX_PATH_VALUE_LENGTH} characters and not . or ..`, {
        maxLength: MAX_PATH_VALUE_LENGTH,
      });
    }
    return encodeURIComponent(text);
  });
}

/** The query string; a page token (from a client's cursor) is checked like an argument before it is sent. */
export function buildQuery(query: Record<string, QueryValue> = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) for (const item of value as readonly unknown[]) search.append(name, String(item));
    else search.append(name, name === "pageToken" ? pageTokenArgument("after", String(value)) : String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

/** The path and query of a call, or BAD_USER_INPUT when they could not be sent as they are. */
export function requestTarget(basePath: string, call: UpstreamCall): string {
  const target = basePath + buildPath(call.route, call.params) + buildQuery(call.query);
  if (target.length > MAX_REQUEST_TARGET_LENGTH) {
    throw new GatewayError(
      `The arguments make an upstream request longer than ${MAX_REQUEST_TARGET_LENGTH} characters; ask for fewer values at once`,
      "BAD_USER_INPUT",
      {
        max: MAX_REQUEST_TARGET_LENGTH,
      },
    );
  }
  return target;
}
