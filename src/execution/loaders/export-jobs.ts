/** Per-request loaders for the Data API's export jobs. */
import DataLoader from "dataloader";
import type { CallOptions } from "../../upstream/call-options.ts";
import type { ExportOperation } from "../../upstream/types.ts";
import type { Upstreams } from "../../upstream/upstreams.ts";
import { observed, type BatchObserver } from "./observed.ts";
import { settle } from "./settle.ts";

export interface ExportJobLoaders {
  /** An export job's state as of this request, by operation id; null when the Data API knows none. */
  exportOperation: DataLoader<string, ExportOperation | null>;
}

export function createExportJobLoaders({ exportJobs }: Upstreams, call: CallOptions, observe: BatchObserver): ExportJobLoaders {
  return {
    exportOperation: new DataLoader(
      observed("exportOperation", observe, (ids) => Promise.all(ids.map((id) => settle(exportJobs.getOperation(id, call))))),
    ),
  };
}
