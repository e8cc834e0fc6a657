/**
 * Per-request context: the caller's upstream credentials and the request's DataLoaders.
 * Loaders dedupe and batch look-ups within one request; list pages prime them.
 */
import DataLoader from "dataloader";
import type { DataApi } from "./upstream/data-api.ts";
import type { CallOptions } from "./upstream/http.ts";
import type { MetricsApi } from "./upstream/metrics-api.ts";
import type { ChainInfo, EvmBlock, MetricsChain } from "./upstream/types.ts";

export interface Upstreams {
  data: DataApi;
  metrics: MetricsApi;
}

export interface BlockKey {
  /** EVM chain id or blockchain id, as the upstream accepts either. */
  chainId: string;
  /** Block number (decimal) or block hash. */
  blockId: string;
}

export interface Loaders {
  /** Chain records by EVM chain id or blockchain id; null when unknown. */
  chain: DataLoader<string, ChainInfo | null>;
  /** Blocks by chain and number or hash; null when unknown. */
  block: DataLoader<BlockKey, EvmBlock | null, string>;
  /** How the Metrics API knows a chain, by EVM chain id; null when it does not. */
  metricsChain: DataLoader<string, MetricsChain | null>;
}

export interface GatewayContext {
  upstreams: Upstreams;
  /** Sent with every upstream call of this request: the caller's key and request id. */
  call: CallOptions;
  loaders: Loaders;
  /** Puts a page's blocks into the block loader under their hash and number. */
  primeBlocks(blocks: readonly EvmBlock[]): void;
}

function blockKey({ chainId, blockId }: BlockKey): string {
  return `${chainId}:${blockId.startsWith("0x") ? blockId.toLowerCase() : blockId}`;
}

export function createContext(upstreams: Upstreams, call: CallOptions): GatewayContext {
  const { data, metrics } = upstreams;

  const chain = new DataLoader<string, ChainInfo | null>(async (ids) => {
    // One `GET /v1/chains` answers every supported chain, by either of its ids; an id not in
    // the list may still be a chain the list leaves out, so it gets its own look-up.
    const all = await data.listChains({}, call);
    const byId = new Map<string, ChainInfo>();
    for (const info of all) {
      byId.set(info.chainId, info);
      if (info.platformChainId) byId.set(info.platformChainId, info);
    }
    return Promise.all(ids.map((id) => byId.get(id) ?? data.getChain(id, call).catch((error: unknown) => error as Error)));
  });

  const block = new DataLoader<BlockKey, EvmBlock | null, string>(
    (keys) => Promise.all(keys.map((key) => data.getBlock(key.chainId, key.blockId, call).catch((error: unknown) => error as Error))),
    { cacheKeyFn: blockKey },
  );

  const metricsChain = new DataLoader<string, MetricsChain | null>((ids) =>
    Promise.all(ids.map((id) => metrics.getChain(id, call).catch((error: unknown) => error as Error))),
  );

  return {
    upstreams,
    call,
    loaders: { chain, block, metricsChain },
    primeBlocks(blocks) {
      for (const item of blocks) {
        block.prime({ chainId: item.chainId, blockId: item.blockHash }, item);
        block.prime({ chainId: item.chainId, blockId: item.blockNumber }, item);
      }
    },
  };
}
