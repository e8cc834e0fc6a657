/** Compressed answers over a real listening server: what a browser or a client with accept-encoding gets. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveGateway, stopServed, type Served } from "./hostile/raw-http.ts";
import { decodedText, send, type RawAnswer } from "./support/raw-answers.ts";

function decoded(answer: RawAnswer): string {
  expect([undefined, "br", "gzip"]).toContain(answer.headers["content-encoding"]);
  return decodedText(answer);
}

// Every field of every chain: an answer of several kB.
const LARGE_QUERY = `{ chains { chainId chainName description blockchainId subnetId vmId vmName explorerUrl rpcUrl isTestnet networkToken { name symbol decimals } } }`;
const SMALL_QUERY = `{ chain(id: "43114") { chainName } }`;

const postQuery = (served: Served, query: string, headers: Record<string, string> = {}) =>
  send(
    served.port,
    "POST",
    "/graphql",
    { "content-type": "application/json", accept: "application/json", ...headers },
    JSON.stringify({ query }),
  );

describe("compression", () => {
  let served: Served;
  beforeAll(async () => {
    served = await serveGateway({ RATE_LIMIT: "false" });
  });
  afterAll(async () => {
    await stopServed(served);
  });

  it(
    "sends the GraphiQL page brotli-compressed to a browser that accepts br, the same page much smaller",
    { timeout: 30_000 },
    async () => {
      const page = (encoding?: string) =>
        send(served.port, "GET", "/graphql", { accept: "text/html", ...(encoding ? { "accept-encoding": encoding } : {}) });
      const plain = await page();
      expect(plain.status).toBe(200);
      expect(plain.headers["content-encoding"]).toBeUndefined();
      expect(plain.headers.vary).toMatch(/accept-encoding/i);
      expect(plain.bytes.byteLength).toBeGreaterThan(1_000_000);

      const br = await page("gzip, deflate, br");
      expect(br.headers["content-encoding"]).toBe("br");
      expect(br.headers.vary).toMatch(/accept-encoding/i);
      expect(Number(br.headers["content-length"])).toBe(br.bytes.byteLength);
      expect(br.bytes.byteLength).toBeLessThan(plain.bytes.byteLength / 3);
      expect(decoded(br)).toBe(plain.bytes.toString("utf8"));

      // Compressed once: the second view is the same bytes, sent without compressing again.
      const started = performance.now();
      const again = await page("br");
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(again.bytes.equals(br.bytes)).toBe(true);

      const gzip = await page("gzip");
      expect(gzip.headers["content-encoding"]).toBe("gzip");
      expect(decoded(gzip)).toBe(plain.bytes.toString("utf8"));
    },
  );

  it("gzips a large query answer for a client that accepts gzip only", async () => {
    const plain = await postQuery(served, LARGE_QUERY);
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.bytes.byteLength).toBeGreaterThan(2_048);
    const gzip = await postQuery(served, LARGE_QUERY, { "accept-encoding": "gzip" });
    expect(gzip.status).toBe(200);
    expect(gzip.headers["content-encoding"]).toBe("gzip");
    expect(gzip.headers.vary).toMatch(/accept-encoding/i);
    expect(gzip.bytes.byteLength).toBeLessThan(plain.bytes.byteLength);
    const body = JSON.parse(decoded(gzip)) as { data: { chains: unknown[] }; errors?: unknown };
    expect(body.errors).toBeUndefined();
    expect(body).toEqual(JSON.parse(plain.bytes.toString("utf8")));
  });

  it("prefers br, honours q-values, and sends identity without accept-encoding or when the client refuses both", async () => {
    expect((await postQuery(served, LARGE_QUERY, { "accept-encoding": "gzip, br" })).headers["content-encoding"]).toBe("br");
    expect((await postQuery(served, LARGE_QUERY, { "accept-encoding": "br;q=0.5, gzip" })).headers["content-encoding"]).toBe(
      "gzip",
    );
    expect(
      (await postQuery(served, LARGE_QUERY, { "accept-encoding": "br;q=0, gzip;q=0" })).headers["content-encoding"],
    ).toBeUndefined();
    const identity = await postQuery(served, LARGE_QUERY, { "accept-encoding": "identity" });
    expect(identity.headers["content-encoding"]).toBeUndefined();
    expect(JSON.parse(identity.bytes.toString("utf8"))).toMatchObject({ data: { chains: expect.any(Array) } });
  });

  it("sends a small answer as it is", async () => {
    const small = await postQuery(served, SMALL_QUERY, { "accept-encoding": "br, gzip" });
    expect(small.bytes.byteLength).toBeLessThan(1_024);
    expect(small.headers["content-encoding"]).toBeUndefined();
    expect(JSON.parse(small.bytes.toString("utf8"))).toEqual({ data: { chain: { chainName: expect.any(String) } } });
  });

  it("never compresses a server-sent event stream, however large its events", async () => {
    const stream = await postQuery(served, LARGE_QUERY, { accept: "text/event-stream", "accept-encoding": "br, gzip" });
    expect(stream.headers["content-type"]).toMatch(/^text\/event-stream/);
    // Yoga marks its streams `none`, so that proxies do not buffer them either.
    expect([undefined, "none"]).toContain(stream.headers["content-encoding"]);
    const text = stream.bytes.toString("utf8");
    expect(text.length).toBeGreaterThan(2_048);
    expect(text).toMatch(/^event: next\ndata: \{"data":\{"chains":\[/m);
  });
});

describe("compression with the response cache", () => {
  let served: Served;
  beforeAll(async () => {
    served = await serveGateway({ RATE_LIMIT: "false", RESPONSE_CACHE_TTL_MS: "60000" });
  });
  afterAll(async () => {
    await stopServed(served);
  });

  it("answers a hit compressed, the same answer as the miss", async () => {
    const miss = await postQuery(served, LARGE_QUERY, { "accept-encoding": "br" });
    expect(miss.headers["x-response-cache"]).toBeUndefined();
    expect(miss.headers["content-encoding"]).toBe("br");
    for (let i = 0; i < 2; i += 1) {
      const hit = await postQuery(served, LARGE_QUERY, { "accept-encoding": "br" });
      expect(hit.headers["x-response-cache"]).toBe("hit");
      expect(hit.headers["content-encoding"]).toBe("br");
      expect(hit.headers.vary).toMatch(/accept-encoding/i);
      expect(JSON.parse(decoded(hit))).toEqual(JSON.parse(decoded(miss)));
    }
    const plainHit = await postQuery(served, LARGE_QUERY);
    expect(plainHit.headers["x-response-cache"]).toBe("hit");
    expect(plainHit.headers["content-encoding"]).toBeUndefined();
    expect(JSON.parse(plainHit.bytes.toString("utf8"))).toEqual(JSON.parse(decoded(miss)));
  });
});

describe("COMPRESSION=false", () => {
  it("sends every answer as it is", async () => {
    const served = await serveGateway({ RATE_LIMIT: "false", COMPRESSION: "false" });
    try {
      const answer = await postQuery(served, LARGE_QUERY, { "accept-encoding": "br, gzip" });
      expect(answer.headers["content-encoding"]).toBeUndefined();
      expect(JSON.parse(answer.bytes.toString("utf8"))).toMatchObject({ data: { chains: expect.any(Array) } });
    } finally {
      await stopServed(served);
    }
  });
});
