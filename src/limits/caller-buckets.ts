/**
 * Who pays for a request: the buckets it pays from, named by its API key (as a hash) and its
 * address (the socket's, or behind a trusted proxy the last `X-Forwarded-For` hop, the one the
 * proxy appended, when it is an IP address; an IPv6 one by its /64), so that inventing keys or
 * addresses buys no budget: an address spends one address's budget however many keys it sends,
 * and a key one key's budget from however many addresses, and rotating addresses inside one
 * subscriber's /64 buys no budget and no streams.
 */
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import { isIP } from "node:net";
import type { RateLimitConfig } from "../config.ts";
import { API_KEY_HEADER, apiKeyHash } from "../upstream/call-options.ts";
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

/** A connection's buckets as last worked out, with the headers they came from (its address does not change). */
interface KnownBuckets {
  key: string | undefined;
  forwarded: string | undefined;
  config: RateLimitConfig;
  buckets: readonly BucketRef[];
}

/** Headers longer than this in all are worked out each time: a connection remembers a few hundred characters at most. */
const REMEMBERED_HEADER_CHARS = 512;

const knownBuckets = new WeakMap<object, KnownBuckets>();

/**
 * The buckets a request pays from, read from Node's request before its body is. A request that
 * sends the headers its connection's last one sent pays from the same buckets, found again without
 * hashing its key or parsing its address: each request is charged twice on the way (before its body
 * is read, and as it pays), and a client sends the same key and proxy hop on every request.
 */
export function bucketsOfIncoming(
  request: Pick<IncomingMessage, "headers" | "socket">,
  config: RateLimitConfig,
): readonly BucketRef[] {
  const { key, forwarded } = callerHeaders(request.headers);
  const known = knownBuckets.get(request.socket);
  if (known !== undefined && known.key === key && known.forwarded === forwarded && known.config === config) return known.buckets;
  const buckets = bucketsOfCaller(key, forwarded, request.socket.remoteAddress, config);
  if ((key?.length ?? 0) + (forwarded?.length ?? 0) <= REMEMBERED_HEADER_CHARS) {
    knownBuckets.set(request.socket, { key, forwarded, config, buckets });
  }
  return buckets;
}

/** What names a caller in a request's headers: its API key and its `X-Forwarded-For`. */
export function callerHeaders(headers: IncomingHttpHeaders): { key: string | undefined; forwarded: string | undefined } {
  const key = headers[API_KEY_HEADER];
  const forwarded = headers["x-forwarded-for"];
  return {
    key: typeof key === "string" ? key : undefined,
    forwarded: Array.isArray(forwarded) ? forwarded.join(",") : forwarded,
  };
}

/** The buckets of a caller known by its key, its `X-Forwarded-For` and its socket's address. */
export function bucketsOfCaller(
  key: string | undefined,
  forwarded: string | undefined,
  socketAddress: string | undefined,
  config: RateLimitConfig,
): BucketRef[] {
  return withLimits(bucketNames(key, forwarded, socketAddress, config.trustProxy), config);
}

/** Who a request is, in one name: its API key's hash, else its address, else `local`. */
export function callerOf(context: CallerContext, trustProxy: boolean): string {
  return namesOf(context, trustProxy)[0]!;
}

/** The buckets a request pays from: its key's (when it sends one) and its address's (when it has one); `local` when neither. */
export function bucketsOf(context: CallerContext, config: RateLimitConfig): BucketRef[] {
  return withLimits(namesOf(context, config.trustProxy), config);
}
