/**
 * One subscription over one transport, as a client sees it: its results as they come, and how it
 * ended. WebSocket: a graphql-ws client of its own (one socket per subscriber); SSE: graphql-sse's
 * distinct-connections mode, a POST asking for `text/event-stream`, read event by event.
 */
import type { FormattedExecutionResult, GraphQLFormattedError } from "graphql";
import { createClient } from "graphql-ws";
import { Agent, request } from "undici";
import WebSocket from "ws";

export type TransportName = "websocket" | "sse";

export type StreamEnd =
  /** The gateway completed the stream (after its last event). */
  | { how: "complete" }
  /** Refused before its first event: an `error` message, or an answer that is not a stream. */
  | { how: "refused"; status: number | undefined; errors: GraphQLFormattedError[] }
  /** The connection went away: a killed gateway, a socket error. */
  | { how: "dropped"; reason: string }
  /** The client closed it. */
  | { how: "closed" };

export interface OpenStream {
  ended: Promise<StreamEnd>;
  close(): void;
}

export interface StreamRequest {
  url: string;
  /** The subscriber's own address, which the gateway trusts from its proxy. */
  forwardedFor: string;
  query: string;
  variables: Record<string, unknown>;
  onResult(result: FormattedExecutionResult): void;
}

export function openStream(transport: TransportName, stream: StreamRequest): OpenStream {
  return transport === "websocket" ? overWebSocket(stream) : overSse(stream);
}

function overWebSocket({ url, forwardedFor, query, variables, onResult }: StreamRequest): OpenStream {
  class ForwardedWebSocket extends WebSocket {
    constructor(address: string, protocols?: string | string[]) {
      super(address, protocols, { headers: { "x-forwarded-for": forwardedFor } });
    }
  }
  const client = createClient({
    url: url.replace(/^http/, "ws"),
    webSocketImpl: ForwardedWebSocket,
    retryAttempts: 0,
    lazy: true,
    // The gateway's pings keep it open; the client sends none of its own.
    keepAlive: 0,
  });
  let closedByClient = false;
  let settle: (end: StreamEnd) => void = () => {};
  const ended = new Promise<StreamEnd>((resolve) => {
    settle = (end) => {
      resolve(end);
      void client.dispose();
    };
  });
  const unsubscribe = client.subscribe(
    { query, variables },
    {
      next: (result) => onResult(result as FormattedExecutionResult),
      complete: () => settle(closedByClient ? { how: "closed" } : { how: "complete" }),
      error: (error: unknown) => {
        if (closedByClient) settle({ how: "closed" });
        else if (Array.isArray(error)) settle({ how: "refused", status: undefined, errors: error as GraphQLFormattedError[] });
        else if (error && typeof error === "object" && "code" in error)
          settle({ how: "dropped", reason: `socket closed with ${String((error as { code: unknown }).code)}` });
        else settle({ how: "dropped", reason: droppedReason(error) });
      },
    },
  );
  return {
    ended,
    close: () => {
      closedByClient = true;
      unsubscribe();
      settle({ how: "closed" });
    },
  };
}

/** One connection per stream, as graphql-sse's distinct-connections mode opens them; no timeout on a quiet stream. */
const sseAgent = new Agent({ bodyTimeout: 0, headersTimeout: 30_000, keepAliveTimeout: 1_000 });

function overSse({ url, forwardedFor, query, variables, onResult }: StreamRequest): OpenStream {
  const abort = new AbortController();
  const ended = (async (): Promise<StreamEnd> => {
    try {
      const response = await request(url, {
        method: "POST",
        dispatcher: sseAgent,
        signal: abort.signal,
        headers: { "content-type": "application/json", accept: "text/event-stream", "x-forwarded-for": forwardedFor },
        body: JSON.stringify({ query, variables }),
      });
      if (!String(response.headers["content-type"] ?? "").startsWith("text/event-stream")) {
        const text = await response.body.text();
        let errors: GraphQLFormattedError[] = [];
        try {
          errors = (JSON.parse(text) as { errors?: GraphQLFormattedError[] }).errors ?? [];
        } catch {
          errors = [{ message: text.slice(0, 200) }];
        }
        return { how: "refused", status: response.statusCode, errors };
      }
      let buffer = "";
      for await (const chunk of response.body) {
        buffer += (chunk as Buffer).toString("utf8");
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: ?(.*)$/m.exec(block)?.[1];
          if (event === "complete") {
            response.body.destroy();
            return { how: "complete" };
          }
          if (event !== "next") continue;
          const data = block
            .split("\n")
            .filter((line) => line.startsWith("data:"))
            .map((line) => line.replace(/^data: ?/, ""))
            .join("\n");
          onResult(JSON.parse(data) as FormattedExecutionResult);
        }
      }
      return abort.signal.aborted ? { how: "closed" } : { how: "dropped", reason: "the stream ended without complete" };
    } catch (error) {
      if (abort.signal.aborted) return { how: "closed" };
      return { how: "dropped", reason: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
    }
  })();
  return { ended, close: () => abort.abort() };
}

export async function closeTransports(): Promise<void> {
  await sseAgent.close();
}

/** What a WebSocket client's error says: an Error's message, or an event's type and message (a failed connection is an `error` event). */
function droppedReason(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (error && typeof error === "object") {
    const { type, message } = error as { type?: unknown; message?: unknown };
    const parts = [type, message].filter((part) => typeof part === "string" && part !== "");
    if (parts.length > 0) return parts.join(": ");
  }
  return String(error);
}
