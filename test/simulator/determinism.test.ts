import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type RunningSimulator } from "../../simulator/server.ts";

const PATHS = [
  "/v1/chains",
  "/v1/chains/73310",
  "/v1/blocks?pageSize=100",
  "/v1/chains/43114/blocks?pageSize=50",
  "/v1/chains/51289/blocks/4321",
];

async function answers(baseUrl: string): Promise<string[]> {
  return Promise.all(PATHS.map(async (path) => (await fetch(`${baseUrl}${path}`)).text()));
}

let first: RunningSimulator;
let sameSeed: RunningSimulator;
let otherSeed: RunningSimulator;

beforeAll(async () => {
  [first, sameSeed, otherSeed] = await Promise.all([
    startSimulator({ seed: "determinism" }),
    startSimulator({ seed: "determinism" }),
    startSimulator({ seed: "another seed" }),
  ]);
});

afterAll(() => Promise.all([first, sameSeed, otherSeed].map((simulator) => simulator.close())));

describe("determinism", () => {
  it("answers identically for the same seed", async () => {
    expect(await answers(sameSeed.dataUrl)).toEqual(await answers(first.dataUrl));
    const metrics = async (simulator: RunningSimulator) => (await fetch(`${simulator.metricsUrl}/v2/chains`)).text();
    expect(await metrics(sameSeed)).toEqual(await metrics(first));
  });

  it("keeps page tokens valid across instances with the same seed", async () => {
    const page = (await (await fetch(`${first.dataUrl}/v1/blocks`)).json()) as { nextPageToken: string };
    const next = await fetch(`${sameSeed.dataUrl}/v1/blocks?pageToken=${page.nextPageToken}`);
    expect(next.status).toBe(200);
  });

  it("differs in blocks, not in chains, for another seed", async () => {
    const [chains, ...blocks] = await answers(otherSeed.dataUrl);
    const [sameChains, ...sameBlocks] = await answers(first.dataUrl);
    expect(chains).toEqual(sameChains);
    blocks.slice(1).forEach((answer, index) => expect(answer).not.toEqual(sameBlocks[index + 1]));
  });
});
