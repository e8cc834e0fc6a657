import { createHash } from "node:crypto";
import type { Sequence } from "../network/index.ts";
import { badRequest } from "./errors.ts";

export interface PageRequest {
  pageToken: string | undefined;
  pageSize: number | undefined;
  /** The query the token belongs to; see RouteRequest.pageScope. */
  scope: string;
}

export interface Page<T> {
  items: T[];
  /** Present only when more items follow. */
  nextPageToken: string | undefined;
}

interface TokenPayload {
  /** Index of the first item of the page. */
  offset: number;
  /** Hash of the scope that issued the token. */
  scope: string;
  /** The length of a list that grows at its front when the token was issued. */
  length?: number;
}

/**
 * One page of an ordered sequence. Page tokens are opaque to clients: the
 * base64url of the next offset and a hash of the query that issued them, so a
 * token replayed on another path or with other filters is refused. The page
 * size may change from one page to the next. A newest-first list of a live chain grows at its
 * front: its tokens also carry its length, so that the next page starts after the last item
 * served however many items arrived in between.
 */
export function paginate<T>(source: Sequence<T> & { growsAt?: "front" | "back" }, request: PageRequest): Page<T> {
  if (request.pageSize === undefined) {
    throw new Error("paginate() needs a page size; the contract gives no default for this route");
  }
  const scope = scopeHash(request.scope);
  const growsAtFront = source.growsAt === "front";
  let offset = 0;
  if (request.pageToken !== undefined) {
    const token = decodePageToken(request.pageToken, scope);
    offset = token.offset + (growsAtFront && token.length !== undefined ? Math.max(0, source.length - token.length) : 0);
  }
  const end = Math.min(source.length, offset + request.pageSize);
  const items: T[] = [];
  for (let index = offset; index < end; index++) {
    const item = source.at(index);
    if (item !== undefined) items.push(item);
  }
  return {
    items,
    nextPageToken:
      end < source.length
        ? encodePageToken(growsAtFront ? { offset: end, scope, length: source.length } : { offset: end, scope })
        : undefined,
  };
}

function scopeHash(scope: string): string {
  return createHash("sha256").update(scope).digest("base64url").slice(0, 16);
}

function encodePageToken(payload: TokenPayload): string {
  return encodeTokenJson(payload);
}

/** A value as page-token text: its JSON, in base64url. */
export function encodeTokenJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

/** The value of page-token text; 400 when it is not base64url JSON. */
export function decodeTokenJson(text: string): unknown {
  try {
    return JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    throw badRequest("pageToken is malformed");
  }
}

function decodePageToken(token: string, expectedScope: string): TokenPayload {
  const payload = decodeTokenJson(token);
  if (!isTokenPayload(payload)) throw badRequest("pageToken is malformed");
  if (payload.scope !== expectedScope) {
    throw badRequest("pageToken was issued for a different path or different filter parameters");
  }
  return payload;
}

function isTokenPayload(value: unknown): value is TokenPayload {
  if (typeof value !== "object" || value === null) return false;
  const { offset, scope, length } = value as Record<string, unknown>;
  return (
    Number.isSafeInteger(offset) &&
    (offset as number) >= 0 &&
    typeof scope === "string" &&
    (length === undefined || (Number.isSafeInteger(length) && (length as number) >= 0))
  );
}
