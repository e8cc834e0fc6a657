/**
 * Time series and address lists of the Metrics API: chain, staking, subnet and validator-fee
 * metrics as points, and addresses ranked by a token amount.
 */
import { GraphQLError, Kind, type ValueNode } from "graphql";
import {
  chainMetricValues,
  networkMetricValues,
  pathsV2SubnetSubnetIdMetricsMetricGetParametersPathMetricValues as subnetMetricValues,
  pathsV2ValidatorsMetricsMetricGetParametersPathMetricValues as validatorFeeMetricValues,
  timeIntervalGranularityValues,
} from "../src/upstream/contract/metrics-api.ts";
import { upstreamCalls } from "../src/limits/upstream-cost-declarations.ts";
import { decimalText, type ExactMetricValue } from "../src/upstream/metrics-api.ts";
import type { AddressBalance, ChainInfo, LegacyMetricsResponse } from "../src/upstream/types.ts";
import { builder } from "./builder.ts";
import { dateTimeOf } from "./date-times.ts";
import { EvmChainRef } from "./chains.ts";
import { graphqlEnumName } from "./enums.ts";

/** A decimal number in plain notation: an optional minus, digits, an optional fraction; no exponent. */
const DECIMAL_TEXT = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/;

function decimalValue(value: unknown): string {
  if (typeof value === "string" && DECIMAL_TEXT.test(value)) return value;
  if (typeof value === "bigint") return value.toString();
  throw new GraphQLError(
    `Decimal must be a decimal number written out in digits (for example "226000000000000000123" or "0.25"), got ${JSON.stringify(String(value))}`,
    {
      extensions: { code: "BAD_USER_INPUT" },
    },
  );
}

builder.scalarType("Decimal", {
  description:
    'A decimal number of any size and precision, exact, as a string in plain notation (for example "226000000000000000123" or "0.0025"; no exponent). Parse it with a decimal or big-number library, not as a float.',
  serialize: (value) => decimalValue(value),
  parseValue: (value) => decimalValue(value),
  parseLiteral: (node: ValueNode) => {
    if (node.kind === Kind.STRING) return decimalValue(node.value);
    throw new GraphQLError("Decimal must be a string of decimal digits", { extensions: { code: "BAD_USER_INPUT" } });
  },
});

/** An input enum over a contract value list; every value needs its own description. */
function contractEnum<const Value extends string>(
  name: string,
  values: readonly Value[],
  description: string,
  valueDescriptions: Record<Value, string>,
) {
  const entries: Record<string, { value: Value; description: string }> = {};
  for (const value of values) entries[graphqlEnumName(value)] = { value, description: valueDescriptions[value] };
  return builder.enumType(name, { description, values: entries });
}

const DAY_ONLY = "Daily only (`interval: DAY`).";

export const ChainMetricRef = contractEnum(
  "ChainMetric",
  chainMetricValues,
  "A metric of an EVM chain, or of all chains of a network. A point's value covers the interval that starts at its timestamp.",
  {
    activeAddresses:
      "Distinct addresses in the from or to field of a transaction or of an ERC-20, ERC-721 or ERC-1155 transfer in the interval.",
    activeSenders: "Distinct addresses in the from field of a transaction or of a token transfer in the interval.",
    cumulativeTxCount: `Transactions from genesis to the end of the point's day. ${DAY_ONLY}`,
    cumulativeAddresses: `Distinct addresses (counted as for ACTIVE_ADDRESSES) from genesis to the end of the point's day. ${DAY_ONLY}`,
    cumulativeContracts: `Contracts created (CREATE, CREATE2 and CREATE3 traces) from genesis up to the point's timestamp, so not yet those of its own day. ${DAY_ONLY}`,
    cumulativeDeployers: `Distinct addresses that created a contract, from genesis to the end of the point's day. ${DAY_ONLY}`,
    contracts: `Contracts created in the day. ${DAY_ONLY}`,
    deployers: `Distinct addresses that created a contract in the day. ${DAY_ONLY}`,
    gasUsed: "Gas used by the interval's transactions.",
    txCount: "Transactions in the interval: the sum of its blocks' transaction counts.",
    avgGps: `Gas per second over the day: the day's gas divided by the time from the last block of the day before to the day's last block. ${DAY_ONLY}`,
    maxGps: `The highest gas per second of one block of the day (its gas over the time since the block before). ${DAY_ONLY}`,
    avgTps: `Transactions per second over the day, measured like AVG_GPS. ${DAY_ONLY}`,
    maxTps: `The highest transactions per second of one block of the day, measured like MAX_GPS. ${DAY_ONLY}`,
    avgGasPrice: `The mean gas price of the day's transactions, in wei, from their receipts. ${DAY_ONLY}`,
    maxGasPrice: `The highest gas price of the day's transactions, in wei. ${DAY_ONLY}`,
    feesPaid: `Fees paid in the day, in wei: gas used times gas price, summed over its transactions. ${DAY_ONLY}`,
  },
);

