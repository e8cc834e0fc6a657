/**
 * The gateway's log lines as a process writes them to stdout: gathered into few writes, yet a
 * line reaches the reader while the process runs, and every line written before it stops is on
 * stdout when it has stopped.
 */
import { afterEach, describe, expect, it } from "vitest";
import { BatchedLines, LINE_BATCH_BYTES, type ByteSink } from "../src/telemetry/log-destination.ts";
import { startServerProcess, type LogLine, type ServerProcess } from "./support/server-process.ts";

interface RequestLine extends LogLine {
  requestId?: string;
  status?: number;
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

    expect(await query(url, "alone-1")).toBe(200);
    // Gathered for a moment, not held until more lines come.
    const written = await line((candidate) => candidate.msg === "graphql request" && candidate.requestId === "alone-1", 2_000);
    expect(written.status).toBe(200);

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
