/**
 * What a caller brings to an upstream call: its API key (and the header it goes in), its request
 * id and deadline, where what it sends is counted; and what the client does with callers' keys.
 */
import { hash } from "node:crypto";

export const API_KEY_HEADER = "x-glacier-api-key";

/** What names a caller's API key wherever the gateway keeps or shares it (buckets, pollers): never the key. */
export function apiKeyHash(apiKey: string): string {
  return hash("sha256", apiKey, "base64url");
}

/**
 * Where the upstream's refusals (401, 403) of callers' keys are noted, and its acceptances, as the
 * client notes and reads them (src/plugins/refused-keys.ts's KeyVerdicts keeps them).
 */
export interface KeyVerdictNotes {
  isAccepted(apiKey: string): boolean;
  refuse(apiKey: string, refusal: { status: 401 | 403; service: string }): void;
  accept(apiKey: string): void;
}

/** What the service does with callers' keys. */
export interface KeyPolicy {
  /** Where the upstream's refusals (401, 403) of callers' keys are noted, and its acceptances. */
  verdicts: KeyVerdictNotes;
  /** The service checks every key it is sent, so a 2xx says the key is good (the Metrics API needs none). */
  checksKeys: boolean;
}

export interface CallOptions {
  /** The caller's API key, else the configured one. Sent only to this service's own origin. */
  apiKey?: string | undefined;
  requestId?: string | undefined;
  /** Epoch milliseconds by which the GraphQL request must be answered; no upstream call outlives it. */
  deadline?: number | undefined;
  /** Reads a 2xx body in place of `JSON.parse` (metric series: numbers past 2^53 kept exact). */
  parseBody?: ((text: string) => unknown) | undefined;
  /** Counts the HTTP requests sent on this GraphQL request's behalf (what the rate limiter settles). */
  sentRequests?: SentRequests | undefined;
}

/**
 * The HTTP requests one GraphQL request made the gateway send upstream: every attempt that left
 * for the service, retries included. A record served from a cache, or a GET that joined another
 * caller's identical request in flight, was not sent for it; a request refused before it left
 * (circuit open, deadline passed) neither.
 */
export interface SentRequests {
  count: number;
}
