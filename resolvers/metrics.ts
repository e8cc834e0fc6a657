/**
 * Metrics API fields: chain metrics (of a chain and of a network), staking, subnet and
 * validator-fee metrics, token holders, BTC.b bridged addresses and the legacy average TPS.
 * Every argument is checked before any upstream call.
 */
import { builder } from "../schema/builder.ts";
import { EvmChainRef } from "../schema/chains.ts";
import { graphqlEnumName } from "../schema/enums.ts";
import {
  AddressBalanceConnectionRef,
  ChainMetricConnectionRef,
  ChainMetricRef,
  LegacyAvgTpsConnectionRef,
  MetricConnectionRef,
  MetricIntervalRef,
  MetricPointRef,
  MetricsScopeRef,
  StakingMetricRef,
  SubnetMetricRef,
  ValidatorFeeMetricRef,
  type ChainMetricSeries,
  type LegacyAvgTpsMeta,
} from "../schema/metrics.ts";
import type { NetworkName } from "../schema/networks.ts";
import { PrimaryNetworkRef } from "../schema/primary-network.ts";
import type { GatewayContext } from "../src/execution/context.ts";
import { badUserInput, nullIfNotFound } from "../src/errors.ts";
import { slicedPages, toPageTokenConnection, type ConnectionArgs } from "../src/execution/pagination.ts";
import { callCost, connectionCost, upstreamCalls } from "../src/limits/upstream-cost-declarations.ts";
import { itemOrError } from "../src/live/live-feed.ts";
import { selectsAnyOf } from "../src/execution/selection.ts";
import { queryMinimum } from "../src/upstream/bounds.ts";
import { servesChainMetricAt } from "../src/upstream/metric-rules.ts";
import type { ExactMetricValue, MetricsRange } from "../src/upstream/metrics-api.ts";
import { ROUTES, type Route } from "../src/upstream/routes.ts";
import type {
  AddressBalance,
  ChainInfo,
  ChainMetricName,
  MetricsTimeInterval,
  StakingMetricName,
} from "../src/upstream/types.ts";
import { EVM_CHAIN_ID, cb58IdArgument, quoted } from "../src/upstream/identifiers.ts";

const { chainMetrics, stakingMetrics, subnetMetrics, validatorFeeMetrics, tokenHolders, btcbBridgedAddresses, legacyAvgTps } =
  ROUTES;
/** The primary network's subnet id (its text in cb58 is mostly ones). */
const PRIMARY_NETWORK_SUBNET_ID = "11111111111111111111111111111111LpoYY";

const RANGE_TEXT =
  "`from` and `to` (Unix seconds, at least 0, both inclusive) keep the points whose timestamp lies between them; they need not be aligned to the interval: a point starts at or after `from`.";

/** The fields of an avgTps page that only a page of the legacy route tells. */
const LEGACY_AVG_TPS_PAGE_FIELDS: ReadonlySet<string> = new Set(["status", "lastRun", "lastRunTime"]);

const pointKey = (point: ExactMetricValue) => String(point.timestamp);
const addressKey = (entry: AddressBalance) => entry.address;

/** `from` and `to` as the route's startTimestamp and endTimestamp, within the route's bounds. */
function timeRange(args: { from?: number | null; to?: number | null }, route: Route): MetricsRange {
  for (const [name, parameter] of [
    ["from", "startTimestamp"],
    ["to", "endTimestamp"],
  ] as const) {
    const value = args[name];
    const minimum = queryMinimum(route.service, route.path, parameter, route.method);
    if (value !== null && value !== undefined && value < minimum) {
      throw badUserInput(name, `${name} must be a Unix time in seconds of at least ${minimum}, got ${value}`, { min: minimum });
    }
  }
  if (args.from !== null && args.from !== undefined && args.to !== null && args.to !== undefined && args.from > args.to) {
    throw badUserInput("from", `from must not be after to, got from ${args.from} and to ${args.to}`);
  }
  return { startTimestamp: args.from ?? undefined, endTimestamp: args.to ?? undefined };
}

