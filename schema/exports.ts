/**
 * Transaction export operations: the job record, its state and its result, and the input that
 * starts one. Also declares the Mutation and Subscription root types, which exports use first.
 */
import {
  operationStatusCodeValues,
  operationStatusValues,
  operationTypeValues,
  primaryNetworkOperationTypeValues,
} from "../src/upstream/contract/data-api.ts";
import type { ExportOperation, PrimaryNetworkExportType, TransactionExportMetadata } from "../src/upstream/types.ts";
import { parsedOrRefused, validKey } from "../src/execution/global-ids.ts";
import { operationIdArgument } from "../src/upstream/identifiers.ts";
import { builder } from "./builder.ts";
import { dateTimeOf } from "./date-times.ts";
import { graphqlEnumName, upstreamEnum } from "./enums.ts";

const EXPORT_TYPE_DESCRIPTIONS = {
  TRANSACTION_EXPORT_EVM: "Transactions of EVM chains (the C-Chain or L1s) that touch some addresses.",
  TRANSACTION_EXPORT_PRIMARY_NETWORK: "P-, X- and C-Chain transactions, with every column.",
  TRANSACTION_EXPORT_PRIMARY_NETWORK_STAKING:
    "Only the staking transactions of the primary network: validations, delegations and their rewards.",
  TRANSACTION_EXPORT_PRIMARY_NETWORK_SIMPLE: "P-, X- and C-Chain transactions with a short set of columns.",
} as const;

export const ExportOperationTypeEnum = upstreamEnum(
  "ExportOperationType",
  operationTypeValues,
  "What an export operation exports.",
  EXPORT_TYPE_DESCRIPTIONS,
);

export const ExportOperationStatusEnum = upstreamEnum(
  "ExportOperationStatus",
  operationStatusValues,
  "Where an export job stands.",
  {
    RUNNING: "The job is still running; read it again later or subscribe to it.",
    COMPLETED: "The job is done; `metadata.downloadUrl` has the file.",
    COMPLETED_WITH_WARNING:
      "The job is done but the file does not cover everything asked for; `metadata.code` says why and `metadata.nextDate` where to continue.",
    FAILED: "The job failed; `message` and `metadata.code` say why.",
  },
);

export const ExportOperationCodeEnum = upstreamEnum(
  "ExportOperationCode",
  operationStatusCodeValues,
  "Why an export job did not simply complete.",
  {
    ErrInvalidRequest: "The request cannot be served as it is (for example a chain the Data API does not know).",
    ErrInternal: "The Data API failed while running the job.",
    WarnTruncatedExport:
      "The range was too large for one file: the file stops early, and `nextDate` is the `firstDate` of the follow-up request.",
  },
);

export const ExportOperationMetadataRef = builder.objectRef<TransactionExportMetadata>("ExportOperationMetadata").implement({
  description: "The result of an export job: where to download it, or why it stopped.",
  fields: (t) => ({
    code: t.field({
      type: ExportOperationCodeEnum.ref,
      nullable: true,
      description: "A warning or error code; null when the job completed without one.",
      resolve: (metadata) => ExportOperationCodeEnum.fromUpstream(metadata.code),
    }),
    downloadUrl: t.exposeString("downloadUrl", {
      nullable: true,
      description: "Where to download the CSV file; present once the job completed (with or without a warning).",
    }),
    nextDate: t.exposeString("nextDate", {
      nullable: true,
      description: "For a truncated export: the date (YYYY-MM-DD) to send as `firstDate` to export the rest.",
    }),
  }),
});

export const ExportOperationRef = builder.objectRef<ExportOperation>("ExportOperation");

