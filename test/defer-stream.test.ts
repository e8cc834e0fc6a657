/**
 * `@defer` and `@stream` over HTTP: multipart/mixed read part by part with meros, and SSE. The
 * first part holds the block list; later parts the deferred fields and streamed items; merged,
 * they make the same data as the document without the directives. Both with compiled execution
 * on (the default), which must leave such documents to graphql-js.
 */
import { meros } from "meros/browser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execute, startHarness, upstreamCalls, type Harness } from "./support/harness.ts";

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness({ GRAPHQL_JIT: "true", GRAPHQL_JIT_FROM_RUN: "1" });
});
afterAll(async () => {
  await harness.close();
});

interface Part {
  data?: Record<string, unknown> | null;
  errors?: unknown[];
  hasNext?: boolean;
  incremental?: { data?: Record<string, unknown>; items?: unknown[]; path: (string | number)[]; errors?: unknown[] }[];
}

const DEFERRED = /* GraphQL */ `
  query LatestBlocksDeferred {
    latestBlocks(first: 3) {
      edges {
        node {
          blockNumber
          chainId
          ... @defer(label: "links") {
            chain {
              chainName
            }
            parent {
              blockHash
            }
          }
        }
      }
    }
  }
`;
const STREAMED = /* GraphQL */ `
  query LatestBlocksStreamed {
    latestBlocks(first: 3) {
      edges @stream(initialCount: 1) {
        node {
          blockNumber
          chainId
        }
      }
    }
  }
`;
const withoutDirectives = (query: string) =>
  query.replace(/\.\.\. @defer\(label: "links"\) \{([^}]*\}[^}]*\})\s*\}/, "$1").replace(/ @stream\(initialCount: 1\)/, "");

/** The value at `path` under `data`. */
function at(data: Record<string, unknown>, path: (string | number)[]): Record<string, unknown> | unknown[] {
  return path.reduce<unknown>((value, key) => (value as Record<string | number, unknown>)[key], data) as
    Record<string, unknown> | unknown[];
}

/** The parts merged into one result, as a client does. */
function merged(parts: Part[]): Record<string, unknown> {
  const data = structuredClone(parts[0]!.data!) as Record<string, unknown>;
  for (const part of parts.slice(1)) {
    for (const increment of part.incremental ?? []) {
      // A streamed item's path ends with its index in the list.
      if (increment.items)
        (at(data, increment.path.slice(0, -1)) as unknown[]).splice(
          Number(increment.path.at(-1)),
          increment.items.length,
          ...increment.items,
        );
      if (increment.data) Object.assign(at(data, increment.path), increment.data);
    }
  }
  return data;
}

async function multipart(query: string): Promise<{ parts: Part[]; contentType: string | null }> {
  const response = await harness.gateway.yoga.fetch("http://gateway.test/graphql", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "multipart/mixed" },
    body: JSON.stringify({ query }),
  });
  const contentType = response.headers.get("content-type");
  const stream = await meros<Part>(response);
  const parts: Part[] = [];
  if (Symbol.asyncIterator in stream) for await (const part of stream) parts.push(part.body as Part);
  return { parts, contentType };
}

async function sse(query: string): Promise<Part[]> {
  const response = await harness.gateway.yoga.fetch("http://gateway.test/graphql", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ query }),
  });
  expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
  return (await response.text())
    .split("\n\n")
    .filter((block) => block.startsWith("event: next"))
    .map(
      (block) =>
        JSON.parse(
          block
            .split("\n")
            .find((line) => line.startsWith("data:"))!
            .slice(5),
        ) as Part,
    );
}

describe("@defer and @stream", () => {
  it("defers a block's links: the list first, the links after, the same data as without @defer, the links' calls counted", async () => {
    const { parts, contentType } = await multipart(DEFERRED);
    expect(contentType).toMatch(/^multipart\/mixed/);
    expect(parts.length).toBeGreaterThan(1);
    const [first, ...later] = parts;
    const edges = (first!.data!.latestBlocks as { edges: { node: Record<string, unknown> }[] }).edges;
    expect(edges).toHaveLength(3);
    // The first part has the list without the deferred fields.
    for (const { node } of edges) expect(Object.keys(node).sort()).toEqual(["blockNumber", "chainId"]);
    expect(first!.hasNext).toBe(true);
    expect(later.at(-1)!.hasNext).toBe(false);
    expect(
      later
        .flatMap((part) => part.incremental ?? [])
        .every((increment) => increment.data && "chain" in increment.data && "parent" in increment.data),
    ).toBe(true);

    harness.gateway.cache.clear();
    const plain = await execute(harness, withoutDirectives(DEFERRED));
    expect(plain.body.errors).toBeUndefined();
    expect(merged(parts)).toEqual(plain.body.data);
  });

  it("streams a list's items after its first, over multipart", async () => {
    const { parts } = await multipart(STREAMED);
    const firstEdges = (parts[0]!.data!.latestBlocks as { edges: unknown[] }).edges;
    expect(firstEdges).toHaveLength(1);
    expect(parts.length).toBeGreaterThan(1);
    const plain = await execute(harness, withoutDirectives(STREAMED));
    expect(merged(parts)).toEqual(plain.body.data);
  });

  it("delivers the same increments over SSE", async () => {
    harness.gateway.cache.clear();
    const parts = await sse(DEFERRED);
    expect(parts.length).toBeGreaterThan(1);
    expect(Object.keys((parts[0]!.data!.latestBlocks as { edges: { node: object }[] }).edges[0]!.node).sort()).toEqual([
      "blockNumber",
      "chainId",
    ]);
    const plain = await execute(harness, withoutDirectives(DEFERRED));
    expect(merged(parts)).toEqual(plain.body.data);
  });

  it("settles the rate limit on the upstream calls of the deferred parts", async () => {
    const limited = await startHarness({ RATE_LIMIT_BURST: "1000", RATE_LIMIT_RATE: "0.001" });
    try {
      const budget = async () => {
        const response = await execute(limited, "{ __typename }");
        return Number(response.headers.get("ratelimit-remaining"));
      };
      const before = await budget();
      // The deferred blocks' chains need the chain list, which fails and is retried: more calls
      // than the estimate paid for up front, all made after the first part was sent.
      limited.simulator.setKnobs({ errorRate: 1, errorStatus: 503, errorRoutes: ["GET /v1/chains"] });
      limited.simulator.resetCounters();
      const response = await limited.gateway.yoga.fetch("http://gateway.test/graphql", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "multipart/mixed" },
        body: JSON.stringify({ query: DEFERRED }),
      });
      await response.text();
      const calls = Object.values(upstreamCalls(limited)).reduce((sum, count) => sum + count, 0);
      expect(upstreamCalls(limited)["GET /v1/chains"]).toBeGreaterThan(1);
      limited.simulator.setKnobs({ errorRate: 0, errorRoutes: [] });
      // Settlement runs when the stream ends; give it its turn.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const after = await budget();
      // The deferred operation paid at least its real calls; each `{ __typename }` pays 1.
      expect(before - after - 1).toBeGreaterThanOrEqual(calls);
    } finally {
      await limited.close();
    }
  });
});
