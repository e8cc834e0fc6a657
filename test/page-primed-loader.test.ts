/**
 * A loader primed by list pages (src/execution/loaders/page-primed.ts) answers a key a page gave
 * without a batch call, keeps DataLoader's rules for primed values (the first value given for a
 * key wins, and none replaces a key loaded already), and takes a page only once a key is loaded.
 */
import { describe, expect, it } from "vitest";
import { PagePrimedLoader } from "../src/execution/loaders/page-primed.ts";

interface Row {
  id: string;
  from: string;
}

function loader() {
  const asked: string[][] = [];
  const rows = new PagePrimedLoader<string, Row | null, string>(
    async (ids) => {
      asked.push([...ids]);
      return ids.map((id) => ({ id, from: "batch" }));
    },
    (id) => id.toLowerCase(),
  );
  return { rows, asked };
}

describe("a loader that list pages prime", () => {
  it("answers what a page gave, by any spelling of its key, without a batch call", async () => {
    const { rows, asked } = loader();
    rows.primePage((add) => {
      add("A", { id: "A", from: "page" });
      add("B", { id: "B", from: "page" });
    });
    expect(await rows.load("a")).toEqual({ id: "A", from: "page" });
    expect(await rows.loadMany(["b", "c"])).toEqual([
      { id: "B", from: "page" },
      { id: "c", from: "batch" },
    ]);
    expect(asked).toEqual([["c"]]);
  });

  it("keeps the first value a page gave for a key", async () => {
    const { rows } = loader();
    rows.primePage((add) => add("a", { id: "a", from: "first page" }));
    rows.primePage((add) => add("a", { id: "a", from: "second page" }));
    expect(await rows.load("a")).toEqual({ id: "a", from: "first page" });
  });

  it("never replaces a key loaded before the page came", async () => {
    const { rows, asked } = loader();
    const loaded = await rows.load("a");
    rows.primePage((add) => add("a", { id: "a", from: "page" }));
    expect(await rows.load("a")).toBe(loaded);
    expect(asked).toEqual([["a"]]);
  });

  it("never replaces a key being loaded when the page came", async () => {
    const { rows, asked } = loader();
    const loading = rows.load("a");
    rows.primePage((add) => add("a", { id: "a", from: "page" }));
    expect(await rows.load("a")).toEqual(await loading);
    expect((await loading)?.from).toBe("batch");
    expect(asked).toEqual([["a"]]);
  });

  it("reads a page only once a key is loaded", async () => {
    const { rows } = loader();
    let read = 0;
    rows.primePage((add) => {
      read += 1;
      add("a", { id: "a", from: "page" });
    });
    expect(read).toBe(0);
    await rows.load("z");
    await rows.load("a");
    expect(read).toBe(1);
  });
});
