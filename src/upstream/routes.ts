/**
 * Every upstream route the gateway calls, declared once: its service, method and path (a
 * contract path, so that the clients' calls stay typed by the contract), what one call costs,
 * and, for a route a connection pages through, the page-size bounds and default (read from the
 * contract when this module loads) and the sentence a field's description says of `first`.
 *
 * The upstream clients call `ROUTES.x.path`; resolvers page with `ROUTES.x.page` and describe
 * `first` with `ROUTES.x.firstText`; a field's upstream cost is built from its route
 * (`connectionCost(ROUTES.x)`, src/limits/upstream-cost-declarations.ts).
 */
import { describeFirst, queryBounds, type PageBounds } from "./bounds.ts";
import type { RoutesWith } from "./contract-client.ts";
import type { DataPaths, MetricsPaths } from "./types.ts";

interface ServicePaths {
  data: DataPaths;
  metrics: MetricsPaths;
}

type RouteService = keyof ServicePaths;
type RouteMethod = "get" | "post";

export interface Route<S extends RouteService = RouteService, M extends RouteMethod = RouteMethod, P extends string = string> {
  readonly service: S;
  readonly method: M;
  /** The contract's path template, e.g. `/v1/chains/{chainId}`. */
  readonly path: P;
  /** `GET /v1/chains/{chainId}`: how descriptions, logs and the simulator's fault knobs name the route. */
  readonly label: string;
  /** What one call of the route costs a caller, in the rate limiter's upstream calls. */
  readonly cost: number;
}

/** A route a connection pages through. */
export interface PagedRoute<
  S extends RouteService = RouteService,
  M extends RouteMethod = RouteMethod,
  P extends string = string,
> extends Route<S, M, P> {
  /** `first` within these bounds; its default when a client gives none. */
  readonly page: PageBounds;
  /** What the description of a field over the route says of `first`. */
  readonly firstText: string;
}

/** A route's page size when the client gives no `first` and the contract gives the route no default. */
const GATEWAY_DEFAULT_PAGE_SIZE = 10;

function route<S extends RouteService, M extends RouteMethod, P extends RoutesWith<ServicePaths[S], M>>(
  service: S,
  method: M,
  path: P,
): Route<S, M, P> {
  return { service, method, path, label: `${method.toUpperCase()} ${path}`, cost: 1 };
}

/** The route's `pageSize` bounds from the contract, with its default, else the gateway's. */
function contractPage(declared: Route): PageBounds {
  const bounds = queryBounds(declared.service, declared.path, "pageSize", declared.method);
  return { min: bounds.min, max: bounds.max, default: bounds.default ?? GATEWAY_DEFAULT_PAGE_SIZE };
}

function paged<S extends RouteService, M extends RouteMethod, P extends string>(
  declared: Route<S, M, P>,
  page: PageBounds,
  firstText: string,
): PagedRoute<S, M, P> {
  return { ...declared, page, firstText };
}

/**
 * A route paged by its contract bounds. The EVM routes' descriptions state `first` from 0 (no
 * page read), the others' from the route's smallest page size, as each field has always said it.
 */
function contractPaged<S extends RouteService, M extends RouteMethod, P extends string>(
  declared: Route<S, M, P>,
  statedFrom: "zero" | "route minimum",
  note?: string,
): PagedRoute<S, M, P> {
  const page = contractPage(declared);
  return paged(declared, page, describeFirst(page, statedFrom === "zero" ? undefined : page.min, note));
}

const blockTransactions = route("data", "get", "/v1/chains/{chainId}/blocks/{blockId}/transactions");
const blockTransactionsBounds = queryBounds(blockTransactions.service, blockTransactions.path);
/** The route's own default page size returns no transactions; its largest holds nearly every block whole. */
const blockTransactionsPage: PageBounds = { ...blockTransactionsBounds, default: blockTransactionsBounds.max };

const chainMetrics = contractPaged(route("metrics", "get", "/v2/chains/{chainId}/metrics/{metric}"), "route minimum");

/**
 * The legacy average-TPS route takes no page size: it answers 100 points a page, and the gateway
 * cuts pages within the route's page, so no page of `avgTps` holds more.
 */
const LEGACY_AVG_TPS_PAGE: PageBounds = { min: 1, max: 100, default: 100 };

