/**
 * The operation lane (src/server/operation-lane.ts): a known query executed by the listener past
 * Yoga's HTTP layer, over a real socket with rate limiting on. Each answer is held to the one a
 * twin gateway without the lane (OPERATION_LANE=false) gives to the same requests in the same
 * order: status, body and headers, whatever the answer holds (data, a field's upstream failure, a
 * refusal at execution, a deadline), compressed as accepted; with the same upstream calls and
 * budget, logged and counted. What the lane does not take reaches Yoga as it came.
 */
import type { IncomingHttpHeaders } from "node:http";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../src/telemetry/logger.ts";
import { decodedText, recordingLog, send, type RawAnswer } from "./support/raw-answers.ts";
import { serveGateway, startHarness, upstreamCalls, type Harness, type ServedGateway } from "./support/harness.ts";

interface Side {
  harness: Harness;
  served: ServedGateway;
  lines: Record<string, unknown>[];
}

const BURST = 60;
const ENV = {
  RATE_LIMIT_RATE: "0.001",
  RATE_LIMIT_BURST: String(BURST),
  RATE_LIMIT_ADDRESS_BURST: String(BURST),
  RATE_LIMIT_ADDRESS_RATE: "0.001",
  TRUST_PROXY: "true",
  MAX_CONNECTIONS_PER_ADDRESS: "0",
  REQUEST_TIMEOUT_MS: "400",
  // A 429 waits this long on its connection before it is sent, over the lane as through Yoga.
  REFUSAL_HOLD_MS: "150",
};

const BLOCKS = `query LatestBlocks($first: Int!) {
  latestBlocks(first: $first) { edges { cursor node { blockNumber blockHash txCount chain { chainId chainName } parent { blockHash } } } pageInfo { hasNextPage endCursor } }
}`;
const CHAINS = `query Chains { chains { chainId chainName description blockchainId subnetId vmId vmName explorerUrl rpcUrl } }`;
const CHAIN = `query Chain($id: ID!) { chain(id: $id) { chainId chainName blocks(first: 2) { edges { node { blockNumber txCount } } } } }`;

let lane: Side;
let yoga: Side;

async function side(env: Record<string, string>): Promise<Side> {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger("info", {}, recordingLog(lines));
  const harness = await startHarness({ ...ENV, ...env }, { logger });
  return { harness, served: await serveGateway(harness, logger), lines };
}

const post = (to: Side, body: unknown, headers: Record<string, string> = {}): Promise<RawAnswer> =>
  send(to.served.port, "POST", "/graphql", { "content-type": "application/json", ...headers }, JSON.stringify(body));

/** The same request to both gateways, the lane's first. */
async function both(body: unknown, headers: Record<string, string> = {}) {
  const viaLane = await post(lane, body, headers);
  const viaYoga = await post(yoga, body, headers);
  return { viaLane, viaYoga };
}

/** Headers a client could tell apart, without those that differ per answer or per connection. */
function comparable(headers: IncomingHttpHeaders): Record<string, unknown> {
  const { date: _date, connection: _connection, "keep-alive": _keepAlive, "x-request-id": _id, ...rest } = headers;
  return rest;
}

function expectAlike({ viaLane, viaYoga }: { viaLane: RawAnswer; viaYoga: RawAnswer }): void {
  expect(viaLane.status).toBe(viaYoga.status);
  expect(comparable(viaLane.headers)).toEqual(comparable(viaYoga.headers));
  expect(decodedText(viaLane)).toBe(decodedText(viaYoga));
}

async function laneCount(outcome: "executed" | "handed_on"): Promise<number> {
  const text = await lane.harness.gateway.metrics.registry.metrics();
  return Number(new RegExp(`gateway_operation_lane_requests_total\\{outcome="${outcome}"\\} (\\d+)`).exec(text)?.[1] ?? 0);
}

let callers = 0;
/** A fresh caller (its own address behind the trusted proxy), with a full budget on both gateways. */
const freshCaller = () => ({ "x-forwarded-for": `10.1.${Math.floor(++callers / 250)}.${callers % 250}` });

/** Runs `body` once on both so that its document is known (parsed and validated) to each. */
async function known(body: unknown): Promise<void> {
  const warm = await both(body, freshCaller());
  expect(warm.viaLane.status).toBe(warm.viaYoga.status);
}

beforeAll(async () => {
  [lane, yoga] = await Promise.all([side({}), side({ OPERATION_LANE: "false" })]);
});

afterAll(async () => {
  for (const { served, harness } of [lane, yoga]) {
    await served.close();
    await harness.close();
  }
});

beforeEach(() => {
  for (const { harness, lines } of [lane, yoga]) {
    harness.simulator.setKnobs({ latencyMs: 0, errorRate: 0, errorRoutes: [], errorStatus: 500 });
    harness.simulator.resetCounters();
    lines.length = 0;
  }
});

