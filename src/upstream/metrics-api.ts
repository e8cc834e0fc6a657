/** The Metrics API: typed calls, with chain records cached for the chain TTL. */
import type { CacheConfig } from "../config.ts";
import { nullIfNotFound } from "../errors.ts";
import type { RecordCache } from "./cache.ts";
import { ContractClient } from "./contract-client.ts";
import type { CallOptions, UpstreamService } from "./http.ts";
import type { MetricsChain, MetricsPaths } from "./types.ts";

export class MetricsApi {
  readonly client: ContractClient<MetricsPaths>;

  constructor(
    service: UpstreamService,
    private readonly cache: RecordCache,
    private readonly cacheConfig: Pick<CacheConfig, "chainTtlMs">,
  ) {
    this.client = new ContractClient<MetricsPaths>(service);
  }

  /** `GET /v2/chains/{chainId}`: how the Metrics API knows an EVM chain; null when it does not. */
  getChain(evmChainId: string, options?: CallOptions): Promise<MetricsChain | null> {
    return this.cache.getOrLoad(
      `metrics-chain:${evmChainId}`,
      () => nullIfNotFound(this.client.get("/v2/chains/{chainId}", { params: { chainId: evmChainId } }, options)),
      this.cacheConfig.chainTtlMs,
    );
  }
}
