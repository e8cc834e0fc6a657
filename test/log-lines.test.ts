/**
 * The gateway's log lines as a process writes them to stdout: gathered into few writes, yet a
 * line reaches the reader while the process runs, and every line written before it stops is on
 * stdout when it has stopped.
 */
import { afterEach, describe, expect, it } from "vitest";
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
