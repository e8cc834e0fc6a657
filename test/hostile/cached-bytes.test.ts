/**
 * Row 24: a response-cache hit is sent from bytes the gateway holds, and sending is its work: a
 * hit over 64 KiB pays 1 per 64 KiB sent (`sendingCost`, the 1 every request pays included), as
 * the GraphiQL page does, whether the listener's lane or Yoga finds it. At 1 unit, a cached full
 * introspection (some 300 kB) bought twelve times the CPU of the cheapest query.
 */
import { getIntrospectionQuery } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendingCost } from "../../src/limits/request-costs.ts";
import { send, type RawAnswer } from "../support/raw-answers.ts";
import { serveGateway, startHarness, upstreamCalls, type Harness, type ServedGateway } from "../support/harness.ts";

const BURST = 100;
const INTROSPECTION = JSON.stringify({ query: getIntrospectionQuery() });
const SMALL = JSON.stringify({ query: "{ __typename }" });

let harness: Harness;
let served: ServedGateway;

beforeAll(async () => {
  harness = await startHarness({
    RESPONSE_CACHE_TTL_MS: "60000",
    RATE_LIMIT_RATE: "0.001",
    RATE_LIMIT_BURST: String(BURST),
    TRUST_PROXY: "true",
  });
  served = await serveGateway(harness);
});

afterAll(async () => {
  await served.close();
  await harness.close();
});

const post = (body: string, who: string, headers: Record<string, string> = {}): Promise<RawAnswer> =>
  send(served.port, "POST", "/graphql", { "content-type": "application/json", "x-forwarded-for": who, ...headers }, body);

const remaining = (answer: RawAnswer) => Number(answer.headers["ratelimit-remaining"]);

describe("row 24: a cached answer pays for the bytes it sends", () => {
  it("over HTTP: 1 per 64 KiB sent, compressed or not, and a caller who cannot pay is refused before anything is sent", async () => {
    const who = "192.0.2.41";
    const miss = await post(INTROSPECTION, who);
    expect(miss.status).toBe(200);
    expect(miss.headers["x-response-cache"]).toBeUndefined();
    let left = remaining(miss);

    const hit = await post(INTROSPECTION, who);
    expect(hit.headers["x-response-cache"]).toBe("hit");
    expect(hit.bytes.equals(miss.bytes)).toBe(true);
    const cost = sendingCost(hit.bytes.byteLength);
    expect(hit.bytes.byteLength).toBeGreaterThan(4 * 64 * 1024);
    expect(cost).toBeGreaterThanOrEqual(5);
    expect(remaining(hit)).toBe(left - cost);
    left -= cost;

    // Compressed, it sends less and pays less.
    const compressed = await post(INTROSPECTION, who, { "accept-encoding": "br" });
    expect(compressed.headers["content-encoding"]).toBe("br");
    expect(compressed.headers["x-response-cache"]).toBe("hit");
    expect(remaining(compressed)).toBe(left - sendingCost(compressed.bytes.byteLength));
    left -= sendingCost(compressed.bytes.byteLength);

    // A small hit pays its 1, as before.
    left = remaining(await post(SMALL, who));
    const small = await post(SMALL, who);
    expect(small.headers["x-response-cache"]).toBe("hit");
    left -= 1;
    expect(remaining(small)).toBe(left);

    // Spent down to 1, less than a hit costs (but not dry, which is refused unread): refused with a
    // 429 and the answer's bytes never sent.
    while (left % cost !== 1) {
      left -= 1;
      expect(remaining(await post(SMALL, who))).toBe(left);
    }
    while (left >= cost) {
      const answer = await post(INTROSPECTION, who);
      expect(answer.status).toBe(200);
      left -= cost;
      expect(remaining(answer)).toBe(left);
    }
    const refused = await post(INTROSPECTION, who);
    expect(refused.status).toBe(429);
    const body = JSON.parse(refused.bytes.toString("utf8")) as {
      errors: { message: string; extensions: { code: string; cost: number } }[];
    };
    expect(body.errors[0]!.extensions).toMatchObject({ code: "RATE_LIMITED", cost });
    expect(body.errors[0]!.message).toContain("1 per 64 KiB");
    expect(refused.bytes.byteLength).toBeLessThan(1_000);

    // Another caller is served the same answer from its own budget, and nothing went upstream for any of it.
    const other = await post(INTROSPECTION, "192.0.2.42");
    expect(other.headers["x-response-cache"]).toBe("hit");
    expect(remaining(other)).toBe(BURST - cost);
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("inside Yoga (no listener: yoga.fetch, as a WebSocket's operations are run): the same charge", async () => {
    const fetchFromYoga = () =>
      harness.gateway.yoga.fetch("http://gateway.test/graphql", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: INTROSPECTION,
      });
    const first = await fetchFromYoga();
    await first.arrayBuffer();
    const before = Number(first.headers.get("ratelimit-remaining"));
    const hit = await fetchFromYoga();
    const bytes = Buffer.from(await hit.arrayBuffer());
    expect(hit.headers.get("x-response-cache")).toBe("hit");
    expect(Number(hit.headers.get("ratelimit-remaining"))).toBe(before - sendingCost(bytes.byteLength));
  });
});
