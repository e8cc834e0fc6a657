/**
 * Transaction export jobs. A job is RUNNING for `jobMs` after it was created, then ends:
 * COMPLETED with a CSV of the requested transactions from the sample network; COMPLETED_WITH_
 * WARNING (`WarnTruncatedExport`) when the range spans more than MAX_EXPORT_DAYS, with the first
 * days only and `nextDate` to continue from; or FAILED (`ErrInvalidRequest`) when the request
 * names chains the network does not have, or chains of both networks. The end is worked out the
 * first time the job is read after its time is up.
 */
import { badRequest } from "../../http/errors.ts";
import type { NetworkName } from "../chains.ts";
import { sha256 } from "../ids.ts";
import type { SampleNetwork } from "../index.ts";
import { PRIMARY_CHAIN_IDS, normalizeAddress } from "../primary-network/index.ts";
import type { ChainKey, SimTransaction } from "../primary-network/model.ts";
import type { ExportOperation, ExportOperationType, TransactionExportMetadata } from "../../../src/upstream/types.ts";

/** The longest range one file covers; longer ones are cut and continue from `nextDate`. */
export const MAX_EXPORT_DAYS = 31;
const DAY = 86_400;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const STAKING_TYPES: ReadonlySet<string> = new Set([
  "AddValidatorTx",
  "AddPermissionlessValidatorTx",
  "AddDelegatorTx",
  "AddPermissionlessDelegatorTx",
  "RewardValidatorTx",
]);
const CHAIN_ALIASES: Record<string, ChainKey> = { "p-chain": "P", "x-chain": "X", "c-chain": "C" };
const PRIMARY_NETWORK_TYPES: ReadonlySet<string> = new Set([
  "TRANSACTION_EXPORT_PRIMARY_NETWORK",
  "TRANSACTION_EXPORT_PRIMARY_NETWORK_STAKING",
  "TRANSACTION_EXPORT_PRIMARY_NETWORK_SIMPLE",
]);

interface ExportRequest {
  type: ExportOperationType;
  /** Unix seconds of the first and last day's start. */
  firstDay: number;
  lastDay: number;
  addresses: string[];
  cChainEvmAddresses: string[];
  includeChains: string[];
}

/** The file's rows, or why the request cannot be served. */
type Rows = { header: string[]; rows: string[][] } | { problem: string };

interface Outcome {
  status: "COMPLETED" | "COMPLETED_WITH_WARNING" | "FAILED";
  message: string;
  metadata: TransactionExportMetadata;
  csv?: string;
}

interface Job {
  operationId: string;
  request: ExportRequest;
  createdMs: number;
  readyMs: number;
  /** Where the file will be served: the origin the job was asked at. */
  origin: string;
  outcome?: Outcome;
}

export const EXPORT_DOWNLOAD_PATH = "/_downloads/transaction-exports/";

export class ExportJobs {
  private readonly jobs = new Map<string, Job>();
  private created = 0;

  constructor(
    private readonly network: SampleNetwork,
    /** How long a job runs, read when it is created. */
    private readonly jobMs: () => number,
  ) {}

  /** Starts a job. @throws HttpError 400 when the body is not a well-formed export request. */
  create(body: unknown, origin: string): ExportOperation {
    const request = this.parse(body);
    const operationId = this.nextId();
    const createdMs = Date.now();
    const job: Job = { operationId, request, createdMs, readyMs: createdMs + this.jobMs(), origin };
    this.jobs.set(operationId, job);
    return this.render(job);
  }

  get(operationId: string): ExportOperation | undefined {
    const job = this.jobs.get(operationId);
    return job && this.render(job);
  }

  /** The CSV of a completed job; undefined for an unknown, running or failed one. */
  file(operationId: string): string | undefined {
    const job = this.jobs.get(operationId);
    return job && this.outcomeOf(job)?.csv;
  }

  private render(job: Job): ExportOperation {
    const outcome = this.outcomeOf(job);
    const created = Math.floor(job.createdMs / 1000);
    return {
      operationId: job.operationId,
      operationType: job.request.type,
      operationStatus: outcome?.status ?? "RUNNING",
      message: outcome?.message ?? "The transaction export is running",
      ...(outcome ? { metadata: outcome.metadata } : {}),
      createdAtTimestamp: created,
      updatedAtTimestamp: outcome ? Math.floor(job.readyMs / 1000) : created,
    };
  }

  private outcomeOf(job: Job): Outcome | undefined {
    if (job.outcome === undefined && Date.now() >= job.readyMs) job.outcome = this.run(job);
    return job.outcome;
  }

