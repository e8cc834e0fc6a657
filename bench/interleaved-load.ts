/**
 * Loads several processes with one request in turn, in short slices: each gets `slices` loads of
 * `seconds / slices`, one after another round the targets, so that a spell in which the shared
 * machine is slow falls on every target alike instead of on whichever held the one long load
 * then. Each target's figures sum its slices.
 *
 * The order of each slice is a row of a Williams design: over n slices (2n when n is odd) every
 * target goes first once and follows every other target once. A plain rotation always loads the
 * same target after the same other one, and whatever a load leaves behind on the machine (a
 * process's collection or compilation after its load, the load generator's state) then falls on
 * one target only: on a pinned run, a second process of one build measured 13 % faster than the
 * first in every round.
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

/** Row `row` of a Williams design for `count` targets: the order of their loads in one slice. */
export function williamsRow(count: number, row: number): number[] {
  // The first row is 0, 1, n−1, 2, n−2, …; row r adds r to each (mod n). For odd n, rows n to 2n−1 are rows 0 to n−1 reversed.
  const first = Array.from({ length: count }, (_, index) =>
    index === 0 ? 0 : index % 2 === 1 ? (index + 1) / 2 : count - index / 2,
  );
  const rows = count % 2 === 0 ? count : 2 * count;
  const wrapped = ((row % rows) + rows) % rows;
  const order = first.map((target) => (target + (wrapped % count)) % count);
  return wrapped >= count ? order.reverse() : order;
}

export async function loadInterleaved(
  targets: readonly Running[],
  { body, connections, seconds, slices, firstTurn }: InterleavedLoad,
): Promise<Map<Running, InterleavedResult>> {
  const sums = new Map(targets.map((target) => [target, { requests: 0, seconds: 0, errors: 0, cpu: 0, p99: [] as number[] }]));
  for (let slice = 0; slice < slices; slice += 1) {
    for (const target of williamsRow(targets.length, firstTurn + slice).map((index) => targets[index]!)) {
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
