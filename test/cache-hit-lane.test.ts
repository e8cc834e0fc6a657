/**
 * A response-cache hit answered by the listener before Yoga (src/server/cache-hit-lane.ts), over
 * a real socket with rate limiting on: the same bytes and headers a hit answered inside Yoga gets,
 * paid from the caller's buckets, refused when the caller cannot pay or its key was refused,
 * compressed as accept-encoding allows, logged and counted, and no upstream call.
 */
import { Agent, type IncomingHttpHeaders } from "node:http";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../src/telemetry/logger.ts";
import { decodedText, recordingLog, send, type RawAnswer } from "./support/raw-answers.ts";
import { serveGateway, startHarness, upstreamCalls, type Harness, type ServedGateway } from "./support/harness.ts";

type Answer = RawAnswer;

const QUERY = JSON.stringify({ query: `query ChainName { chain(id: "43114") { chainName } }`, operationName: "ChainName" });
// Several kB: over COMPRESSION_MIN_BYTES, so that a hit is compressed.
const LARGE = JSON.stringify({
  query: `{ chains { chainId chainName description blockchainId subnetId vmId vmName explorerUrl rpcUrl } }`,
});
const BURST = 12;
// Over 4 KiB: more than a connection remembers of its last body.
const QUERY_OVER_4_KIB = `{ chains { chainId } }${" ".repeat(4_200)}`;

let harness: Harness;
let served: ServedGateway;
const lines: Record<string, unknown>[] = [];

const post = (body: string, headers: Record<string, string> = {}): Promise<Answer> =>
  send(served.port, "POST", "/graphql", { "content-type": "application/json", ...headers }, body);

/** The same request answered inside Yoga (`yoga.fetch`: no listener, so no lane). */
async function postThroughYoga(body: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await harness.gateway.yoga.fetch("http://gateway.test/graphql", {
    method: "POST",
    headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), ...headers },
    body,
  });
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    bytes: Buffer.from(await response.arrayBuffer()),
  };
}

/** Headers a client could tell apart, without those that differ per answer or per connection. */
function comparable(headers: IncomingHttpHeaders): Record<string, unknown> {
  const {
    date: _date,
    connection: _connection,
    "keep-alive": _keepAlive,
    "x-request-id": _id,
    "ratelimit-remaining": _left,
    ...rest
  } = headers;
  return rest;
}

const hitsCounted = async (): Promise<number> =>
  // From the registry /metrics prints (a scrape costs 10: more than these callers' budgets).
  Number(
    /gateway_response_cache_lookups_total\{result="local"\} (\d+)/.exec(await harness.gateway.metrics.registry.metrics())?.[1] ??
      0,
  );

beforeAll(async () => {
  const log = recordingLog(lines);
  const logger = createLogger("info", {}, log);
  harness = await startHarness(
    {
      RESPONSE_CACHE_TTL_MS: "60000",
      RATE_LIMIT_RATE: "0.001",
      RATE_LIMIT_BURST: String(BURST),
      TRUST_PROXY: "true",
      MAX_CONNECTIONS_PER_ADDRESS: "0",
    },
    { logger },
  );
  served = await serveGateway(harness, logger);
});

afterAll(async () => {
  await served.close();
  await harness.close();
});

let caller = 0;
/** A fresh caller (its own address behind the trusted proxy), with a full budget. */
const freshCaller = () => ({ "x-forwarded-for": `10.0.${Math.floor(++caller / 250)}.${caller % 250}` });

beforeEach(() => {
  harness.simulator.resetCounters();
  lines.length = 0;
});

