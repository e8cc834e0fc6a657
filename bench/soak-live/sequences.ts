/**
 * Each subscriber's events against its question's sequence as the simulator lists it: items lost,
 * pushed twice, out of order; LIVE_GAP events where a clock jump allowed one and nowhere else. A
 * LIVE_GAP belongs to the latest jump the stream has not yet passed (got an item from the jump's
 * head on): a poller may read the jump late, after a take-over or a Redis restart.
 * A subscriber's resubscriptions with `after` continue one stream; a resubscription of a kind
 * without `after` starts anew, and what it could not have had is counted apart, not as lost.
 */
import type { SeenItem } from "./kinds.ts";
import type { Subscriber } from "./subscriber.ts";
import type { TruthItem } from "./upstream-truth.ts";

/** A clock jump as it was made: when, and the simulator's time before and after, in Unix seconds. */
export interface JumpMade {
  blocks: number;
  atMs: number;
  simBefore: number;
  simAfter: number;
}

export type GapExpectation = "one" | "none" | "either";

export interface GapsAtJump {
  blocks: number;
  /** Items of the question in the jump, by the simulator's lists; a question per line. */
  itemsInJump: Record<string, number>;
  expected: Record<string, GapExpectation>;
  /** Streams alive across the jump, by how many LIVE_GAP events they got in its window. */
  streamsByGaps: Record<string, number>;
  /** Streams whose LIVE_GAP count is not what the jump allows, or whose gap was not followed by the newest items. */
  wrongStreams: number;
}

export interface SequenceCounts {
  items: number;
  lost: number;
  duplicated: number;
  outOfOrder: number;
  /** Items the question's sequence does not hold though they are upstream (another address's transaction). */
  unknown: number;
  /** Consecutive blocks of one chain whose parent hash is not the block before's hash. */
  brokenParentChain: number;
  /** Items passed over by an allowed LIVE_GAP. */
  skippedByGaps: number;
  /** Items a resubscription without `after` could not have had (kinds that have no `after`). */
  skippedByResubscription: number;
  /** LIVE_GAP events before any jump, or after the stream passed every jump before them. */
  gapsOutsideJumps: number;
  /** Subscribers that never got an item while others of their question did. */
  silentSubscribers: number;
}

export function emptyCounts(): SequenceCounts {
  return {
    items: 0,
    lost: 0,
    duplicated: 0,
    outOfOrder: 0,
    unknown: 0,
    brokenParentChain: 0,
    skippedByGaps: 0,
    skippedByResubscription: 0,
    gapsOutsideJumps: 0,
    silentSubscribers: 0,
  };
}

/** A question's sequence: its items by stream, oldest first, and where each stands. */
export class Sequence {
  readonly streams = new Map<string, TruthItem[]>();
  private readonly index = new Map<string, number>();

  constructor(items: TruthItem[]) {
    for (const item of items) {
      const list = this.streams.get(item.stream) ?? [];
      this.index.set(`${item.stream}\n${item.id}`, list.length);
      list.push(item);
      this.streams.set(item.stream, list);
    }
  }

  indexOf(stream: string, id: string): number | undefined {
    return this.index.get(`${stream}\n${id}`);
  }

  /** The last index of the stream at or before `time`; -1 when none. */
  lastAtOrBefore(stream: string, time: number): number {
    const list = this.streams.get(stream) ?? [];
    let found = -1;
    for (let index = 0; index < list.length && list[index]!.time <= time; index += 1) found = index;
    return found;
  }

  countBetween(after: number, upTo: number): number {
    let count = 0;
    for (const list of this.streams.values()) for (const item of list) if (item.time > after && item.time <= upTo) count += 1;
    return count;
  }
}

/** Whether a jump of `items` items must give one LIVE_GAP, none, or either (near the bound, where the poller's last read decides). */
export function gapExpectation(items: number, maxCatchUp: number, slack: number): GapExpectation {
  if (items > maxCatchUp + slack) return "one";
  if (items < maxCatchUp - slack) return "none";
  return "either";
}

const isGap = (event: { errors: { path: string; code: string }[] }) =>
  event.errors.some((error) => error.path === "" && error.code === "LIVE_GAP");

/**
 * Walks one subscriber's events against its question's sequence, adding to `counts`; `horizon`
 * is the simulator time (seconds) up to which every item must have arrived by the end.
 */
