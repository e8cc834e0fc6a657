import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GRAPHIQL_EXAMPLES } from "../src/plugins/graphiql-examples.ts";
import { execute, startHarness, type Harness } from "./support/harness.ts";

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness();
});
afterAll(async () => {
  await harness.close();
});

describe("GraphiQL's example operations", () => {
  it.each(GRAPHIQL_EXAMPLES.map((example) => [/(query|mutation) (\w+)/.exec(example.query)?.[2] ?? "?", example] as const))(
    "%s runs against the simulator without an error and returns data",
    async (_, example) => {
      const result = await execute(harness, example.query, example.variables ?? {});
      expect(result.body.errors).toBeUndefined();
      expect(JSON.stringify(result.body.data)).not.toMatch(/^\{"\w+":null\}$/);
    },
  );

  it("are served in GraphiQL's tabs, with the API-key header explained", async () => {
    const page = await harness.gateway.yoga.fetch("http://gateway.test/graphql", { headers: { accept: "text/html" } });
    const html = await page.text();
    expect(page.status).toBe(200);
    for (const name of ["LatestBlocks", "Transaction", "WarpSignature"]) expect(html).toContain(name);
    expect(html).toContain("x-glacier-api-key");
  });
});