function checkInterval(metric: ChainMetricName, interval: MetricsTimeInterval): void {
  if (!servesChainMetricAt(metric, interval)) {
    throw badUserInput(
      "interval",
      `interval must be DAY for ${graphqlEnumName(metric)}: cumulative, average and maximum metrics, CONTRACTS, DEPLOYERS and FEES_PAID are daily only`,
      { allowed: ["DAY"] },
    );
  }
}

function thresholdArgument(value: string): string {
  if (value.startsWith("-")) throw badUserInput("threshold", `threshold must be 0 or more, got ${value}`, { min: 0 });
  return value;
}

interface ChainMetricArgs extends ConnectionArgs {
  metric: ChainMetricName;
  interval?: MetricsTimeInterval | null;
  from?: number | null;
  to?: number | null;
}

/**
 * A chain metric of one chain (its record: the series links to it) or of a network's chains
 * (`scope`: the Metrics API's chainId `total`, `mainnet` or `testnet`).
 */
async function chainMetricConnection(
  of: { chain: ChainInfo } | { scope: string },
  field: string,
  args: ChainMetricArgs,
  context: GatewayContext,
) {
  const interval = args.interval ?? "day";
  checkInterval(args.metric, interval);
  const range = timeRange(args, chainMetrics);
  const scope = "chain" in of ? of.chain.chainId : of.scope;
  const connection = await toPageTokenConnection(args, {
    bounds: chainMetrics.page,
    filters: { field, scope, metric: args.metric, interval, ...range },
    nodeKey: pointKey,
    fetchPage: async (page) => {
      const response = await context.upstreams.metrics.chainMetrics(
        scope,
        args.metric,
        { ...range, timeInterval: interval },
        page,
        context.call,
      );
      return { items: response.results, nextPageToken: response.nextPageToken };
    },
  });
  const series: ChainMetricSeries = { chain: "chain" in of ? of.chain : null };
  return { ...connection, series };
}

const CHAIN_METRIC_TEXT = `Points newest first. ${RANGE_TEXT} \`interval\` defaults to DAY; the metrics marked daily only refuse any other. ${chainMetrics.firstText}`;

