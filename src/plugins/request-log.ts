import { randomUUID } from "node:crypto";
import type { Plugin } from "graphql-yoga";
import type { GatewayContext } from "../execution/context.ts";
import { BatchedLines } from "../telemetry/log-destination.ts";
import { jsonString } from "../json-text.ts";
import { infoLineFrame, infoLineWriter, truncated, type Logger } from "../telemetry/logger.ts";
import { methodJson, RequestLineBytes } from "./request-line-bytes.ts";

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The most of an operation name a log line carries. */
export const OPERATION_NAME_CHARS = 128;

/** A request id as requestIdFrom makes it: a sane token or a UUID, which JSON writes as it is. */
export type RequestId = string & { readonly saneToken: unique symbol };

/** The caller's request id when it is a sane token, else a new one; sent upstream and returned. */
export function requestIdOf(request: Request): RequestId {
  return requestIdFrom(request.headers.get("x-request-id"));
}

/** The request id for an `x-request-id` header's value: itself when it is a sane token, else a new one. */
export function requestIdFrom(header: string | string[] | null | undefined): RequestId {
  const given = typeof header === "string" ? header.trim() : undefined;
  return (given && REQUEST_ID.test(given) ? given : randomUUID()) as RequestId;
}

export interface RequestLogOptions {
  logger: Logger;
  /** Where the request's id is kept for the context and other plugins (filled here, on each request). */
  requestIds: WeakMap<Request, RequestId>;
  /** Requests under this path are logged (default `/graphql`); others only get their id. */
  graphqlEndpoint?: string;
}

export interface RequestLine {
  requestId: RequestId | undefined;
  transport?: string | undefined;
  method: string;
  /** The operation name as the client sent it, truncated already. */
  operation: string | null;
  status: number;
  /** `performance.now()` when the request came. */
  startedAt: number;
}

/** Writes the one line a GraphQL request is logged with (at info), whichever way it was answered. */
export type RequestLineWriter = (line: RequestLine) => void;

/**
 * The line writer of a logger. When the logger writes to stdout's batches with pino's own time,
 * a request's line is encoded straight into the batch (RequestLineBytes); a logger writing
 * elsewhere (a test's capture) gets each line's text. Either way the bytes are the same.
 */
export function requestLineWriter(logger: Logger): RequestLineWriter {
  const fields = new RequestFields();
  const frame = infoLineFrame(logger, REQUEST_MESSAGE);
  const write = infoLineWriter(logger, REQUEST_MESSAGE);
  if (frame?.stream instanceof BatchedLines && frame.afterTime !== undefined) {
    const encoded = new RequestLineBytes(frame.stream, frame.afterTime, frame.tail);
    return (line) => {
      if (!logger.isLevelEnabled("info")) return;
      const ms = performance.now() - line.startedAt;
      if (!encoded.write(line, Date.now(), ms)) write(fields.of(line, ms));
    };
  }
  return (line) => {
    if (!logger.isLevelEnabled("info")) return;
    write(fields.of(line, performance.now() - line.startedAt));
  };
}

const REQUEST_MESSAGE = "graphql request";

/**
 * A writer's request lines' fields as JSON. The request id needs no escaping (RequestId); the
 * operation name is escaped once for a run of lines that carry it: a busy gateway logs the same
 * few names over and over.
 */
class RequestFields {
  private operation: string | null = null;
  private operationJson = "null";

  of(line: RequestLine, ms: number): string {
    const id = line.requestId === undefined ? "" : `"requestId":"${line.requestId}",`;
    const via = line.transport ? `"transport":${jsonString(line.transport)},` : "";
    return `${id}${via}"method":${methodJson(line.method)},"operation":${this.operationOf(line.operation)},"status":${line.status},"ms":${tenthsOfMs(ms)}`;
  }

  private operationOf(name: string | null): string {
    if (name !== this.operation) {
      this.operation = name;
      this.operationJson = name === null ? "null" : jsonString(name);
    }
    return this.operationJson;
  }
}

/**
 * Milliseconds rounded to a tenth, as `Math.round(ms * 10) / 10` writes it, from integers: a
 * fraction written as a number takes V8's shortest-digits conversion, integers a cache look-up.
 */
export function tenthsOfMs(ms: number): string {
  const tenths = Math.round(ms * 10);
  if (!(tenths >= 0 && tenths < Number.MAX_SAFE_INTEGER)) return String(tenths / 10);
  const tenth = tenths % 10;
  return tenth === 0 ? String(tenths / 10) : `${(tenths - tenth) / 10}.${tenth}`;
}

/**
 * Returns the request id to the client (`x-request-id`) and logs one line per GraphQL request,
 * without secrets: the operation name as the client sent it (truncated), status and time.
 */
export function useRequestLog({ logger, requestIds, graphqlEndpoint = "/graphql" }: RequestLogOptions): Plugin<GatewayContext> {
  const started = new WeakMap<Request, number>();
  const operations = new WeakMap<Request, string>();
  const logRequest = requestLineWriter(logger);
  return {
    onRequest({ request, url }) {
      requestIds.set(request, requestIdOf(request));
      if (url.pathname.startsWith(graphqlEndpoint)) started.set(request, performance.now());
    },
    onParams({ params, request }) {
      if (typeof params.operationName === "string" && params.operationName)
        operations.set(request, truncated(params.operationName, OPERATION_NAME_CHARS));
    },
    onResponse({ request, response, serverContext }) {
      const requestId = requestIds.get(request);
      if (requestId) response.headers.set("x-request-id", requestId);
      const start = started.get(request);
      if (start === undefined) return;
      // A WebSocket operation runs this pipeline too (src/server/websocket.ts); its status is what HTTP would have answered.
      const transport = (serverContext as { transport?: string } | undefined)?.transport;
      logRequest({
        requestId,
        transport,
        method: request.method,
        operation: operations.get(request) ?? null,
        status: response.status,
        startedAt: start,
      });
    },
  };
}
