import { ChainBlocks, type GrowingSequence } from "./blocks.ts";
import type { EvmBlock } from "../../src/upstream/types.ts";
import { CHAIN_DEFINITIONS, type ChainInfo, type MetricsChain, type NetworkName } from "./chains.ts";
import { PRIMARY_CHAIN_IDS, PrimaryNetwork } from "./primary-network/index.ts";
import { ChainTransactions } from "./evm-transactions/index.ts";

export type { GrowingSequence, Sequence } from "./blocks.ts";
export type { ChainInfo, MetricsChain, NetworkName } from "./chains.ts";
export type { ChainTransactions } from "./evm-transactions/index.ts";

export interface NetworkOptions {
  /** Any string; the same seed always gives the same network. */
  seed: string;
  blocksPerChain: number;
  /** Time of the newest block of the network, in Unix seconds. */
  headTime: number;
  /** Mean time between two blocks of a chain, in seconds. */
  blockIntervalSeconds: number;
}

export const DEFAULT_NETWORK_OPTIONS: NetworkOptions = {
  seed: "avalanche-simulator",
  blocksPerChain: 5000,
  headTime: Date.UTC(2026, 10, 1) / 1000,
  // 36 minutes: 5,000 blocks span about 125 days, enough for daily, weekly and monthly metrics.
  blockIntervalSeconds: 2160,
};

export interface SimulatedChain {
  network: NetworkName;
  evmChainId: string;
  blockchainId: string;
  info: ChainInfo;
  metrics: MetricsChain;
  blocks: ChainBlocks;
}

/** Where a chain's head stands. */
export interface ChainHead {
  chainId: string;
  network: NetworkName;
  blockNumber: number;
  blockHash: string;
  /** Unix seconds. */
  blockTimestamp: number;
}

/**
 * The deterministic sample network that both simulated services answer from. It holds the
 * history up to its head time; `advanceTo` moves its clock on, and every chain then gains the
 * blocks (and the primary network the transactions) due by the new time, the same ones whenever
 * and in however many steps it gets there.
 */
export class SampleNetwork {
  /** Ordered by EVM chain id, as text, which is also the tie-break of the all-chains block order. */
  readonly chains: readonly SimulatedChain[];
  private readonly chainsById = new Map<string, SimulatedChain>();
  private latestBlocksByNetwork: Record<NetworkName | "all", BlockFeed>;
  private clockMs: number;
  private changes = 0;
  private readonly primaryNetworks = new Map<NetworkName, PrimaryNetwork>();
  private readonly transactionsByChain = new Map<SimulatedChain, ChainTransactions>();

  constructor(readonly options: NetworkOptions) {
    const { seed, blocksPerChain, headTime, blockIntervalSeconds } = options;
    if (!Number.isInteger(blocksPerChain) || blocksPerChain < 1 || blocksPerChain > 0xffff_ffff) {
      throw new RangeError(`blocksPerChain must be an integer from 1 to ${0xffff_ffff}`);
    }
    if (!Number.isInteger(headTime) || headTime < 0) {
      throw new RangeError("headTime must be a non-negative integer (Unix seconds)");
    }
    if (!Number.isFinite(blockIntervalSeconds) || blockIntervalSeconds <= 0) {
      throw new RangeError("blockIntervalSeconds must be a positive number");
    }
    this.chains = CHAIN_DEFINITIONS.map((definition) => ({
      network: definition.network,
      evmChainId: definition.info.chainId,
      blockchainId: definition.metrics.blockchainId,
      info: definition.info,
      metrics: definition.metrics,
      blocks: ChainBlocks.generate(definition.info.chainId, definition.profile, {
        seed,
        count: blocksPerChain,
        headTimeMs: headTime * 1000,
        meanIntervalMs: blockIntervalSeconds * 1000,
      }),
    })).sort((a, b) => compareText(a.evmChainId, b.evmChainId));
    for (const chain of this.chains) {
      this.chainsById.set(chain.evmChainId, chain);
      this.chainsById.set(chain.blockchainId, chain);
    }
    this.latestBlocksByNetwork = this.blockFeeds();
    this.clockMs = headTime * 1000;
  }

  /** The network's "now" in Unix milliseconds: the head time until the clock moves on. */
  get nowMs(): number {
    return this.clockMs;
  }

  /** Counts the changes of the network's data: whatever was worked out from it before a change is stale. */
  get version(): number {
    return this.changes;
  }

  /**
   * Moves the clock on to a time (Unix milliseconds; an earlier time than the clock's is ignored) and adds
   * the blocks and transactions due by then. Returns whether any were added.
   */
  advanceTo(timeMs: number): boolean {
    if (!(timeMs > this.clockMs)) return false;
    this.clockMs = timeMs;
    let blocksAdded = 0;
    for (const chain of this.chains) blocksAdded += chain.blocks.extendTo(timeMs);
    let primaryChanged = false;
    for (const primary of this.primaryNetworks.values())
      primaryChanged = primary.extendTo(Math.floor(timeMs / 1000)) || primaryChanged;
    if (blocksAdded === 0 && !primaryChanged) return false;
    if (blocksAdded > 0) this.latestBlocksByNetwork = this.blockFeeds();
    this.changes++;
    return true;
  }

