/**
 * Each kind of subscription's figures: what its subscribers got against the simulator's answers,
 * how their streams ended, and how soon events came again after the kill.
 */
import type { KillMade } from "./disruptions.ts";
import { itemProblem, type Truth } from "./items.ts";
import type { Kind, SeenItem } from "./kinds.ts";
import { walkMetricStream } from "./metric-stream.ts";
import { emptyCounts, walkSequence, type GapsAtJump, type JumpMade, type Sequence, type SequenceCounts } from "./sequences.ts";
import type { Subscriber } from "./subscriber.ts";

export interface TakeOver {
  /** From the kill to the first new item on a stream of the gateway that lived, opened before the kill; null when none came. */
  survivorMs: number | null;
  /** Streams of the surviving gateway open at the kill: those the take-over is measured on. */
  survivorStreamsOpen: number;
  /** From the kill to the first event on a stream of the killed gateway, resubscribed. */
  resubscribedMs: number | null;
  /** Three of the question's longest intervals (the lock's life) and one base interval: the README's promise. */
  boundMs: number;
  /** Whether the bound is checked: items come often enough, and the run lasted past it. */
  checked: boolean;
}

export interface KindSummary {
  kind: string;
  questions: number;
  subscribers: Record<string, number>;
  events: number;
  /** Errors in events, by code and, for the upstream's codes, cause. */
  errorCodes: Record<string, number>;
  counts: SequenceCounts;
  /** Events whose item is not the simulator's (hash, parent hash, links). */
  wrongEvents: number;
  wrongSamples: string[];
  nullLinks: { unexplained: number; explained: number; byLink: Record<string, number> };
  /** How subscriptions ended, by cause; and those no disruption explains. */
  endings: Record<string, number>;
  unexpectedEndings: number;
  resubscriptions: number;
  takeOver: TakeOver | undefined;
}

/** How long after a killed gateway is healthy again its clients may still fail to reconnect. */
const RECONNECT_GRACE_MS = 15_000;
/** Kinds whose items come every few seconds, so that the first event after the kill measures the take-over. */
const FREQUENT: ReadonlySet<string> = new Set([
  "chain-blocks",
  "network-blocks",
  "p-chain-transactions",
  "x-chain-transactions",
  "chain-metric",
]);

function endingOf(subscriber: Subscriber, segment: number): string {
  const end = subscriber.segments[segment]?.end;
  if (!end) return "open";
  if (end.how === "refused") return `refused: ${String(end.errors[0]?.extensions?.code ?? end.status ?? "unknown")}`;
  if (end.how === "dropped" || end.how === "closed") return end.how;
  const last = subscriber.received.filter((event) => event.segment === segment).at(-1);
  const code = last?.errors.find((error) => error.path === "")?.code;
  return code ? `completed after ${code}` : "completed";
}

/**
 * From the kill to the first event of `subscribers` that `counts`; null when none came. On the
 * surviving gateway only streams opened before the kill count, with items that arrived upstream
 * after it (not a catch-up, not the dead reader's last publication).
 */
function firstEventAfter(subscribers: Subscriber[], kill: KillMade, survivors: boolean): number | null {
  let first: number | null = null;
  for (const subscriber of subscribers) {
    const event = subscriber.received.find(
      (candidate) =>
        candidate.atMs > kill.atMs &&
        candidate.item !== undefined &&
        (!survivors ||
          ((subscriber.segments[candidate.segment]?.startedAtMs ?? Infinity) < kill.atMs &&
            (candidate.item.time === undefined || candidate.item.time > kill.simAtKill))),
    );
    if (event && (first === null || event.atMs < first)) first = event.atMs;
  }
  return first === null ? null : Math.round(first - kill.atMs);
}

export interface AnalysisInput {
  kind: Kind;
  subscribers: Subscriber[];
  sequences: Map<string, Sequence>;
  truth: Truth;
  jumps: JumpMade[];
  gapsAtJumps: GapsAtJump[];
  kill: KillMade | undefined;
  /** Simulator time (seconds) at the end. */
  simEnd: number;
  endMs: number;
  maxCatchUp: number;
  gapSlack: number;
}

