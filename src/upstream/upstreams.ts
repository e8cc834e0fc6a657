/** The upstream clients a request reads through, one per upstream domain (src/execution/context.ts carries them). */
import type { EvmApi } from "./evm-api.ts";
import type { ExportJobsApi } from "./export-jobs-api.ts";
import type { MetricsApi } from "./metrics-api.ts";
import type { PrimaryNetworkApi } from "./primary-network-api.ts";
import type { WarpApi } from "./warp-api.ts";

/** One client per upstream domain. */
export interface Upstreams {
  evm: EvmApi;
  metrics: MetricsApi;
  primaryNetwork: PrimaryNetworkApi;
  exportJobs: ExportJobsApi;
  warp: WarpApi;
}