  private run(job: Job): Outcome {
    const { request } = job;
    const days = (request.lastDay - request.firstDay) / DAY + 1;
    const truncated = days > MAX_EXPORT_DAYS;
    const lastDay = truncated ? request.firstDay + (MAX_EXPORT_DAYS - 1) * DAY : request.lastDay;
    const range = { start: request.firstDay, end: lastDay + DAY - 1 };
    const result =
      request.type === "TRANSACTION_EXPORT_EVM" ? this.evmRows(request, range) : this.primaryNetworkRows(request, range);
    if ("problem" in result) {
      return { status: "FAILED", message: result.problem, metadata: { code: "ErrInvalidRequest" } };
    }
    const csv = `${[result.header, ...result.rows].map((row) => row.map(csvField).join(",")).join("\n")}\n`;
    const downloadUrl = `${job.origin}${EXPORT_DOWNLOAD_PATH}${job.operationId}.csv`;
    if (truncated) {
      const nextDate = isoDate(lastDay + DAY);
      return {
        status: "COMPLETED_WITH_WARNING",
        message: `The range is longer than ${MAX_EXPORT_DAYS} days: the file ends on ${isoDate(lastDay)}; export the rest from ${nextDate}`,
        metadata: { code: "WarnTruncatedExport", downloadUrl, nextDate },
        csv,
      };
    }
    return { status: "COMPLETED", message: "The transaction export is complete", metadata: { downloadUrl }, csv };
  }

  private evmRows(request: ExportRequest, range: { start: number; end: number }): Rows {
    const header = [
      "date",
      "chainId",
      "blockNumber",
      "blockTimestamp",
      "txHash",
      "from",
      "to",
      "value",
      "gasUsed",
      "gasPrice",
      "txStatus",
    ];
    const rows: string[][] = [];
    for (const chainId of new Set(request.includeChains)) {
      const chain = this.network.chain(chainId);
      if (chain === undefined) return { problem: `Chain ${chainId} is not supported` };
      const { blocks } = chain;
      const firstBlock = (time: number) => {
        let low = 0;
        let high = blocks.count;
        while (low < high) {
          const middle = (low + high) >>> 1;
          if (blocks.blockTimestamp(middle) < time) low = middle + 1;
          else high = middle;
        }
        return low;
      };
      const blockRange = { startBlock: firstBlock(range.start), endBlock: firstBlock(range.end + 1), sortOrder: "asc" as const };
      const found = new Map<string, string[]>();
      for (const address of request.addresses) {
        const transactions = this.network.transactions(chain).addressTransactions(address, blockRange);
        for (let index = 0; index < transactions.length; index++) {
          const tx = transactions.at(index)!.nativeTransaction;
          found.set(tx.txHash, [
            isoDate(tx.blockTimestamp),
            chain.evmChainId,
            tx.blockNumber,
            String(tx.blockTimestamp),
            tx.txHash,
            tx.from.address,
            tx.to.address,
            tx.value,
            tx.gasUsed,
            tx.gasPrice,
            tx.txStatus,
          ]);
        }
      }
      rows.push(...[...found.values()].sort((a, b) => Number(a[2]) - Number(b[2]) || (a[4]! < b[4]! ? -1 : 1)));
    }
    return { header, rows };
  }

