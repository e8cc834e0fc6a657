/**
 * What the upstream lately said of callers' API keys, so that the gateway never serves a key
 * the upstream refuses from what it holds for others (the record cache, the response cache).
 *
 * A key the Data API refused (401, 403) is refused by the gateway too, for a short time, before
 * any cache or upstream call. A key it accepted may read the shared caches for a short time;
 * an unknown key's calls go upstream, so the service itself says whether it is good. Keys are
 * held as hashes only, in bounded LRUs: invented keys can cost an entry, never memory.
 */
import type { Plugin } from "graphql-yoga";
import { LRUCache } from "lru-cache";
import type { ApiKeyConfig } from "../config.ts";
import { API_KEY_HEADER, apiKeyHash, type KeyVerdictNotes } from "../upstream/call-options.ts";

export interface Refusal {
  status: 401 | 403;
  service: string;
}

export class KeyVerdicts implements KeyVerdictNotes {
  private readonly refused: LRUCache<string, Refusal>;
  private readonly accepted: LRUCache<string, true>;

  constructor(private readonly config: ApiKeyConfig) {
    this.refused = new LRUCache({ max: config.verdictMaxEntries, ttl: config.refusedTtlMs });
    this.accepted = new LRUCache({ max: config.verdictMaxEntries, ttl: config.acceptedTtlMs });
  }

  get refusedTtlMs(): number {
    return this.config.refusedTtlMs;
  }

  refuse(apiKey: string, refusal: Refusal): void {
    const hash = apiKeyHash(apiKey);
    this.accepted.delete(hash);
    this.refused.set(hash, refusal);
  }

  /** Each acceptance renews the key's time, so a key in use is checked again only when it goes quiet. */
  accept(apiKey: string): void {
    const hash = apiKeyHash(apiKey);
    this.refused.delete(hash);
    this.accepted.set(hash, true);
  }

  refusal(apiKey: string): Refusal | undefined {
    return this.refused.get(apiKeyHash(apiKey));
  }

  isAccepted(apiKey: string): boolean {
    return this.accepted.has(apiKeyHash(apiKey));
  }
}

const CODE = { 401: "UNAUTHENTICATED", 403: "FORBIDDEN" } as const;

/** The error that refuses a key the upstream refused lately, as HTTP and WebSocket callers read it; undefined for any other key. */
export function refusedKeyError(
  verdicts: KeyVerdicts,
  apiKey: string,
):
  | {
      message: string;
      extensions: { code: string; upstream: { service: string; status: number; message: null } };
      status: 401 | 403;
    }
  | undefined {
  const refusal = verdicts.refusal(apiKey);
  if (refusal === undefined) return undefined;
  const seconds = Math.ceil(verdicts.refusedTtlMs / 1000);
  return {
    message: `The ${refusal.service} refused the key in ${API_KEY_HEADER} (HTTP ${refusal.status}); the gateway refuses it too for up to ${seconds} s. Send a valid key, or none.`,
    extensions: { code: CODE[refusal.status], upstream: { service: refusal.service, status: refusal.status, message: null } },
    status: refusal.status,
  };
}

/**
 * Answers a GraphQL request whose key the upstream refused lately with that refusal (HTTP 401
 * or 403, JSON with `extensions.code`), before the response cache or anything else can serve
 * it. Goes before the response cache in the plugin list.
 */
export function useRefusedKeys(verdicts: KeyVerdicts, graphqlEndpoint: string): Plugin {
  return {
    onRequest({ request, url, endResponse, fetchAPI }) {
      if (url.pathname !== graphqlEndpoint) return;
      const apiKey = request.headers.get(API_KEY_HEADER)?.trim();
      if (!apiKey) return;
      const refused = refusedKeyError(verdicts, apiKey);
      if (refused === undefined) return;
      const { status, ...error } = refused;
      endResponse(
        new fetchAPI.Response(JSON.stringify({ errors: [error] }), {
          status,
          headers: { "content-type": "application/json; charset=utf-8" },
        }),
      );
    },
  };
}
