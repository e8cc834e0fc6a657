/**
 * Refusals say what they are. Every request the gateway refuses is answered with JSON
 * (`{ errors: [{ message, extensions: { code } }] }`) and one status per kind, whatever the
 * `accept` header: 400 a bad request (malformed, CSRF, too deeply nested, does not parse or
 * validate, over a limit, variables that do not coerce), 405/406/415 their HTTP meanings,
 * 411/413 bodies, 429 budgets. Each refusal is logged once, truncated, and counted in
 * `gateway_refusals_total{reason}` (./refusal-notes.ts, which the listener's operation lane uses
 * too). With introspection off, no message suggests a name ("Did you mean ...?"), whichever rule
 * wrote it. No stack trace or file path reaches a client: an error that escapes a plugin's HTTP
 * hooks is answered as a JSON 500 (withLastResort).
 */
import { isAsyncIterable, processRegularResult, type Plugin } from "graphql-yoga";
import type { Logger } from "../telemetry/logger.ts";
import { documentShapeOf, valueNestsDeeperThan } from "../limits/document-shape.ts";
import { reasonFor, refusal, refusalResponse, type Refused, type RefusalNotes } from "./refusal-notes.ts";

export { refusal, refusalBody, refusalResponse, type RefusalCode } from "./refusal-notes.ts";

/** What a client asks for when it wants a stream. */
const STREAMING = /text\/event-stream|multipart\/mixed/i;

/** Answers that pass on the refusal of a request they carried (graphql-sse's POST, its operation's): counted and logged as that one's. */
const passedOn = new WeakSet<Request>();
export const passOnRefusal = (request: Request): void => void passedOn.add(request);

export interface RefusalOptions {
  notes: RefusalNotes;
  /** MAX_NESTING_DEPTH: JSON in variables and extensions, and a document's brackets. */
  maxNestingDepth: number;
  /**
   * Whether the parse cache holds this query text: then it was measured when it was first sent
   * (a document nested too deep is refused before it is parsed), and is not read again.
   */
  isParsed(source: string): boolean;
  requestIdOf(request: Request): string | undefined;
}

/** Refuses too deeply nested requests, and gives every refusal its code, status, log line and count. */
export function useRefusals(options: RefusalOptions): Plugin {
  const { maxNestingDepth: max } = options;
  const refused = new WeakMap<Request, Refused>();

  return {
    onParams({ params, request, setResult }) {
      const query = params.query;
      if (typeof query === "string" && !options.isParsed(query) && documentShapeOf(request, query).depth > max) {
        setResult({
          errors: [
            refusal(`The document nests brackets deeper than the limit of ${max}`, "GRAPHQL_PARSE_FAILED", 400, {
              limit: "nesting",
              max,
            }),
          ],
        });
        return;
      }
      for (const [name, value] of [
        ["variables", params.variables],
        ["extensions", params.extensions],
      ] as const) {
        if (valueNestsDeeperThan(value, max)) {
          setResult({
            errors: [
              refusal(`The ${name} nest deeper than the limit of ${max}`, "BAD_REQUEST", 400, {
                argument: name,
                limit: "nesting",
                max,
              }),
            ],
          });
          return;
        }
      }
    },

    onResultProcess({ request, result, setResult, setResultProcessor }) {
      if (Array.isArray(result) || isAsyncIterable(result) || !result.errors?.length) return;
      const normalized = options.notes.normalizedResult(result);
      setResult(normalized.result);
      // A refusal is JSON whatever was asked for: a client that asked for an event stream or
      // multipart (graphql-sse, meros) reads a refusal from the status and a JSON body, as
      // graphql-sse's own server answers one. With data, nothing refuses the request.
      const refusesRequest = !("data" in result) || result.data === undefined;
      if (refusesRequest && STREAMING.test(request.headers.get("accept") ?? "")) {
        setResultProcessor(processRegularResult, "application/json");
      }
      if (normalized.refused) refused.set(request, normalized.refused);
    },

    onResponse({ request, response, setResponse, fetchAPI, serverContext }) {
      if (passedOn.has(request)) return;
      const { status } = response;
      const transport = (serverContext as { transport?: string } | undefined)?.transport;
      const note = (entry: Refused | undefined) => options.notes.note(status, entry, options.requestIdOf(request), transport);
      const entry = refused.get(request);
      if (entry || status < 400 || status >= 500 || response.headers.get("content-type")?.includes("json")) return note(entry);
      // Yoga answers an unknown path, media type or accept header with an empty body.
      const code = status === 404 ? "NOT_FOUND" : "BAD_REQUEST";
      const message = refusalMessage(status);
      const headers = Object.fromEntries(
        [...response.headers].filter(([name]) => name !== "content-length" && name !== "content-type"),
      );
      setResponse(refusalResponse(fetchAPI.Response, status, message, code, headers));
      note({ reason: reasonFor(code, status, {}), code, message });
      return response.body?.cancel().catch(() => {});
    },
  };
}

function refusalMessage(status: number): string {
  switch (status) {
    case 404:
      return "Not found: the GraphQL endpoint is /graphql";
    case 406:
      return "Not acceptable: ask for application/json, application/graphql-response+json or text/event-stream";
    case 415:
      return "Unsupported media type: send application/json or application/graphql";
    default:
      return `The request was refused (HTTP ${status})`;
  }
}

const INTERNAL_MESSAGE = "Unexpected error.";

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

/**
 * The same plugins, except that an error thrown by one of their HTTP hooks (onRequest,
 * onResponse) is logged and answered with a JSON 500 instead of the server adapter's text/plain
 * stack trace. Plugins they add at init are guarded too.
 */
export function withLastResort<P extends object>(plugins: P[], logger: Logger): P[] {
  const internal = (ResponseClass: typeof Response, error: unknown) => {
    logger.error({ err: error }, "unexpected error in an HTTP hook");
    return refusalResponse(ResponseClass, 500, INTERNAL_MESSAGE, "INTERNAL_SERVER_ERROR");
  };
  const guard = <T extends object>(given: T): T => {
    // Typed as a plain plugin: the context type plays no part in the HTTP hooks.
    const plugin = given as unknown as Plugin;
    if (!plugin || typeof plugin !== "object") return given;
    const { onRequest, onResponse, onPluginInit } = plugin;
    if (!onRequest && !onResponse && !onPluginInit) return given;
    const guarded: Plugin = { ...plugin };
    if (onRequest) {
      guarded.onRequest = (payload) => {
        const fail = (error: unknown) => payload.endResponse(internal(payload.fetchAPI.Response, error));
        try {
          const pending = onRequest.call(plugin, payload);
          return isThenable(pending) ? Promise.resolve(pending).catch(fail) : pending;
        } catch (error) {
          fail(error);
        }
      };
    }
    if (onResponse) {
      guarded.onResponse = (payload) => {
        const fail = (error: unknown) => payload.setResponse(internal(payload.fetchAPI.Response, error));
        try {
          const pending = onResponse.call(plugin, payload);
          return isThenable(pending) ? Promise.resolve(pending).catch(fail) : pending;
        } catch (error) {
          fail(error);
        }
      };
    }
    if (onPluginInit) {
      guarded.onPluginInit = (payload) =>
        onPluginInit.call(plugin, { ...payload, addPlugin: (added) => payload.addPlugin(guard(added)) });
    }
    return guarded as unknown as T;
  };
  return plugins.map(guard);
}
