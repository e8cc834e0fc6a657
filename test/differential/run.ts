/**
 * Sends one operation to a gateway (a subscription as Server-Sent Events, read to its end) and
 * reduces the answer to what both execution paths must agree on.
 */
import type { Gateway } from "../../src/gateway.ts";
import type { Operation } from "./transform.ts";

export interface Answer {
  status: number;
  /** The body, or for a subscription every event's payload in order. */
  body: unknown;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const HAS_UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
/** Fields whose values are the time they are read at (an export job's clock), not the data. */
const CLOCK_FIELDS = new Set(["createdAtTimestamp", "updatedAtTimestamp"]);
/** Extensions that are legitimately not the same twice: when to retry, and the request's own id. */
const VOLATILE_EXTENSIONS = new Set(["retryAfter", "requestId"]);

/**
 * Sends `operation` to `gateway` through `yoga.fetch`, or over a real socket to the port it is
 * served on (the Node listener, and its lanes before Yoga: src/server/operation-lane.ts).
 */
export async function send(gateway: Gateway, operation: Operation, subscription: boolean, port?: number): Promise<Answer> {
  const init = {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: subscription ? "text/event-stream" : "application/graphql-response+json",
    },
    body: JSON.stringify({ query: operation.query, variables: operation.variables }),
  };
  const response = await (port === undefined
    ? gateway.yoga.fetch("http://gateway.test/graphql", init)
    : fetch(`http://127.0.0.1:${port}/graphql`, init));
  if (!subscription || !response.headers.get("content-type")?.startsWith("text/event-stream")) {
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    return { status: response.status, body: normalised(body) };
  }
  const text = await eventsUntilIdle(response.body!);
  const events = text
    .split("\n\n")
    .map((block) => block.split("\n").filter((line) => line.startsWith("event:") || line.startsWith("data:")))
    .filter((lines) => lines.length > 0)
    .map((lines) => {
      const event = lines
        .find((line) => line.startsWith("event:"))
        ?.slice(6)
        .trim();
      const data = lines
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trim())
        .join("\n");
      return { event, data: data ? normalised(JSON.parse(data)) : null };
    });
  return { status: response.status, body: events };
}

/**
 * The answer without what is legitimately nondeterministic: export job ids (random UUIDs, also
 * inside global ids and download links) and their clock fields, retry-after seconds and request
 * ids in extensions. Errors are sorted by path and message: graphql-js reports them in the order
 * resolvers fail, compiled execution in the order of its own traversal, and GraphQL leaves the
 * order of `errors` unspecified.
 */
export function normalised(value: unknown, key?: string): unknown {
  if (typeof value === "string") return normalisedString(value);
  if (Array.isArray(value)) {
    const items = value.map((item) => normalised(item, key === "errors" ? "error" : undefined));
    if (key === "errors") items.sort((a, b) => errorKey(a).localeCompare(errorKey(b)));
    return items;
  }
  if (value && typeof value === "object") {
    let entries = Object.entries(value as Record<string, unknown>)
      .filter(([name]) => !(key === "extensions" && VOLATILE_EXTENSIONS.has(name)))
      .map(
        ([name, item]) =>
          [name, CLOCK_FIELDS.has(name) && typeof item === "number" ? "<clock>" : normalised(item, name)] as const,
      );
    // The order of a response's entries and of an error's is not significant (the order of the
    // fields under `data` is, and stays as it was answered).
    if (key === undefined || key === "error" || key === "extensions") entries = entries.sort(([a], [b]) => a.localeCompare(b));
    return Object.fromEntries(entries);
  }
  return value;
}

function normalisedString(value: string): string {
  if (HAS_UUID.test(value)) return value.replace(UUID, "<uuid>");
  const stamped = withoutIssueTimes(value);
  if (stamped !== undefined) return `<cursor ${JSON.stringify(stamped)}>`;
  // A global id: base64 of "Type:key", whose key may be a job's UUID.
  if (/^[A-Za-z0-9+/]{16,}={0,2}$/.test(value)) {
    const decoded = Buffer.from(value, "base64").toString("utf8");
    if (HAS_UUID.test(decoded)) return `<global id ${decoded.replace(UUID, "<uuid>")}>`;
  }
  return value;
}

