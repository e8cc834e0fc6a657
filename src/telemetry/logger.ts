/**
 * Structured JSON logs. API keys are redacted wherever they appear in a logged object. Whatever
 * a client sends, a line stays small: strings, arrays, objects and nesting are cut to fixed
 * bounds (LOGGED_BOUNDS), so that bytes logged per request are bounded.
 *
 * The per-request line is written on every request, so it costs as little as a line can: its
 * fields are bounded where they are made (`preBounded`), the walk that bounds and redacts is
 * skipped for it, and lines go to stdout asynchronously (flushed when the process exits).
 */
import { pino, stdSerializers, type DestinationStream, type Logger } from "pino";

/** The most a line carries of any one value. */
export const LOGGED_BOUNDS = {
  /** Characters of a string (a stack trace included); the rest becomes "…(+N chars)". */
  stringChars: 1_024,
  arrayItems: 10,
  objectKeys: 20,
  depth: 4,
} as const;

/** A client string as a log line carries it: at most `max` characters, then how many were cut. */
export function truncated(value: string, max: number = LOGGED_BOUNDS.stringChars): string {
  return value.length <= max ? value : `${value.slice(0, max)}…(+${value.length - max} chars)`;
}

/** Keys whose values are secrets, at any depth: `apiKey`, and the header that carries it (API_KEY_HEADER). */
const SECRET_KEYS = new Set(["apikey", "x-glacier-api-key"]);

/** Marks a logged object whose every field is bounded and free of secrets where it was made. */
const PRE_BOUNDED = Symbol("pre-bounded");

/**
 * `fields`, marked as bounded and free of secrets already (each string cut where it is made, no
 * key or header among them), so that the line skips the walk that bounds and redacts.
 */
export function preBounded<T extends Record<string, unknown>>(fields: T): T {
  return Object.defineProperty(fields, PRE_BOUNDED, { value: true });
}

function bounded(value: unknown, depth: number): unknown {
  if (typeof value === "string") return truncated(value);
  if (value === null || typeof value !== "object") return value;
  if (value instanceof Error) value = stdSerializers.err(value);
  if (depth >= LOGGED_BOUNDS.depth) return "[nested too deep]";
  if (Array.isArray(value)) {
    const items = value.slice(0, LOGGED_BOUNDS.arrayItems).map((item) => bounded(item, depth + 1));
    if (value.length > LOGGED_BOUNDS.arrayItems) items.push(`…(+${value.length - LOGGED_BOUNDS.arrayItems} items)`);
    return items;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  const kept = Object.fromEntries(
    entries
      .slice(0, LOGGED_BOUNDS.objectKeys)
      .map(([key, item]) => [truncated(key, 64), SECRET_KEYS.has(key.toLowerCase()) ? "[redacted]" : bounded(item, depth + 1)]),
  );
  if (entries.length > LOGGED_BOUNDS.objectKeys) kept["…"] = `+${entries.length - LOGGED_BOUNDS.objectKeys} keys`;
  return kept;
}

/**
 * `bindings` go on every line, e.g. the worker id of a cluster worker; `destination` is where
 * lines go (stdout unless given: tests capture them).
 */
export function createLogger(level: string, bindings: Record<string, unknown> = {}, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: "avalanche-graphql-gateway", pid: process.pid, ...bindings },
    // An Error under `err` is left to its serializer, which names its type before bounding it.
    serializers: { err: (error: unknown) => bounded(error instanceof Error ? stdSerializers.err(error) : error, 1) },
    formatters: {
      log: (object: Record<string | symbol, unknown>) => {
        if (object[PRE_BOUNDED] === true) return object;
        const { err, ...rest } = object;
        const kept = bounded(rest, 0) as Record<string, unknown>;
        return err === undefined ? kept : { ...kept, err };
      },
    },
    hooks: {
      // The message and its format arguments; an Error logged alone keeps its message as the line's.
      logMethod(this: Logger, args: unknown[], method: (...args: unknown[]) => void) {
        const [first] = args;
        if (first instanceof Error && args.length === 1) return method.call(this, { err: first }, truncated(first.message));
        return method.apply(
          this,
          args.map((arg) => (typeof arg === "string" ? truncated(arg) : arg)),
        );
      },
    },
  };
  return pino(options, destination ?? pino.destination({ dest: 1, sync: false }));
}

export type { Logger };