export const MetricIntervalRef = contractEnum(
  "MetricInterval",
  timeIntervalGranularityValues,
  "How long each point of a chain metric covers; timestamps are the intervals' starts in UTC.",
  {
    hour: "One point per hour, stamped on the hour.",
    day: "One point per day, stamped at 00:00 UTC.",
    week: "One point per week, stamped at 00:00 UTC on Monday.",
    month: "One point per month, stamped at 00:00 UTC on the first day.",
  },
);

export const MetricsScopeRef = builder.enumType("MetricsScope", {
  description:
    "Which EVM chains a network-wide chain metric adds up (the Metrics API's chainId `total`, `mainnet` or `testnet`).",
  values: {
    TOTAL: { value: "total", description: "Every EVM chain the Metrics API tracks, on the mainnet and on Fuji together." },
    MAINNET: { value: "mainnet", description: "Every EVM chain the Metrics API tracks on the mainnet." },
    FUJI: { value: "testnet", description: "Every EVM chain the Metrics API tracks on the Fuji test network." },
  } as const,
});

export const StakingMetricRef = contractEnum(
  "StakingMetric",
  networkMetricValues,
  "A daily staking metric: of one subnet (the primary network is one), or of all subnets together.",
  {
    delegatorCount: "Delegations active at any time of the day.",
    delegatorWeight: "Stake of the day's active delegations, in nAVAX.",
    validatorCount:
      "Validators active at any time of the day. Over all subnets, a node counts once for each subnet it validates.",
    validatorWeight:
      "Weight of the day's active validators: their stake in nAVAX on the primary network, their weight on an L1 or a subnet. Over all subnets, these add up as they are (nAVAX of the primary network plus the subnets' own weights).",
  },
);

export const SubnetMetricRef = contractEnum(
  "SubnetMetric",
  subnetMetricValues,
  "A daily metric of the fees that the L1 validators of one subnet pay for validating.",
  {
    perSubnetDailyFeesPaid: "Fees the subnet's L1 validators paid in the day.",
    perSubnetCumulativeFeesPaid: "Fees the subnet's L1 validators paid from their start to the end of the day.",
    perSubnetPayingValidators: "The subnet's L1 validators that paid fees in the day.",
  },
);

export const ValidatorFeeMetricRef = contractEnum(
  "ValidatorFeeMetric",
  validatorFeeMetricValues,
  "A daily metric of the fees that all L1 validators pay for validating.",
  {
    totalCumulativeFeesDaily: "Fees all L1 validators paid from their start to the end of the day.",
    totalValidatorFeesDaily: "Fees all L1 validators paid in the day.",
    totalPayingValidatorsDaily: "L1 validators that paid fees in the day.",
  },
);

export const MetricPointRef = builder.objectRef<ExactMetricValue>("MetricPoint").implement({
  description: "One value of a metric series: it covers the interval (hour, day, week or month) that starts at its timestamp.",
  fields: (t) => ({
    value: t.exposeFloat("value", {
      description:
        "The metric's value for the interval, as a double for charts; its unit is the metric's (see the metric enum). Values above 2^53 (wei amounts such as FEES_PAID) are rounded here: read `valueExact` for the exact number.",
    }),
    valueExact: t.field({
      type: "Decimal",
      description:
        "The metric's value for the interval, exactly as the Metrics API sent it, digit for digit, in plain decimal notation.",
      // A point the lossless read did not mark (its value was not a JSON number) answers what it holds.
      resolve: (point) => point.valueExact ?? decimalText(String(point.value)),
    }),
    timestamp: t.expose("timestamp", {
      type: "SafeInt",
      description:
        "The start of the interval, in Unix seconds, aligned to the hour, to 00:00 UTC, to Monday or to the first of the month.",
    }),
    time: t.field({
      type: "DateTime",
      description: "The start of the interval as a date, for charts.",
      resolve: (point) => dateTimeOf(point.timestamp),
    }),
  }),
});

