/**
 * The V8 flags a cluster's workers run with: the primary's, except V8's helper-thread pool. With
 * `--v8-pool-size=0` (start:prod's default) Node gives a process one helper thread fewer than the
 * cores it may use, so that garbage collection and compilation in the background do not take the
 * core its event loop runs on. A primary passing that on to N workers would start N times as many
 * helpers as there are cores; each worker gets its share instead: the cores the workers' event
 * loops leave, split among them, at least one each. A size the operator set is kept.
 */
import { availableParallelism } from "node:os";

const AUTO_POOL = "--v8-pool-size=0";

/** The pool size each of `workers` processes gets out of `cores`. */
export function workerPoolSize(workers: number, cores = availableParallelism()): number {
  return Math.max(1, Math.floor((cores - workers) / workers));
}

/** The workers' execArgv, from the primary's and its NODE_OPTIONS (which the workers inherit too). */
export function workerExecArgv(primaryArgv: readonly string[], nodeOptions: string | undefined, workers: number): string[] {
  const auto = primaryArgv.includes(AUTO_POOL) || (nodeOptions ?? "").split(/\s+/).includes(AUTO_POOL);
  const argv = primaryArgv.filter((flag) => flag !== AUTO_POOL);
  // A flag on the command line wins over NODE_OPTIONS.
  return auto ? [...argv, `--v8-pool-size=${workerPoolSize(workers)}`] : argv;
}