builder.node(ExportOperationRef, {
  description:
    "An asynchronous job of the Data API, such as a transaction export (`GET /v1/operations/{operationId}`). It runs in the background: read it again, or subscribe to it, until its status is final.",
  // Checked like the `exportOperation(id:)` argument.
  id: { resolve: (operation) => operation.operationId, parse: (id) => parsedOrRefused(() => operationIdArgument("id", id)) },
  loadOne: (id, context) => context.loaders.exportOperation.load(validKey(id)),
  fields: (t) => ({
    operationId: t.exposeString("operationId", { description: "The job's id at the Data API: pass it to `exportOperation`." }),
    operationType: t.field({
      type: ExportOperationTypeEnum.ref,
      description: "What the job exports.",
      resolve: (operation) => ExportOperationTypeEnum.fromUpstream(operation.operationType) ?? "UNKNOWN",
    }),
    operationStatus: t.field({
      type: ExportOperationStatusEnum.ref,
      description: "Where the job stands.",
      resolve: (operation) => ExportOperationStatusEnum.fromUpstream(operation.operationStatus) ?? "UNKNOWN",
    }),
    message: t.exposeString("message", { nullable: true, description: "The Data API's words on the job's state." }),
    metadata: t.expose("metadata", {
      type: ExportOperationMetadataRef,
      nullable: true,
      description: "The job's result: the download link, or the code that says why it stopped or was cut short.",
    }),
    createdAtTimestamp: t.expose("createdAtTimestamp", {
      type: "SafeInt",
      description: "When the job was created, in Unix seconds.",
    }),
    createdAtTime: t.field({
      type: "DateTime",
      description: "`createdAtTimestamp` as a date.",
      resolve: (parent) => dateTimeOf(parent.createdAtTimestamp),
    }),
    updatedAtTimestamp: t.expose("updatedAtTimestamp", {
      type: "SafeInt",
      description: "When the job last changed, in Unix seconds.",
    }),
    updatedAtTime: t.field({
      type: "DateTime",
      description: "`updatedAtTimestamp` as a date.",
      resolve: (parent) => dateTimeOf(parent.updatedAtTimestamp),
    }),
  }),
});

/**
 * Applied by the resolver too: compiled execution (graphql-jit) does not fill in defaults of
 * input object fields given through variables.
 */
export const DEFAULT_PRIMARY_NETWORK_EXPORT_TYPE: PrimaryNetworkExportType = "TRANSACTION_EXPORT_PRIMARY_NETWORK";

export const PrimaryNetworkExportTypeRef = builder.enumType("PrimaryNetworkExportType", {
  description: "Which primary-network transactions an export holds, and how many columns.",
  values: Object.fromEntries(
    primaryNetworkOperationTypeValues.map((value) => [
      graphqlEnumName(value),
      { value, description: EXPORT_TYPE_DESCRIPTIONS[value] },
    ]),
  ) as Record<string, { value: PrimaryNetworkExportType; description: string }>,
});

export const EvmTransactionExportInputRef = builder.inputType("EvmTransactionExportInput", {
  description: "What an export of EVM transactions holds: the transactions of some chains that touch some addresses.",
  fields: (t) => ({
    addresses: t.stringList({ required: true, description: "EVM addresses (0x and 40 hex digits); 1 to 100." }),
    includeChains: t.stringList({ required: true, description: "EVM chain ids in decimal (such as 43114); at least one." }),
  }),
});

export const PrimaryNetworkTransactionExportInputRef = builder.inputType("PrimaryNetworkTransactionExportInput", {
  description: "What an export of primary-network transactions holds.",
  fields: (t) => ({
    type: t.field({
      type: PrimaryNetworkExportTypeRef,
      defaultValue: DEFAULT_PRIMARY_NETWORK_EXPORT_TYPE,
      description: "Which transactions and columns; by default all of them, with every column.",
    }),
    includeChains: t.stringList({
      required: true,
      description:
        "The chains: their blockchain ids (the mainnet or Fuji P-, X- or C-Chain) or `p-chain`, `x-chain`, `c-chain`; at least one.",
    }),
    addresses: t.stringList({
      description:
        "Only transactions that touch these bech32 addresses (`avax1...`, `fuji1...`, with or without a chain letter); when given, 1 to 100.",
    }),
    cChainEvmAddresses: t.stringList({
      description: "Also C-Chain atomic transactions of these 0x accounts; when given, 1 to 100.",
    }),
  }),
});

export const ExportTransactionsInputRef = builder.inputType("ExportTransactionsInput", {
  description:
    "A transaction export to start: exactly one of `evm` and `primaryNetwork`, and the days to cover (YYYY-MM-DD, UTC, both inclusive). The Data API picks a range when the dates are left out.",
  fields: (t) => ({
    evm: t.field({ type: EvmTransactionExportInputRef, description: "Export transactions of EVM chains." }),
    primaryNetwork: t.field({
      type: PrimaryNetworkTransactionExportInputRef,
      description: "Export primary-network transactions.",
    }),
    firstDate: t.string({ description: "The first day to export, as YYYY-MM-DD." }),
    lastDate: t.string({ description: "The last day to export, as YYYY-MM-DD; not before `firstDate`." }),
    startDate: t.string({
      description: "The first day to export, as YYYY-MM-DD (the older name of `firstDate`).",
      deprecationReason: "Use `firstDate`.",
    }),
    endDate: t.string({
      description: "The last day to export, as YYYY-MM-DD (the older name of `lastDate`).",
      deprecationReason: "Use `lastDate`.",
    }),
  }),
});
