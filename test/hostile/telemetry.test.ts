/**
 * Issue 16, rows 1 and 13: whatever clients send, `/metrics` stays small (operation names are a
 * bounded set of label values, errors carry no client-chosen path) and log lines stay small
 * (client strings truncated), and every refusal is logged once and counted. Issue 25: an error
 * that requests cause again and again is written once per window and counted, not once each; and
 * operation names earn their labels by their requests in a window, and lose them (and their series).
 *
 * Transports: the operations run over HTTP (POSTs through `yoga.fetch`, and GETs where HTTP has
 * them), WebSocket and SSE (a POST asking for `text/event-stream`): a socket's operation names
 * label the metrics through the same pipeline, and its refusals and unexpected errors are logged
 * as an HTTP request's are, within the same bounds. What the metrics and the log say is read
 * from the gateway itself. The label set's, the heavy hitters' and the logger's own rules are no
 * transport's.
 */
import { Writable } from "node:stream";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { createGateway, type GatewayOptions } from "../../src/gateway.ts";
import { createLogger, LOGGED_BOUNDS, type Logger } from "../../src/telemetry/logger.ts";
import { HeavyHitters } from "../../src/telemetry/heavy-hitters.ts";
import { OperationNameLabels } from "../../src/telemetry/operation-name-labels.ts";
import { RepeatedLines, summingRepeats } from "../../src/telemetry/repeated-lines.ts";
import { metricsText, startHarness, upstreamCalls, type Harness } from "../support/harness.ts";
import { over, TRANSPORTS, useClient, type Answer, type TransportClient } from "../support/transports.ts";

/** Log lines the gateway wrote since the last `clear`. */
class CapturedLog extends Writable {
  lines: string[] = [];
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
    done();
  }
  clear(): void {
    this.lines = [];
  }
  get bytes(): number {
    return this.lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);
  }
}

const log = new CapturedLog();
let harness: Harness;

beforeAll(async () => {
  harness = await startHarness(
    { RATE_LIMIT: "false", METRICS_OPERATION_NAMES: "100" },
    { logger: createLogger("info", {}, log) },
  );
});
afterAll(async () => {
  await harness.close();
});
beforeEach(() => {
  harness.simulator.resetCounters();
  log.clear();
});

const letters = (index: number) => index.toString(26).replace(/\d/g, (digit) => String.fromCharCode(97 + Number(digit)));