/** Routes without a pageSize: the gateway pages their whole answer, in pages as large as the chain metrics route's. */
function gatewayPaged<S extends RouteService, M extends RouteMethod, P extends string>(declared: Route<S, M, P>) {
  return paged(declared, chainMetrics.page, chainMetrics.firstText);
}

export const ROUTES = {
  // The Data API: EVM chains, blocks and transactions (src/upstream/evm-api.ts)
  chains: route("data", "get", "/v1/chains"),
  chain: route("data", "get", "/v1/chains/{chainId}"),
  latestBlocks: contractPaged(route("data", "get", "/v1/blocks"), "zero"),
  chainBlocks: contractPaged(route("data", "get", "/v1/chains/{chainId}/blocks"), "zero"),
  block: route("data", "get", "/v1/chains/{chainId}/blocks/{blockId}"),
  addressTransactions: contractPaged(route("data", "get", "/v1/chains/{chainId}/addresses/{address}/transactions"), "zero"),
  blockTransactions: paged(
    blockTransactions,
    blockTransactionsPage,
    `${describeFirst(blockTransactionsPage)} The default holds a whole block in one page for nearly every block (the route's own default, ${blockTransactionsBounds.default}, would give none).`,
  ),
  transaction: route("data", "get", "/v1/chains/{chainId}/transactions/{txHash}"),

  // The Data API: the primary network (src/upstream/primary-network-api.ts)
  primaryNetworkBlock: route("data", "get", "/v1/networks/{network}/blockchains/{blockchainId}/blocks/{blockId}"),
  primaryNetworkTransactions: contractPaged(
    route("data", "get", "/v1/networks/{network}/blockchains/{blockchainId}/transactions"),
    "route minimum",
    "a page may hold fewer when its transactions have many UTXOs",
  ),
  primaryNetworkTransaction: route("data", "get", "/v1/networks/{network}/blockchains/{blockchainId}/transactions/{txHash}"),
  utxos: contractPaged(route("data", "post", "/v1/networks/{network}/blockchains/{blockchainId}/utxos"), "route minimum"),
  vertex: route("data", "get", "/v1/networks/{network}/blockchains/{blockchainId}/vertices/{vertexHash}"),
  verticesAtHeight: contractPaged(
    route("data", "get", "/v1/networks/{network}/blockchains/{blockchainId}/vertices:listByHeight"),
    "route minimum",
  ),
  l1Validators: contractPaged(route("data", "get", "/v1/networks/{network}/l1Validators"), "route minimum"),

  // The Data API: export jobs and Warp signature aggregation (src/upstream/export-jobs-api.ts, warp-api.ts)
  createTransactionExport: route("data", "post", "/v1/operations/transactions:export"),
  exportOperation: route("data", "get", "/v1/operations/{operationId}"),
  aggregateSignatures: route("data", "post", "/v1/signatureAggregator/{network}/aggregateSignatures"),
  transactionWarpMessage: route("data", "get", "/v1/signatureAggregator/{network}/aggregateSignatures/{txHash}"),

  // The Metrics API (src/upstream/metrics-api.ts)
  metricsChain: route("metrics", "get", "/v2/chains/{chainId}"),
  chainMetrics,
  stakingMetrics: contractPaged(route("metrics", "get", "/v2/networks/{network}/metrics/{metric}"), "route minimum"),
  subnetMetrics: gatewayPaged(route("metrics", "get", "/v2/subnet/{subnetId}/metrics/{metric}")),
  validatorFeeMetrics: gatewayPaged(route("metrics", "get", "/v2/validators/metrics/{metric}")),
  tokenHolders: contractPaged(route("metrics", "get", "/v2/chains/{chainId}/contracts/{address}/balances"), "route minimum"),
  btcbBridgedAddresses: contractPaged(route("metrics", "get", "/v2/chains/43114/btcb/bridged:getAddresses"), "route minimum"),
  legacyAvgTps: paged(
    route("metrics", "get", "/v1/avg_tps/{chainId}"),
    LEGACY_AVG_TPS_PAGE,
    describeFirst(LEGACY_AVG_TPS_PAGE, LEGACY_AVG_TPS_PAGE.min),
  ),
} as const;

export type RouteName = keyof typeof ROUTES;

/** The services' health routes: readiness asks them (src/plugins/readiness.ts); no field calls them. */
export const HEALTH_ROUTES = { data: "/v1/health-check", metrics: "/v2/health-check" } as const;
