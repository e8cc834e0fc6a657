/**
 * Structured JSON logs. API keys are redacted wherever they appear in a logged object. Whatever
 * a client sends, a line stays small: strings, arrays, objects and nesting are cut to fixed
 * bounds (LOGGED_BOUNDS), so that bytes logged per request are bounded.
 *
 * The per-request line is written on every request, so it costs as little as a line can: its
 * fields are bounded where they are made and it is written as pino would write it, without
 * pino's per-line work (`infoLineWriter`); lines go to stdout asynchronously, gathered into
 * few writes (src/telemetry/log-destination.ts).
 */
import { pino, stdSerializers, type DestinationStream, type Logger } from "pino";
import { jsonString } from "../json-text.ts";
import { stdoutDestination } from "./log-destination.ts";

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

/**
 * What an info line of one message is written with, looked up once from pino: a line is
 * `head(now)` + its own fields as JSON (`"key":value,…`) + `tail`, as pino would write it (level,
 * time, the logger's bindings, the fields, `msg`), without pino's per-line work (hooks,
 * serializers, the bounding and redacting walk): for a line written on every request, whose
 * fields are bounded where they are made and hold no secret (no key, no header). Undefined when
 * the logger is not one this can write for.
 */
export interface InfoLineFrame {
  /** Where the logger's lines go. */
  stream: { write(line: string): unknown };
  /** The line up to its fields, for a line of `now` (Date.now()). */
  head(now: number): string;
  /** The line after its fields: its message and newline. */
  tail: string;
  /**
   * With pino's own time, what follows the time in `head`: the logger's bindings and the comma
   * before the fields (the head is `{"level":30,"time":` + now + this). Undefined for another time.
   */
  afterTime?: string;
}

export function infoLineFrame(logger: Logger, message: string): InfoLineFrame | undefined {
  const own = logger as unknown as Record<symbol, unknown>;
  const stream = own[pino.symbols.streamSym] as { write(line: string): unknown } | undefined;
  const time = own[pino.symbols.timeSym] as (() => string) | undefined;
  const bindings = own[pino.symbols.chindingsSym];
  if (!stream || !time || typeof bindings !== "string") return undefined;
  const tail = `,"msg":${jsonString(message)}}\n`;
  if (time !== pino.stdTimeFunctions.epochTime) return { stream, tail, head: () => `{"level":30${time()}${bindings},` };
  // pino's own time, its number written once per millisecond: a busy gateway writes tens of lines in one.
  let headAt = Number.NaN;
  let head = "";
  return {
    stream,
    tail,
    afterTime: `${bindings},`,
    head: (now) => {
      if (now !== headAt) {
        headAt = now;
        head = `{"level":30,"time":${now}${bindings},`;
      }
      return head;
    },
  };
}

/**
 * A writer of info lines of `message` whose fields the caller gives as JSON already (see
 * InfoLineFrame). It writes whatever the level: the caller checks `isLevelEnabled("info")` first,
 * before it builds the fields.
 */
export function infoLineWriter(logger: Logger, message: string): (fields: string) => void {
  const frame = infoLineFrame(logger, message);
  if (!frame) return (fields) => void logger.info(JSON.parse(`{${fields}}`) as Record<string, unknown>, message);
  return (fields) => void frame.stream.write(`${frame.head(Date.now())}${fields}${frame.tail}`);
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
      log: (object: Record<string, unknown>) => {
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
  return pino(options, destination ?? stdoutDestination());
}

export type { Logger };