export function analyseKind(input: AnalysisInput): KindSummary {
  const { kind, subscribers, truth, kill } = input;
  const counts = emptyCounts();
  const horizon = input.simEnd - (kind.pollMs.max + 2_000) / 1000;
  const problems = new Map<SeenItem, string | undefined>();
  const summary: KindSummary = {
    kind: kind.name,
    questions: new Set(subscribers.map((subscriber) => subscriber.question)).size,
    subscribers: {},
    events: 0,
    errorCodes: {},
    counts,
    wrongEvents: 0,
    wrongSamples: [],
    nullLinks: { unexplained: 0, explained: 0, byLink: {} },
    endings: {},
    unexpectedEndings: 0,
    resubscriptions: 0,
    takeOver: undefined,
  };
  const questionsWithItems = new Set(
    subscribers.filter((subscriber) => subscriber.received.some((event) => event.item)).map((subscriber) => subscriber.question),
  );
  for (const subscriber of subscribers) {
    const label = `${subscriber.transport} on ${subscriber.gatewayName}`;
    summary.subscribers[label] = (summary.subscribers[label] ?? 0) + 1;
    summary.events += subscriber.received.length;
    summary.resubscriptions += subscriber.segments.length - 1;
    let gotItem = false;
    for (const event of subscriber.received) {
      for (const error of event.errors) summary.errorCodes[error.cause] = (summary.errorCodes[error.cause] ?? 0) + 1;
      if (!event.item) continue;
      gotItem = true;
      if (!problems.has(event.item)) problems.set(event.item, itemProblem(kind.name, event.item, truth));
      const problem = problems.get(event.item);
      if (problem) {
        summary.wrongEvents += 1;
        if (summary.wrongSamples.length < 10 && !summary.wrongSamples.includes(problem)) summary.wrongSamples.push(problem);
      }
      for (const link of event.item.nullLinks) {
        summary.nullLinks.byLink[link] = (summary.nullLinks.byLink[link] ?? 0) + 1;
        if (event.unexplainedNullLinks.includes(link)) summary.nullLinks.unexplained += 1;
        else summary.nullLinks.explained += 1;
      }
    }
    if (!gotItem && questionsWithItems.has(subscriber.question)) counts.silentSubscribers += 1;
    if (kind.name === "chain-metric") walkMetricStream(subscriber, counts);
    else {
      const sequence = input.sequences.get(subscriber.question);
      if (sequence) {
        const countedWrong = (item: SeenItem) => problems.get(item) !== undefined;
        walkSequence(
          subscriber,
          sequence,
          input.jumps,
          horizon,
          input.maxCatchUp,
          input.gapSlack,
          counts,
          input.gapsAtJumps,
          countedWrong,
        );
      }
    }
    for (const [index, segment] of subscriber.segments.entries()) {
      const ending = endingOf(subscriber, index);
      if (ending === "open" || ending === "closed") continue;
      summary.endings[ending] = (summary.endings[ending] ?? 0) + 1;
      const atMs = segment.end!.atMs;
      const explainedByKill =
        kill !== undefined &&
        subscriber.gatewayName === kill.gateway &&
        (ending === "dropped" || ending.startsWith("refused")) &&
        atMs >= kill.atMs &&
        atMs <= kill.healthyAtMs + RECONNECT_GRACE_MS;
      if (!explainedByKill) summary.unexpectedEndings += 1;
    }
  }
  if (kill) {
    const survivors = subscribers.filter((subscriber) => subscriber.gatewayName !== kill.gateway);
    const openAtKill = (subscriber: Subscriber) =>
      subscriber.segments.some((segment) => segment.startedAtMs < kill.atMs && (segment.end?.atMs ?? Infinity) > kill.atMs);
    const boundMs = 3 * kind.pollMs.max + kind.pollMs.base;
    summary.takeOver = {
      survivorMs: firstEventAfter(survivors, kill, true),
      survivorStreamsOpen: survivors.filter(openAtKill).length,
      resubscribedMs: firstEventAfter(
        subscribers.filter((subscriber) => subscriber.gatewayName === kill.gateway),
        kill,
        false,
      ),
      boundMs,
      checked: FREQUENT.has(kind.name) && kill.atMs + boundMs < input.endMs,
    };
  }
  return summary;
}
