/**
 * Row 3: 49 aliases of one Warp verification. The check runs once (remembered, shared while under
 * way), off the event loop, and its CPU is charged beside the upstream calls.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { newDocumentCost } from "../../src/plugins/rate-limit.ts";
import { WARP_VERIFICATION_COST } from "../../src/limits/upstream-calls.ts";
import { execute, metricsText, registerL1ValidatorTx, startHarness, upstreamCalls, type Harness } from "../support/harness.ts";

const ALIASES = 49;
/** Estimated upstream calls per alias: the message, the one look-up expected to find its subnet, the validator page. */
const CALLS_PER_ALIAS = 3;
/** Room for the attack twice, not three times. */
const BURST = 2_000;
const L1_ROUTE = "GET /v1/networks/{network}/l1Validators";
const MESSAGE_ROUTE = "GET /v1/signatureAggregator/{network}/aggregateSignatures/{txHash}";
const TX_ROUTE = "GET /v1/networks/{network}/blockchains/{blockchainId}/transactions/{txHash}";

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness({ RATE_LIMIT_RATE: "0.001", RATE_LIMIT_BURST: String(BURST) });
});
afterAll(async () => {
  await harness.close();
});
beforeEach(() => {
  harness.gateway.cache.clear();
  harness.simulator.resetCounters();
});

function aliased(txHash: string): string {
  const alias = (index: number) =>
    `a${index}: warpSignature(network: FUJI, txHash: "${txHash}") { decoded { verification { valid } } }`;
  return `{ ${Array.from({ length: ALIASES }, (_, index) => alias(index)).join(" ")} }`;
}

async function verifications(): Promise<Record<string, number>> {
  const text = await metricsText(harness);
  const counts: Record<string, number> = {};
  for (const [, outcome, value] of text.matchAll(/^gateway_warp_verifications_total\{outcome="(\w+)"\} (\d+)$/gm))
    counts[outcome!] = Number(value);
  return counts;
}

describe("row 3: Warp verification CPU", () => {
  it("row 3: 49 aliases of one verification check it once, charge its CPU per alias, and another caller is answered meanwhile", async () => {
    const query = aliased(registerL1ValidatorTx(harness));
    const caller = { "x-glacier-api-key": `warp-${Math.random()}` };
    const before = await verifications();

    const attack = execute(harness, query, {}, caller);
    // Asked while the 49 verifications are under way, from another caller: answered first.
    const order: string[] = [];
    const [result, other] = await Promise.all([
      attack.then((response) => (order.push("attack"), response)),
      execute(harness, "{ __typename }", {}, { "x-glacier-api-key": `other-${Math.random()}` }).then(
        (response) => (order.push("other"), response),
      ),
    ]);
    expect(other.status).toBe(200);
    expect(other.body).toEqual({ data: { __typename: "Query" } });
    expect(order).toEqual(["other", "attack"]);

    expect(result.status).toBe(200);
    expect(result.body.errors).toBeUndefined();
    const data = result.body.data as Record<string, { decoded: { verification: { valid: boolean } } }>;
    expect(Object.values(data)).toHaveLength(ALIASES);
    for (const value of Object.values(data)) expect(value.decoded.verification.valid).toBe(true);

    // One check made; the 48 others shared it or read it from memory.
    const after = await verifications();
    expect((after.checked ?? 0) - (before.checked ?? 0)).toBe(1);
    expect((after.joined ?? 0) + (after.remembered ?? 0) - (before.joined ?? 0) - (before.remembered ?? 0)).toBe(ALIASES - 1);

    // Charged: the request's 1 and the reading of the new document, then per alias its 3
    // estimated upstream calls (the message, the P-Chain transaction that finds the subnet, the
    // validator page) and the CPU of one verification, less the 1 paid.
    const charged = 1 + newDocumentCost(query) + ALIASES * (CALLS_PER_ALIAS + WARP_VERIFICATION_COST) - 1;
    expect(Number(result.headers.get("ratelimit-remaining"))).toBe(BURST - charged);
    // The upstream calls it made: the same reads of 49 aliases are one each (fewer than the estimate: nothing is owed).
    expect(upstreamCalls(harness)).toEqual({ [MESSAGE_ROUTE]: 1, [TX_ROUTE]: 1, [L1_ROUTE]: 1 });

    // Asked again, nothing is checked again; the charge is the same (the estimate cannot know).
    const again = await execute(harness, query, {}, caller);
    expect(again.status).toBe(200);
    expect((await verifications()).checked).toBe(after.checked);
    expect(Number(again.headers.get("ratelimit-remaining"))).toBe(
      BURST - charged - ALIASES * (CALLS_PER_ALIAS + WARP_VERIFICATION_COST),
    );

    // The third time the bucket cannot pay: refused before any upstream call, the gateway still serves.
    harness.simulator.resetCounters();
    const refused = await execute(harness, query, {}, caller);
    expect(refused.status).toBe(429);
    expect(refused.body.errors![0]!.extensions).toMatchObject({
      code: "RATE_LIMITED",
      cost: ALIASES * (CALLS_PER_ALIAS + WARP_VERIFICATION_COST) - 1,
    });
    expect(upstreamCalls(harness)).toEqual({});
    expect((await execute(harness, "{ __typename }")).body).toEqual({ data: { __typename: "Query" } });
  });

  it("row 3: more aliases than a full bucket can pay for are refused as over a limit before anything runs", async () => {
    const strict = await startHarness({ RATE_LIMIT_BURST: "500" });
    try {
      const query = aliased(registerL1ValidatorTx(harness));
      const refused = await execute(strict, query);
      expect(refused.status).toBe(400);
      const total = ALIASES * (CALLS_PER_ALIAS + WARP_VERIFICATION_COST);
      expect(refused.body.errors![0]!.extensions).toEqual({
        code: "BAD_USER_INPUT",
        limit: "upstreamCalls",
        max: 500,
        actual: total,
      });
      expect(refused.body.errors![0]!.message).toMatch(
        new RegExp(
          `estimated ${ALIASES * CALLS_PER_ALIAS} upstream calls and CPU \\(Warp verifications, introspection\\) worth ${ALIASES * WARP_VERIFICATION_COST} calls, ${total} in all, more than the 500`,
        ),
      );
      expect(upstreamCalls(strict)).toEqual({});
      expect((await execute(strict, "{ __typename }")).body).toEqual({ data: { __typename: "Query" } });
    } finally {
      await strict.close();
    }
  });
});
