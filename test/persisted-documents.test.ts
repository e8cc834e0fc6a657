/**
 * Persisted documents named by `documentId` (the GraphQL-over-HTTP convention, as Relay and
 * gql.tada send them) beside Apollo's hash form, over a real listening server.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveGateway, stopServed, type Served } from "./hostile/raw-http.ts";
import { newDocumentCost } from "../src/plugins/rate-limit.ts";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

// Stored under the prefixed id, as gql.tada writes its manifest.
const CHAIN_NAME = `query ChainName($id: ID!) { chain(id: $id) { chainName } }`;
// Stored under the bare hash, as Apollo's manifests and the existing store files do.
const CHAIN_IDS = `query ChainIds { chains { chainId } }`;
// A larger document: reading it as text costs its tokens, named by id it costs nothing to read.
const WIDE = `query Wide { ${Array.from({ length: 20 }, (_, i) => `c${i}: chain(id: "43114") { chainName chainId }`).join(" ")} }`;

interface Answer {
  status: number;
  headers: Headers;
  body: { data?: Record<string, unknown> | null; errors?: { message: string; extensions: { code: string } }[] };
}

async function answer(response: Response): Promise<Answer> {
  return { status: response.status, headers: response.headers, body: (await response.json()) as Answer["body"] };
}

describe("persisted documents", () => {
  let served: Served;
  let url: string;
  const post = async (body: unknown, headers: Record<string, string> = {}) =>
    answer(
      await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json", ...headers },
        body: JSON.stringify(body),
      }),
    );

  beforeAll(async () => {
    const file = join(mkdtempSync(join(tmpdir(), "persisted-")), "documents.json");
    writeFileSync(
      file,
      JSON.stringify({ [`sha256:${sha256(CHAIN_NAME)}`]: CHAIN_NAME, [sha256(CHAIN_IDS)]: CHAIN_IDS, [sha256(WIDE)]: WIDE }),
    );
    // A refill too slow to matter between two requests: each request's charge shows in ratelimit-remaining.
    served = await serveGateway({ PERSISTED_OPERATIONS_FILE: file, RATE_LIMIT_RATE: "0.001", RATE_LIMIT_BURST: "100000" });
    url = `http://127.0.0.1:${served.port}/graphql`;
  });
  afterAll(async () => {
    await stopServed(served);
  });

  it("runs a document named by documentId in a JSON body, in either sha256 form", async () => {
    for (const documentId of [`sha256:${sha256(CHAIN_NAME)}`, sha256(CHAIN_NAME)]) {
      const result = await post({ documentId, variables: { id: "43114" } });
      expect(result.status).toBe(200);
      expect(result.body).toEqual({ data: { chain: { chainName: expect.any(String) } } });
    }
    const bare = await post({ documentId: `sha256:${sha256(CHAIN_IDS)}` });
    expect(bare.body.data).toEqual({ chains: expect.arrayContaining([{ chainId: "43114" }]) });
  });

  it("runs a query named by documentId in a GET's query string", async () => {
    const params = new URLSearchParams({
      documentId: `sha256:${sha256(CHAIN_NAME)}`,
      variables: JSON.stringify({ id: "43114" }),
    });
    // CSRF prevention asks a GET for a header a cross-site form cannot send.
    const result = await answer(
      await fetch(`${url}?${params}`, { headers: { accept: "application/json", "x-graphql-yoga-csrf": "1" } }),
    );
    expect(result.status).toBe(200);
    expect(result.body).toEqual({ data: { chain: { chainName: expect.any(String) } } });
  });

  it("still runs Apollo's hash form", async () => {
    const result = await post({
      extensions: { persistedQuery: { version: 1, sha256Hash: sha256(CHAIN_NAME) } },
      variables: { id: "43114" },
    });
    expect(result.body).toEqual({ data: { chain: { chainName: expect.any(String) } } });
  });

  it("answers an unknown documentId 404 PERSISTED_QUERY_NOT_FOUND, in a body or a query string", async () => {
    const unknown = await post({ documentId: `sha256:${"0".repeat(64)}` });
    expect(unknown.status).toBe(404);
    expect(unknown.body.errors?.[0]?.extensions.code).toBe("PERSISTED_QUERY_NOT_FOUND");
    expect(unknown.body.data).toBeUndefined();
    const viaGet = await answer(
      await fetch(`${url}?documentId=nothing-here`, { headers: { accept: "application/json", "x-graphql-yoga-csrf": "1" } }),
    );
    expect(viaGet.status).toBe(404);
    expect(viaGet.body.errors?.[0]?.extensions.code).toBe("PERSISTED_QUERY_NOT_FOUND");
    // Apollo's form keeps the 400 of the gateway's other refusals.
    const hash = await post({ extensions: { persistedQuery: { version: 1, sha256Hash: "0".repeat(64) } } });
    expect(hash.status).toBe(400);
    expect(hash.body.errors?.[0]?.extensions.code).toBe("PERSISTED_QUERY_NOT_FOUND");
  });

  it("charges a document named by id as an already parsed one: nothing for reading it", async () => {
    const remaining = (result: Answer) => Number(result.headers.get("ratelimit-remaining"));
    const charge = async (send: () => Promise<Answer>) => {
      const before = remaining(await post({ query: "{ __typename }" }));
      const result = await send();
      expect(result.body.errors).toBeUndefined();
      // The probe itself costs 1.
      return before - remaining(result);
    };
    const byId = await charge(() => post({ documentId: sha256(WIDE) }));
    const byIdAgain = await charge(() => post({ documentId: `sha256:${sha256(WIDE)}` }));
    // The same operation as text the parse cache does not hold (one more space).
    const asText = await charge(() => post({ query: WIDE.replace("{", "{ ") }));
    expect(byIdAgain).toBe(byId);
    // As text, it pays for its reading: a new document's cost, its tokens and characters.
    expect(asText).toBeGreaterThan(byId);
    expect(asText - byId).toBe(newDocumentCost(WIDE.replace("{", "{ ")));
  });
});