  private primaryNetworkRows(request: ExportRequest, range: { start: number; end: number }): Rows {
    const networks = new Set<NetworkName>();
    const chains = new Set<ChainKey>();
    for (const id of request.includeChains) {
      const alias = CHAIN_ALIASES[id];
      if (alias) {
        chains.add(alias);
        continue;
      }
      for (const name of ["mainnet", "fuji"] as const) {
        const key = (Object.keys(PRIMARY_CHAIN_IDS[name]) as ChainKey[]).find((chain) => PRIMARY_CHAIN_IDS[name][chain] === id);
        if (key === undefined) continue;
        chains.add(key);
        // The P-Chain has one id on both networks: it does not pick one.
        if (key !== "P") networks.add(name);
      }
    }
    if (networks.size > 1) return { problem: "includeChains names chains of both mainnet and Fuji" };
    const primary = this.network.primaryNetwork(networks.has("fuji") ? "fuji" : "mainnet");
    const simple = request.type === "TRANSACTION_EXPORT_PRIMARY_NETWORK_SIMPLE";
    const header = simple
      ? ["date", "chain", "txHash", "txType"]
      : ["date", "chain", "blockchainId", "blockNumber", "timestamp", "txHash", "txType", "nodeId", "addresses"];
    const wanted = [
      ...request.addresses.map(normalizeAddress),
      ...request.cChainEvmAddresses.map((address) => address.toLowerCase()),
    ];
    const rows: string[][] = [];
    for (const chain of (["P", "X", "C"] as const).filter((key) => chains.has(key))) {
      const transactions = primary.transactions(chain, {
        addresses: wanted.length > 0 ? new Set(wanted) : undefined,
        txTypes: request.type === "TRANSACTION_EXPORT_PRIMARY_NETWORK_STAKING" ? STAKING_TYPES : undefined,
        startTimestamp: range.start,
        endTimestamp: range.end,
        l1ValidationId: undefined,
        sortOrder: "asc",
      });
      for (const tx of transactions) {
        const date = isoDate(tx.timestamp);
        const chainName = `${chain.toLowerCase()}-chain`;
        rows.push(
          simple
            ? [date, chainName, tx.txHash, tx.txType]
            : [
                date,
                chainName,
                primary.chainIds[chain],
                blockNumberOf(tx),
                String(tx.timestamp),
                tx.txHash,
                tx.txType,
                nodeIdOf(tx),
                [...tx.addresses].join(" "),
              ],
        );
      }
    }
    return { header, rows };
  }

  /** The request as the contract shapes it, with its days worked out. */
  private parse(body: unknown): ExportRequest {
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw badRequest("body must be a JSON object");
    const request = body as Record<string, unknown>;
    const type = request.type;
    const evm = type === "TRANSACTION_EXPORT_EVM";
    if (!evm && !PRIMARY_NETWORK_TYPES.has(String(type))) {
      throw badRequest(
        "type must be one of the following values: TRANSACTION_EXPORT_EVM, " + [...PRIMARY_NETWORK_TYPES].join(", "),
      );
    }
    const options = request.options;
    if (typeof options !== "object" || options === null) throw badRequest("options should not be empty");
    const list = (name: string, required: boolean, check: (value: string) => boolean) => {
      const value = (options as Record<string, unknown>)[name];
      if (value === undefined && !required) return [];
      if (!Array.isArray(value) || !value.every((item) => typeof item === "string" && check(item))) {
        throw badRequest(`options.${name} must be an array of valid values`);
      }
      return value as string[];
    };
    const primaryChains: ReadonlySet<string> = new Set([
      ...Object.values(PRIMARY_CHAIN_IDS.mainnet),
      ...Object.values(PRIMARY_CHAIN_IDS.fuji),
      ...Object.keys(CHAIN_ALIASES),
    ]);
    const includeChains = list("includeChains", true, (value) => (evm ? /^\d+$/.test(value) : primaryChains.has(value)));
    const addresses = list("addresses", evm, (value) => (evm ? EVM_ADDRESS.test(value) : value.length > 0));
    const cChainEvmAddresses = evm ? [] : list("cChainEvmAddresses", false, (value) => EVM_ADDRESS.test(value));

    const day = (name: string): number | undefined => {
      const value = request[name];
      if (value === undefined) return undefined;
      const time = typeof value === "string" && DATE.test(value) ? Date.parse(`${value}T00:00:00Z`) : Number.NaN;
      if (Number.isNaN(time) || isoDate(time / 1000) !== value)
        throw badRequest(`${name} must be a date in the format YYYY-MM-DD`);
      return time / 1000;
    };
    const headDay = Math.floor(this.network.options.headTime / DAY) * DAY;
    const lastDay = day("lastDate") ?? day("endDate") ?? headDay;
    const firstDay = day("firstDate") ?? day("startDate") ?? lastDay - (MAX_EXPORT_DAYS - 1) * DAY;
    if (firstDay > lastDay) throw badRequest("firstDate must not be after lastDate");
    return { type: type as ExportOperationType, firstDay, lastDay, addresses, cChainEvmAddresses, includeChains };
  }

  /** A UUID-shaped id, from a counter: the same sequence on every start. */
  private nextId(): string {
    const hex = sha256("export-operation", String(this.created++), String(this.network.options.seed)).toString("hex");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  }
}

function isoDate(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 10);
}

function blockNumberOf(tx: SimTransaction): string {
  if (tx.chain === "C") return String(tx.blockNumber);
  return tx.block?.record.blockNumber ?? "";
}

function nodeIdOf(tx: SimTransaction): string {
  return tx.chain === "P" ? (tx.fields.nodeId ?? "") : "";
}

function csvField(value: string): string {
  return /[",\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}
