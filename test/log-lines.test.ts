/**
 * The gateway's log lines as a process writes them to stdout: gathered into few writes, yet a
 * line reaches the reader while the process runs, and every line written before it stops is on
 * stdout when it has stopped.
 */
import { execFileSync } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  BatchedLines,
  byteDestination,
  LINE_BATCH_BYTES,
  UNWRITTEN_LOG_BYTES,
  type ByteSink,
} from "../src/telemetry/log-destination.ts";
import { requestIdFrom, requestLineWriter, tenthsOfMs, type RequestLine as WrittenLine } from "../src/plugins/request-log.ts";
import { createLogger, infoLineFrame } from "../src/telemetry/logger.ts";
import { RequestLineBytes, type RequestLineFields } from "../src/plugins/request-line-bytes.ts";
import { startServerProcess, type LogLine, type ServerProcess } from "./support/server-process.ts";

interface RequestLine extends LogLine {
  requestId?: string;
  status?: number;
  level?: number;
  time?: number;
  ms?: number;
  method?: string;
  operation?: string | null;
}

let running: ServerProcess<RequestLine> | undefined;

afterEach(async () => {
  if (running && running.child.exitCode === null && running.child.signalCode === null) {
    running.child.kill("SIGKILL");
    await running.exit;
  }
  running = undefined;
});

async function query(url: string, requestId: string): Promise<number> {
  const response = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-request-id": requestId },
    body: JSON.stringify({ query: "{ __typename }" }),
  });
  await response.arrayBuffer();
  return response.status;
}

describe("the log on stdout", () => {
  it("carries a request's line while the process runs, and every line once it has stopped", async () => {
    running = await startServerProcess<RequestLine>({ GRAPHIQL: "false" });
    const { url, line, lines, child, exit } = running;
    await line((candidate) => candidate.msg === "gateway listening");

    const sentAt = Date.now();
    expect(await query(url, "alone-1")).toBe(200);
    // Gathered for a moment, not held until more lines come.
    const written = await line((candidate) => candidate.msg === "graphql request" && candidate.requestId === "alone-1", 2_000);
    expect(written).toMatchObject({ level: 30, status: 200, method: "POST", operation: null });
    expect(written.time).toBeGreaterThanOrEqual(sentAt);
    expect(written.time).toBeLessThanOrEqual(Date.now());
    expect(written.ms).toBeGreaterThanOrEqual(0);

    const ids = Array.from({ length: 40 }, (_, index) => `burst-${index}`);
    expect(await Promise.all(ids.map((id) => query(url, id)))).toEqual(ids.map(() => 200));
    // Stopped at once: the lines still gathered are written as the process exits.
    child.kill("SIGTERM");
    expect((await exit).code).toBe(0);
    const logged = lines.filter((candidate) => candidate.msg === "graphql request").map((candidate) => candidate.requestId);
    expect(logged).toEqual(expect.arrayContaining(ids));
    expect(lines.at(-1)?.msg).toBe("stopped");
  });
});

describe("a request line's milliseconds", () => {
  it("are written as Math.round(ms * 10) / 10 writes them", () => {
    const samples = [0, 0.04, 0.05, 0.1, 0.95, 1, 1.25, 9.99, 10, 123.456, 1e6 + 0.37, 2 ** 40 + 0.5];
    for (let index = 0; index < 5_000; index += 1) samples.push(Math.random() * 10 ** (index % 7));
    for (const ms of samples) expect(tenthsOfMs(ms)).toBe(String(Math.round(ms * 10) / 10));
  });
});

