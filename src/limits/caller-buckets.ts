/**
 * Who pays for a request: the buckets it pays from, named by its API key (as a hash) and its
 * address (the socket's, or behind a trusted proxy the last `X-Forwarded-For` hop; an IPv6 one by
 * its /64), so that inventing keys or addresses buys no budget.
 */
import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import type { RateLimitConfig } from "../config.ts";
import { API_KEY_HEADER, apiKeyHash } from "../upstream/http.ts";
import { callerAddress } from "./caller-address.ts";
import type { BucketRef } from "./token-buckets.ts";

export interface CallerContext {
  request: Request;
  /** Node's request, in Yoga's server context when served over HTTP. */
  req?: Pick<IncomingMessage, "socket">;
}

/**
 * The names of the buckets a request pays from: its key's hash (when it sends a key) and its
 * address (the socket's, or behind a trusted proxy the last X-Forwarded-For hop, the one the
 * proxy appended; an IPv6 one by its /64); `local` when it has neither (a request without a
 * socket, in process).
 */
function bucketNames(
  apiKey: string | undefined,
  forwardedFor: string | undefined,
  socketAddress: string | undefined,
  trustProxy: boolean,
): string[] {
  const names: string[] = [];
  const key = apiKey?.trim();
  if (key) names.push(`key:${apiKeyHash(key)}`);
  const forwarded = trustProxy ? forwardedFor?.split(",").at(-1)?.trim() : undefined;
  const address = forwarded && isIP(forwarded) ? forwarded : socketAddress;
  if (address) names.push(`address:${callerAddress(address)}`);
  return names.length > 0 ? names : ["local"];
}

function withLimits(names: string[], config: RateLimitConfig): BucketRef[] {
  return names.map((name) => ({ name, limits: name.startsWith("key:") ? config : config.address }));
}

function namesOf(context: CallerContext, trustProxy: boolean): string[] {
  const { headers } = context.request;
  return bucketNames(
    headers.get(API_KEY_HEADER) ?? undefined,
    headers.get("x-forwarded-for") ?? undefined,
    context.req?.socket?.remoteAddress,
    trustProxy,
  );
}

/** The buckets a request pays from, read from Node's request before its body is. */
export function bucketsOfIncoming(request: Pick<IncomingMessage, "headers" | "socket">, config: RateLimitConfig): BucketRef[] {
  const key = request.headers[API_KEY_HEADER];
  const forwarded = request.headers["x-forwarded-for"];
  const names = bucketNames(
    typeof key === "string" ? key : undefined,
    Array.isArray(forwarded) ? forwarded.join(",") : forwarded,
    request.socket.remoteAddress,
    config.trustProxy,
  );
  return withLimits(names, config);
}

/** Who a request is, in one name: its API key's hash, else its address, else `local`. */
export function callerOf(context: CallerContext, trustProxy: boolean): string {
  return namesOf(context, trustProxy)[0]!;
}

/** The buckets a request pays from: its key's (when it sends one) and its address's (when it has one); `local` when neither. */
export function bucketsOf(context: CallerContext, config: RateLimitConfig): BucketRef[] {
  return withLimits(namesOf(context, config.trustProxy), config);
}
