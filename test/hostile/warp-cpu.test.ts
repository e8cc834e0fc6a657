/**
 * Row 3: 49 aliases of one Warp verification. The check runs once (remembered, shared while under
 * way), off the event loop, and its CPU is charged beside the upstream calls.
 *
 * Transports: both tests run over HTTP, WebSocket and SSE (a POST asking for `text/event-stream`
 * is charged by the same pipeline), each on a gateway of its own, so that the one check is made
 * on each. A socket's opening costs its caller 1; a socket's refusal carries no budget.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { newDocumentCost } from "../../src/limits/request-costs.ts";
import { WARP_VERIFICATION_COST } from "../../src/limits/upstream-cost-rules.ts";
import { metricsText, registerL1ValidatorTx, startHarness, upstreamCalls, type Harness } from "../support/harness.ts";
import { over, TRANSPORTS, useClient } from "../support/transports.ts";

const ALIASES = 49;
/** Estimated upstream calls per alias: the message, the one look-up expected to find its subnet, the validator page. */
const CALLS_PER_ALIAS = 3;
/** Room for the attack twice, not three times. */
const BURST = 2_000;
const L1_ROUTE = "GET /v1/networks/{network}/l1Validators";
const MESSAGE_ROUTE = "GET /v1/signatureAggregator/{network}/aggregateSignatures/{txHash}";
const TX_ROUTE = "GET /v1/networks/{network}/blockchains/{blockchainId}/transactions/{txHash}";

function aliased(txHash: string): string {
  const alias = (index: number) =>
    `a${index}: warpSignature(network: FUJI, txHash: "${txHash}") { decoded { verification { valid } } }`;
  return `{ ${Array.from({ length: ALIASES }, (_, index) => alias(index)).join(" ")} }`;
}

async function verifications(harness: Harness): Promise<Record<string, number>> {
  const text = await metricsText(harness);
  const counts: Record<string, number> = {};
  for (const [, outcome, value] of text.matchAll(/^gateway_warp_verifications_total\{outcome="(\w+)"\} (\d+)$/gm))
    counts[outcome!] = Number(value);
  return counts;
}

describe.each(TRANSPORTS)("row 3: Warp verification CPU, over %s", (transport) => {
  let harness: Harness;
  const client = useClient(transport, () => harness);
  /** What opening the caller's socket cost it: 1 on a WebSocket, nothing otherwise. */
  const opening = transport === "websocket" ? 1 : 0;

  beforeAll(async () => {
    // Callers told apart by X-Forwarded-For: over a real socket both would be 127.0.0.1, one address bucket.
    harness = await startHarness({ TRUST_PROXY: "true", RATE_LIMIT_RATE: "0.001", RATE_LIMIT_BURST: String(BURST) });
  });
  afterAll(async () => {
    await harness.close();
  });
  beforeEach(() => {
    harness.gateway.cache.clear();
    harness.simulator.resetCounters();
  });

  it("row 3: 49 aliases of one verification check it once, charge its CPU per alias, and another caller is answered meanwhile", async () => {
    const query = aliased(registerL1ValidatorTx(harness));
    const caller = { "x-glacier-api-key": `warp-${Math.random()}`, "x-forwarded-for": "192.0.2.3" };
    const before = await verifications(harness);

    const attack = client.send({ query }, caller);
    // Asked while the 49 verifications are under way, from another caller: answered first.
    const order: string[] = [];
    const [result, other] = await Promise.all([
      attack.then((response) => (order.push("attack"), response)),
      client
        .send({ query: "{ __typename }" }, { "x-glacier-api-key": `other-${Math.random()}`, "x-forwarded-for": "192.0.2.4" })
        .then((response) => (order.push("other"), response)),
    ]);
    expect(other.refused).toBe(false);
    if (other.status !== undefined) expect(other.status).toBe(200);
    expect(other.result).toEqual({ data: { __typename: "Query" } });
    expect(order).toEqual(["other", "attack"]);

    expect(result.refused).toBe(false);
    if (result.status !== undefined) expect(result.status).toBe(200);
    expect(result.body.errors).toBeUndefined();
    const data = result.body.data as Record<string, { decoded: { verification: { valid: boolean } } }>;
    expect(Object.values(data)).toHaveLength(ALIASES);
    for (const value of Object.values(data)) expect(value.decoded.verification.valid).toBe(true);

    // One check made; the 48 others shared it or read it from memory.
    const after = await verifications(harness);
    expect((after.checked ?? 0) - (before.checked ?? 0)).toBe(1);
    expect((after.joined ?? 0) + (after.remembered ?? 0) - (before.joined ?? 0) - (before.remembered ?? 0)).toBe(ALIASES - 1);

    // Charged: the request's 1 and the reading of the new document, then per alias its 3
    // estimated upstream calls (the message, the P-Chain transaction that finds the subnet, the
    // validator page) and the CPU of one verification, less the 1 paid (and a socket's opening).
    const charged = opening + 1 + newDocumentCost(query) + ALIASES * (CALLS_PER_ALIAS + WARP_VERIFICATION_COST) - 1;
    expect(result.remaining).toBe(BURST - charged);
    // The upstream calls it made: the same reads of 49 aliases are one each (fewer than the estimate: nothing is owed).
    expect(upstreamCalls(harness)).toEqual({ [MESSAGE_ROUTE]: 1, [TX_ROUTE]: 1, [L1_ROUTE]: 1 });

    // Asked again, nothing is checked again; the charge is the same (the estimate cannot know).
    const again = await client.send({ query }, caller);
    expect(again.refused).toBe(false);
    if (again.status !== undefined) expect(again.status).toBe(200);
    expect((await verifications(harness)).checked).toBe(after.checked);
    expect(again.remaining).toBe(BURST - charged - ALIASES * (CALLS_PER_ALIAS + WARP_VERIFICATION_COST));

    // The third time the bucket cannot pay: refused before any upstream call, the gateway still serves.
    harness.simulator.resetCounters();
    const refused = await client.send({ query }, caller);
    expect(refused.refused).toBe(true);
    if (refused.status !== undefined) expect(refused.status).toBe(429);
    expect(refused.body.errors![0]!.extensions).toMatchObject({
      code: "RATE_LIMITED",
      cost: ALIASES * (CALLS_PER_ALIAS + WARP_VERIFICATION_COST) - 1,
    });
    expect(upstreamCalls(harness)).toEqual({});
    expect((await client.send({ query: "{ __typename }" })).result).toEqual({ data: { __typename: "Query" } });
  });

  it("row 3: more aliases than a full bucket can pay for are refused as over a limit before anything runs", async () => {
    const strict = await startHarness({ RATE_LIMIT_BURST: "500" });
    const strictClient = over(transport, strict);
    try {
      const query = aliased(registerL1ValidatorTx(harness));
      const refused = await strictClient.send({ query });
      expect(refused.refused).toBe(true);
      if (refused.status !== undefined) expect(refused.status).toBe(400);
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
      expect((await strictClient.send({ query: "{ __typename }" })).result).toEqual({ data: { __typename: "Query" } });
    } finally {
      await strictClient.close();
      await strict.close();
    }
  });
});