describe("a known query executed by the listener", () => {
  it("answers as Yoga does, with the same upstream calls and budget, logged and counted", async () => {
    const body = { query: BLOCKS, variables: { first: 5 }, operationName: "LatestBlocks" };
    await known(body);
    for (const { harness } of [lane, yoga]) harness.simulator.resetCounters();
    const executed = await laneCount("executed");
    const who = freshCaller();
    const answers = await both(body, { ...who, "x-request-id": "lane-known-1" });
    expect(await laneCount("executed")).toBe(executed + 1);
    expectAlike(answers);
    expect(answers.viaLane.status).toBe(200);
    expect(JSON.parse(decodedText(answers.viaLane)).data.latestBlocks.edges).toHaveLength(5);
    expect(upstreamCalls(lane.harness)).toEqual(upstreamCalls(yoga.harness));
    expect(Number(answers.viaLane.headers["ratelimit-remaining"])).toBeLessThan(BURST - 1);
    expect(answers.viaLane.headers["x-request-id"]).toBe("lane-known-1");
    const line = lane.lines.find((entry) => entry.requestId === "lane-known-1");
    expect(line).toMatchObject({ msg: "graphql request", method: "POST", operation: "LatestBlocks", status: 200, level: 30 });
    expect(Object.keys(line!).sort()).toEqual(
      Object.keys(yoga.lines.find((entry) => entry.requestId === "lane-known-1")!).sort(),
    );
  });

  it("answers a field's upstream failure as Yoga does: 200, the data that could be had, the field's error", async () => {
    const body = { query: CHAIN, variables: { id: "43114" } };
    await known(body);
    for (const { harness } of [lane, yoga])
      harness.simulator.setKnobs({ errorRate: 1, errorStatus: 503, errorRoutes: ["GET /v1/chains/{chainId}/blocks"] });
    const executed = await laneCount("executed");
    const answers = await both(body, freshCaller());
    expect(await laneCount("executed")).toBe(executed + 1);
    expectAlike(answers);
    const answer = JSON.parse(decodedText(answers.viaLane));
    expect(answer.data.chain.chainName).toBeTruthy();
    expect(answer.errors[0].extensions.code).toBe("UPSTREAM_UNAVAILABLE");
  });

  it("answers a request's deadline as Yoga does: its upstream calls end there, with the data that could be had", async () => {
    const body = { query: CHAIN, variables: { id: "43114" } };
    await known(body);
    for (const { harness } of [lane, yoga]) harness.simulator.setKnobs({ latencyMs: 900 });
    const answers = await both(body, freshCaller());
    expectAlike(answers);
    expect(JSON.parse(decodedText(answers.viaLane)).errors[0].message).toMatch(/deadline passed/);
  });

  it("refuses at execution as Yoga does: 429 with Retry-After when the caller cannot pay the operation, counted and logged", async () => {
    // Seven pages, 7 a request: the budget falls to 4, and the next request's 1 leaves 3 for the 6 it owes.
    const pages = ["a", "b", "c", "d", "e", "f", "g"].map(
      (alias) => `${alias}: latestBlocks(first: 5) { edges { node { blockHash } } }`,
    );
    const body = { query: `{ ${pages.join(" ")} }` };
    await known(body);
    const who = freshCaller();
    const executed = await laneCount("executed");
    let last: { viaLane: RawAnswer; viaYoga: RawAnswer } | undefined;
    let tookMs = 0;
    for (let sent = 0; sent < BURST && last?.viaLane.status !== 429; sent += 1) {
      const started = performance.now();
      last = await both(body, { ...who, "x-request-id": `lane-spent-${sent}` });
      tookMs = performance.now() - started;
      expectAlike(last);
    }
    expect(last!.viaLane.status).toBe(429);
    // Held on both gateways' connections.
    expect(tookMs).toBeGreaterThanOrEqual(300);
    expect(last!.viaLane.headers["retry-after"]).toBeDefined();
    expect(await laneCount("executed")).toBeGreaterThan(executed);
    const refusedLine = lane.lines.find((entry) => entry.msg === "request refused");
    expect(refusedLine).toMatchObject({ status: 429, reason: "rate_limited", code: "RATE_LIMITED" });
    expect(yoga.lines.find((entry) => entry.msg === "request refused")).toMatchObject({ status: 429, reason: "rate_limited" });
  });

  it("compresses as accept-encoding allows: the bytes Yoga sends", async () => {
    const body = { query: CHAINS };
    await known(body);
    for (const encoding of ["br", "gzip", "identity"]) {
      const answers = await both(body, { ...freshCaller(), "accept-encoding": encoding });
      expectAlike(answers);
      expect(answers.viaLane.bytes.equals(answers.viaYoga.bytes)).toBe(true);
      expect(answers.viaLane.headers["content-encoding"]).toBe(encoding === "identity" ? undefined : encoding);
    }
  });

  it("answers in the media type asked for, as Yoga does", async () => {
    const body = { query: CHAINS };
    await known(body);
    for (const accept of ["application/graphql-response+json", "application/json", "*/*"]) {
      const answers = await both(body, { ...freshCaller(), accept });
      expectAlike(answers);
    }
  });
});