builder.queryFields((t) => ({
  networkMetrics: t.field({
    type: ChainMetricConnectionRef,
    nullable: true,
    extensions: upstreamCalls(connectionCost(chainMetrics)),
    description: `A chain metric of every EVM chain the Metrics API tracks on a network, or on both, taken together, as the Metrics API aggregates them (\`${chainMetrics.label}\` with chainId total, mainnet or testnet). Its \`chain\` is null. ${CHAIN_METRIC_TEXT}`,
    args: {
      ...t.arg.connectionArgs(),
      scope: t.arg({ type: MetricsScopeRef, required: true, description: "Which network's chains, or both networks'." }),
      metric: t.arg({ type: ChainMetricRef, required: true, description: "The metric." }),
      interval: t.arg({ type: MetricIntervalRef, defaultValue: "day", description: "How long each point covers." }),
      from: t.arg({ type: "SafeInt", description: "The earliest point's timestamp, in Unix seconds." }),
      to: t.arg({ type: "SafeInt", description: "The latest point's timestamp, in Unix seconds." }),
    },
    resolve: (_root, args, context) => chainMetricConnection({ scope: args.scope }, "Query.networkMetrics", args, context),
  }),
  subnetMetrics: t.field({
    type: MetricConnectionRef,
    nullable: true,
    extensions: upstreamCalls(connectionCost(subnetMetrics)),
    description: `A daily metric of the fees a subnet's L1 validators pay (\`${subnetMetrics.label}\`); empty for a subnet without L1 validators. Points newest first. ${RANGE_TEXT} The route answers the whole range at once; the gateway pages it: ${subnetMetrics.firstText}`,
    args: {
      ...t.arg.connectionArgs(),
      subnetId: t.arg.id({ required: true, description: "The subnet (or L1) id, in cb58." }),
      metric: t.arg({ type: SubnetMetricRef, required: true, description: "The metric." }),
      from: t.arg({ type: "SafeInt", description: "The earliest point's timestamp, in Unix seconds." }),
      to: t.arg({ type: "SafeInt", description: "The latest point's timestamp, in Unix seconds." }),
    },
    resolve: (_root, args, context) => {
      const subnetId = cb58IdArgument("subnetId", String(args.subnetId), "a subnet id");
      const range = timeRange(args, subnetMetrics);
      return toPageTokenConnection(args, {
        bounds: subnetMetrics.page,
        filters: { field: "Query.subnetMetrics", subnetId, metric: args.metric, ...range },
        nodeKey: pointKey,
        fetchPage: slicedPages(async () => ({
          items: (await context.upstreams.metrics.subnetMetrics(subnetId, args.metric, range, context.call)).results,
        })),
      });
    },
  }),
  validatorFeeMetrics: t.field({
    type: MetricConnectionRef,
    nullable: true,
    extensions: upstreamCalls(connectionCost(validatorFeeMetrics)),
    description: `A daily metric of the fees all L1 validators pay (\`${validatorFeeMetrics.label}\`). Points newest first. ${RANGE_TEXT} The route answers the whole range at once; the gateway pages it: ${validatorFeeMetrics.firstText}`,
    args: {
      ...t.arg.connectionArgs(),
      metric: t.arg({ type: ValidatorFeeMetricRef, required: true, description: "The metric." }),
      from: t.arg({ type: "SafeInt", description: "The earliest point's timestamp, in Unix seconds." }),
      to: t.arg({ type: "SafeInt", description: "The latest point's timestamp, in Unix seconds." }),
    },
    resolve: (_root, args, context) => {
      const range = timeRange(args, validatorFeeMetrics);
      return toPageTokenConnection(args, {
        bounds: validatorFeeMetrics.page,
        filters: { field: "Query.validatorFeeMetrics", metric: args.metric, ...range },
        nodeKey: pointKey,
        fetchPage: slicedPages(async () => ({
          items: (await context.upstreams.metrics.validatorFeeMetrics(args.metric, range, context.call)).results,
        })),
      });
    },
  }),
  btcbBridgedAddresses: t.field({
    type: AddressBalanceConnectionRef,
    nullable: true,
    extensions: upstreamCalls(connectionCost(btcbBridgedAddresses)),
    description: `Addresses that bridged more BTC.b to the mainnet C-Chain than \`threshold\`, with their net bridged amount, the largest first (\`${btcbBridgedAddresses.label}\`). ${btcbBridgedAddresses.firstText}`,
    args: {
      ...t.arg.connectionArgs(),
      threshold: t.arg({
        type: "BigInt",
        required: true,
        description: "The net bridged amount to exceed, in BTC.b's smallest unit (satoshi); 0 or more.",
      }),
    },
    resolve: (_root, args, context) => {
      const threshold = thresholdArgument(args.threshold);
      return toPageTokenConnection(args, {
        bounds: btcbBridgedAddresses.page,
        filters: { field: "Query.btcbBridgedAddresses", threshold },
        nodeKey: addressKey,
        fetchPage: async (page) => {
          const response = await context.upstreams.metrics.btcbBridgedAddresses(threshold, page, context.call);
          return { items: response.addresses, nextPageToken: response.nextPageToken };
        },
      });
    },
  }),
}));

