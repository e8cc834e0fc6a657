import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator } from "../../simulator/server.ts";

let simulator: Awaited<ReturnType<typeof startSimulator>>;

beforeAll(async () => {
  simulator = await startSimulator({ dataPort: 0, metricsPort: 0 });
});
afterAll(async () => {
  await simulator.close();
});

describe("answers the simulator keeps", () => {
  it("answer a repeated read identically, still counted, and still subject to the fault knobs", async () => {
    const url = `${simulator.dataUrl}/v1/chains/43114/blocks?pageSize=5`;
    simulator.resetCounters();
    const first = await (await fetch(url)).text();
    const second = await (await fetch(url)).text();
    expect(second).toBe(first);
    expect(simulator.counters()["GET /v1/chains/{chainId}/blocks"]).toBe(2);

    simulator.setKnobs({ errorRate: 1, errorStatus: 503, errorRoutes: ["GET /v1/chains/{chainId}/blocks"] });
    try {
      expect((await fetch(url)).status).toBe(503);
    } finally {
      simulator.setKnobs({ errorRate: 0, errorRoutes: [] });
    }
    expect(await (await fetch(url)).text()).toBe(first);
  });

  it("keep a Metrics API answer only when no page token went in or comes out, since tokens expire", async () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const whole = `${simulator.metricsUrl}/v2/chains/43114/metrics/txCount?timeInterval=day&pageSize=100&startTimestamp=1790000000`;
    expect(((await (await fetch(whole)).json()) as { nextPageToken?: string }).nextPageToken).toBeUndefined();
    expect(await (await fetch(whole)).text()).toBe(await (await fetch(whole)).text());

    const paged = `${simulator.metricsUrl}/v2/chains/43114/metrics/txCount?timeInterval=day&pageSize=1`;
    const token = async (url: string) => ((await (await fetch(url)).json()) as { nextPageToken: string }).nextPageToken;
    const first = await token(paged);
    await sleep(5);
    const second = await token(paged);
    // stamped when issued: a kept answer would hand out the first token again
    expect(second).not.toBe(first);

    simulator.setKnobs({ metricsTokenTtlMs: 50 });
    try {
      const next = `${paged}&pageToken=${await token(paged)}`;
      expect((await fetch(next)).status).toBe(200);
      await sleep(100);
      expect((await fetch(next)).status).toBe(400);
    } finally {
      simulator.setKnobs({ metricsTokenTtlMs: 24 * 60 * 60 * 1000 });
    }
  });

  it("never keep an export job's state, which moves on", async () => {
    simulator.setKnobs({ exportJobMs: 100 });
    const created = (await (
      await fetch(`${simulator.dataUrl}/v1/operations/transactions:export`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          type: "TRANSACTION_EXPORT_EVM",
          firstDate: "2026-10-01",
          lastDate: "2026-10-02",
          options: { addresses: ["0xcd12af610f1850d9f9b80048b8257587e61b6011"], includeChains: ["43114"] },
        }),
      })
    ).json()) as { operationId: string; operationStatus: string };
    const read = async () =>
      ((await (await fetch(`${simulator.dataUrl}/v1/operations/${created.operationId}`)).json()) as { operationStatus: string })
        .operationStatus;
    expect(await read()).toBe("RUNNING");
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await read()).not.toBe("RUNNING");
  });
});
