/** The GraphiQL page: sent from bytes made once, with validators a browser keeps, and paid for by the bytes sent. */
import { gunzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { SENT_BYTES_PER_UNIT, sendingCost } from "../src/limits/request-costs.ts";
import { startHarness, type Harness } from "./support/harness.ts";

let harness: Harness | undefined;

async function start(env: Record<string, string> = {}): Promise<Harness> {
  // Refills so slowly that no test sees a token come back.
  harness = await startHarness({ RATE_LIMIT_RATE: "0.001", ...env });
  return harness;
}

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const view = (gateway: Harness, headers: Record<string, string> = {}) =>
  gateway.gateway.yoga.fetch("http://gateway.test/graphql", { headers: { accept: "text/html", ...headers } });
const remaining = (response: Response) => Number(response.headers.get("ratelimit-remaining"));

describe("the GraphiQL page", () => {
  it("costs 1 per 64 KiB sent: a 304 costs 1, the 9 MB page about 140", () => {
    expect(SENT_BYTES_PER_UNIT).toBe(65_536);
    expect(sendingCost(0)).toBe(1);
    expect(sendingCost(65_536)).toBe(1);
    expect(sendingCost(65_537)).toBe(2);
    expect(sendingCost(9_000_000)).toBe(138);
  });

  it("is sent with a strong ETag per encoding and a Cache-Control a browser keeps it by, and charged its bytes", async () => {
    const gateway = await start({ RATE_LIMIT_BURST: "1000" });
    const plain = await view(gateway);
    const html = Buffer.from(await plain.arrayBuffer());
    expect(plain.status).toBe(200);
    expect(plain.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(plain.headers.get("cache-control")).toBe("public, max-age=3600");
    expect(plain.headers.get("vary")).toMatch(/accept-encoding/i);
    expect(plain.headers.get("etag")).toMatch(/^"[\w-]{22}-identity"$/);
    expect(Number(plain.headers.get("content-length"))).toBe(html.byteLength);
    expect(html.toString("utf8")).toContain("Avalanche GraphQL gateway");
    expect(remaining(plain)).toBe(1_000 - sendingCost(html.byteLength));

    const gzip = await view(gateway, { "accept-encoding": "gzip" });
    const compressed = Buffer.from(await gzip.arrayBuffer());
    expect(gzip.headers.get("content-encoding")).toBe("gzip");
    expect(gzip.headers.get("etag")).toBe(plain.headers.get("etag")!.replace("identity", "gzip"));
    expect(gunzipSync(compressed).equals(html)).toBe(true);
    expect(remaining(gzip)).toBe(remaining(plain) - sendingCost(compressed.byteLength));
    expect(sendingCost(compressed.byteLength)).toBeLessThan(sendingCost(html.byteLength) / 3);
  });

  it("answers 304 for 1 when If-None-Match names the ETag of the encoding it would send, and the page otherwise", async () => {
    const gateway = await start({ RATE_LIMIT_BURST: "1000" });
    const first = await view(gateway, { "accept-encoding": "gzip" });
    await first.arrayBuffer();
    const etag = first.headers.get("etag")!;
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
      const again = await view(gateway, { "accept-encoding": "gzip", "if-none-match": ifNoneMatch });
      expect(again.status, ifNoneMatch).toBe(304);
      expect(await again.text()).toBe("");
      expect(again.headers.get("etag")).toBe(etag);
      expect(again.headers.get("cache-control")).toBe("public, max-age=3600");
    }
    const before = remaining(await view(gateway, { "accept-encoding": "gzip", "if-none-match": etag }));
    expect(remaining(await view(gateway, { "accept-encoding": "gzip", "if-none-match": etag }))).toBe(before - 1);
    // The gzip page's ETag does not name the uncompressed page.
    const other = await view(gateway, { "if-none-match": etag });
    expect(other.status).toBe(200);
    await other.arrayBuffer();
  });

  it("is refused (429, RATE_LIMITED) to a caller that cannot pay for it, who keeps the 1 it paid, before anything is sent", async () => {
    const gateway = await start({ RATE_LIMIT_BURST: "100" });
    const refused = await view(gateway);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).not.toBeNull();
    const body = (await refused.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(body.errors[0]!.extensions.code).toBe("RATE_LIMITED");
    expect(body.errors[0]!.message).toMatch(/the GraphiQL page costs \d+/);
    expect(remaining(refused)).toBe(99);
  });

  it("is served at the endpoint only: not at /graphql/, which the rate limit does not charge as the endpoint", async () => {
    const gateway = await start();
    const response = await gateway.gateway.yoga.fetch("http://gateway.test/graphql/", { headers: { accept: "text/html" } });
    expect(response.headers.get("content-type") ?? "").not.toContain("text/html");
    expect(Number(response.headers.get("content-length") ?? 0)).toBeLessThan(10_000);
  });

  it("is not served with GRAPHIQL=false", async () => {
    const gateway = await start({ GRAPHIQL: "false" });
    const response = await view(gateway);
    expect(response.headers.get("content-type") ?? "").not.toContain("text/html");
  });
});
