import { describe, expect, it } from "vitest";
import type { components } from "../src/upstream/contract/data-api.ts";
import { simulatorGet, upstreamCalls, useHarness } from "./support/harness.ts";

type ListEvmBlocksResponse = components["schemas"]["ListEvmBlocksResponse"];

// Three records: few enough that the test decides which one the record cache evicts.
const harness = useHarness({ env: { CACHE_MAX_ENTRIES: "3" } });
const BLOCK = "GET /v1/chains/{chainId}/blocks/{blockId}";

describe("a block's records in the record cache", () => {
  it("are stored by number again when a block held by its hash only is fetched by number", async () => {
    const page = await simulatorGet<ListEvmBlocksResponse>(harness, "data", "/v1/chains/43114/blocks?pageSize=2");
    const [first, second] = page.blocks;
    harness.simulator.resetCounters();
    const { evm } = harness.gateway.upstreams;

    // Held by hash and number; the hash read again, so that the number is the oldest record.
    await evm.getBlock("43114", first!.blockNumber);
    expect((await evm.getBlock("43114", first!.blockHash))?.blockNumber).toBe(first!.blockNumber);
    // A second block's two records leave room for the first block's hash only.
    await evm.getBlock("43114", second!.blockNumber);
    expect(upstreamCalls(harness)).toEqual({ [BLOCK]: 2 });
    await evm.getBlock("43114", first!.blockHash);
    expect(upstreamCalls(harness)).toEqual({ [BLOCK]: 2 });

    // By number it is read again once, then held by number as well.
    expect((await evm.getBlock("43114", first!.blockNumber))?.blockHash).toBe(first!.blockHash);
    expect(upstreamCalls(harness)).toEqual({ [BLOCK]: 3 });
    expect((await evm.getBlock("43114", first!.blockNumber))?.blockHash).toBe(first!.blockHash);
    expect(upstreamCalls(harness)).toEqual({ [BLOCK]: 3 });
  });
});