  /** The newest block of every chain. */
  heads(): ChainHead[] {
    return this.chains.map((chain) => {
      const head = chain.blocks.block(chain.blocks.headNumber)!;
      return {
        chainId: chain.evmChainId,
        network: chain.network,
        blockNumber: Number(head.blockNumber),
        blockHash: head.blockHash,
        blockTimestamp: head.blockTimestamp,
      };
    });
  }

  /** A chain by its EVM chain id or its blockchain id. */
  chain(id: string): SimulatedChain | undefined {
    return this.chainsById.get(id);
  }

  chainsOn(network: NetworkName | undefined): readonly SimulatedChain[] {
    return network === undefined ? this.chains : this.chains.filter((chain) => chain.network === network);
  }

  /**
   * The P-, X- and C-Chain history of a network, with its L1 validators' BLS keys. Generated on
   * first use, so that simulators that never serve the primary network do not pay for it.
   */
  primaryNetwork(network: NetworkName): PrimaryNetwork {
    let found = this.primaryNetworks.get(network);
    if (found === undefined) {
      const { seed, headTime } = this.options;
      found = new PrimaryNetwork(network, seed, headTime, this.chain(PRIMARY_CHAIN_IDS[network].C)!.blocks);
      found.extendTo(Math.floor(this.clockMs / 1000));
      this.primaryNetworks.set(network, found);
    }
    return found;
  }

  /** Blocks of every chain (of one network, if given), newest first, in the order of `GET /v1/blocks`. */
  latestBlocks(network: NetworkName | undefined): GrowingSequence<EvmBlock> {
    return this.latestBlocksByNetwork[network ?? "all"];
  }

  private blockFeeds(): Record<NetworkName | "all", BlockFeed> {
    return {
      all: new BlockFeed(this.chains),
      mainnet: new BlockFeed(this.chainsOn("mainnet")),
      fuji: new BlockFeed(this.chainsOn("fuji")),
    };
  }

  /** The transactions of a chain's blocks; generated on first use, so that start-up stays fast. */
  transactions(chain: SimulatedChain): ChainTransactions {
    let found = this.transactionsByChain.get(chain);
    if (found === undefined) {
      const peers = this.chainsOn(chain.network)
        .filter((peer) => peer !== chain)
        .map((peer) => peer.blockchainId);
      found = new ChainTransactions(chain.info, chain.blocks, {
        seed: this.options.seed,
        headTime: this.options.headTime,
        peers,
      });
      this.transactionsByChain.set(chain, found);
    }
    return found;
  }
}

export function generateNetwork(options: Partial<NetworkOptions> = {}): SampleNetwork {
  return new SampleNetwork({ ...DEFAULT_NETWORK_OPTIONS, ...options });
}

/** The network a contract `network` parameter selects; `testnet` is an alias of `fuji`. */
export function networkNamed(network: "mainnet" | "fuji" | "testnet" | undefined): NetworkName | undefined {
  return network === "testnet" ? "fuji" : network;
}

/**
 * The blocks of several chains merged by descending block timestamp, ties
 * broken by chain order and then by descending block number. Kept as two
 * parallel columns (chain slot, block number) and materialized on access.
 */
class BlockFeed implements GrowingSequence<EvmBlock> {
  readonly growsAt = "front";
  readonly length: number;
  private readonly chainSlots: Uint8Array;
  private readonly blockNumbers: Uint32Array;

  constructor(private readonly chains: readonly SimulatedChain[]) {
    this.length = chains.reduce((total, chain) => total + chain.blocks.count, 0);
    this.chainSlots = new Uint8Array(this.length);
    this.blockNumbers = new Uint32Array(this.length);
    const next = chains.map((chain) => chain.blocks.headNumber);
    for (let index = 0; index < this.length; index++) {
      let best = -1;
      let bestTimestamp = -Infinity;
      for (let slot = 0; slot < chains.length; slot++) {
        const number = next[slot]!;
        if (number < 0) continue;
        const timestamp = chains[slot]!.blocks.blockTimestamp(number);
        if (timestamp > bestTimestamp) {
          best = slot;
          bestTimestamp = timestamp;
        }
      }
      this.chainSlots[index] = best;
      this.blockNumbers[index] = next[best]!;
      next[best]!--;
    }
  }

  at(index: number): EvmBlock | undefined {
    if (!Number.isInteger(index) || index < 0 || index >= this.length) return undefined;
    return this.chains[this.chainSlots[index]!]!.blocks.block(this.blockNumbers[index]!);
  }
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
