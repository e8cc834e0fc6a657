/**
 * The questions live subscriptions ask the upstream, one poller per distinct question: each
 * names its route and arguments (its key), how to read its newest page, and where an item stands
 * in its order. The arguments reach here checked by the resolvers.
 */
import type { LiveConfig, PollInterval } from "../config.ts";
import type { Upstreams } from "../upstream/upstreams.ts";
import { ROUTES } from "../upstream/routes.ts";
import { registerTransaction, type PrimaryNetworkOrigin } from "../upstream/primary-network-api.ts";
import type { ExactMetricValue } from "../upstream/metrics-api.ts";
import type {
  AddressTransaction,
  ChainMetricName,
  EvmBlock,
  MetricsTimeInterval,
  PrimaryNetworkTransaction,
  UpstreamNetwork,
} from "../upstream/types.ts";
import type { LiveQuestion, Position } from "./live-question.ts";

function timing(interval: PollInterval): Pick<LiveQuestion<unknown>, "intervalMs" | "maxIntervalMs"> {
  return { intervalMs: interval.baseMs, maxIntervalMs: interval.maxMs };
}

function blockPosition(block: EvmBlock, stream: string): Position {
  return { stream, number: BigInt(block.blockNumber), time: block.blockTimestamp, id: block.blockHash };
}

/** Where a primary-network transaction stands: its block's height; an X-Chain transaction of the DAG era has none. */
function primaryNetworkPosition(tx: PrimaryNetworkTransaction): Position | undefined {
  if ("blockNumber" in tx) return { stream: "", number: BigInt(tx.blockNumber), time: tx.blockTimestamp, id: tx.txHash };
  if ("blockHeight" in tx && tx.blockHeight !== undefined) {
    return { stream: "", number: BigInt(tx.blockHeight), time: tx.timestamp, id: tx.txHash };
  }
  return undefined;
}

export class LiveQuestions {
  constructor(
    private readonly upstreams: Upstreams,
    private readonly config: LiveConfig,
  ) {}

  /** New blocks of one EVM chain. */
  chainBlocks(chainId: string): LiveQuestion<EvmBlock> {
    return {
      key: `chain-blocks:${chainId}`,
      what: `chain ${chainId}`,
      pageSize: ROUTES.chainBlocks.page.max,
      firstPageSize: 1,
      ...timing(this.config.blocks),
      read: async (pageSize, pageToken, call) => {
        const response = await this.upstreams.evm.listLatestBlocks(chainId, { pageSize, pageToken }, call);
        return { items: response.blocks, nextPageToken: response.nextPageToken };
      },
      position: (block) => blockPosition(block, ""),
    };
  }

  /** New blocks of every EVM chain of a network: one stream per chain. */
  networkBlocks(network: UpstreamNetwork): LiveQuestion<EvmBlock> {
    return {
      key: `network-blocks:${network}`,
      what: `the ${network} network`,
      pageSize: ROUTES.latestBlocks.page.max,
      firstPageSize: ROUTES.latestBlocks.page.max,
      ...timing(this.config.blocks),
      read: async (pageSize, pageToken, call) => {
        const response = await this.upstreams.evm.listLatestBlocksAllChains(network, { pageSize, pageToken }, call);
        return { items: response.blocks, nextPageToken: response.nextPageToken };
      },
      position: (block) => blockPosition(block, block.chainId),
    };
  }

  /** New transactions of an EVM address (lower case), each with the transfers and calls that concern it. */
  addressTransactions(chainId: string, address: string): LiveQuestion<AddressTransaction> {
    return {
      key: `address-transactions:${chainId}:${address}`,
      what: `address ${address} on chain ${chainId}`,
      pageSize: ROUTES.addressTransactions.page.max,
      // A block may hold several of the address's transactions: the first read takes the newest whole.
      firstPageSize: ROUTES.addressTransactions.page.max,
      ...timing(this.config.addressTransactions),
      read: async (pageSize, pageToken, call) => {
        const response = await this.upstreams.evm.listAddressTransactions(
          chainId,
          address,
          { sortOrder: "desc" },
          { pageSize, pageToken },
          call,
        );
        return { items: response.transactions, nextPageToken: response.nextPageToken };
      },
      position: ({ nativeTransaction: tx }) => ({
        stream: "",
        number: BigInt(tx.blockNumber),
        time: tx.blockTimestamp,
        id: tx.txHash,
      }),
    };
  }

  /** New transactions of a P-, X- or C-Chain, of some addresses (comma-separated, in a canonical order) or of all. */
  primaryNetworkTransactions(
    origin: PrimaryNetworkOrigin,
    addresses: string | undefined,
  ): LiveQuestion<PrimaryNetworkTransaction> {
    return {
      key: `primary-network-transactions:${origin.network}:${origin.blockchainId}:${addresses ?? ""}`,
      what: `the ${origin.network} ${origin.chain}${addresses ? ` (addresses ${addresses})` : ""}`,
      pageSize: ROUTES.primaryNetworkTransactions.page.max,
      firstPageSize: ROUTES.primaryNetworkTransactions.page.max,
      ...timing(this.config.primaryNetworkTransactions),
      read: async (pageSize, pageToken, call) => {
        const response = await this.upstreams.primaryNetwork.listTransactions(
          origin,
          { addresses, sortOrder: "desc" },
          { pageSize, pageToken },
          call,
        );
        return { items: response.items, nextPageToken: response.nextPageToken };
      },
      position: primaryNetworkPosition,
      revive: (tx) => registerTransaction(tx, origin),
    };
  }

  /** A chain metric's latest point, at an interval; `scope` is an EVM chain id or `total`, `mainnet` or `testnet`. */
  chainMetricLatest(scope: string, metric: ChainMetricName, interval: MetricsTimeInterval): LiveQuestion<ExactMetricValue> {
    return {
      key: `chain-metric:${scope}:${metric}:${interval}`,
      what: `${metric} of ${scope}`,
      pageSize: 1,
      firstPageSize: 1,
      ...timing(this.config.chainMetrics),
      latestValue: true,
      read: async (pageSize, pageToken, call) => {
        const response = await this.upstreams.metrics.chainMetrics(
          scope,
          metric,
          { timeInterval: interval },
          { pageSize, pageToken },
          call,
        );
        // One page: the point now is the first.
        return { items: response.results };
      },
      position: (point) => ({ stream: "", number: BigInt(point.timestamp), time: point.timestamp, id: point.valueExact }),
    };
  }
}
