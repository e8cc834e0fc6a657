import { describe, expect, it } from "vitest";
import { buildPath, buildQuery } from "../src/upstream/request-target.ts";

/**
 * Arguments are validated before they reach a path, but the path builder must hold on its own:
 * whatever a value holds, it stays inside its own path segment or query value.
 */
describe("upstream paths and queries", () => {
  const hostile = [
    "../../v1/chains",
    "43114?pageSize=100",
    "a#fragment",
    "%2F..%2F",
    "line\nbreak",
    "ünï/cødé",
    "//evil.example/x",
    "@evil.example",
  ];

  it.each(hostile)("keeps %j inside one path segment", (value) => {
    const path = buildPath("/v1/chains/{chainId}/blocks/{blockId}", { chainId: value, blockId: "1" });
    const segments = path.split("/");
    expect(segments).toHaveLength(6);
    expect(decodeURIComponent(segments[3]!)).toBe(value);
    expect(path).not.toMatch(/[?#\n]/);
    expect(new URL(path, "http://upstream.test").host).toBe("upstream.test");
  });

  it.each(hostile)("keeps %j inside one query value", (value) => {
    const query = buildQuery({ network: value, pageSize: 10, pageToken: undefined });
    const parsed = new URLSearchParams(query.slice(1));
    expect([...parsed.keys()]).toEqual(["network", "pageSize"]);
    expect(parsed.get("network")).toBe(value);
  });

  it("refuses a template whose parameter is missing rather than send a literal placeholder", () => {
    expect(() => buildPath("/v1/chains/{chainId}", {})).toThrow(/missing path parameter chainId/);
  });
});
