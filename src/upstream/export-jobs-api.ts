/**
 * The asynchronous operations of the Data API: creating a transaction export and reading the
 * state of an operation. Nothing is cached: an operation changes until it ends.
 */
import { nullIfNotFound } from "../errors.ts";
import { ContractClient } from "./contract-client.ts";
import { ROUTES } from "./routes.ts";
import type { CallOptions } from "./call-options.ts";
import type { UpstreamService } from "./http.ts";
import type { DataPaths, ExportOperation, TransactionExportRequest } from "./types.ts";

export class ExportJobsApi {
  readonly client: ContractClient<DataPaths>;

  constructor(service: UpstreamService) {
    this.client = new ContractClient<DataPaths>(service);
  }

  /** `POST /v1/operations/transactions:export`: starts an export job; sent once, never retried. */
  createTransactionExport(request: TransactionExportRequest, options?: CallOptions): Promise<ExportOperation> {
    return this.client.post(ROUTES.createTransactionExport.path, { body: request }, options);
  }

  /** `GET /v1/operations/{operationId}`; null when the Data API knows no such operation. */
  getOperation(operationId: string, options?: CallOptions): Promise<ExportOperation | null> {
    return nullIfNotFound(this.client.get(ROUTES.exportOperation.path, { params: { operationId } }, options));
  }
}
