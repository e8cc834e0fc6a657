/**
 * The short-TTL response cache for queries that clients poll ("latest" lists, charts, pages
 * everyone opens): the exact bytes of an error-free query answer, keyed by the request body,
 * its Accept header and the caller's API key, so that callers with different keys never share
 * an answer. A hit is answered before Yoga parses, validates or executes anything.
 *
 * Only POST requests with a JSON body are cached: their key is the whole request, and CSRF
 * prevention never applies to them (a cross-site form cannot send JSON).
 */
import { getOperationAST } from "graphql";
import type { FetchAPI, Plugin } from "graphql-yoga";
import { asBody, varyOnEncoding, type ContentEncoding } from "./compression.ts";
import type { GatewayContext } from "../execution/context.ts";
import { selectsOnlyIntrospection } from "../execution/selection.ts";
import type { CachedResponse } from "../shared-state/shared-tiers.ts";
import type { ResponseCacheOptions, ResponseStore } from "./response-store.ts";
import { truncated } from "../telemetry/logger.ts";
import { OPERATION_NAME_CHARS } from "./request-log.ts";
import { sendingCost } from "../limits/request-costs.ts";
import type { RateLimitPlugins } from "./rate-limit.ts";

function isJsonPost(request: Request): boolean {
  if (request.method !== "POST") return false;
  const type = request.headers.get("content-type") ?? "";
  return type.startsWith("application/json") || type.startsWith("application/graphql+json");
}

/** The key the listener worked out from the raw body, when it read the request (src/server/json-body-listener.ts). */
export interface KeyedRequest {
  responseCacheKey?: string;
}

export function useResponseCache(store: ResponseStore, options: ResponseCacheOptions): Plugin<GatewayContext> {
  /** Requests that missed, by their key; and the results worth storing. */
  const pending = new WeakMap<Request, string>();
  /** Requests that missed first for their key: how each says it has answered. */
  const leaders = new WeakMap<Request, () => void>();
  /**
   * The results worth storing, and for how long: for the TTL, or (introspection alone) for as long
   * as the process runs. An introspection answer depends on the schema only, which does not change
   * while the process runs: the full introspection GraphiQL and code generators send (some 300 kB,
   * over 10 ms of one core to answer) is then answered once per process, not once a TTL, where it
   * held every other request up for as long.
   */
  const storable = new WeakMap<Request, "ttl" | "process">();
  const operations = new WeakMap<Request, string>();
  const lookup = options.onLookup ?? (() => {});

  async function respond(
    hit: { key: string; entry: CachedResponse; encoding: ContentEncoding | undefined },
    request: Request,
    req: Parameters<RateLimitPlugins["payInAll"]>[1],
    fetchAPI: FetchAPI,
  ): Promise<Response> {
    const { key, entry, encoding } = hit;
    const headers = new fetchAPI.Headers({ "content-type": entry.contentType, "x-response-cache": "hit" });
    const answer = await store.encoded(key, entry, encoding);
    const cost = sendingCost(answer.body.byteLength);
    if (cost > 1 && options.payForSending) {
      const what = "this answer from the response cache (1 per 64 KiB of it sent)";
      const refused = await options.payForSending(request, req, cost, what, fetchAPI);
      if (refused) return refused;
    }
    headers.set("content-length", String(answer.body.byteLength));
    if (answer.encoding === undefined) return new fetchAPI.Response(asBody(answer.body), { status: 200, headers });
    headers.set("content-encoding", answer.encoding);
    varyOnEncoding(headers);
    return new fetchAPI.Response(asBody(answer.body), { status: 200, headers });
  }

  return {
    async onRequest({ request, url, serverContext, setRequest, setRequestHandler, fetchAPI }) {
      if (url.pathname !== options.graphqlEndpoint || !isJsonPost(request)) return;
      let current = request;
      let key = (serverContext as { req?: KeyedRequest } | undefined)?.req?.responseCacheKey;
      if (key === undefined) {
        const body = await request.text();
        // Fetch implementations other than Yoga's own cannot read a body twice.
        if (request.bodyUsed) {
          current = new fetchAPI.Request(request.url, { method: "POST", headers: request.headers, body, signal: request.signal });
          setRequest(current);
        }
        key = store.keyOf(
          current.headers.get(options.sessionHeader) ?? undefined,
          current.headers.get("accept") ?? undefined,
          body,
        );
      }
      let entry = store.get(key);
      if (entry) {
        lookup("local");
      } else if (options.shared) {
        const shared = await options.shared.get(key);
        if (shared) {
          lookup("shared");
          entry = shared.response;
          // Kept here only for what it has left there, so that no answer outlives its TTL.
          store.set(key, entry, shared.ttlMs);
        }
      }
      // Identical requests that miss together are executed once: the others wait for its answer
      // (a poll of many clients when the answer expires), and execute themselves only when it
      // stored none (it failed, or was not a plain query).
      const underWay = entry ? undefined : store.underWayFor(key);
      if (underWay) {
        await underWay;
        entry = store.get(key);
        if (entry) lookup("local");
      }
      if (entry) {
        const hit = { key, entry, encoding: options.compression?.negotiate(current) };
        const req = (serverContext as { req?: Parameters<RateLimitPlugins["payInAll"]>[1] } | undefined)?.req;
        const asked = current;
        setRequestHandler(() => respond(hit, asked, req, fetchAPI));
        return;
      }
      lookup("miss");
      pending.set(current, key);
      const answered = store.lead(key, options.joinWithinMs ?? options.ttlMs);
      if (answered) leaders.set(current, answered);
    },

    onParams({ request, params }) {
      if (pending.has(request) && typeof params.operationName === "string")
        operations.set(request, truncated(params.operationName, OPERATION_NAME_CHARS));
    },

    onExecute({ args }) {
      const request = args.contextValue.request;
      if (!pending.has(request)) return;
      const operation = getOperationAST(args.document, args.operationName);
      if (operation?.operation !== "query") return;
      return {
        onExecuteDone({ result }) {
          if (Symbol.asyncIterator in result || result.errors?.length) return;
          storable.set(request, selectsOnlyIntrospection(args.document, operation) ? "process" : "ttl");
        },
      };
    },

    async onResponse({ request, response, setResponse, fetchAPI }) {
      const answered = leaders.get(request);
      try {
        await keep(request, response, setResponse, fetchAPI);
      } finally {
        answered?.();
      }
    },
  };

  async function keep(
    request: Request,
    response: Response,
    setResponse: (response: Response) => void,
    fetchAPI: { Response: typeof Response },
  ): Promise<void> {
    const key = pending.get(request);
    const keptFor = storable.get(request);
    if (key === undefined || keptFor === undefined || response.status !== 200) return;
    const body = await response.text();
    if (response.bodyUsed) setResponse(new fetchAPI.Response(body, { status: response.status, headers: response.headers }));
    const entry: CachedResponse = {
      body,
      contentType: response.headers.get("content-type") ?? "application/json",
      operation: operations.get(request) ?? null,
    };
    if (keptFor === "process") store.setLasting(key, entry);
    else store.set(key, entry);
    // The shared tier keeps it for the TTL only: another instance may run another schema (a deploy under way).
    options.shared?.set(key, entry, options.ttlMs);
  }
}
