/** The run's figures beside the streams': resident memory over time, and upstream calls per question per minute. */
import type { CounterSnapshot, RssSample } from "./observe.ts";
import { POLL_MS } from "./settings.ts";

export interface RssLife {
  gateway: string;
  pid: number;
  startedAtMs: number;
  samples: number;
  firstMb: number;
  peakMb: number;
  lastMb: number;
  /** The largest RSS in the first steady window (after warm-up) and in the last window. */
  steady: { fromMs: number; toMs: number; maxMb: number } | undefined;
  last: { fromMs: number; toMs: number; maxMb: number } | undefined;
  /** The largest RSS in each minute of its life. */
  perMinuteMaxMb: number[];
  /** Whether the last window's max is within 10 % and 10 MB of the steady one's; undefined when the life was too short to tell. */
  flat: boolean | undefined;
}

/** The windows of a run of `totalMs`: warm-up, then the first steady minutes, and the last minutes. */
export function rssWindows(totalMs: number): { warmUpMs: number; steadyMs: number; lastMs: number } {
  const warmUpMs = Math.min(5 * 60_000, totalMs * 0.1);
  const steadyMs = Math.min(5 * 60_000, totalMs * 0.15);
  const lastMs = Math.min(10 * 60_000, totalMs * 0.3);
  return { warmUpMs, steadyMs, lastMs };
}

/** RSS of each gateway process (a killed gateway has two lives), with its first steady minutes against its last. */
export function rssLives(samples: RssSample[], totalMs: number): RssLife[] {
  const { warmUpMs, steadyMs, lastMs } = rssWindows(totalMs);
  const byPid = new Map<number, RssSample[]>();
  for (const sample of samples) byPid.set(sample.pid, [...(byPid.get(sample.pid) ?? []), sample]);
  return [...byPid.values()].map((life) => {
    const startedAtMs = life[0]!.atMs;
    const max = (fromMs: number, toMs: number) => {
      const inside = life.filter((sample) => sample.atMs >= fromMs && sample.atMs <= toMs).map((sample) => sample.mb);
      return inside.length ? { fromMs: Math.round(fromMs), toMs: Math.round(toMs), maxMb: Math.max(...inside) } : undefined;
    };
    const steadyFrom = startedAtMs + warmUpMs;
    const steady = max(steadyFrom, steadyFrom + steadyMs);
    const lastFrom = Math.max(steadyFrom + steadyMs, life.at(-1)!.atMs - lastMs);
    const last = steady ? max(lastFrom, life.at(-1)!.atMs) : undefined;
    const mbs = life.map((sample) => sample.mb);
    const perMinuteMaxMb: number[] = [];
    for (const sample of life) {
      const minute = Math.floor((sample.atMs - startedAtMs) / 60_000);
      perMinuteMaxMb[minute] = Math.max(perMinuteMaxMb[minute] ?? 0, Math.round(sample.mb));
    }
    return {
      gateway: life[0]!.gateway,
      pid: life[0]!.pid,
      startedAtMs: Math.round(startedAtMs),
      samples: life.length,
      firstMb: mbs[0]!,
      peakMb: Math.max(...mbs),
      lastMb: mbs.at(-1)!,
      perMinuteMaxMb: [...perMinuteMaxMb].map((mb) => mb ?? 0),
      steady,
      last,
      flat: steady && last ? last.maxMb <= steady.maxMb * 1.1 + 10 : undefined,
    };
  });
}

/** The routes the pollers read, the questions that share each, and the most calls a minute one poller per question makes. */
const polledRoutes = (addresses: number): Record<string, { questions: number; boundPerMinute: number }> => ({
  "GET /v1/chains/{chainId}/blocks": { questions: 1, boundPerMinute: 60_000 / POLL_MS.blocks.base },
  "GET /v1/blocks": { questions: 1, boundPerMinute: 60_000 / POLL_MS.blocks.base },
  "GET /v1/chains/{chainId}/addresses/{address}/transactions": {
    questions: addresses,
    boundPerMinute: 60_000 / POLL_MS.address.base,
  },
  "GET /v1/networks/{network}/blockchains/{blockchainId}/transactions": {
    questions: 2,
    boundPerMinute: 60_000 / POLL_MS.primaryNetwork.base,
  },
  "GET /v2/chains/{chainId}/metrics/{metric}": { questions: 1, boundPerMinute: 60_000 / POLL_MS.metrics.base },
});

export interface RouteCalls {
  route: string;
  /** Calls in each minute of the run; a calm minute (no disruption, no resubscription's catch-up) is marked with `*`. */
  perMinute: string[];
  questions: number | undefined;
  /** Per question, over the calm minutes only: the pollers' own reads. */
  calmMinutes: number;
  medianPerQuestion: number | undefined;
  maxPerQuestion: number | undefined;
  /** One poller per question on all gateways: its calls a minute at the base interval. */
  boundPerQuestion: number | undefined;
  /** Whether the median calm minute stays within the bound (10 % and one call of slack); undefined for a link's route, or without a calm minute. */
  withinBound: boolean | undefined;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/**
 * Calls a minute by route. `addresses`: the address questions, which share one route. `calm`
 * tells the minutes whose calls are the pollers' alone: a resubscription's catch-up reads the
 * same route for its client, and a disruption makes the pollers page back or poll apart.
 */
export function callsPerMinute(
  snapshots: CounterSnapshot[],
  addresses: number,
  calm: (fromMs: number, toMs: number) => boolean,
): RouteCalls[] {
  const polledRoute = polledRoutes(addresses);
  const routes = new Set(snapshots.flatMap((snapshot) => Object.keys(snapshot.counts)));
  return [...routes].sort().map((route) => {
    const perMinute: { calls: number; calm: boolean }[] = [];
    for (let index = 1; index < snapshots.length; index += 1) {
      const [before, after] = [snapshots[index - 1]!, snapshots[index]!];
      const minutes = (after.atMs - before.atMs) / 60_000;
      // A partial last minute would read as a slow one.
      if (minutes < 0.5) continue;
      perMinute.push({
        calls: Math.round(((after.counts[route] ?? 0) - (before.counts[route] ?? 0)) / minutes),
        calm: calm(before.atMs, after.atMs),
      });
    }
    const polled = polledRoute[route];
    const perQuestion = polled ? perMinute.filter((minute) => minute.calm).map((minute) => minute.calls / polled.questions) : [];
    const medianPerQuestion = perQuestion.length ? Math.round(median(perQuestion) * 10) / 10 : undefined;
    return {
      route,
      perMinute: perMinute.map((minute) => `${minute.calls}${minute.calm ? "*" : ""}`),
      questions: polled?.questions,
      calmMinutes: perMinute.filter((minute) => minute.calm).length,
      medianPerQuestion,
      maxPerQuestion: perQuestion.length ? Math.round(Math.max(...perQuestion) * 10) / 10 : undefined,
      boundPerQuestion: polled?.boundPerMinute,
      withinBound: polled && medianPerQuestion !== undefined ? medianPerQuestion <= polled.boundPerMinute * 1.1 + 1 : undefined,
    };
  });
}
