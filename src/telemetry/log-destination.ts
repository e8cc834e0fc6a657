/**
 * Where the gateway's lines go unless told otherwise: stdout, written asynchronously by
 * sonic-boom, so that a reader that stalls never blocks the event loop; at most
 * UNWRITTEN_LOG_BYTES are left unwritten for it, then lines are dropped (a stalled reader must
 * not grow the heap without bound).
 *
 * Lines are gathered for up to LINE_BATCH_MS, or LINE_BATCH_CHARS, and handed over as one write:
 * written one by one, each line of a busy gateway was its own trip through the thread pool,
 * which cost a cache hit more than the hit's own work. What is gathered is written when the
 * process exits (an uncaught error or `process.exit` included; not when it is killed outright).
 */
import { pino, type DestinationStream } from "pino";

/** The most of the log a slow stdout may leave unwritten in memory. */
const UNWRITTEN_LOG_BYTES = 16 * 1024 * 1024;
/** How long a line may wait for others to share its write. */
const LINE_BATCH_MS = 20;
/** How much is gathered before it is written at once, under the sonic-boom's largest write. */
const LINE_BATCH_CHARS = 8 * 1024;

type SonicBoom = ReturnType<typeof pino.destination>;

export class BatchedLines implements DestinationStream {
  private pending = "";
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly target: SonicBoom) {}

  write(line: string): void {
    this.pending += line;
    if (this.pending.length >= LINE_BATCH_CHARS) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), LINE_BATCH_MS).unref();
  }

  /** Hands what is gathered to the stream, which writes it asynchronously. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending === "") return;
    const lines = this.pending;
    this.pending = "";
    this.target.write(lines);
  }

  /** Writes everything, gathered or under way, before returning (at exit). */
  flushSync(): void {
    this.flush();
    try {
      this.target.flushSync();
    } catch {
      // Not open yet, or closed: nothing more can be written.
    }
  }
}

let stdoutLines: BatchedLines | undefined;

/** The process's one stdout destination, shared by its loggers. */
export function stdoutDestination(): BatchedLines {
  if (stdoutLines) return stdoutLines;
  const lines = new BatchedLines(pino.destination({ dest: 1, sync: false, maxLength: UNWRITTEN_LOG_BYTES }));
  process.once("exit", () => lines.flushSync());
  return (stdoutLines = lines);
}