/** Label values of `operationName` over every series of the exposition. */
function operationNameLabels(text: string): Set<string> {
  return new Set([...text.matchAll(/operationName="([^"]*)"/g)].map((match) => match[1]!));
}

/**
 * A gateway of its own over the file's simulator, as startHarness builds one (with `env`, `logger`
 * and `options`), in a harness's shape so that a client can serve it; closing it leaves the
 * simulator running.
 */
function gatewayOf(env: Record<string, string>, logger: Logger = createLogger("silent"), options: GatewayOptions = {}): Harness {
  const config = loadConfig({ RESPONSE_CACHE_TTL_MS: "0", CHAIN_LIST_PRELOAD: "false", RATE_LIMIT: "false", ...env });
  const urls = { dataApiUrl: harness.simulator.dataUrl, metricsApiUrl: harness.simulator.metricsUrl };
  const gateway = createGateway(config, urls, logger, options);
  return { simulator: harness.simulator, gateway, config, close: () => gateway.close() };
}

/** The exposition of a gateway's metrics. */
async function exposition(of: Harness): Promise<string> {
  return (await of.gateway.yoga.fetch("http://gateway.test/metrics")).text();
}

/** Answered with `status` over HTTP and SSE; over a socket, refused (an `error` message) when `status` is 400 or more, else served. */
function expectAnswer(answer: Pick<Answer, "status" | "refused">, status: number): void {
  if (answer.status !== undefined) expect(answer.status).toBe(status);
  expect(answer.refused).toBe(status >= 400);
}

/**
 * Sends an operation as `client`'s transport does; over HTTP, as the `index`-th of a series,
 * every fourth by GET (through `yoga.fetch`, as the others).
 */
async function sendNth(client: TransportClient, of: Harness, index: number, query: string, operationName?: string) {
  if (client.transport !== "http" || index % 4 !== 0) return client.send({ query, ...(operationName ? { operationName } : {}) });
  const params = new URLSearchParams({ query, ...(operationName ? { operationName } : {}) });
  const response = await of.gateway.yoga.fetch(`http://gateway.test/graphql?${params}`, {
    headers: { accept: "application/json", "x-graphql-yoga-csrf": "1" },
  });
  const body = (await response.json()) as Answer["body"];
  return { status: response.status, refused: response.status >= 400 && body.data === undefined, body };
}

describe.each(TRANSPORTS)("row 1: bounded telemetry, over %s", (transport) => {
  it("row 1: 300 unique operation names of ~1 kB, short ones, bogus operationName params and unique aliases leave /metrics at most 100 names besides other and Anonymous, and small", async () => {
    // A gateway of its own: the names another transport's test labelled hold their labels for a window.
    const labelled = gatewayOf({ METRICS_OPERATION_NAMES: "100" });
    const client = over(transport, labelled);
    try {
      for (let index = 0; index < 300; index++) {
        const longName = `Q${letters(index)}${"x".repeat(1_000)}`;
        const shortName = `Short${letters(index)}`;
        // Over HTTP every fourth request goes by GET; the others by POST.
        const send = (query: string, operationName?: string) => sendNth(client, labelled, index, query, operationName);
        expectAnswer(await send(`query ${longName} { __typename }`), 200);
        expectAnswer(await send(`query ${shortName} { __typename }`), 200);
        // An operationName that names no operation of the document: refused, and counted as an error by that name.
        expectAnswer(await send(`query A { __typename }`, `Bogus${letters(index)}${"y".repeat(1_000)}`), 400);
        // An error whose path is a unique alias (refused before any upstream call).
        const aliased = await send(`{ alias${letters(index)}: chain(id: "not a chain id") { chainName } }`);
        expect(aliased.body.errors).toHaveLength(1);
      }
      const text = await exposition(labelled);
      const names = operationNameLabels(text);
      expect(names.size).toBeLessThanOrEqual(100 + 2); // the 100 names that hold a label, `other`, and `Anonymous`
      expect(names.has("other")).toBe(true);
      expect(names.has("Anonymous")).toBe(true);
      for (const name of names) expect(name.length).toBeLessThanOrEqual(64);
      expect(text).not.toMatch(/path="/);
      expect(text).not.toContain("xxxxxxxxxx");
      expect(Buffer.byteLength(text)).toBeLessThan(250_000);
      expect(upstreamCalls(labelled)).toEqual({});

      // Another 300 unique names add no series at all: the set is full until its window ends.
      // The runtime's own series are left out: a kind of garbage collection seen for the first time
      // (under a loaded machine, `major` or `incremental`) adds its histogram, bounded by the runtime.
      const clientSeries = (exposed: string) =>
        exposed.split("\n").filter((line) => line && !line.startsWith("#") && !line.startsWith("gateway_process_")).length;
      const series = clientSeries(text);
      for (let index = 300; index < 600; index++) {
        expectAnswer(await client.send({ query: `query Late${letters(index)} { __typename }` }), 200);
      }
      const later = await exposition(labelled);
      const seriesLater = clientSeries(later);
      expect(seriesLater).toBe(series);
      expect(operationNameLabels(later)).toEqual(names);

      const alive = await client.send({ query: "{ __typename }" });
      expect(alive.result).toEqual({ data: { __typename: "Query" } });
    } finally {
      await client.close();
      await labelled.close();
    }
  });

  it("row 1: the names of persisted operations keep their own label however many names came first", async () => {
    const { mkdtempSync, writeFileSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { createHash } = await import("node:crypto");
    const document = "query PersistedProbe { __typename }";
    const file = join(mkdtempSync(join(tmpdir(), "persisted-")), "operations.json");
    writeFileSync(file, JSON.stringify({ [createHash("sha256").update(document).digest("hex")]: document }));
    const persisting = gatewayOf({ METRICS_OPERATION_NAMES: "2", PERSISTED_OPERATIONS_FILE: file });
    const client = over(transport, persisting);
    try {
      const send = async (query: string) => expectAnswer(await client.send({ query }), 200);
      for (const name of ["First", "Second", "Third"]) await send(`query ${name} { __typename }`);
      await send(document);
      const names = operationNameLabels(await exposition(persisting));
      expect(names).toEqual(new Set(["First", "Second", "other", "PersistedProbe"]));
    } finally {
      await client.close();
      await persisting.close();
    }
  });
});

describe.each(TRANSPORTS)("issue 25: operation names earn labels and lose them, over %s", (transport) => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it("a name used steadily after 100 junk names earns its own label after a window, and the junk names' series are removed", async () => {
    const windowMs = 1_500;
    const windowed = gatewayOf({ METRICS_OPERATION_NAMES: "100", METRICS_OPERATION_NAMES_WINDOW_MS: String(windowMs) });
    const client = over(transport, windowed);
    const send = async (name?: string) => expectAnswer(await client.send({ query: `query ${name ?? ""} { __typename }` }), 200);
    const junk = (names: Set<string>) => [...names].filter((name) => name.startsWith("Junk"));
    try {
      // Warm, then at the beginning of a window (they end on multiples of their length).
      for (let index = 0; index < 5; index++) await send();
      await sleep(windowMs - (Date.now() % windowMs));
      const start = Date.now();
      for (let index = 0; index < 100; index++) await send(`Junk${index}`);
      await send("ExplorerHome");
      const first = operationNameLabels(await exposition(windowed));
      expect(junk(first)).toHaveLength(100);
      expect(first.has("ExplorerHome")).toBe(false);
      expect(first.has("other")).toBe(true);

      // Used steadily, while the junk names are not sent again: at the end of the next window,
      // only it ran operations in that window.
      const until = start + 2 * windowMs + 200;
      while (Date.now() < until) {
        await send("ExplorerHome");
        await sleep(50);
      }
      const text = await exposition(windowed);
      const names = operationNameLabels(text);
      expect(names.has("ExplorerHome")).toBe(true);
      expect(junk(names)).toEqual([]);
      expect(text).not.toContain("Junk");
      // What is left: the series of ExplorerHome, `other` and `Anonymous`.
      expect(text.split("\n").filter((line) => line.startsWith("graphql_envelop_request_duration_count"))).toHaveLength(3);
    } finally {
      await client.close();
      await windowed.close();
    }
  });
});

describe("issue 25: operation names earn labels and lose them: the label set and its counts (no transport's)", () => {
  it("at each window's end, the names that ran the most operations in it hold the labels; persisted names always do", () => {
    let now = 0;
    const labels = new OperationNameLabels({ max: 2, windowMs: 1_000, seeds: ["Persisted"], now: () => now });
    const unlabelled: string[][] = [];
    labels.onUnlabelled((names) => unlabelled.push(names));
    expect(["JunkA", "JunkB", "Real", "Real", "Real"].map((name) => labels.label(name))).toEqual([
      "JunkA",
      "JunkB",
      "other",
      "other",
      "other",
    ]);
    // An error's label does not count.
    for (let index = 0; index < 10; index++) expect(labels.label("JunkB", false)).toBe("JunkB");
    expect(labels.label("JunkA")).toBe("JunkA");
    now = 1_000;
    expect(labels.label("Real")).toBe("Real");
    expect(unlabelled).toEqual([["JunkB"]]);
    expect(labels.label("JunkA")).toBe("JunkA");
    expect(labels.label("Newcomer")).toBe("other");
    now = 2_500;
    expect(labels.label("Real")).toBe("Real");
    expect(labels.label("Persisted")).toBe("Persisted");
    expect(labels.label(undefined)).toBe("Anonymous");
    expect(labels.label(`Long${"x".repeat(64)}`)).toBe("other");
    expect(unlabelled).toEqual([["JunkB"]]);
    // A window with no JunkA: it loses its label.
    now = 3_000;
    expect(labels.label("Newcomer")).toBe("Newcomer");
    expect(unlabelled).toEqual([["JunkB"], ["JunkA"]]);
  });

  it("the heavy-hitters summary keeps a frequent name among a flood of unique ones, and ranks it above them", () => {
    const counts = new HeavyHitters(8);
    for (let index = 0; index < 10_000; index++) {
      counts.add(`Flood${index}`);
      if (index % 5 === 0) counts.add("Frequent");
    }
    expect(counts.size).toBe(8);
    expect(counts.top(1)).toEqual(["Frequent"]);
    counts.clear();
    for (const name of ["A", "B", "B", "C", "C", "C"]) counts.add(name);
    expect(counts.top(2)).toEqual(["C", "B"]);
  });
});

describe.each(TRANSPORTS)("row 13: bounded logs, over %s", (transport) => {
  const client = useClient(transport, () => harness);

  it("row 13: 20 requests with a 95 kB unknown operationName log a few hundred bytes each, each refusal once, and are counted", async () => {
    const before = await metricsText(harness);
    const refused = (text: string) => Number(/gateway_refusals_total\{reason="malformed_request"\} (\d+)/.exec(text)?.[1] ?? 0);
    for (let index = 0; index < 20; index++) {
      const answer = await client.send({
        query: "query Known { __typename }",
        operationName: `U${letters(index)}${"n".repeat(95_000)}`,
      });
      expectAnswer(answer, 400);
      expect(answer.body.errors![0]!.extensions!.code).toBeDefined();
    }
    expect(log.lines.filter((line) => line.includes('"msg":"request refused"'))).toHaveLength(20);
    expect(log.lines.filter((line) => line.includes('"msg":"graphql request"'))).toHaveLength(20);
    for (const line of log.lines) expect(Buffer.byteLength(line)).toBeLessThan(2 * LOGGED_BOUNDS.stringChars);
    expect(log.bytes).toBeLessThan(20 * 1_500);
    expect(refused(await metricsText(harness))).toBe(refused(before) + 20);
    expect(upstreamCalls(harness)).toEqual({});
    const alive = await client.send({ query: "{ __typename }" });
    expect(alive.result).toEqual({ data: { __typename: "Query" } });
  });

  it("row 13: a variable that echoes 90 kB of client input is logged truncated", async () => {
    const answer = await client.send({
      query: "query($n: Int!) { latestBlocks(first: $n) { nodes { blockHash } } }",
      variables: { n: "z".repeat(90_000) },
    });
    expectAnswer(answer, 400);
    const line = log.lines.find((entry) => entry.includes('"msg":"request refused"'));
    expect(line).toContain('"reason":"invalid_variables"');
    expect(Buffer.byteLength(line!)).toBeLessThan(1_000);
  });

  it("issue 25: 1,000 requests that each cause the same unexpected error write a bounded number of lines", async () => {
    const captured = new CapturedLog();
    const failing = (where: "onRequest" | "onExecute") =>
      gatewayOf({}, createLogger("info", {}, captured), {
        plugins: [
          {
            [where]: () => {
              throw new Error(`a bug the request reaches (${where})`);
            },
          },
        ],
      });
    // An HTTP hook's error (the last resort's line), and an error while executing (Yoga's own line).
    for (const where of ["onRequest", "onExecute"] as const) {
      captured.clear();
      const gateway = failing(where);
      const client = over(transport, gateway);
      try {
        for (let index = 0; index < 1_000; index++) {
          const answer = await client.send({ query: `query Q${letters(index)} { __typename }` });
          // A 500 over HTTP and SSE; over a socket, an `error` message.
          expectAnswer(answer, 500);
          expect(answer.body.errors![0]!.extensions!.code).toBe("INTERNAL_SERVER_ERROR");
        }
      } finally {
        await client.close();
        await gateway.close();
      }
      await new Promise((resolve) => setImmediate(resolve));
      const errors = captured.lines
        .map((line) => JSON.parse(line) as { level: number; msg: string; repeated?: number })
        .filter((line) => line.level >= 50);
      // The first line as it was, then at shutdown the count of the others (Yoga logs an error
      // twice per request).
      expect(errors).toHaveLength(2);
      expect(errors[1]!.msg).toMatch(/^\d+ more like this in the last \d+ s: /);
      expect(errors[1]!.repeated).toBeGreaterThanOrEqual(999);
      // One request-log line per request at most: the lines a request pays for.
      expect(captured.lines.length).toBeLessThanOrEqual(1_000 + 2);
    }
  });
});

describe("row 13: bounded logs: the logger's own bounds (no transport's)", () => {
  it("row 13: an unexpected error with a long message, and long values, are logged truncated", async () => {
    const logger = createLogger("info", {}, log);
    logger.error(new Error(`unexpected ${"q".repeat(50_000)}`));
    logger.info(
      {
        deep: { a: { b: { c: { d: { e: 1 } } } } },
        list: Array.from({ length: 1_000 }, (_, index) => index),
        name: "n".repeat(50_000),
      },
      "m".repeat(50_000),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(log.lines).toHaveLength(2);
    for (const entry of log.lines) expect(Buffer.byteLength(entry)).toBeLessThan(4 * LOGGED_BOUNDS.stringChars);
    expect(log.lines[0]).toContain('"type":"Error"');
  });

  it("issue 25: repeated warnings are written once per window, then counted, then written again", async () => {
    const logger = createLogger("info", {}, log);
    const lines = new RepeatedLines(logger, 100);
    const summing = summingRepeats(logger, lines);
    for (let index = 0; index < 50; index++) summing.warn({ index }, "the same warning");
    summing.error(new TypeError("a message a client chose"));
    summing.error(new TypeError("another message a client chose"));
    summing.info("info lines are never summed");
    summing.info("info lines are never summed");
    await new Promise((resolve) => setTimeout(resolve, 150));
    summing.warn({ index: 50 }, "the same warning");
    lines.flush();
    await new Promise((resolve) => setImmediate(resolve));
    const written = log.lines.map((line) => JSON.parse(line) as { msg: string; index?: number; repeated?: number });
    expect(written.map(({ msg }) => msg)).toEqual([
      "the same warning",
      "a message a client chose",
      "info lines are never summed",
      "info lines are never summed",
      expect.stringMatching(/^49 more like this in the last \d+ s: the same warning$/),
      expect.stringMatching(/^1 more like this in the last \d+ s: an unexpected TypeError$/),
      "the same warning",
    ]);
    expect(written[0]!.index).toBe(0);
    expect(written[4]!.repeated).toBe(49);
    expect(written[6]!.index).toBe(50);
  });

  it("row 13: an API key never reaches the log", async () => {
    const logger = createLogger("info", {}, log);
    logger.info({ apiKey: "secret-key", headers: { "x-glacier-api-key": "secret-key" } }, "with a key");
    await new Promise((resolve) => setImmediate(resolve));
    expect(log.lines.join("\n")).not.toContain("secret-key");
  });
});
