/**
 * Row 12: SIGTERM with subscriptions open. The real entry point (`node --import tsx src/server.ts`)
 * on the embedded simulator: open streams complete at once, a request in flight is answered,
 * and the process exits then, long before the grace period.
 *
 * Transports: HTTP and SSE only: this is the process's HTTP listener and its drain (a socket's
 * `complete` and its close with 1001 on shutdown are test/websocket.test.ts's).
 */
import type { ChildProcess } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { startServerProcess } from "../support/server-process.ts";

const GRACE_MS = 20_000;
const started = new Set<ChildProcess>();

afterAll(() => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

async function startGateway() {
  const gateway = await startServerProcess({ SHUTDOWN_GRACE_MS: String(GRACE_MS), EXPORT_POLL_INTERVAL_MS: "100" }, [
    "DATA_API_URL",
    "METRICS_API_URL",
    "WORKERS",
    "REDIS_URL",
  ]);
  started.add(gateway.child);
  return gateway;
}

/** An SSE stream, read to its end in the background. */
function readStream(body: ReadableStream<Uint8Array>) {
  let text = "";
  const decoder = new TextDecoder();
  const done = (async () => {
    const reader = body.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return text;
      text += decoder.decode(value, { stream: true });
    }
  })();
  return { text: () => text, done };
}

describe("row 12: shutdown", () => {
  it("row 12: on SIGTERM, two open SSE subscriptions get `event: complete` at once, a request in flight is answered, and the process exits 0 before the grace period", async () => {
    const gateway = await startGateway();
    const listening = await gateway.line((line) => line.msg === "gateway listening");
    const simulatorUrl = String(listening.dataApiUrl);
    const control = (path: string, body: unknown) =>
      fetch(`${simulatorUrl}/_simulator/${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    // Jobs that outlive the test: only the shutdown can end their streams.
    expect((await control("knobs", { exportJobMs: 600_000 })).status).toBeLessThan(300);

    const graphql = (query: string, variables: Record<string, unknown> = {}, accept = "application/graphql-response+json") =>
      fetch(`${gateway.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", accept },
        body: JSON.stringify({ query, variables }),
      });
    const streams = [];
    for (const address of ["1", "2"]) {
      const exported = await graphql(
        `
          mutation ($input: ExportTransactionsInput!) {
            exportTransactions(input: $input) {
              operationId
            }
          }
        `,
        {
          input: { evm: { addresses: [`0x${address.repeat(40)}`], includeChains: ["43114"] } },
        },
      );
      const operationId = ((await exported.json()) as { data: { exportTransactions: { operationId: string } } }).data
        .exportTransactions.operationId;
      const response = await graphql(
        `
          subscription ($id: ID!) {
            exportOperation(id: $id) {
              operationStatus
            }
          }
        `,
        { id: operationId },
        "text/event-stream",
      );
      expect(response.status).toBe(200);
      streams.push(readStream(response.body!));
    }
    for (const [index, stream] of streams.entries()) {
      await expect
        .poll(() => stream.text(), { timeout: 10_000, message: `stream ${index}'s first event` })
        .toContain('"operationStatus":"RUNNING"');
    }

    // A slow request in flight when the signal comes.
    expect((await control("knobs", { latencyMs: 1_000 })).status).toBeLessThan(300);
    expect((await control("reset", {})).status).toBeLessThan(300);
    const slow = graphql(`
      {
        latestBlocks(first: 2) {
          nodes {
            blockNumber
          }
        }
      }
    `);
    const counters = async () =>
      ((await (await fetch(`${simulatorUrl}/_simulator/counters`)).json()) as { counts: Record<string, number> }).counts;
    await expect.poll(async () => (await counters())["GET /v1/blocks"] ?? 0, { timeout: 10_000, interval: 50 }).toBe(1);

    gateway.child.kill("SIGTERM");

    const texts = await Promise.all(streams.map((stream) => stream.done));
    for (const text of texts) {
      expect(text).toMatch(/event: complete\ndata:\n\n$/);
      expect(text).not.toMatch(/"errors"/);
    }
    const answer = await slow;
    expect(answer.status).toBe(200);
    expect(answer.headers.get("connection")).toBe("close");
    expect(((await answer.json()) as { data: { latestBlocks: { nodes: unknown[] } } }).data.latestBlocks.nodes).toHaveLength(2);

    expect(await gateway.exit).toEqual({ code: 0, signal: null });
    expect(
      gateway.lines.some((line) => line.msg === "requests still in flight after the grace period: closing their connections"),
    ).toBe(false);
    expect(gateway.lines.map((line) => line.msg)).toContain("stopped");
  }, 60_000);
});
