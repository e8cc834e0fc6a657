/**
 * The Metrics API: typed calls, with chain records cached for the chain TTL. Metric series are
 * not cached: the service updates them several times an hour.
 *
 * Its page tokens expire 24 hours after they were issued. The service then refuses the token
 * with a 400 whose message says it expired; every paged call here turns that answer into
 * CURSOR_EXPIRED, so that clients know to start again from the first page.
 *
 * Metric values are JSON numbers, and wei-denominated series (fees, gas price sums) pass 2^53:
 * the series routes' bodies are read with a lossless parser, and each point keeps its value's
 * exact decimal text beside the double.
 */
import { isLosslessNumber, parse as parseLossless, type LosslessNumber } from "lossless-json";
import type { CacheConfig } from "../config.ts";
import { UpstreamError, nullIfNotFound, type UpstreamErrorDetails } from "../errors.ts";
import type { RecordCache } from "./cache.ts";
import { ContractClient } from "./contract-client.ts";
import { ROUTES } from "./routes.ts";
import type { CallOptions } from "./call-options.ts";
import type { UpstreamService } from "./http.ts";
import type { PageRequest } from "./request-target.ts";
import type {
  AddressBalancesResponse,
  ChainMetricName,
  LegacyMetricsResponse,
  MetricValue,
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

/** A point of a metric series, with its value as the exact decimal text the service sent. */
export type ExactMetricValue = MetricValue & {
  /** The value in plain decimal notation (no exponent), digit for digit as sent: "226000000000000000123", "0.25". */
  valueExact: string;
};
export type ExactMetricsResponse = Omit<MetricsResponse, "results"> & { results: ExactMetricValue[] };
export type ExactLegacyMetricsResponse = Omit<LegacyMetricsResponse, "results"> & { results: ExactMetricValue[] };

const JSON_NUMBER = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/;
/** Exponents beyond a double's range: a value that far out is no metric (and its text would be huge). */
const MAX_EXPONENT = 400;

/** A JSON number's text in plain decimal notation, exactly: "2.26e17" → "226000000000000000", "-0.0" → "0". */
export function decimalText(json: string): string {
  const match = JSON_NUMBER.exec(json);
  if (match === null) throw new SyntaxError(`not a JSON number: ${json.slice(0, 40)}`);
  const [, sign, whole, fraction = "", exponentText = "0"] = match as unknown as [
    string,
    string,
    string,
    string | undefined,
    string | undefined,
  ];
  const exponent = Number(exponentText);
  if (Math.abs(exponent) > MAX_EXPONENT) throw new SyntaxError(`number out of range: ${json.slice(0, 40)}`);
  let digits = whole + fraction;
  let point = whole.length + exponent;
  if (point <= 0) {
    digits = "0".repeat(1 - point) + digits;
    point = 1;
  }
  if (point > digits.length) digits += "0".repeat(point - digits.length);
  const integer = digits.slice(0, point).replace(/^0+(?=[0-9])/, "");
  const decimals = digits.slice(point).replace(/0+$/, "");
  const text = decimals === "" ? integer : `${integer}.${decimals}`;
  return sign === "-" && /[1-9]/.test(text) ? `-${text}` : text;
}

/**
 * The body of a metric series route: every number a double, except that each point (an object
 * with a numeric `value`) also gets `valueExact`, the value's decimal text as the service sent it.
 */
export function parseMetricSeries(text: string): unknown {
  return parseLossless(text, (key, value) => {
    if (isLosslessNumber(value)) return key === "value" ? value : Number(value.value);
    if (
      value !== null &&
      typeof value === "object" &&
      !Array.isArray(value) &&
      isLosslessNumber((value as { value?: unknown }).value)
    ) {
      const exact = (value as { value: LosslessNumber }).value.value;
      return { ...value, value: Number(exact), valueExact: decimalText(exact) };
    }
    return value;
  });
}

/** The call options of a series route: its body read losslessly. */
function seriesOptions(options: CallOptions | undefined): CallOptions {
  return { ...options, parseBody: parseMetricSeries };
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
      () => nullIfNotFound(this.client.get(ROUTES.metricsChain.path, { params: { chainId: evmChainId } }, options)),
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
  ): Promise<ExactMetricsResponse> {
    return expiringToken(page, () =>
      exactSeries(
        this.client.get(
          ROUTES.chainMetrics.path,
          { params: { chainId: scope, metric }, query: { ...filters, ...page } },
          seriesOptions(options),
        ),
      ),
    );
  }

  /**
   * `GET /v2/networks/{network}/metrics/{metric}`: validators and delegators of one subnet, or of
   * all subnets together when `subnetId` is left out (the service's meaning of an absent subnetId).
   */
  stakingMetrics(
    network: MetricsNetwork,
    metric: StakingMetricName,
    filters: MetricsRange & { subnetId?: string | undefined },
    page: PageRequest,
    options?: CallOptions,
  ): Promise<ExactMetricsResponse> {
    return expiringToken(page, () =>
      exactSeries(
        this.client.get(
          ROUTES.stakingMetrics.path,
          { params: { network, metric }, query: { ...filters, ...page } },
          seriesOptions(options),
        ),
      ),
    );
  }

  /** `GET /v2/subnet/{subnetId}/metrics/{metric}`: the whole range in one answer (the route has no page parameters). */
  subnetMetrics(
    subnetId: string,
    metric: SubnetMetricName,
    range: MetricsRange,
    options?: CallOptions,
  ): Promise<ExactMetricsResponse> {
    return exactSeries(
      this.client.get(ROUTES.subnetMetrics.path, { params: { subnetId, metric }, query: range }, seriesOptions(options)),
    );
  }

  /** `GET /v2/validators/metrics/{metric}`: the whole range in one answer (the route has no page parameters). */
  validatorFeeMetrics(metric: ValidatorFeeMetricName, range: MetricsRange, options?: CallOptions): Promise<ExactMetricsResponse> {
    return exactSeries(
      this.client.get(ROUTES.validatorFeeMetrics.path, { params: { metric }, query: range }, seriesOptions(options)),
    );
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
        ROUTES.tokenHolders.path,
        { params: { chainId, address: contract }, query: { ...filters, ...page } },
        options,
      ),
    );
  }

  /** `GET /v2/chains/43114/btcb/bridged:getAddresses`: addresses that bridged more BTC.b than a threshold. */
  btcbBridgedAddresses(threshold: string, page: PageRequest, options?: CallOptions): Promise<AddressBalancesResponse> {
    return expiringToken(page, () =>
      this.client.get(ROUTES.btcbBridgedAddresses.path, { query: { threshold, ...page } }, options),
    );
  }

  /**
   * `GET /v1/avg_tps/{chainId}`, the legacy route: the service sizes its pages. Its cursor is
   * `nextPageToken` in the documentation and `nextPageStartKey` in the older spec; either
   * comes back as `nextPageToken`.
   */
  async legacyAvgTps(chainId: string, pageToken: string | undefined, options?: CallOptions): Promise<ExactLegacyMetricsResponse> {
    const response = await expiringToken({ pageToken }, () =>
      exactSeries(
        this.client.get(ROUTES.legacyAvgTps.path, { params: { chainId }, query: { pageToken } }, seriesOptions(options)),
      ),
    );
    return { ...response, nextPageToken: response.nextPageToken ?? response.nextPageStartKey };
  }
}

/** A series body as `parseMetricSeries` read it: the contract's shape, each point with its `valueExact`. */
function exactSeries<Body extends { results: MetricValue[] }>(
  body: Promise<Body>,
): Promise<Omit<Body, "results"> & { results: ExactMetricValue[] }> {
  return body as unknown as Promise<Omit<Body, "results"> & { results: ExactMetricValue[] }>;
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
