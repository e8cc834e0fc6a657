/**
 * Transaction exports: `Mutation.exportTransactions` starts a job, `Query.exportOperation` reads
 * it, `Subscription.exportOperation` follows it until it ends. Every input rule is checked
 * before the upstream call.
 */
import { builder } from "../schema/builder.ts";
import { DEFAULT_PRIMARY_NETWORK_EXPORT_TYPE, ExportOperationRef, ExportTransactionsInputRef } from "../schema/exports.ts";
import { badUserInput, GatewayError } from "../src/errors.ts";
import { exportOperationKey } from "../src/execution/global-ids.ts";
import { callCost, upstreamCalls } from "../src/limits/upstream-cost-declarations.ts";
import { primaryNetworkOptionsIncludeChainsValues } from "../src/upstream/contract/data-api.ts";
import { ROUTES } from "../src/upstream/routes.ts";
import type { PrimaryNetworkExportChain, PrimaryNetworkExportType, TransactionExportRequest } from "../src/upstream/types.ts";
import {
  BECH32_ADDRESS,
  EVM_ADDRESS,
  EVM_CHAIN_ID,
  addressCountArgument,
  bech32AddressProblem,
} from "../src/upstream/identifiers.ts";

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const PRIMARY_NETWORK_CHAINS: ReadonlySet<string> = new Set(primaryNetworkOptionsIncludeChainsValues);

interface ExportInput {
  evm?: { addresses: readonly string[]; includeChains: readonly string[] } | null;
  primaryNetwork?: {
    type?: PrimaryNetworkExportType | null;
    includeChains: readonly string[];
    addresses?: readonly string[] | null;
    cChainEvmAddresses?: readonly string[] | null;
  } | null;
  firstDate?: string | null;
  lastDate?: string | null;
  startDate?: string | null;
  endDate?: string | null;
}