builder.objectFields(EvmChainRef, (t) => ({
  metrics: t.field({
    type: ChainMetricConnectionRef,
    nullable: true,
    extensions: upstreamCalls(connectionCost(chainMetrics)),
    description: `A metric of this chain (\`${chainMetrics.label}\`); its \`chain\` is this chain. Null when the Metrics API does not know the chain. ${CHAIN_METRIC_TEXT}`,
    args: {
      ...t.arg.connectionArgs(),
      metric: t.arg({ type: ChainMetricRef, required: true, description: "The metric." }),
      interval: t.arg({ type: MetricIntervalRef, defaultValue: "day", description: "How long each point covers." }),
      from: t.arg({ type: "SafeInt", description: "The earliest point's timestamp, in Unix seconds." }),
      to: t.arg({ type: "SafeInt", description: "The latest point's timestamp, in Unix seconds." }),
    },
    resolve: (chain, args, context) => nullIfNotFound(chainMetricConnection({ chain }, "EvmChain.metrics", args, context)),
  }),
  tokenHolders: t.field({
    type: AddressBalanceConnectionRef,
    nullable: true,
    extensions: upstreamCalls(connectionCost(tokenHolders)),
    description: `Addresses whose balance of an ERC-20 token of this chain was above \`threshold\` at some time from \`from\` to \`to\`, with their latest balance, the largest first (\`${tokenHolders.label}\`); null when the Metrics API does not know the chain. \`from\` and \`to\`: Unix seconds, at least 0, either may be left out. ${tokenHolders.firstText}`,
    args: {
      ...t.arg.connectionArgs(),
      contract: t.arg({ type: "EvmAddress", required: true, description: "The token's contract address." }),
      threshold: t.arg({
        type: "BigInt",
        required: true,
        description: "The balance to exceed, in the token's smallest unit; 0 or more.",
      }),
      from: t.arg({ type: "SafeInt", description: "The start of the time frame, in Unix seconds." }),
      to: t.arg({ type: "SafeInt", description: "The end of the time frame, in Unix seconds." }),
    },
    resolve: (chain, args, context) => {
      const threshold = thresholdArgument(args.threshold);
      const range = timeRange(args, tokenHolders);
      const contract = args.contract.toLowerCase();
      return nullIfNotFound(
        toPageTokenConnection(args, {
          bounds: tokenHolders.page,
          filters: { field: "EvmChain.tokenHolders", chainId: chain.chainId, contract, threshold, ...range },
          nodeKey: addressKey,
          fetchPage: async (page) => {
            const response = await context.upstreams.metrics.tokenHolders(
              chain.chainId,
              contract,
              { ...range, threshold },
              page,
              context.call,
            );
            return { items: response.addresses, nextPageToken: response.nextPageToken };
          },
        }),
      );
    },
  }),
  avgTps: t.field({
    type: LegacyAvgTpsConnectionRef,
    nullable: true,
    extensions: upstreamCalls(connectionCost(legacyAvgTps)),
    description: `The chain's daily average transactions per second from the legacy route (\`${legacyAvgTps.label}\`), newest first, with when its data was last updated; null when the route does not know the chain. The route takes no page size and answers ${legacyAvgTps.page.max} points a page; the gateway cuts its pages within the route's, so a page ends where the route's page ends (fewer points when \`after\` is inside one): ${legacyAvgTps.firstText}`,
    args: { ...t.arg.connectionArgs() },
    resolve: (chain, args, context, info) => {
      // `first: 0` reads no page, and the route tells its status and lastRun only with a page
      // (status is non-null): asked for them, it is refused before any upstream call.
      if (args.first === 0 && selectsAnyOf(info, LEGACY_AVG_TPS_PAGE_FIELDS)) {
        const { min, max } = legacyAvgTps.page;
        throw badUserInput(
          "first",
          `first must be between ${min} and ${max} when status, lastRun or lastRunTime is selected (the legacy route tells them with a page of points), got 0`,
          { min, max },
        );
      }
      return nullIfNotFound(
        toPageTokenConnection<ExactMetricValue, LegacyAvgTpsMeta>(args, {
          bounds: legacyAvgTps.page,
          filters: { field: "EvmChain.avgTps", chainId: chain.chainId },
          nodeKey: pointKey,
          fetchPage: slicedPages(async (pageToken) => {
            const response = await context.upstreams.metrics.legacyAvgTps(chain.chainId, pageToken, context.call);
            return {
              items: response.results,
              nextPageToken: response.nextPageToken,
              meta: { status: response.status, lastRun: response.lastRun },
            };
          }),
        }),
      );
    },
  }),
}));