describe("a writer's request lines", () => {
  it("each carry their own operation name, escaped as JSON escapes it, kept in batches or written at once", () => {
    const names = ["Blocks", "Blocks", 'Quo"ted\\ \u2028 Blöcke', "Blocks", null, null, "Tail", 'Quo"ted\\ \u2028 Blöcke'];
    const requests: WrittenLine[] = names.map((operation, index) => ({
      requestId: requestIdFrom(index % 2 ? `id-${index}` : 'not a "sane" id'),
      transport: index === 3 ? "websocket" : undefined,
      method: index === 5 ? "GET" : "POST",
      operation,
      status: 200 + index,
      startedAt: performance.now(),
    }));
    const sink = new KeptBatches();
    const batched = new BatchedLines(sink);
    const atOnce: string[] = [];
    const writers = [
      requestLineWriter(createLogger("info", {}, batched)),
      requestLineWriter(createLogger("info", {}, { write: (line: string) => void atOnce.push(line) })),
    ];
    for (const request of requests) for (const write of writers) write(request);
    batched.flush();
    const fieldsOf = (text: string) =>
      text
        .trimEnd()
        .split("\n")
        .map((line) => {
          const { time, ms, ...fields } = JSON.parse(line) as Record<string, unknown>;
          expect([typeof time, typeof ms]).toEqual(["number", "number"]);
          return fields;
        });
    const expected = requests.map((request) => ({
      level: 30,
      service: "avalanche-graphql-gateway",
      pid: process.pid,
      requestId: request.requestId,
      ...(request.transport ? { transport: request.transport } : {}),
      method: request.method,
      operation: request.operation,
      status: request.status,
      msg: "graphql request",
    }));
    expect(fieldsOf(sink.text())).toEqual(expected);
    expect(fieldsOf(atOnce.join(""))).toEqual(expected);
    // An id that is not a sane token was replaced by a UUID, which needs no escaping.
    expect(expected[0]!.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });
});

/** A sink that keeps what it is handed, as handed: a batch rewritten after it was handed over shows. */
class KeptBatches implements ByteSink {
  readonly batches: Buffer[] = [];
  write(bytes: Buffer): void {
    this.batches.push(bytes);
  }
  text(): string {
    return Buffer.concat(this.batches).toString("utf8");
  }
}

describe("lines gathered into batches of bytes", () => {
  it("hands over every line's exact bytes in order, multi-byte characters and lines longer than a batch included", () => {
    const sink = new KeptBatches();
    const lines = new BatchedLines(sink);
    const written: string[] = [];
    for (let index = 0; index < 2_000; index += 1) {
      const line =
        index % 500 === 7
          ? `{"long":"${"é".repeat(LINE_BATCH_BYTES)}"}\n`
          : `{"index":${index},"operation":"Blöcke ${"€".repeat(index % 5)} 𝄞"}\n`;
      lines.write(line);
      written.push(line);
    }
    lines.flush();
    expect(sink.text()).toBe(written.join(""));
    expect(sink.batches.length).toBeGreaterThan(4);
    // Gathered: far fewer batches than lines, and none but a long line's own over the batch size.
    expect(sink.batches.length).toBeLessThan(100);
    const overSize = sink.batches.filter((batch) => batch.byteLength > LINE_BATCH_BYTES);
    expect(overSize.map((batch) => batch.toString("utf8").startsWith('{"long"'))).toEqual([true, true, true, true]);
  });

  it("writes what it gathered after a moment without more lines, and nothing when nothing came", async () => {
    const sink = new KeptBatches();
    const lines = new BatchedLines(sink);
    lines.write("one\n");
    lines.write("two\n");
    expect(sink.batches).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sink.text()).toBe("one\ntwo\n");
    lines.flush();
    lines.flushSync();
    expect(sink.batches).toHaveLength(1);
  });
});