/** A real calendar day written as YYYY-MM-DD. */
function dateArgument(argument: string, value: string | null | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  const parts = DATE.exec(value);
  const day = parts ? new Date(Date.UTC(Number(parts[1]), Number(parts[2]) - 1, Number(parts[3]))) : undefined;
  if (!day || day.toISOString().slice(0, 10) !== value) {
    throw badUserInput(
      argument,
      `${argument} must be a day written as YYYY-MM-DD (such as 2026-05-01), got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

function listArgument(argument: string, values: readonly string[], check: (value: string) => boolean, what: string): string[] {
  if (values.length === 0) throw badUserInput(argument, `${argument} must not be empty`);
  const bad = values.find((value) => !check(value));
  if (bad !== undefined) throw badUserInput(argument, `each of ${argument} must be ${what}, got ${JSON.stringify(bad)}`);
  return [...values];
}

/** An address list: within `MAX_ADDRESSES`, each address checked. */
function addressListArgument(argument: string, values: readonly string[], check: (value: string) => boolean, what: string) {
  addressCountArgument(argument, values);
  return listArgument(argument, values, check, what);
}

/** The day range; the deprecated names stand in for the new ones, never beside them. */
function dateRange(input: ExportInput) {
  for (const [current, deprecated] of [
    ["firstDate", "startDate"],
    ["lastDate", "endDate"],
  ] as const) {
    if (input[current] != null && input[deprecated] != null) {
      throw badUserInput(
        `input.${deprecated}`,
        `input.${deprecated} is the deprecated name of input.${current}: send only ${current}`,
      );
    }
  }
  const dates = {
    firstDate: dateArgument("input.firstDate", input.firstDate),
    lastDate: dateArgument("input.lastDate", input.lastDate),
    startDate: dateArgument("input.startDate", input.startDate),
    endDate: dateArgument("input.endDate", input.endDate),
  };
  const first = dates.firstDate ?? dates.startDate;
  const last = dates.lastDate ?? dates.endDate;
  if (first !== undefined && last !== undefined && last < first) {
    const argument = dates.lastDate !== undefined ? "input.lastDate" : "input.endDate";
    throw badUserInput(argument, `${argument} (${last}) must not be before the first day (${first})`);
  }
  return dates;
}

/** The upstream request for a checked input. */
function exportRequest(input: ExportInput): TransactionExportRequest {
  if ((input.evm == null) === (input.primaryNetwork == null)) {
    throw badUserInput("input", "input must have exactly one of evm and primaryNetwork");
  }
  const dates = dateRange(input);
  if (input.evm) {
    return {
      type: "TRANSACTION_EXPORT_EVM",
      ...dates,
      options: {
        addresses: addressListArgument(
          "input.evm.addresses",
          input.evm.addresses,
          (value) => EVM_ADDRESS.test(value),
          "0x and 40 hex digits",
        ),
        includeChains: listArgument(
          "input.evm.includeChains",
          input.evm.includeChains,
          (value) => EVM_CHAIN_ID.test(value),
          "an EVM chain id in decimal",
        ),
      },
    };
  }
  const options = input.primaryNetwork!;
  const chains = listArgument(
    "input.primaryNetwork.includeChains",
    options.includeChains,
    (value) => PRIMARY_NETWORK_CHAINS.has(value),
    `one of ${primaryNetworkOptionsIncludeChainsValues.join(", ")}`,
  );
  return {
    type: options.type ?? DEFAULT_PRIMARY_NETWORK_EXPORT_TYPE,
    ...dates,
    options: {
      includeChains: chains as PrimaryNetworkExportChain[],
      addresses: options.addresses
        ? addressListArgument(
            "input.primaryNetwork.addresses",
            options.addresses,
            (value) => BECH32_ADDRESS.test(value) && bech32AddressProblem(value) === undefined,
            "a bech32 address of mainnet or Fuji (avax1..., fuji1...) whose checksum holds",
          )
        : undefined,
      cChainEvmAddresses: options.cChainEvmAddresses
        ? addressListArgument(
            "input.primaryNetwork.cChainEvmAddresses",
            options.cChainEvmAddresses,
            (value) => EVM_ADDRESS.test(value),
            "0x and 40 hex digits",
          )
        : undefined,
    },
  };
}

builder.mutationFields((t) => ({
  exportTransactions: t.field({
    type: ExportOperationRef,
    // Nullable like every field that calls upstream: a sibling mutation's failure must not erase the job's id.
    nullable: true,
    extensions: upstreamCalls(callCost(ROUTES.createTransactionExport)),
    description:
      "Starts a job that exports transactions to a CSV file (`POST /v1/operations/transactions:export`). The job runs in the background: follow it with `Subscription.exportOperation` or read it with `Query.exportOperation`. Sent once, never retried. Null, with its error at this field's path, when the Data API did not answer with the job; other mutations of the document run and keep their results either way.",
    args: { input: t.arg({ type: ExportTransactionsInputRef, required: true, description: "What to export." }) },
    resolve: (_root, args, context) =>
      context.upstreams.exportJobs.createTransactionExport(exportRequest(args.input), context.call),
  }),
}));

builder.queryFields((t) => ({
  exportOperation: t.field({
    type: ExportOperationRef,
    nullable: true,
    extensions: upstreamCalls(callCost(ROUTES.exportOperation)),
    description:
      "An export job as it stands now (`GET /v1/operations/{operationId}`); null when the Data API does not know the id.",
    args: {
      id: t.arg.id({
        required: true,
        description: "The job's `operationId`, or its `ExportOperation.id`, as `exportTransactions` returned them.",
      }),
    },
    resolve: (_root, args, context) =>
      context.upstreams.exportJobs.getOperation(exportOperationKey("id", String(args.id)), context.call),
  }),
}));

builder.subscriptionFields((t) => ({
  exportOperation: t.field({
    type: ExportOperationRef,
    // A subscription is charged once, for its first read.
    extensions: upstreamCalls(callCost(ROUTES.exportOperation)),
    description:
      "An export job now, then again each time its status or metadata changes, until it reaches a final status (COMPLETED, COMPLETED_WITH_WARNING or FAILED), when the stream completes. Subscribers of one job share one poller. An unknown id ends the stream with a NOT_FOUND error.",
    args: {
      id: t.arg.id({
        required: true,
        description: "The job's `operationId`, or its `ExportOperation.id`, as `exportTransactions` returned them.",
      }),
    },
    subscribe: (_root, args, context) =>
      context.exportWatch.watch(exportOperationKey("id", String(args.id)), context.call, context.chargeRead),
    resolve: (event) => {
      if (event instanceof GatewayError) throw event;
      return event;
    },
  }),
}));