builder.objectFields(PrimaryNetworkRef, (t) => ({
  stakingMetrics: t.field({
    type: MetricConnectionRef,
    nullable: true,
    extensions: upstreamCalls(connectionCost(stakingMetrics)),
    description: `A daily staking metric of one subnet of this network, or of all its subnets together (\`${stakingMetrics.label}\`). Points newest first. ${RANGE_TEXT} ${stakingMetrics.firstText}`,
    args: {
      ...t.arg.connectionArgs(),
      metric: t.arg({ type: StakingMetricRef, required: true, description: "The metric." }),
      subnetId: t.arg.id({
        description: `The subnet (or L1) id, in cb58: the primary network is \`${PRIMARY_NETWORK_SUBNET_ID}\`. Left out: all subnets together, as the Metrics API answers when it gets no subnetId (see the metric's description for what a value then counts).`,
      }),
      from: t.arg({ type: "SafeInt", description: "The earliest point's timestamp, in Unix seconds." }),
      to: t.arg({ type: "SafeInt", description: "The latest point's timestamp, in Unix seconds." }),
    },
    resolve: (scope, args, context) => {
      const subnetId =
        args.subnetId === null || args.subnetId === undefined
          ? undefined
          : cb58IdArgument("subnetId", String(args.subnetId), "a subnet id");
      return stakingMetricConnection(scope.network, subnetId, args, "PrimaryNetwork.stakingMetrics", context);
    },
  }),
}));

interface StakingMetricArgs extends ConnectionArgs {
  metric: StakingMetricName;
  from?: number | null;
  to?: number | null;
}

/** A page of a staking metric's points, of one subnet (checked) or of all a network's subnets together. */
export function stakingMetricConnection(
  network: NetworkName,
  subnetId: string | undefined,
  args: StakingMetricArgs,
  field: string,
  context: GatewayContext,
) {
  const range = timeRange(args, stakingMetrics);
  return toPageTokenConnection(args, {
    bounds: stakingMetrics.page,
    filters: { field, network, metric: args.metric, subnetId: subnetId ?? null, ...range },
    nodeKey: pointKey,
    fetchPage: async (page) => {
      const response = await context.upstreams.metrics.stakingMetrics(
        network,
        args.metric,
        { ...range, subnetId },
        page,
        context.call,
      );
      return { items: response.results, nextPageToken: response.nextPageToken };
    },
  });
}

builder.subscriptionFields((t) => ({
  chainMetricUpdates: t.field({
    type: MetricPointRef,
    nullable: true,
    // A subscription is charged once, for its first read.
    extensions: upstreamCalls(callCost(chainMetrics)),
    description: `A chain metric's latest point now, then again each time it changes: its value as the interval fills, then the next interval's point (\`${chainMetrics.label}\`, newest point). Of one chain (\`chainId\`) or of a network's chains (\`scope\`): give exactly one. Subscribers of one metric, scope and interval share one poller on every gateway (\`LIVE_METRICS_POLL_MS\`, longer while the value does not change); each interval costs every subscriber 1. A client that still has more than \`LIVE_MAX_PENDING_EVENTS\` events unread when a change comes, and took none since the last, has its stream ended with \`SLOW_SUBSCRIBER\`.`,
    args: {
      chainId: t.arg.id({ description: "The chain's EVM chain id in decimal (such as 43114)." }),
      scope: t.arg({ type: MetricsScopeRef, description: "Which network's chains, or both networks', taken together." }),
      metric: t.arg({ type: ChainMetricRef, required: true, description: "The metric." }),
      interval: t.arg({ type: MetricIntervalRef, defaultValue: "day", description: "How long each point covers." }),
    },
    subscribe: (_root, args, context) => {
      const byChain = args.chainId !== null && args.chainId !== undefined;
      const byScope = args.scope !== null && args.scope !== undefined;
      if (byChain === byScope) throw badUserInput(byChain ? "scope" : "chainId", "give exactly one of chainId and scope");
      const scope = byChain ? String(args.chainId) : args.scope!;
      if (byChain && !EVM_CHAIN_ID.test(scope)) {
        throw badUserInput("chainId", `chainId must be an EVM chain id in decimal (such as 43114), got ${quoted(scope)}`);
      }
      const interval = args.interval ?? "day";
      checkInterval(args.metric, interval);
      return context.live.feed.subscribe(context.live.questions.chainMetricLatest(scope, args.metric, interval), {
        call: context.call,
        chargeRead: context.chargeRead,
        caller: context.liveCaller,
      });
    },
    resolve: itemOrError,
  }),
}));
