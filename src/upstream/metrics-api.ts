/**
 * The Metrics API: typed calls, with chain records cached for the chain TTL. Metric series are
 * not cached: the service updates them several times an hour.
 *
 * Its page tokens expire 24 hours after they were issued. The service then refuses the token
 * with a 400 whose message says it expired; every paged call here turns that answer into
 * CURSOR_EXPIRED, so that clients know to start again from the first page.
 */
import type { CacheConfig } from "../config.ts";
import { UpstreamError, nullIfNotFound, type UpstreamErrorDetails } from "../errors.ts";
import type { RecordCache } from "./cache.ts";
import { ContractClient } from "./contract-client.ts";
import type { CallOptions, PageRequest, UpstreamService } from "./http.ts";
import type {
  AddressBalancesResponse,
  ChainMetricName,
  LegacyMetricsResponse,
  MetricsChain,
  MetricsNetwork,
  MetricsPaths,
  MetricsResponse,
  MetricsTimeInterval,
  StakingMetricName,
  SubnetMetricName,
  ValidatorFeeMetricName,
} from "./types.ts";

/** Unix seconds, both optional: only points from `startTimestamp` to `endTimestamp`. */
export interface MetricsRange {
  startTimestamp?: number | undefined;
  endTimestamp?: number | undefined;
}

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

  /**
   * `GET /v2/chains/{chainId}/metrics/{metric}`: a chain metric of one chain (`scope` is its EVM
   * chain id) or of a network's chains (`total`, `mainnet`, `testnet`).
   */
  chainMetrics(
    scope: string,
    metric: ChainMetricName,
    filters: MetricsRange & { timeInterval: MetricsTimeInterval },
    page: PageRequest,
    options?: CallOptions,
  ): Promise<MetricsResponse> {
    return expiringToken(page, () =>
      this.client.get(
        "/v2/chains/{chainId}/metrics/{metric}",
        { params: { chainId: scope, metric }, query: { ...filters, ...page } },
        options,
      ),
    );
  }

  /** `GET /v2/networks/{network}/metrics/{metric}`: validators and delegators of a subnet (the primary network unless given). */
  stakingMetrics(
    network: MetricsNetwork,
    metric: StakingMetricName,
    filters: MetricsRange & { subnetId?: string | undefined },
    page: PageRequest,
    options?: CallOptions,
  ): Promise<MetricsResponse> {
    return expiringToken(page, () =>
      this.client.get("/v2/networks/{network}/metrics/{metric}", { params: { network, metric }, query: { ...filters, ...page } }, options),
    );
  }

  /** `GET /v2/subnet/{subnetId}/metrics/{metric}`: the whole range in one answer (the route has no page parameters). */
  subnetMetrics(subnetId: string, metric: SubnetMetricName, range: MetricsRange, options?: CallOptions): Promise<MetricsResponse> {
    return this.client.get("/v2/subnet/{subnetId}/metrics/{metric}", { params: { subnetId, metric }, query: range }, options);
  }

  /** `GET /v2/validators/metrics/{metric}`: the whole range in one answer (the route has no page parameters). */
  validatorFeeMetrics(metric: ValidatorFeeMetricName, range: MetricsRange, options?: CallOptions): Promise<MetricsResponse> {
    return this.client.get("/v2/validators/metrics/{metric}", { params: { metric }, query: range }, options);
  }

  /** `GET /v2/chains/{chainId}/contracts/{address}/balances`: holders of a token above a threshold. */
  tokenHolders(
    chainId: string,
    contract: string,
    filters: MetricsRange & { threshold: string },
    page: PageRequest,
    options?: CallOptions,
  ): Promise<AddressBalancesResponse> {
    return expiringToken(page, () =>
      this.client.get(
        "/v2/chains/{chainId}/contracts/{address}/balances",
        { params: { chainId, address: contract }, query: { ...filters, ...page } },
        options,
      ),
    );
  }

  /** `GET /v2/chains/43114/btcb/bridged:getAddresses`: addresses that bridged more BTC.b than a threshold. */
  btcbBridgedAddresses(threshold: string, page: PageRequest, options?: CallOptions): Promise<AddressBalancesResponse> {
    return expiringToken(page, () =>
      this.client.get("/v2/chains/43114/btcb/bridged:getAddresses", { query: { threshold, ...page } }, options),
    );
  }

  /**
   * `GET /v1/avg_tps/{chainId}`, the legacy route: the service sizes its pages. Its cursor is
   * `nextPageToken` in the documentation and `nextPageStartKey` in the older spec; either
   * comes back as `nextPageToken`.
   */
  async legacyAvgTps(chainId: string, pageToken: string | undefined, options?: CallOptions): Promise<LegacyMetricsResponse> {
    const response = await expiringToken({ pageToken }, () =>
      this.client.get("/v1/avg_tps/{chainId}", { params: { chainId }, query: { pageToken } }, options),
    );
    return { ...response, nextPageToken: response.nextPageToken ?? response.nextPageStartKey };
  }
}

async function expiringToken<T>(page: { pageToken?: string | undefined }, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (page.pageToken !== undefined && error instanceof UpstreamError && error.status === 400) {
      const upstream = error.extensions.upstream as UpstreamErrorDetails;
      if (/expired/i.test(upstream.message ?? "")) {
        throw new UpstreamError(
          "The page behind `after` has expired upstream (Metrics API page tokens last 24 hours): request the first page again, without `after`",
          "CURSOR_EXPIRED",
          upstream,
          { argument: "after" },
        );
      }
    }
    throw error;
  }
}
