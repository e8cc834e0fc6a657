/** What the benchmarks measure with: autocannon load, the median of runs, a warm-up before measuring. */
import autocannon from "autocannon";
import type { PreparedOperation, ReferenceOperation } from "./operations/index.ts";

export type Operation = ReferenceOperation & PreparedOperation;

const WARM_UP_SECONDS = Number(process.env.BENCH_WARM_UP_SECONDS ?? 2);

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function round(value: number, digits = 2): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

export interface Load {
  url: string;
  body: string;
  connections: number;
  seconds: number;
}

export interface LoadResult {
  p50: number;
  p99: number;
  rps: number;
  /** Responses received. */
  requests: number;
  /** How long the load ran. */
  seconds: number;
  errors: number;
}

export async function load({ url, body, connections, seconds }: Load): Promise<LoadResult> {
  const result = await autocannon({
    url,
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body,
    connections,
    duration: seconds,
  });
  return {
    p50: result.latency.p50,
    p99: result.latency.p99,
    rps: result.requests.average,
    requests: result.requests.total,
    seconds: result.duration,
    errors: result.errors + result.timeouts + result.non2xx,
  };
}

export function gatewayBody(operation: Pick<Operation, "document" | "variables">): string {
  return JSON.stringify({ query: operation.document, variables: operation.variables });
}

export async function post(url: string, body: string): Promise<{ data?: unknown; errors?: unknown[] }> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
  return (await response.json()) as { data?: unknown; errors?: unknown[] };
}

/**
 * Checks that the target answers without errors, then loads it briefly (BENCH_WARM_UP_SECONDS,
 * default 2), so that what is measured is the steady state of optimized code rather than the
 * JIT compiler warming up.
 */
export async function warmUp(target: { name: string; url: string }, body: string): Promise<void> {
  const result = await post(target.url, body);
  if (result.errors) throw new Error(`${target.name} answered with errors: ${JSON.stringify(result.errors).slice(0, 500)}`);
  if (WARM_UP_SECONDS > 0) await load({ url: target.url, body, connections: 32, seconds: WARM_UP_SECONDS });
}