/** Epoch milliseconds between 2001 and 2286: the time a Metrics API page token was issued. */
const isEpochMs = (value: unknown) => typeof value === "number" && value > 1e12 && value < 1e13;

/**
 * A cursor (base64url JSON, possibly holding another) with the issue time of a Metrics API page
 * token, which the token carries to expire, put aside; undefined when it holds none.
 */
function withoutIssueTimes(value: string): unknown {
  if (!/^[A-Za-z0-9_-]{12,}={0,2}$/.test(value)) return undefined;
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(value, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
  return withoutIssueTimesIn(decoded);
}

/**
 * The same for a decoded cursor or token: an array whose first item may be an issue time, and
 * whose strings may hold further tokens, in base64url or as the JSON of a page token the gateway
 * cuts from the route's own (`slicedPages`: the route's token and an offset).
 */
function withoutIssueTimesIn(decoded: unknown): unknown {
  if (!Array.isArray(decoded)) return undefined;
  let stamped = false;
  const parts = decoded.map((part, index) => {
    if (index === 0 && isEpochMs(part)) {
      stamped = true;
      return "<issued>";
    }
    if (typeof part === "string") {
      const inner = part.startsWith("[") ? withoutIssueTimesIn(jsonOrUndefined(part)) : withoutIssueTimes(part);
      if (inner !== undefined) {
        stamped = true;
        return inner;
      }
    }
    return part;
  });
  return stamped ? parts : undefined;
}

function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function errorKey(error: unknown): string {
  const { path, message } = (error ?? {}) as { path?: unknown; message?: unknown };
  return `${JSON.stringify(path ?? null)} ${String(message)}`;
}

/**
 * Whether the two answers agree. One allowance: when an error nulls the whole `data` (it climbed
 * from a non-null field to the root), graphql-js answers as soon as that error settles the
 * operation and drops the errors of fields still running, while compiled execution waits for every
 * field and reports them all; the errors graphql-js reports must then be among the compiled ones.
 */
export function agree(compiled: Answer, interpreted: Answer): boolean {
  if (JSON.stringify(compiled) === JSON.stringify(interpreted)) return true;
  const a = compiled.body as { data?: unknown; errors?: unknown[] } | null;
  const b = interpreted.body as { data?: unknown; errors?: unknown[] } | null;
  if (compiled.status !== interpreted.status || !a || !b || a.data !== null || b.data !== null || !a.errors || !b.errors)
    return false;
  const compiledErrors = new Set(a.errors.map((error) => JSON.stringify(error)));
  return b.errors.length > 0 && b.errors.every((error) => compiledErrors.has(JSON.stringify(error)));
}

/** Runs `task` over `items` with at most `limit` at once, in order of the items. */
export async function boundedMap<T, R>(
  items: readonly T[],
  limit: number,
  task: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** How long a live stream may stay silent before its events so far are the answer: on a frozen clock a live subscription never ends. */
const LIVE_IDLE_MS = 500;

/** A stream's text until it ends or sends no event (keep-alive comments aside) for LIVE_IDLE_MS; then it is cancelled. */
async function eventsUntilIdle(body: ReadableStream<Uint8Array>): Promise<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let lastEventAt = performance.now();
  for (;;) {
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<"idle">((resolve) => {
      timer = setTimeout(() => resolve("idle"), Math.max(0, lastEventAt + LIVE_IDLE_MS - performance.now()));
    });
    const read = await Promise.race([reader.read(), idle]);
    clearTimeout(timer);
    if (read === "idle") {
      // Not awaited: the cancel waits for the read in flight, which waits for an event.
      void reader.cancel().catch(() => {});
      // Only whole events: a cut one is no answer.
      return text.slice(0, text.lastIndexOf("\n\n") + 2);
    }
    if (read.done) return text;
    const chunk = decoder.decode(read.value, { stream: true });
    if (/^(event|data):/m.test(chunk)) lastEventAt = performance.now();
    text += chunk;
  }
}