describe("what the lane leaves to Yoga", () => {
  const cases: [string, unknown, Record<string, string>][] = [
    ["a mutation", { query: `mutation { __typename }` }, {}],
    ["a browser's request (Origin)", { query: CHAINS }, { origin: "https://explorer.example" }],
    ["a request for an event stream", { query: CHAINS }, { accept: "text/event-stream" }],
    ["a body with extensions", { query: CHAINS, extensions: { tag: 1 } }, {}],
    ["an unknown body key", { query: CHAINS, unknown: true }, {}],
    ["a long operation name, which costs more than the 1", { query: CHAINS, operationName: "x".repeat(1_200) }, {}],
    ["a document that does not validate", { query: `{ chains { noSuchField } }` }, {}],
  ];

  const taken = async () => (await laneCount("executed")) + (await laneCount("handed_on"));

  /** Sends `body` to both as a stranger would, and holds the two answers alike but for request ids. */
  async function leftToYoga(body: unknown, headers: Record<string, string>): Promise<void> {
    const before = await taken();
    const answers = await both(body, { ...freshCaller(), ...headers });
    expect(await taken()).toBe(before);
    expect(answers.viaLane.status).toBe(answers.viaYoga.status);
    expect(decodedText(answers.viaLane).replace(/"requestId":"[^"]*"/g, "")).toBe(
      decodedText(answers.viaYoga).replace(/"requestId":"[^"]*"/g, ""),
    );
  }

  it.each(cases)("%s, sent again", async (_what, body, headers) => {
    await known({ query: CHAINS });
    await both(body, freshCaller());
    await leftToYoga(body, headers);
  });

  it("a document sent for the first time", async () => {
    await leftToYoga({ query: `{ first${callers}: chains { chainId } }` }, {});
  });

  it("a caller whose budget is spent: refused before its body is read, as through Yoga", async () => {
    const body = { query: CHAINS };
    await known(body);
    const who = freshCaller();
    let last: { viaLane: RawAnswer; viaYoga: RawAnswer } | undefined;
    for (let sent = 0; sent <= BURST && last?.viaLane.status !== 429; sent += 1) {
      last = await both(body, who);
      expect(last.viaLane.status).toBe(last.viaYoga.status);
      expect(last.viaLane.headers["ratelimit-remaining"]).toBe(last.viaYoga.headers["ratelimit-remaining"]);
    }
    expect(last!.viaLane.status).toBe(429);
    expectAlike(last!);
  });
});

describe("with the response cache on", () => {
  let cached: Side;
  beforeAll(async () => {
    cached = await side({ RESPONSE_CACHE_TTL_MS: "60000" });
  });
  afterAll(async () => {
    await cached.served.close();
    await cached.harness.close();
  });

  it("stores what it executed: the next identical request is a hit, with no upstream call", async () => {
    const who = freshCaller();
    const first = { query: CHAIN, variables: { id: "43114" } };
    await post(cached, first, who);
    const executed = Number(
      /gateway_operation_lane_requests_total\{outcome="executed"\} (\d+)/.exec(
        await cached.harness.gateway.metrics.registry.metrics(),
      )?.[1] ?? 0,
    );
    const other = { query: CHAIN, variables: { id: "43113" } };
    const miss = await post(cached, other, who);
    expect(miss.headers["x-response-cache"]).toBeUndefined();
    const text = await cached.harness.gateway.metrics.registry.metrics();
    expect(Number(/gateway_operation_lane_requests_total\{outcome="executed"\} (\d+)/.exec(text)?.[1])).toBe(executed + 1);
    cached.harness.simulator.resetCounters();
    const hit = await post(cached, other, who);
    expect(hit.headers["x-response-cache"]).toBe("hit");
    expect(hit.bytes.equals(miss.bytes)).toBe(true);
    expect(upstreamCalls(cached.harness)).toEqual({});
  });

  it("executes identical requests that miss together once", async () => {
    const who = freshCaller();
    const body = { query: CHAIN, variables: { id: "173750" } };
    await post(cached, { query: CHAIN, variables: { id: "43113" } }, who);
    cached.harness.simulator.setKnobs({ latencyMs: 100 });
    cached.harness.simulator.resetCounters();
    const answers = await Promise.all([post(cached, body, who), post(cached, body, who), post(cached, body, who)]);
    cached.harness.simulator.setKnobs({ latencyMs: 0 });
    expect(new Set(answers.map((answer) => decodedText(answer))).size).toBe(1);
    const calls = upstreamCalls(cached.harness);
    expect(Object.values(calls).every((count) => count === 1)).toBe(true);
  });
});
