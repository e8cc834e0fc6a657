/**
 * Warnings and errors that clients can cause again and again (an unexpected error per request,
 * per operation, per field) are written once per message and window: the first line as it is,
 * the others only counted, and when the window ends one line says how many there were. However
 * much a caller sends, it makes at most two such lines per message and window. Lines that are
 * one per paid request (the request log, refusals) are not summed: they are paid for.
 */
import { truncated, type Logger } from "./logger.ts";

const REPEATS_WINDOW_MS = 10_000;
/** Messages with a window open at once; the lines of any further message share one window. */
const MAX_OPEN_WINDOWS = 256;
const OTHER_MESSAGES = "(other messages)";

type Level = "warn" | "error";

interface Window {
  level: Level;
  openedAt: number;
  more: number;
  timer: NodeJS.Timeout;
}

export class RepeatedLines {
  private readonly open = new Map<string, Window>();

  /** `logger` writes the summaries (it is never summed itself). */
  constructor(
    private readonly logger: Logger,
    readonly windowMs = REPEATS_WINDOW_MS,
  ) {}

  /** Runs `write` for the first line of `message` in a window, and counts the others. */
  write(level: Level, message: string, write: () => void): void {
    const key = this.open.has(message) || this.open.size < MAX_OPEN_WINDOWS ? message : OTHER_MESSAGES;
    const window = this.open.get(key);
    if (window) {
      window.more += 1;
      return;
    }
    write();
    const timer = setTimeout(() => this.close(key), this.windowMs);
    timer.unref();
    this.open.set(key, { level, openedAt: Date.now(), more: 0, timer });
  }

  /** Closes every open window now, writing its count (at shutdown). */
  flush(): void {
    for (const key of [...this.open.keys()]) this.close(key);
  }

  private close(key: string): void {
    const window = this.open.get(key);
    if (!window) return;
    clearTimeout(window.timer);
    this.open.delete(key);
    if (window.more === 0) return;
    const seconds = Math.max(1, Math.round((Date.now() - window.openedAt) / 1_000));
    this.logger[window.level](
      { repeated: window.more, seconds },
      `${window.more} more like this in the last ${seconds} s: ${key}`,
    );
  }
}

/** What a line is counted by: its message (a format string, never the values), else the type of the error logged alone. */
function messageOf(args: unknown[]): string {
  const message = args.find((arg) => typeof arg === "string");
  if (message !== undefined) return truncated(message, 128);
  const [first] = args;
  return first instanceof Error ? `an unexpected ${truncated(first.name, 64)}` : "(no message)";
}

/**
 * `logger`, except that its warnings and errors go through `lines`: the logger to give whatever
 * a client's input reaches (Yoga, the listener, the last resort of plugins, the WebSocket transport).
 */
export function summingRepeats(logger: Logger, lines: RepeatedLines = new RepeatedLines(logger)): Logger {
  // A pino logger made this way is what pino's own child() makes: everything else is the parent's.
  const summing = Object.create(logger) as Logger;
  for (const level of ["warn", "error"] as const) {
    summing[level] = ((...args: unknown[]) =>
      lines.write(level, messageOf(args), () => (logger[level] as (...args: unknown[]) => void)(...args))) as Logger[Level];
  }
  return summing;
}
