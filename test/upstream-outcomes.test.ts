import { describe, expect, it } from "vitest";
import { GatewayError } from "../src/errors.ts";
import {
  UPSTREAM_OUTCOMES,
  allowsStaleRecord,
  countsAgainstService,
  isRetryable,
  isTransientForPollers,
  outcomeOfStatus,
  upstreamMalformed,
  upstreamStatusError,
  upstreamUnreachable,
} from "../src/upstream/outcomes.ts";

describe("what an upstream outcome means (src/upstream/outcomes.ts)", () => {
  it.each([
    [null, "UPSTREAM_UNAVAILABLE"],
    [200, "UPSTREAM_ERROR"],
    [400, "BAD_USER_INPUT"],
    [401, "UNAUTHENTICATED"],
    [403, "FORBIDDEN"],
    [404, "NOT_FOUND"],
    [408, "UPSTREAM_UNAVAILABLE"],
    [410, "NOT_FOUND"],
    [413, "BAD_USER_INPUT"],
    [422, "BAD_USER_INPUT"],
    [429, "RATE_LIMITED"],
    [500, "UPSTREAM_ERROR"],
    [502, "UPSTREAM_UNAVAILABLE"],
    [503, "UPSTREAM_UNAVAILABLE"],
    [504, "UPSTREAM_UNAVAILABLE"],
    [301, "UPSTREAM_ERROR"],
  ])("status %s is %s", (status, code) => {
    expect(outcomeOfStatus(status).code).toBe(code);
  });

  it("no answer about the request (its input, key or rate) counts against the service", () => {
    for (const status of [400, 401, 403, 404, 409, 410, 413, 422, 429]) {
      expect(countsAgainstService(upstreamStatusError("Data API", status, null, null)), `HTTP ${status}`).toBe(false);
    }
    for (const status of [408, 500, 502, 503, 504]) {
      expect(countsAgainstService(upstreamStatusError("Data API", status, null, null)), `HTTP ${status}`).toBe(true);
    }
    expect(countsAgainstService(upstreamUnreachable("Data API", "connect timeout"))).toBe(true);
    expect(countsAgainstService(upstreamMalformed("Data API", 200))).toBe(true);
    // The gateway's own refusals never reach the service; an unexpected error is the service's.
    expect(countsAgainstService(new GatewayError("refused", "BAD_USER_INPUT"))).toBe(false);
    expect(countsAgainstService(new Error("unexpected"))).toBe(true);
  });

  it("only no answer, 429, 502 and 503 are sent again", () => {
    const retried = [null, ...Array.from({ length: 500 }, (_, index) => 100 + index)].filter((status) =>
      isRetryable(
        status === null ? upstreamUnreachable("Data API", "reset") : upstreamStatusError("Data API", status, null, null),
      ),
    );
    expect(retried).toEqual([null, 429, 502, 503]);
    expect(isRetryable(new Error("unexpected"))).toBe(false);
  });

  it("an expired record stands in for a failure of the service, never for an answer about the request", () => {
    for (const status of [408, 429, 500, 502, 503, 504]) {
      expect(allowsStaleRecord(upstreamStatusError("Data API", status, null, null)), `HTTP ${status}`).toBe(true);
    }
    for (const status of [400, 401, 403, 404]) {
      expect(allowsStaleRecord(upstreamStatusError("Data API", status, null, null)), `HTTP ${status}`).toBe(false);
    }
    expect(allowsStaleRecord(upstreamUnreachable("Data API", "reset"))).toBe(true);
  });

  it("pollers ride out what the service may recover from and end on answers about the request", () => {
    for (const status of [408, 429, 500, 502, 503, 504]) {
      expect(isTransientForPollers(upstreamStatusError("Data API", status, null, null)), `HTTP ${status}`).toBe(true);
    }
    for (const status of [400, 401, 403, 404]) {
      expect(isTransientForPollers(upstreamStatusError("Data API", status, null, null)), `HTTP ${status}`).toBe(false);
    }
    expect(isTransientForPollers(new GatewayError("refused", "BAD_USER_INPUT"))).toBe(false);
  });

  it("the table ends with a row for any status, and a 429 carries its retry-after", () => {
    expect(UPSTREAM_OUTCOMES.at(-1)!.matches(599_999)).toBe(true);
    expect(upstreamStatusError("Data API", 429, "slow down", 7).extensions).toMatchObject({
      code: "RATE_LIMITED",
      retryAfter: 7,
    });
  });
});
