/**
 * Hands the streams of WebSocket operations to their socket. A WebSocket operation runs through
 * Yoga's whole request pipeline as an HTTP request does (src/server/websocket.ts), so that it meets
 * every plugin: admission, budgets, persisted documents, introspection, limits, the error
 * normaliser, the log. A single result comes back as the JSON body HTTP would answer; a stream
 * (a subscription, or `@defer`/`@stream` parts) cannot be read back from an HTTP body event by
 * event, so this plugin takes it from the pipeline instead and leaves an empty answer in its place.
 */
import { isAsyncIterable, type Plugin } from "graphql-yoga";
import { GraphQLError, type ExecutionResult, type GraphQLFormattedError } from "graphql";

export type OperationStream = AsyncIterable<ExecutionResult> & Partial<AsyncGenerator<ExecutionResult>>;

export interface SocketStreams {
  plugin: Plugin;
  /** Marks a Request as a WebSocket operation's: its stream, if it has one, is kept for `take`. */
  expect(request: Request): void;
  /** The stream the request's operation produced, once; undefined when it produced a single result. */
  take(request: Request): OperationStream | undefined;
}

export function socketStreams(): SocketStreams {
  const expected = new WeakSet<Request>();
  const streams = new WeakMap<Request, OperationStream>();
  return {
    expect: (request) => void expected.add(request),
    take(request) {
      const stream = streams.get(request);
      streams.delete(request);
      return stream;
    },
    plugin: {
      onResultProcess({ request, result, setResultProcessor }) {
        if (!expected.has(request) || !isAsyncIterable(result)) return;
        streams.set(request, result as OperationStream);
        setResultProcessor((_result, fetchAPI) => new fetchAPI.Response(null, { status: 200 }), "text/event-stream");
      },
    },
  };
}

/** Errors as a stream's client reads them: the HTTP status and headers an error carries for Yoga say nothing there. */
export function clientErrors(errors: readonly (GraphQLError | GraphQLFormattedError)[]): GraphQLFormattedError[] {
  return errors.map((error) => {
    const json = error instanceof GraphQLError ? error.toJSON() : error;
    if (!json.extensions || !("http" in json.extensions)) return json;
    const { http: _http, ...extensions } = json.extensions;
    return { ...json, extensions };
  });
}