describe("request lines encoded into the batch in place", () => {
  const MESSAGE = "graphql request";
  /** A method as the line carries it: at most 16 characters, then how many more. */
  const methodText = (method: string) =>
    JSON.stringify(method.length <= 16 ? method : `${method.slice(0, 16)}…(+${method.length - 16} chars)`);
  /** An encoder on its own batches, and the text its line must be, made the plain way. */
  function encoderOn(sink: KeptBatches) {
    const lines = new BatchedLines(sink);
    const frame = infoLineFrame(createLogger("info", {}, lines), MESSAGE)!;
    expect(frame.afterTime).toBeDefined();
    const encoder = new RequestLineBytes(lines, frame.afterTime!, frame.tail);
    const textOf = (fields: RequestLineFields, now: number, ms: number) =>
      `${frame.head(now)}${fields.requestId === undefined ? "" : `"requestId":"${fields.requestId}",`}` +
      `${fields.transport ? `"transport":${JSON.stringify(fields.transport)},` : ""}"method":${methodText(fields.method)},` +
      `"operation":${JSON.stringify(fields.operation)},"status":${fields.status},"ms":${tenthsOfMs(ms)}${frame.tail}`;
    return { lines, encoder, textOf };
  }

  it("are the bytes their text would be, in order among written lines, whatever their names, numbers and statuses", () => {
    const sink = new KeptBatches();
    const { lines, encoder, textOf } = encoderOn(sink);
    const names = [
      "Blocks",
      'Quo"ted\\ \u2028 Blöcke 𝄞',
      "é".repeat(128),
      null,
      ...Array.from({ length: 90 }, (_, i) => `Name${i}`),
    ];
    const times = [1_700_000_000_000, 1_700_000_000_000, 1_700_000_000_001, 9, 0, 99_999_999_999_999];
    const milliseconds = [0, 0.04, 0.05, 1.25, 16.66, 999.95, 1e21, 123_456_789.87, Number.NaN, -3.2, Infinity];
    const statuses = [200, 0, 999, 1000, 413, -1, 2.5];
    const methods = ["POST", "GET", "pAtCh\u0000", "A".repeat(40)];
    const expected: string[] = [];
    for (let index = 0; index < 1_200; index += 1) {
      if (index % 11 === 5) {
        const line = `{"written":${index},"name":"Blöcke €"}\n`;
        lines.write(line);
        expected.push(line);
        continue;
      }
      const fields: RequestLineFields = {
        requestId: index % 3 === 0 ? undefined : requestIdFrom(index % 2 ? `id-${index}` : null),
        transport: index % 4 === 1 ? (index % 8 === 1 ? "websocket" : "sse") : undefined,
        method: methods[index % methods.length]!,
        operation: names[index % names.length]!,
        status: statuses[index % statuses.length]!,
      };
      const now = times[index % times.length]!;
      const ms = milliseconds[index % milliseconds.length]!;
      expect(encoder.write(fields, now, ms)).toBe(true);
      expected.push(textOf(fields, now, ms));
    }
    lines.flush();
    const written = sink.text().split("\n");
    const wanted = expected.join("").split("\n");
    for (let index = 0; index < wanted.length; index += 1) expect(written[index]).toBe(wanted[index]);
    expect(sink.text()).toBe(expected.join(""));
  });

  it("fill their batches: one is handed over only when the most the next line could take would not fit", () => {
    const sink = new KeptBatches();
    const { lines, encoder, textOf } = encoderOn(sink);
    const fields: RequestLineFields = {
      requestId: requestIdFrom(null),
      method: "POST",
      operation: "LatestBlocks",
      status: 200,
    };
    for (let index = 0; index < 5_000; index += 1) encoder.write(fields, 1_700_000_000_000 + index, 1.5);
    lines.flush();
    const line = textOf(fields, 1_700_000_000_000, 1.5);
    expect(sink.text().length).toBe(5_000 * line.length);
    expect(sink.batches.length).toBeGreaterThan(5);
    for (const batch of sink.batches.slice(0, -1))
      expect(batch.byteLength).toBeGreaterThan(LINE_BATCH_BYTES - 2 * line.length - 64);
  });

  it("are refused when they could never fit a batch, and the writer then writes them as text", () => {
    const sink = new KeptBatches();
    const { lines, encoder } = encoderOn(sink);
    const huge = "x".repeat(LINE_BATCH_BYTES);
    expect(encoder.write({ requestId: undefined, method: "POST", operation: huge, status: 200 }, 1, 1)).toBe(false);
    lines.flush();
    expect(sink.batches).toEqual([]);
    const write = requestLineWriter(createLogger("info", {}, lines));
    write({ requestId: requestIdFrom("huge"), method: "POST", operation: huge, status: 200, startedAt: performance.now() });
    write({ requestId: requestIdFrom("after"), method: "POST", operation: "After", status: 200, startedAt: performance.now() });
    lines.flush();
    const [first, second] = sink
      .text()
      .trimEnd()
      .split("\n")
      .map((text) => JSON.parse(text) as RequestLine);
    expect([first!.requestId, first!.operation, second!.requestId, second!.operation]).toEqual(["huge", huge, "after", "After"]);
  });

  it("are written after a moment without more lines, or as the process exits, and never held longer", async () => {
    const sink = new KeptBatches();
    const { lines, encoder } = encoderOn(sink);
    const fields = (operation: string): RequestLineFields => ({
      requestId: undefined,
      method: "POST",
      operation,
      status: 200,
    });
    encoder.write(fields("Soon"), 5, 1);
    expect(sink.batches).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sink.text()).toContain(`"operation":"Soon"`);
    encoder.write(fields("AtExit"), 6, 1);
    lines.flushSync();
    expect(
      sink
        .text()
        .trimEnd()
        .split("\n")
        .map((text) => (JSON.parse(text) as RequestLine).operation),
    ).toEqual(["Soon", "AtExit"]);
  });
});

