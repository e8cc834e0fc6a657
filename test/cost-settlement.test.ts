/**
 * The settlement of an operation's charge: it pays its estimate before it runs, and after it ran
 * the upstream requests it really sent beyond the estimate, whatever its buckets hold (debt). A
 * caller can therefore never have more calls made than it pays for, whatever the estimate says.
 *
 * The document is a page of P-Chain UTXOs with the transactions and blocks that created and spent
 * them: the estimate expects a page's UTXOs to share half as many transactions and blocks, and
 * this wallet's UTXOs share fewer, so that the operation makes more calls than it is estimated to.
 */
import { parse, print } from "graphql";
import { afterEach, describe, expect, it } from "vitest";
import { schema } from "../src/schema.ts";
import { newDocumentCost } from "../src/limits/request-costs.ts";
import { NO_FACTS } from "../src/limits/known-facts.ts";
import { estimateUpstreamCalls } from "../src/limits/upstream-calls.ts";
import { PChainUtxoLinksDocument } from "./generated/graphql.ts";
import { execute, startHarness, upstreamCalls, type Harness } from "./support/harness.ts";

const DOCUMENT = print(PChainUtxoLinksDocument);
const ESTIMATE_OF = (variables: Record<string, unknown>) =>
  estimateUpstreamCalls(schema, parse(DOCUMENT), undefined, variables, NO_FACTS);
const calls = (harness: Harness) => Object.values(upstreamCalls(harness)).reduce((sum, count) => sum + count, 0);
const variablesOf = (harness: Harness) => ({
  network: "MAINNET",
  addresses: [harness.simulator.network.primaryNetwork("mainnet").wallets[0]!.address],
  first: 120,
});

/** The upstream calls the document makes on a cold gateway, measured on one that does not limit. */
async function coldCalls(): Promise<number> {
  const measuring = await startHarness({ RATE_LIMIT_BURST: "1000000" });
  try {
    measuring.simulator.resetCounters();
    const result = await execute(measuring, DOCUMENT, variablesOf(measuring));
    expect(result.body.errors).toBeUndefined();
    return calls(measuring);
  } finally {
    await measuring.close();
  }
}

describe("an operation's charge, settled after it ran", () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  /** A gateway whose one bucket (`local`: requests in process) holds `burst` and barely refills. */
  async function gateway(burst: number): Promise<Harness> {
    harness = await startHarness({ RATE_LIMIT_BURST: String(burst), RATE_LIMIT_RATE: "0.000001" });
    harness.simulator.resetCounters();
    return harness;
  }

  it("takes the calls made beyond the estimate, so that a second request the estimate alone would admit is refused", async () => {
    const cold = await coldCalls();
    const variables = variablesOf(await gateway(1));
    const estimate = ESTIMATE_OF(variables);
    await harness!.close();
    // The premise: this wallet's UTXOs share fewer records than the estimate expects.
    expect(estimate).toBeGreaterThanOrEqual(1);
    expect(cold).toBeGreaterThan(estimate);

    // Enough for the document's reading and twice its estimate: the estimate alone admits two.
    const readCost = newDocumentCost(DOCUMENT);
    const burst = readCost + 2 * estimate;
    const limited = await gateway(burst);
    const first = await execute(limited, DOCUMENT, variablesOf(limited));
    expect(first.status).toBe(200);
    expect(first.body.errors).toBeUndefined();
    expect(calls(limited)).toBe(cold);
    // Charged what it made, not what it was estimated to make.
    expect(Number(first.headers.get("ratelimit-remaining"))).toBe(burst - readCost - cold);

    limited.simulator.resetCounters();
    const second = await execute(limited, DOCUMENT, variablesOf(limited));
    expect(second.status).toBe(429);
    expect(second.body.errors![0]!.extensions).toMatchObject({ code: "RATE_LIMITED", cost: estimate - 1 });
    expect(calls(limited)).toBe(0);
  });

  it("puts a caller in debt when the calls made exceed what its bucket holds, and refuses it until the debt is paid back", async () => {
    const cold = await coldCalls();
    const readCost = newDocumentCost(DOCUMENT);
    // Enough for the document's reading and its estimate, not for its calls.
    const probe = await gateway(1);
    const estimate = ESTIMATE_OF(variablesOf(probe));
    await probe.close();
    const limited = await gateway(readCost + estimate);

    const first = await execute(limited, DOCUMENT, variablesOf(limited));
    expect(first.status).toBe(200);
    expect(first.body.errors).toBeUndefined();
    expect(calls(limited)).toBe(cold);
    expect(Number(first.headers.get("ratelimit-remaining"))).toBe(0);

    // The bucket holds estimate - cold < 0: even the 1 every request pays cannot be paid.
    limited.simulator.resetCounters();
    const refused = await execute(limited, "{ __typename }");
    expect(refused.status).toBe(429);
    expect(refused.body.errors![0]!.extensions).toMatchObject({ code: "RATE_LIMITED" });
    // At a millionth of a token a second, the debt takes some 10^6 s a call to pay back.
    expect(Number(refused.body.errors![0]!.extensions!.retryAfterSeconds)).toBeGreaterThan(1_000_000 * (cold - estimate));
    const again = await execute(limited, DOCUMENT, variablesOf(limited));
    expect(again.status).toBe(429);
    expect(calls(limited)).toBe(0);
  });

  it("gives nothing back when an operation makes fewer calls than estimated", async () => {
    const limited = await gateway(1_000);
    // The estimate expects a quarter of the page to have a reward transaction; the latest have none yet.
    const document = `{ primaryNetwork(network: MAINNET) { pChain { transactions(first: 30) { nodes { txHash rewardTransaction { txHash } } } } } }`;
    const estimate = estimateUpstreamCalls(schema, parse(document), undefined, {}, NO_FACTS);
    const result = await execute(limited, document);
    expect(result.body.errors).toBeUndefined();
    expect(calls(limited)).toBeLessThan(estimate);
    expect(Number(result.headers.get("ratelimit-remaining"))).toBe(1_000 - newDocumentCost(document) - estimate);
  });
});
