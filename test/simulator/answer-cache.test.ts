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

  it("never keep an export job's state, which moves on", async () => {
    simulator.setKnobs({ exportJobMs: 100 });
    const created = (await (
      await fetch(`${simulator.dataUrl}/v1/operations/transactions:export`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ type: "TRANSACTION_EXPORT_EVM", firstDate: "2026-10-01", lastDate: "2026-10-02", options: { addresses: ["0xcd12af610f1850d9f9b80048b8257587e61b6011"], includeChains: ["43114"] } }),
      })
    ).json()) as { operationId: string; operationStatus: string };
    const read = async () =>
      ((await (await fetch(`${simulator.dataUrl}/v1/operations/${created.operationId}`)).json()) as { operationStatus: string }).operationStatus;
    expect(await read()).toBe("RUNNING");
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await read()).not.toBe("RUNNING");
  });
});