export const MetricConnectionRef = builder.connectionObject(
  { type: MetricPointRef, name: "MetricConnection", description: "A page of a metric series, newest point first." },
  { name: "MetricEdge", description: "A point of a metric series and the cursor that continues after it." },
);

/** What a chain metric's series is of: one EVM chain (its record, in hand) or a network-wide scope. */
export interface ChainMetricSeries {
  chain: ChainInfo | null;
}

export const ChainMetricConnectionRef = builder.connectionObject(
  {
    type: MetricPointRef,
    name: "ChainMetricConnection",
    description: "A page of a chain metric's series, newest point first, with the chain it measures.",
    fields: (t) => ({
      chain: t.field({
        type: EvmChainRef,
        nullable: true,
        description:
          "The EVM chain this series measures; null for a network-wide series (`networkMetrics`). Costs no upstream call: it is the chain the series was asked of.",
        // The chain the series was asked of, in hand (null for a network-wide series): no call.
        extensions: upstreamCalls({ calls: 0 }),
        resolve: (connection) => (connection as unknown as { series: ChainMetricSeries }).series.chain,
      }),
    }),
  },
  { name: "ChainMetricEdge", description: "A point of a chain metric's series and the cursor that continues after it." },
);

/** What the legacy average-TPS route answers beside its points. */
export type LegacyAvgTpsMeta = Pick<LegacyMetricsResponse, "status" | "lastRun">;

export const LegacyAvgTpsConnectionRef = builder.connectionObject(
  {
    type: MetricPointRef,
    name: "LegacyAvgTpsConnection",
    description:
      "A page of a chain's daily average transactions per second from the legacy route, newest first, with the state of its data.",
    fields: (t) => ({
      status: t.field({
        type: "Int",
        description:
          "The status number the legacy route reports with its data, an HTTP-like code (200 when it is current), not an enum like a chain's `status`.",
        resolve: (connection) => (connection as unknown as { meta: LegacyAvgTpsMeta }).meta.status,
      }),
      lastRun: t.field({
        type: "SafeInt",
        nullable: true,
        description: "When the data was last updated, in Unix seconds.",
        resolve: (connection) => (connection as unknown as { meta: LegacyAvgTpsMeta }).meta.lastRun ?? null,
      }),
      lastRunTime: t.field({
        type: "DateTime",
        nullable: true,
        description: "When the data was last updated, as a date.",
        resolve: (connection) => {
          const { lastRun } = (connection as unknown as { meta: LegacyAvgTpsMeta }).meta;
          return dateTimeOf(lastRun);
        },
      }),
    }),
  },
  { name: "LegacyAvgTpsEdge", description: "A daily average TPS point and the cursor that continues after it." },
);

const DECIMAL = /^(0|[1-9][0-9]*)$/;

export const AddressBalanceRef = builder.objectRef<AddressBalance>("AddressBalance").implement({
  description: "An address of a ranked list, with the amount it is ranked by.",
  fields: (t) => ({
    address: t.expose("address", { type: "EvmAddress", description: "The EVM address." }),
    amount: t.field({
      type: "BigInt",
      nullable: true,
      description:
        "The amount the list ranks by, in the token's smallest unit: the latest balance for token holders, the net bridged amount for BTC.b. Null when the upstream's sort key is not a whole number (see `sortKey`).",
      resolve: (entry) => (DECIMAL.test(entry.sortKey) ? entry.sortKey : null),
    }),
    sortKey: t.exposeString("sortKey", { description: "The value the upstream ranks the list by, as it sent it." }),
  }),
});

export const AddressBalanceConnectionRef = builder.connectionObject(
  { type: AddressBalanceRef, name: "AddressBalanceConnection", description: "A page of addresses, the largest amount first." },
  { name: "AddressBalanceEdge", description: "An address and the cursor that continues after it." },
);
