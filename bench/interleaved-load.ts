/**
 * Loads several processes with one request in turn, in short slices: each gets `slices` loads of
 * `seconds / slices`, one after another round the targets (the first going first in turn), so that
 * a spell in which the shared machine is slow falls on every target alike instead of on whichever
 * held the one long load then. Each target's figures sum its slices.
 */
import { load, median } from "./measure.ts";
import type { Running } from "./processes.ts";

export interface InterleavedResult {
  /** Responses over the seconds the target was loaded. */
  rps: number;
  /** The median of the slices' p99 latencies, ms. */
  p99: number;
  requests: number;
  errors: number;
  /** The target's main-thread CPU time per response, µs. */
  cpuPerRequest: number;
}

export interface InterleavedLoad {
  body: string;
  connections: number;
  /** The load each target gets in all. */
  seconds: number;
  slices: number;
  /** Which target goes first in the first slice (rotating by one each slice). */
  firstTurn: number;
}

export async function loadInterleaved(
  targets: readonly Running[],
  { body, connections, seconds, slices, firstTurn }: InterleavedLoad,
): Promise<Map<Running, InterleavedResult>> {
  const sums = new Map(targets.map((target) => [target, { requests: 0, seconds: 0, errors: 0, cpu: 0, p99: [] as number[] }]));
  for (let slice = 0; slice < slices; slice += 1) {
    const turn = (firstTurn + slice) % targets.length;
    for (const target of [...targets.slice(turn), ...targets.slice(0, turn)]) {
      const sum = sums.get(target)!;
      const cpuBefore = target.cpuMicros();
      const result = await load({ url: target.url, body, connections, seconds: seconds / slices });
      sum.cpu += target.cpuMicros() - cpuBefore;
      sum.requests += result.requests;
      sum.seconds += result.seconds;
      sum.errors += result.errors;
      sum.p99.push(result.p99);
    }
  }
  return new Map(
    [...sums].map(([target, sum]) => [
      target,
      {
        rps: sum.requests / Math.max(sum.seconds, 0.001),
        p99: median(sum.p99),
        requests: sum.requests,
        errors: sum.errors,
        cpuPerRequest: sum.cpu / Math.max(1, sum.requests),
      },
    ]),
  );
}