/**
 * Stdout as a pipe nobody reads yet: both ends in one descriptor, so that opening does not wait for
 * a reader, with the gateway's destination writing to it. `openReader` wakes a reader, whose reads
 * never wait (0 when the pipe is empty).
 */
function unreadPipe(): { lines: BatchedLines; openReader(): (chunk: Buffer) => number; close(): void } {
  const directory = mkdtempSync(join(tmpdir(), "unread-stdout-"));
  const fifo = join(directory, "stdout");
  execFileSync("mkfifo", [fifo]);
  const writeEnd = openSync(fifo, "r+");
  let readEnd: number | undefined;
  return {
    lines: new BatchedLines(byteDestination(writeEnd)),
    openReader() {
      const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
      readEnd = reader;
      return (chunk) => {
        try {
          return readSync(reader, chunk);
        } catch {
          return 0;
        }
      };
    },
    close() {
      if (readEnd !== undefined) closeSync(readEnd);
      closeSync(writeEnd);
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

describe("stdout whose reader stalls", () => {
  it("never blocks the event loop, and holds at most the unwritten bound of lines for it", async () => {
    const pipe = unreadPipe();
    const { lines } = pipe;
    const line = `{"level":30,"msg":"graphql request","requestId":"${"x".repeat(150)}"}\n`;
    // Four times the bound, written as a busy gateway writes: if any write waited for the reader, this would not return.
    const lineCount = Math.ceil((4 * UNWRITTEN_LOG_BYTES) / line.length);
    for (let index = 0; index < lineCount; index += 1) lines.write(line);
    lines.flush();

    // The reader wakes: what was held is written, and no more (the pipe's own 64 KiB aside); the rest was dropped.
    const readSome = pipe.openReader();
    const chunk = Buffer.allocUnsafe(1024 * 1024);
    let read = 0;
    // Done when a second passes without a byte: the writes left are handed to the thread pool one at a time.
    for (let quiet = 0; quiet < 20;) {
      const got = readSome(chunk);
      read += got;
      quiet = got === 0 ? quiet + 1 : 0;
      if (got === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(read).toBeGreaterThan(UNWRITTEN_LOG_BYTES / 2);
    expect(read).toBeLessThan(UNWRITTEN_LOG_BYTES + 4 * LINE_BATCH_BYTES);
    pipe.close();
  }, 60_000);
});

describe("a stopping process's last lines", () => {
  it("are written after the ones still under way, and waited for until the reader has taken them", async () => {
    const pipe = unreadPipe();
    const { lines } = pipe;
    // More than the pipe holds: a write is under way, waiting for the reader, when the last line comes.
    const expected: string[] = [];
    for (let index = 0; index < 3_000; index += 1) {
      const line = `{"msg":"graphql request","requestId":"r-${index}","pad":"${"x".repeat(60)}"}\n`;
      expected.push(line);
      lines.write(line);
    }
    lines.flush();
    lines.write('{"msg":"stopped"}\n');
    expected.push('{"msg":"stopped"}\n');
    let written = false;
    const writing = lines.written(10_000).then(() => (written = true));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(written).toBe(false);

    const readSome = pipe.openReader();
    const chunk = Buffer.allocUnsafe(64 * 1024);
    const read: Buffer[] = [];
    const take = () => {
      const got = readSome(chunk);
      if (got > 0) read.push(Buffer.from(chunk.subarray(0, got)));
      return got;
    };
    while (!written) if (take() === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await writing;
    while (take() > 0);
    expect(Buffer.concat(read).toString()).toBe(expected.join(""));
    pipe.close();
  });
});
