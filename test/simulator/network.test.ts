import { describe, expect, it } from "vitest";
import { generateNetwork } from "../../simulator/network/index.ts";
import type { EvmBlock } from "../../src/upstream/types.ts";
import { decodeCb58 } from "../../simulator/network/ids.ts";
import { schemaProperties } from "./http.ts";

const network = generateNetwork();

function allBlocks(chainIndex: number): EvmBlock[] {
  const { blocks } = network.chains[chainIndex]!;
  return Array.from({ length: blocks.count }, (_, number) => blocks.block(number)!);
}

describe("sample network", () => {
  it("generates 6 chains of 5,000 blocks quickly", () => {
    const started = performance.now();
    const fresh = generateNetwork({ seed: "timing" });
    expect(performance.now() - started).toBeLessThan(1000);
    expect(fresh.chains).toHaveLength(6);
    for (const chain of fresh.chains) expect(chain.blocks.count).toBe(5000);
  });

  it("has the C-Chain of both networks under their real ids", () => {
    expect(network.chain("43114")?.blockchainId).toBe("2q9e4r6Mu3U68nU1fYjgbR6JvwrRx36CohpAX5UQxse55x1Q5");
    expect(network.chain("43113")?.blockchainId).toBe("yH8D7ThNJkxmtkuv2jgBa4P1Rn3Qpr4pPr7QYNfcdoS6k6HWp");
    for (const id of ["43114", "43113"]) {
      const info = network.chain(id)!.info;
      expect(info.subnetId).toBe("11111111111111111111111111111111LpoYY");
      expect(info.vmId).toBe("mgj786NP7uDwBCcq6YwThhaN8FLyybkCa4zBWTQbNgmK6k9A6");
    }
    expect(network.chainsOn("mainnet").length).toBeGreaterThanOrEqual(3);
    expect(network.chainsOn("fuji").length).toBeGreaterThanOrEqual(3);
  });

  it("fills every field of ChainInfo, with 32-byte cb58 ids", () => {
    const fields = schemaProperties("data", "ChainInfo");
    const features = new Set<string>();
    for (const chain of network.chains) {
      expect(Object.keys(chain.info).sort()).toEqual([...fields].sort());
      expect(chain.info.networkToken.description).toBeTruthy();
      expect(chain.info.networkToken.logoUri).toBeTruthy();
      expect(chain.info.utilityAddresses?.multicall).toMatch(/^0x[0-9a-fA-F]{40}$/);
      for (const id of [chain.info.platformChainId!, chain.info.subnetId!, chain.info.vmId!]) {
        expect(decodeCb58(id)?.length, id).toBe(32);
      }
      chain.info.enabledFeatures?.forEach((feature) => features.add(feature));
    }
    expect([...features].sort()).toEqual(["nftIndexing", "teleporter", "webhooks"]);
    expect(new Set(network.chains.map((chain) => chain.info.status))).toEqual(new Set(["OK", "UNAVAILABLE"]));
  });

  it("fills every field of EvmBlock, including the optional ones", () => {
    const fields = schemaProperties("data", "EvmBlock");
    expect(Object.keys(network.chains[0]!.blocks.block(10)!).sort()).toEqual([...fields].sort());
  });

  it("chains blocks by parent hash and keeps running totals and fees consistent", () => {
    // Plain checks collected per block: one expect() per field of 30,000 blocks would be slow.
    const problems: string[] = [];
    const check = (ok: boolean, what: string) => {
      if (!ok && problems.length < 10) problems.push(what);
    };
    for (let chainIndex = 0; chainIndex < network.chains.length; chainIndex++) {
      const blocks = allBlocks(chainIndex);
      check(blocks[0]!.parentHash === `0x${"0".repeat(64)}`, "genesis parent hash");
      let cumulative = 0;
      let emptyBlocks = 0;
      blocks.forEach((block, number) => {
        const where = `chain ${block.chainId} block ${number}`;
        check(/^0x[0-9a-f]{64}$/.test(block.blockHash), `${where}: hash format`);
        if (number > 0) {
          const parent = blocks[number - 1]!;
          check(block.parentHash === parent.blockHash, `${where}: parent hash`);
          const intervalMs = block.blockTimestampMilliseconds! - parent.blockTimestampMilliseconds!;
          const meanMs = network.options.blockIntervalSeconds * 1000;
          check(intervalMs >= meanMs / 2 && intervalMs <= meanMs * 1.5, `${where}: interval ${intervalMs} ms`);
          check(block.blockTimestamp > parent.blockTimestamp, `${where}: timestamp increases`);
        }
        check(block.blockTimestamp === Math.floor(block.blockTimestampMilliseconds! / 1000), `${where}: seconds`);
        cumulative += block.txCount;
        if (block.txCount === 0) emptyBlocks++;
        check(block.txCount <= 40, `${where}: txCount`);
        check(block.cumulativeTransactions === String(cumulative), `${where}: cumulativeTransactions`);
        check(BigInt(block.gasUsed) <= BigInt(block.gasLimit), `${where}: gasUsed <= gasLimit`);
        check(block.feesSpent === String(BigInt(block.gasUsed) * BigInt(block.baseFee)), `${where}: feesSpent`);
      });
      check(emptyBlocks > 0 && emptyBlocks < blocks.length, `chain ${chainIndex}: some blocks empty, not all`);
    }
    expect(problems).toEqual([]);
  });

  it("ends every chain at or just before the fixed head time", () => {
    const headTime = Date.UTC(2026, 10, 1) / 1000;
    for (const chain of network.chains) {
      const head = chain.blocks.latestFirst.at(0)!;
      expect(head.blockTimestamp).toBeLessThanOrEqual(headTime);
      expect(head.blockTimestamp).toBeGreaterThan(headTime - 1.5 * network.options.blockIntervalSeconds);
    }
    const later = generateNetwork({ headTime: headTime + 3600, blocksPerChain: 10, blockIntervalSeconds: 2 });
    expect(later.chains[0]!.blocks.latestFirst.at(0)!.blockTimestamp).toBeGreaterThan(headTime + 3590);
  });

  it("finds blocks by hash in any letter case", () => {
    const { blocks } = network.chains[2]!;
    for (const number of [0, 1, 2500, 4999]) {
      const hash = blocks.block(number)!.blockHash;
      expect(blocks.numberOfHash(hash)).toBe(number);
      expect(blocks.numberOfHash(`0x${hash.slice(2).toUpperCase()}`)).toBe(number);
    }
    expect(blocks.numberOfHash(`0x${"ab".repeat(32)}`)).toBeUndefined();
  });

  it("merges all chains newest first, ties by chain id then block number", () => {
    const feed = network.latestBlocks(undefined);
    expect(feed.length).toBe(6 * 5000);
    const outOfOrder: number[] = [];
    let previous = feed.at(0)!;
    for (let index = 1; index < feed.length; index++) {
      const block = feed.at(index)!;
      const order =
        previous.blockTimestamp - block.blockTimestamp ||
        (block.chainId > previous.chainId ? 1 : block.chainId < previous.chainId ? -1 : 0) ||
        Number(previous.blockNumber) - Number(block.blockNumber);
      if (order <= 0) outOfOrder.push(index);
      previous = block;
    }
    expect(outOfOrder).toEqual([]);
    expect(network.latestBlocks("fuji").length).toBe(3 * 5000);
  });

  it("is deterministic for a seed and differs between seeds", () => {
    const same = generateNetwork();
    const other = generateNetwork({ seed: "another seed" });
    for (const number of [0, 1, 777, 4999]) {
      expect(same.chains[1]!.blocks.block(number)).toEqual(network.chains[1]!.blocks.block(number));
    }
    expect(other.chains[1]!.blocks.block(4999)).not.toEqual(network.chains[1]!.blocks.block(4999));
  });

  it("scales with blocksPerChain", () => {
    expect(generateNetwork({ blocksPerChain: 8000 }).chains[0]!.blocks.count).toBe(8000);
    expect(() => generateNetwork({ blocksPerChain: 0 })).toThrow(RangeError);
  });
});
