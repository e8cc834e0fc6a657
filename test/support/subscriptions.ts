/** Export-job subscriptions over Server-Sent Events, read event by event. */
import { print, type GraphQLFormattedError } from "graphql";
import { expect } from "vitest";
import {
  ExportTransactionsDocument,
  WatchExportOperationDocument,
  type ExportOperationFieldsFragment,
} from "../generated/graphql.ts";
import { execute, type Harness } from "./harness.ts";

export interface SseEvent {
  event: string;
  data: string;
}

export interface ExportSubscription {
  /** A subscription refused before it started (its arguments, its caller's budget, capacity) is a JSON answer with its status, not a stream. */
  refusal: { status: number; errors: GraphQLFormattedError[] } | undefined;
  next(): Promise<SseEvent | undefined>;
  /** Every event until the stream ends. */
  rest(): Promise<SseEvent[]>;
  cancel(): Promise<void>;
}

/** `Subscription.exportOperation` on a gateway. */
export function subscribeExport(harness: Harness, id: string, headers: Record<string, string> = {}): Promise<ExportSubscription> {
  return subscribeSse(harness, print(WatchExportOperationDocument), { id }, headers);
}

/** Any subscription on a gateway, over Server-Sent Events; `serverContext` as Node's listener would give it (a socket's address). */
export function subscribeSse(
  harness: Harness,
  query: string,
  variables: Record<string, unknown>,
  headers: Record<string, string> = {},
  serverContext: Record<string, never> = {},
): Promise<ExportSubscription> {
  return subscribeSseBody(harness, { query, variables }, headers, serverContext);
}

/** A subscription over Server-Sent Events, its POST's body as given (e.g. a persisted document's `documentId`). */
export async function subscribeSseBody(
  harness: Harness,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
  serverContext: Record<string, never> = {},
): Promise<ExportSubscription> {
  const response = await harness.gateway.yoga.fetch(
    "http://gateway.test/graphql",
    {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", ...headers },
      body: JSON.stringify(body),
    },
    serverContext,
  );
  return readEventStream(response);
}

/** A response read event by event; a refusal (JSON with its status, not a stream) as its `refusal`. */
export async function readEventStream(response: Response): Promise<ExportSubscription> {
  if (!response.headers.get("content-type")?.startsWith("text/event-stream")) {
    expect(response.headers.get("content-type")).toMatch(/^application\/(graphql-response\+)?json/);
    expect(response.status).toBeGreaterThanOrEqual(400);
    const { errors } = (await response.json()) as { errors: GraphQLFormattedError[] };
    return {
      refusal: { status: response.status, errors },
      next: async () => undefined,
      rest: async () => [],
      cancel: async () => {},
    };
  }
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  async function next(): Promise<SseEvent | undefined> {
    for (;;) {
      const end = buffer.indexOf("\n\n");
      if (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const fields = Object.fromEntries(
          block
            .split("\n")
            .filter((line) => !line.startsWith(":"))
            .map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 1).trim()]),
        );
        if (fields.event) return { event: fields.event, data: fields.data ?? "" };
        continue;
      }
      const { value, done } = await reader.read();
      if (done) return undefined;
      buffer += decoder.decode(value, { stream: true });
    }
  }
  async function rest(): Promise<SseEvent[]> {
    const events: SseEvent[] = [];
    for (let event = await next(); event; event = await next()) events.push(event);
    return events;
  }
  return { refusal: undefined, next, rest, cancel: () => reader.cancel() };
}

export function operationsOf(events: SseEvent[]): ExportOperationFieldsFragment[] {
  return events
    .filter((event) => event.event === "next")
    .map(
      (event) => (JSON.parse(event.data) as { data: { exportOperation: ExportOperationFieldsFragment } }).data.exportOperation,
    );
}

/** Starts a P-Chain export job as a caller of its own (203.0.113.250), so that it spends no test caller's budget. */
export async function startExportJob(harness: Harness): Promise<string> {
  const result = await execute(
    harness,
    ExportTransactionsDocument,
    { input: { primaryNetwork: { includeChains: ["p-chain"] } } },
    { "x-forwarded-for": "203.0.113.250" },
  );
  expect(result.body.errors).toBeUndefined();
  return result.body.data!.exportTransactions!.operationId;
}
