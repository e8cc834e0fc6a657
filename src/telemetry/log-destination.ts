/**
 * Where the gateway's lines go unless told otherwise: stdout, written asynchronously by
 * sonic-boom, so that a reader that stalls never blocks the event loop; at most
 * UNWRITTEN_LOG_BYTES are left unwritten for it, then lines are dropped (a stalled reader must
 * not grow the heap without bound).
 *
 * Lines are gathered for up to LINE_BATCH_MS, or LINE_BATCH_BYTES, and handed over as one write:
 * written one by one, each line of a busy gateway was its own trip through the thread pool,
 * which cost a cache hit more than the hit's own work. They are gathered as bytes, each line
 * encoded into the batch as it comes: kept as strings, the batch was a tree of pieces that each
 * young-generation collection copied while it waited, and that was encoded twice when written
 * (once to write it, once more by sonic-boom's bookkeeping of what was written). What is
 * gathered is written when the process exits (an uncaught error or `process.exit` included; not
 * when it is killed outright). A process that stops on purpose waits for its lines first
 * (`untilStdoutWritten`): at exit, lines can only be written past a write still under way, which
 * would put the last lines before the ones it carries.
 *
 * A line written on every request may be encoded into the batch in place instead (`roomFor`,
 * `wrote`): its bytes are written where they go, with no string made for it. Encoded and written
 * lines reach the sink in the order they came.
 */
import { pino, type DestinationStream } from "pino";

/** The most of the log a slow stdout may leave unwritten in memory. */
export const UNWRITTEN_LOG_BYTES = 16 * 1024 * 1024;
/** How long a line may wait for others to share its write. */
const LINE_BATCH_MS = 20;
/** How much is gathered before it is written at once (some 300 request lines). */
export const LINE_BATCH_BYTES = 64 * 1024;
/** The most bytes UTF-8 takes for one UTF-16 code unit. */
const BYTES_PER_CHAR = 3;

/** Where gathered bytes are handed: a sonic-boom in `contentMode: "buffer"`, or anything that takes bytes. */
export interface ByteSink {
  write(bytes: Buffer): unknown;
  flushSync?(): void;
  /** Resolves once every byte handed over is written, or dropped for a stalled reader. */
  written?(): Promise<void>;
}

export class BatchedLines implements DestinationStream {
  private batch = Buffer.allocUnsafeSlow(LINE_BATCH_BYTES);
  private used = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly flushLater = () => this.flush();

  constructor(private readonly target: ByteSink) {}

  write(text: string): void {
    // Counted exactly only when the most it could take would not fit: batches are written full.
    if (this.used + text.length * BYTES_PER_CHAR > LINE_BATCH_BYTES) {
      const bytes = Buffer.byteLength(text);
      if (this.used + bytes > LINE_BATCH_BYTES) {
        this.handOver();
        if (bytes > LINE_BATCH_BYTES) return void this.target.write(Buffer.from(text));
      }
    }
    this.used += this.batch.write(text, this.used);
    this.timer ??= setTimeout(this.flushLater, LINE_BATCH_MS).unref();
  }

  /**
   * The batch, with at least `bytes` free from `end` (what is gathered is handed over first when
   * they would not fit), for a line to be encoded into in place; `wrote` then takes it. Undefined
   * when a line of `bytes` would never fit: it is written as text instead.
   */
  roomFor(bytes: number): Buffer | undefined {
    if (bytes > LINE_BATCH_BYTES) return undefined;
    if (this.used + bytes > LINE_BATCH_BYTES) this.handOver();
    return this.batch;
  }

  /** Where the next line's bytes go in the batch `roomFor` gave. */
  get end(): number {
    return this.used;
  }

  /** Takes the bytes a line was encoded into, up to `end`, in the batch `roomFor` gave (no other line between). */
  wrote(end: number): void {
    this.used = end;
    this.timer ??= setTimeout(this.flushLater, LINE_BATCH_MS).unref();
  }

  /** Hands what is gathered to the stream, which writes it asynchronously. */
  flush(): void {
    this.handOver();
  }

  private handOver(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.used === 0) return;
    // The stream keeps the bytes until they are written: the next lines go into a batch of their own.
    const gathered = this.batch.subarray(0, this.used);
    this.batch = Buffer.allocUnsafeSlow(LINE_BATCH_BYTES);
    this.used = 0;
    this.target.write(gathered);
  }

  /** Hands over what is gathered; resolves when the sink has written it, or after `withinMs`. */
  async written(withinMs: number): Promise<void> {
    this.flush();
    if (!this.target.written) return;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, withinMs).unref()));
    await Promise.race([this.target.written(), late]);
    clearTimeout(timer);
  }

  /** Writes everything, gathered or under way, before returning (at exit). */
  flushSync(): void {
    this.flush();
    try {
      this.target.flushSync?.();
    } catch {
      // Not open yet, or closed: nothing more can be written.
    }
  }
}

/**
 * A sonic-boom writing bytes to `dest` (a file descriptor or path) asynchronously, at most
 * UNWRITTEN_LOG_BYTES of them left unwritten.
 */
export function byteDestination(dest: number | string): ByteSink {
  const stream = pino.destination({
    dest,
    sync: false,
    maxLength: UNWRITTEN_LOG_BYTES,
    contentMode: "buffer",
    maxWrite: LINE_BATCH_BYTES,
  });
  // In buffer mode sonic-boom takes Buffers, which its types do not say.
  const bytesStream = stream as unknown as Required<Pick<ByteSink, "write" | "flushSync">>;
  // sonic-boom says when it is idle only through private fields: the bytes it reports are counted instead.
  let handed = 0;
  let settled = 0;
  let waiting: (() => void)[] = [];
  const settle = (bytes: number): void => {
    settled += bytes;
    if (settled < handed || waiting.length === 0) return;
    const resolved = waiting;
    waiting = [];
    for (const resolve of resolved) resolve();
  };
  stream.on("write", settle);
  stream.on("drop", (bytes: Buffer) => settle(bytes.length));
  return {
    write(bytes) {
      handed += bytes.length;
      return bytesStream.write(bytes);
    },
    flushSync: () => bytesStream.flushSync(),
    written: () => (settled >= handed ? Promise.resolve() : new Promise((resolve) => waiting.push(resolve))),
  };
}

let stdoutLines: BatchedLines | undefined;

/** The process's one stdout destination, shared by its loggers. */
export function stdoutDestination(): BatchedLines {
  if (stdoutLines) return stdoutLines;
  const lines = new BatchedLines(byteDestination(1));
  process.once("exit", () => lines.flushSync());
  return (stdoutLines = lines);
}

/** How long a stopping process waits for its lines to be written before it exits regardless. */
const STOPPING_WRITE_MS = 2_000;

/** Resolves when the lines gathered for stdout are written: a process awaits it before `process.exit`. */
export function untilStdoutWritten(): Promise<void> {
  return stdoutLines?.written(STOPPING_WRITE_MS) ?? Promise.resolve();
}