describe("a response-cache hit answered before Yoga", () => {
  it("answers the bytes and headers a hit inside Yoga answers, with no upstream call, logged and counted", async () => {
    const who = freshCaller();
    const miss = await post(QUERY, who);
    expect(miss.status).toBe(200);
    expect(miss.headers["x-response-cache"]).toBeUndefined();
    expect(upstreamCalls(harness)).not.toEqual({});
    harness.simulator.resetCounters();
    const countedBefore = await hitsCounted();

    const hit = await post(QUERY, { ...who, "x-request-id": "lane-hit-1" });
    const viaYoga = await postThroughYoga(QUERY, { ...who, "x-request-id": "yoga-hit-1" });
    expect(upstreamCalls(harness)).toEqual({});
    expect(hit.status).toBe(200);
    expect(hit.headers["x-response-cache"]).toBe("hit");
    expect(hit.headers["x-request-id"]).toBe("lane-hit-1");
    expect(viaYoga.headers["x-response-cache"]).toBe("hit");
    expect(hit.bytes.equals(miss.bytes)).toBe(true);
    expect(hit.bytes.equals(viaYoga.bytes)).toBe(true);
    expect(comparable(hit.headers)).toEqual(comparable(viaYoga.headers));
    // Paid: 1 for the hit, from the same address bucket as the miss.
    expect(Number(hit.headers["ratelimit-remaining"])).toBe(Number(miss.headers["ratelimit-remaining"]) - 1);
    expect(await hitsCounted()).toBe(countedBefore + 2);

    const line = lines.find((entry) => entry.requestId === "lane-hit-1");
    expect(line).toMatchObject({ msg: "graphql request", method: "POST", operation: "ChainName", status: 200, level: 30 });
    expect(typeof line!.ms).toBe("number");
  });

  it("is compressed as accept-encoding allows (br, gzip, none), each decoding to the same answer", async () => {
    const who = freshCaller();
    const plain = await post(LARGE, who);
    expect(plain.status).toBe(200);
    harness.simulator.resetCounters();
    for (const encoding of ["br", "gzip"] as const) {
      const hit = await post(LARGE, { ...who, "accept-encoding": encoding });
      expect(hit.headers["x-response-cache"]).toBe("hit");
      expect(hit.headers["content-encoding"]).toBe(encoding);
      expect(hit.headers.vary).toBe("accept-encoding");
      expect(Number(hit.headers["content-length"])).toBe(hit.bytes.byteLength);
      expect(hit.bytes.byteLength).toBeLessThan(plain.bytes.byteLength);
      expect(decodedText(hit)).toBe(plain.bytes.toString("utf8"));
      const viaYoga = await postThroughYoga(LARGE, { ...who, "accept-encoding": encoding });
      expect(comparable(hit.headers)).toEqual(comparable(viaYoga.headers));
    }
    const identity = await post(LARGE, who);
    expect(identity.headers["content-encoding"]).toBeUndefined();
    expect(identity.headers["x-response-cache"]).toBe("hit");
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("charges each hit to its caller, and refuses a caller that cannot pay with the 429 of any refusal, not the answer", async () => {
    const who = freshCaller();
    expect((await post(QUERY, who)).status).toBe(200);
    const remaining: number[] = [];
    let refused: Answer | undefined;
    for (let attempt = 0; attempt < BURST + 2 && !refused; attempt += 1) {
      const answer = await post(QUERY, who);
      if (answer.status === 200) remaining.push(Number(answer.headers["ratelimit-remaining"]));
      else refused = answer;
    }
    // One a hit: BURST - 1 left after the miss, then one less each.
    expect(remaining).toEqual(Array.from({ length: BURST - 1 }, (_, index) => BURST - 2 - index));
    expect(refused!.status).toBe(429);
    expect(refused!.headers["retry-after"]).toBeDefined();
    expect(JSON.parse(refused!.bytes.toString("utf8")).errors[0].extensions.code).toBe("RATE_LIMITED");
    // Another caller is served the same answer from its own budget.
    const other = await post(QUERY, freshCaller());
    expect(other.headers["x-response-cache"]).toBe("hit");
    expect(Number(other.headers["ratelimit-remaining"])).toBe(BURST - 1);
  });

  it("keeps callers with different API keys apart, and never serves a key the upstream refused lately", async () => {
    harness.simulator.setKnobs({ apiKeys: ["key-a", "key-b"] });
    try {
      const who = freshCaller();
      const a = await post(QUERY, { ...who, "x-glacier-api-key": "key-a" });
      expect(a.status).toBe(200);
      harness.simulator.resetCounters();
      // Another key is another cache entry: a miss, whose call goes upstream with its key.
      const b = await post(QUERY, { ...who, "x-glacier-api-key": "key-b" });
      expect(b.headers["x-response-cache"]).toBeUndefined();
      expect(upstreamCalls(harness)).not.toEqual({});
      expect((await post(QUERY, { ...who, "x-glacier-api-key": "key-b" })).headers["x-response-cache"]).toBe("hit");

      // key-b is revoked upstream; its next call (a query not held) is refused, and from then on
      // its held answer is not served either.
      harness.simulator.setKnobs({ apiKeys: ["key-a"] });
      const revoked = await post(JSON.stringify({ query: `{ chain(id: "43114") { block(id: "501") { blockNumber } } }` }), {
        ...who,
        "x-glacier-api-key": "key-b",
      });
      expect(JSON.parse(revoked.bytes.toString("utf8")).errors[0].extensions.code).toBe("FORBIDDEN");
      harness.simulator.resetCounters();
      const refused = await post(QUERY, { ...who, "x-glacier-api-key": "key-b" });
      expect(refused.status).toBe(403);
      expect(refused.headers["x-response-cache"]).toBeUndefined();
      expect(JSON.parse(refused.bytes.toString("utf8")).errors[0].extensions.code).toBe("FORBIDDEN");
      expect(upstreamCalls(harness)).toEqual({});
      expect((await post(QUERY, { ...who, "x-glacier-api-key": "key-a" })).headers["x-response-cache"]).toBe("hit");
      expect(lines.some((entry) => JSON.stringify(entry).includes("key-b"))).toBe(false);
    } finally {
      harness.simulator.setKnobs({ apiKeys: null });
    }
  });

  it("leaves a browser's request (Origin) to Yoga, which adds its CORS headers to the same hit", async () => {
    const who = freshCaller();
    await post(QUERY, who);
    const hit = await post(QUERY, { ...who, origin: "https://explorer.example" });
    expect(hit.headers["x-response-cache"]).toBe("hit");
    expect(hit.headers["access-control-allow-origin"]).toBe("https://explorer.example");
  });

  it("refuses a body over MAX_BODY_BYTES before reading it, whatever is held", async () => {
    const who = freshCaller();
    await post(QUERY, who);
    const padded = QUERY.replace("{", `{${" ".repeat(harness.config.security.maxBodyBytes)}`);
    const answer = await post(padded, who);
    expect(answer.status).toBe(413);
    expect(answer.headers["x-response-cache"]).toBeUndefined();
  });
});

describe("one keep-alive connection that changes what it sends", () => {
  // One connection, reused for every request: what it sent last is remembered with its key and
  // its buckets, and each request must still be answered and charged as what it is.
  let agent: Agent;
  const postOnOne = (body: string, headers: Record<string, string>): Promise<Answer> =>
    send(served.port, "POST", "/graphql", { "content-type": "application/json", ...headers }, body, agent);

  beforeEach(() => {
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
  });
  afterEach(() => agent.destroy());

  it("is answered for its own key, Accept and body, never from what the request before it worked out", async () => {
    harness.simulator.setKnobs({ apiKeys: ["key-a", "key-e"] });
    try {
      const who = freshCaller();
      const a = await postOnOne(QUERY, { ...who, "x-glacier-api-key": "key-a" });
      expect(a.status).toBe(200);
      expect((await postOnOne(QUERY, { ...who, "x-glacier-api-key": "key-a" })).headers["x-response-cache"]).toBe("hit");
      harness.simulator.resetCounters();

      // The same bytes with another key: that key's own entry, a miss that calls upstream.
      const b = await postOnOne(QUERY, { ...who, "x-glacier-api-key": "key-e" });
      expect(b.headers["x-response-cache"]).toBeUndefined();
      expect(upstreamCalls(harness)).not.toEqual({});

      // The same bytes and key with another Accept: another entry, in its own media type.
      const media = await postOnOne(QUERY, { ...who, "x-glacier-api-key": "key-a", accept: "application/graphql-response+json" });
      expect(media.headers["x-response-cache"]).toBeUndefined();
      expect(media.headers["content-type"]).toContain("application/graphql-response+json");
      const json = await postOnOne(QUERY, { ...who, "x-glacier-api-key": "key-a", accept: "application/json" });
      expect(json.headers["content-type"]).toContain("application/json");

      // A body of the same length that differs in one byte: its own answer.
      const fuji = QUERY.replace("43114", "43113");
      expect(fuji).not.toBe(QUERY);
      expect(fuji.length).toBe(QUERY.length);
      const other = await postOnOne(fuji, { ...who, "x-glacier-api-key": "key-a" });
      expect(other.headers["x-response-cache"]).toBeUndefined();
      expect(other.bytes.equals(a.bytes)).toBe(false);
      const again = await postOnOne(QUERY, { ...who, "x-glacier-api-key": "key-a" });
      expect(again.headers["x-response-cache"]).toBe("hit");
      expect(again.bytes.equals(a.bytes)).toBe(true);

      // A body larger than a connection remembers is keyed afresh each time, and still hit.
      const large = JSON.stringify({ query: QUERY_OVER_4_KIB });
      const stranger = freshCaller();
      expect((await postOnOne(large, stranger)).status).toBe(200);
      expect((await postOnOne(large, stranger)).headers["x-response-cache"]).toBe("hit");

      const ports = new Set([a, b, media, json, other, again].map((answer) => answer.localPort));
      expect(ports.size).toBe(1);
    } finally {
      harness.simulator.setKnobs({ apiKeys: null });
    }
  });

  it("charges each request to the buckets of the key and proxy hop it sends, as they change", async () => {
    harness.simulator.setKnobs({ apiKeys: ["key-c", "key-d"] });
    try {
      const [hop1, hop2, hop3] = [freshCaller(), freshCaller(), freshCaller()];
      // Each key's answer held first, over other connections: every request below is a hit, costing 1.
      const held: Record<string, number> = {};
      for (const key of ["key-c", "key-d"]) {
        const primed = await post(QUERY, { ...freshCaller(), "x-glacier-api-key": key });
        expect(primed.status).toBe(200);
        // What the key's bucket holds now (the new hop's holds as much).
        held[key] = Number(primed.headers["ratelimit-remaining"]);
      }
      const remaining = async (headers: Record<string, string>) => {
        const answer = await postOnOne(QUERY, headers);
        expect(answer.headers["x-response-cache"]).toBe("hit");
        return { left: Number(answer.headers["ratelimit-remaining"]), port: answer.localPort };
      };
      const [c, d] = [held["key-c"]!, held["key-d"]!];
      // Each answer tells the emptier of the key's bucket and the hop's.
      const steps = [
        await remaining({ ...hop1, "x-glacier-api-key": "key-c" }), // key-c c-1, hop1 11
        await remaining({ ...hop1, "x-glacier-api-key": "key-c" }), // key-c c-2, hop1 10
        await remaining({ ...hop2, "x-glacier-api-key": "key-c" }), // key-c c-3, hop2 11
        await remaining({ ...hop3, "x-glacier-api-key": "key-d" }), // key-d d-1, hop3 11
        await remaining(hop3), // hop3 10
        await remaining({ ...hop1, "x-glacier-api-key": "key-c" }), // key-c c-4, hop1 9
      ];
      expect(steps.map((step) => step.left)).toEqual([
        Math.min(c - 1, BURST - 1),
        Math.min(c - 2, BURST - 2),
        Math.min(c - 3, BURST - 1),
        Math.min(d - 1, BURST - 1),
        BURST - 2,
        Math.min(c - 4, BURST - 3),
      ]);
      expect(new Set(steps.map((step) => step.port)).size).toBe(1);
    } finally {
      harness.simulator.setKnobs({ apiKeys: null });
    }
  });
});

describe("identical requests that miss together", () => {
  it("are executed once: the others wait and are answered with what it stored, each paying as a hit", async () => {
    harness.simulator.setKnobs({ latencyMs: 150 });
    try {
      const who = freshCaller();
      const body = JSON.stringify({ query: `{ chain(id: "43114") { block(id: "777") { blockNumber blockHash } } }` });
      const answers = await Promise.all(Array.from({ length: 8 }, () => post(body, who)));
      expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(200));
      expect(new Set(answers.map((answer) => answer.bytes.toString("utf8"))).size).toBe(1);
      expect(answers.filter((answer) => answer.headers["x-response-cache"] === "hit")).toHaveLength(7);
      // One execution's calls: the block, once.
      expect(Object.values(upstreamCalls(harness)).reduce((sum, count) => sum + count, 0)).toBe(1);
    } finally {
      harness.simulator.setKnobs({ latencyMs: 0 });
    }
  });

  it("execute themselves when the first stored nothing (its answer had errors)", async () => {
    harness.simulator.setKnobs({ latencyMs: 150, errorRate: 1 });
    try {
      const who = freshCaller();
      const body = JSON.stringify({ query: `{ chain(id: "43114") { block(id: "778") { blockNumber } } }` });
      const answers = await Promise.all(Array.from({ length: 3 }, () => post(body, who)));
      expect(answers.every((answer) => answer.headers["x-response-cache"] === undefined)).toBe(true);
      expect(answers.every((answer) => JSON.parse(answer.bytes.toString("utf8")).errors?.length > 0)).toBe(true);
    } finally {
      harness.simulator.setKnobs({ latencyMs: 0, errorRate: 0 });
    }
  });
});
