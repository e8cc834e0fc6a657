/**
 * CSRF prevention (CSRF_PREVENTION, default on), with one way through for a browser's native
 * EventSource. Yoga's plugin refuses a GET (or a simple POST) without one of the preflight
 * headers, which a cross-site form or image cannot send: so no other site can make a visitor's
 * browser run an operation. An EventSource can send no header of its own, only a GET asking for
 * `text/event-stream`. Such a GET without the header is let through when its operation is a
 * subscription, which only reads; which operation it is shows once its document is parsed (a
 * persisted document's once its id is looked up), so its check waits until then, and anything
 * else it carries (a query, a mutation, a document that does not parse or names no operation) is
 * refused there with the very error every other GET without the header gets. It meets every other
 * rule on the way, as any request does: its charge, persisted-only mode, the limits.
 */
import { useCSRFPrevention } from "@graphql-yoga/plugin-csrf-prevention";
import { getOperationAST, type DocumentNode } from "graphql";
import type { Plugin } from "graphql-yoga";

/** The headers a GET must carry: a browser sends them only after a CORS preflight. */
export const CSRF_HEADERS = ["x-graphql-yoga-csrf", "apollo-require-preflight"];

const ASKS_FOR_EVENT_STREAM = /(?:^|,)\s*text\/event-stream\s*(?:[;,]|$)/i;

/** A GET as a native EventSource sends it: asking for an event stream, and without a preflight header. */
function isEventSourceGet(request: Request): boolean {
  return (
    request.method === "GET" &&
    ASKS_FOR_EVENT_STREAM.test(request.headers.get("accept") ?? "") &&
    !CSRF_HEADERS.some((name) => request.headers.has(name))
  );
}

export function useCsrfPrevention(): Plugin {
  const headersRule = useCSRFPrevention({ requestHeaders: CSRF_HEADERS });
  /** EventSource GETs whose check waits for their document. */
  const awaitingOperation = new WeakSet<Request>();
  return {
    onRequestParse(payload) {
      if (isEventSourceGet(payload.request)) {
        awaitingOperation.add(payload.request);
        return;
      }
      return headersRule.onRequestParse?.(payload);
    },
    onParse() {
      return ({ result, context }) => {
        const { request, params } = context as { request?: Request; params?: { operationName?: string | null } };
        if (!request || !awaitingOperation.has(request)) return;
        const document = result instanceof Error || !result ? undefined : (result as DocumentNode);
        if (document && getOperationAST(document, params?.operationName)?.operation === "subscription") return;
        // Throws the headers rule's own refusal: the request has no preflight header.
        void headersRule.onRequestParse?.({ request } as Parameters<NonNullable<typeof headersRule.onRequestParse>>[0]);
      };
    },
  };
}