export function walkSequence(
  subscriber: Subscriber,
  sequence: Sequence,
  jumps: JumpMade[],
  horizon: number,
  maxCatchUp: number,
  slack: number,
  counts: SequenceCounts,
  gapsAtJumps: GapsAtJump[],
  /** Whether the item is already counted wrong (its hash or links), so that it is not counted twice. */
  countedWrong: (item: SeenItem) => boolean,
): void {
  const previous = new Map<string, number>();
  const excused = new Map<string, "gap" | "resubscription">();
  const seen = new Set<string>();
  const gapJumps: JumpMade[] = [];
  const passed = new Set<JumpMade>();
  let segment = -1;
  let startTime: number | undefined;
  let awaitingNewest: JumpMade | undefined;
  const newestMissed = new Set<JumpMade>();
  const excuseAll = (why: "gap" | "resubscription") => {
    for (const stream of sequence.streams.keys()) excused.set(stream, why);
  };

  for (const event of subscriber.received) {
    if (event.segment !== segment) {
      segment = event.segment;
      if (segment > 0 && !subscriber.kind.resumable) excuseAll("resubscription");
    }
    if (isGap(event)) {
      excuseAll("gap");
      const jump = jumps.findLast((candidate) => event.atMs >= candidate.atMs && !passed.has(candidate));
      if (jump) {
        gapJumps.push(jump);
        awaitingNewest = jump;
      } else counts.gapsOutsideJumps += 1;
    }
    const item = event.item;
    if (!item) continue;
    counts.items += 1;
    const index = sequence.indexOf(item.stream, item.id);
    if (index === undefined) {
      if (!countedWrong(item)) counts.unknown += 1;
      continue;
    }
    const key = `${item.stream}\n${item.id}`;
    if (seen.has(key)) {
      counts.duplicated += 1;
      continue;
    }
    seen.add(key);
    const list = sequence.streams.get(item.stream)!;
    startTime ??= list[index]!.time;
    const before = previous.get(item.stream);
    if (before !== undefined && index < before) {
      counts.outOfOrder += 1;
      continue;
    }
    if (before !== undefined && index === before + 1 && item.detail.parentHash !== undefined) {
      if (item.detail.parentHash !== list[before]!.id) counts.brokenParentChain += 1;
    }
    if (before !== undefined && index > before + 1) {
      const missing = index - before - 1;
      const why = excused.get(item.stream);
      if (why === "gap") counts.skippedByGaps += missing;
      else if (why === "resubscription") counts.skippedByResubscription += missing;
      else counts.lost += missing;
    }
    if (awaitingNewest) {
      // After a gap the stream goes on from the newest items: within the bound of the jump's head.
      const newest = sequence.lastAtOrBefore(item.stream, awaitingNewest.simAfter);
      if (index < newest - maxCatchUp - slack) newestMissed.add(awaitingNewest);
      awaitingNewest = undefined;
    }
    previous.set(item.stream, index);
    excused.delete(item.stream);
    for (const jump of jumps) {
      if (event.atMs >= jump.atMs && index >= sequence.lastAtOrBefore(item.stream, jump.simAfter)) passed.add(jump);
    }
  }

  if (startTime === undefined) return;
  // What every stream must have reached by the end: each item up to the horizon.
  for (const [stream, list] of sequence.streams) {
    const last = previous.get(stream);
    const due = sequence.lastAtOrBefore(stream, horizon);
    if (last !== undefined) {
      if (last < due) counts.lost += due - last;
    } else {
      counts.lost += list.filter((item) => item.time > startTime! && item.time <= horizon).length;
    }
  }

  for (const [index, jump] of jumps.entries()) {
    const alive = subscriber.segments.some(
      (candidate) => candidate.startedAtMs <= jump.atMs && (candidate.end?.atMs ?? Infinity) > jump.atMs,
    );
    if (!alive) continue;
    const at = gapsAtJumps[index]!;
    const got = gapJumps.filter((candidate) => candidate === jump).length;
    at.streamsByGaps[String(got)] = (at.streamsByGaps[String(got)] ?? 0) + 1;
    const expected = at.expected[subscriber.question] ?? "either";
    const allowed = expected === "one" ? got === 1 : expected === "none" ? got === 0 : got <= 1;
    if (!allowed || newestMissed.has(jump)) at.wrongStreams += 1;
  }
}
