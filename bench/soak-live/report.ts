/** The checks of a `npm run soak:live` run, and bench/results/soak-live.{json,md}. */
import { writeFile } from "node:fs/promises";
import type { KindSummary } from "./analyse.ts";
import type { DisruptionLog } from "./disruptions.ts";
import type { RouteCalls, RssLife } from "./figures.ts";
import type { GapsAtJump } from "./sequences.ts";
import type { Subscriber } from "./subscriber.ts";

export interface Check {
  name: string;
  pass: boolean;
  found: string;
}

export interface SoakLiveReport {
  date: string;
  minutes: number;
  durationSeconds: number;
  settings: Record<string, unknown>;
  gatewaySettings: string[];
  subscribers: number;
  events: number;
  distinctAnswers: number;
  kinds: KindSummary[];
  disruptions: DisruptionLog;
  gapsAtJumps: GapsAtJump[];
  rss: RssLife[];
  rssSampleSeconds: number;
  rssWindows: { warmUpSeconds: number; steadySeconds: number; lastSeconds: number };
  upstreamCalls: RouteCalls[];
  simulatorReadsToCheck: number;
  /** The first message of each kind of error the events carried. */
  errorSamples: Record<string, string>;
  checks: Check[];
  pass: boolean;
}

const CRITERIA: { name: string; value: (kind: KindSummary) => number }[] = [
  { name: "0 lost", value: (kind) => kind.counts.lost },
  { name: "0 duplicated", value: (kind) => kind.counts.duplicated },
  { name: "0 out of order", value: (kind) => kind.counts.outOfOrder },
  { name: "0 wrong (hash, links, values, another question's items)", value: (kind) => kind.wrongEvents + kind.counts.unknown },
  { name: "0 breaks in the parent hash chain", value: (kind) => kind.counts.brokenParentChain },
  { name: "0 null links without an upstream failure", value: (kind) => kind.nullLinks.unexplained },
  { name: "0 LIVE_GAP that no jump explains", value: (kind) => kind.counts.gapsOutsideJumps },
  { name: "0 silent subscribers", value: (kind) => kind.counts.silentSubscribers },
  { name: "0 streams ended that no disruption explains", value: (kind) => kind.unexpectedEndings },
];

export function checksOf(
  kinds: KindSummary[],
  gapsAtJumps: GapsAtJump[],
  rss: RssLife[],
  calls: RouteCalls[],
  disruptions: DisruptionLog,
): Check[] {
  const checks: Check[] = CRITERIA.map(({ name, value }) => {
    const nonZero = kinds.filter((kind) => value(kind) !== 0).map((kind) => `${kind.kind} ${value(kind)}`);
    return { name, pass: nonZero.length === 0, found: nonZero.length ? nonZero.join(", ") : "0 in every kind" };
  });
  checks.push({
    name: "every scheduled disruption was made (2 clock jumps, the kill and restart of the reading gateway, a Redis restart)",
    pass:
      disruptions.failures.length === 0 &&
      disruptions.jumps.length === 2 &&
      disruptions.kill !== undefined &&
      disruptions.redisRestart !== undefined,
    found: disruptions.failures.length ? disruptions.failures.join("; ") : "all made",
  });
  for (const jump of gapsAtJumps) {
    checks.push({
      name: `LIVE_GAP: exactly one per stream where the ${jump.blocks}-block jump exceeds LIVE_MAX_CATCH_UP, none where it does not, then the newest items`,
      pass: jump.wrongStreams === 0,
      found: `${jump.wrongStreams} streams wrong; streams by gaps got: ${JSON.stringify(jump.streamsByGaps)}`,
    });
  }
  if (disruptions.kill) {
    for (const kind of kinds) {
      const takeOver = kind.takeOver;
      if (!takeOver?.checked) continue;
      checks.push({
        name: `take-over after the kill within 3 longest poll intervals + 1 (${kind.kind}, ${takeOver.boundMs} ms)`,
        pass: takeOver.survivorMs !== null && takeOver.survivorMs <= takeOver.boundMs,
        found:
          takeOver.survivorMs === null
            ? `no new item on the ${takeOver.survivorStreamsOpen} streams of the surviving gateway open at the kill`
            : `first new item on the surviving gateway ${takeOver.survivorMs} ms after the kill`,
      });
    }
  }
  for (const life of rss) {
    if (life.flat === undefined) continue;
    checks.push({
      name: `RSS flat: gateway ${life.gateway} (pid ${life.pid}), last window's max within 10 % + 10 MB of the first steady window's`,
      pass: life.flat,
      found: `${life.steady!.maxMb} MB then ${life.last!.maxMb} MB`,
    });
  }
  for (const route of calls) {
    if (route.withinBound === undefined) continue;
    checks.push({
      name: `one poller per question on both gateways: ${route.route}, median calm minute ≤ ${route.boundPerQuestion} calls per question`,
      pass: route.withinBound,
      found: `median ${route.medianPerQuestion}, max ${route.maxPerQuestion} per question a minute over ${route.calmMinutes} calm minutes (${route.questions} questions)`,
    });
  }
  return checks;
}

/** The disruptions as they came, one line each. */
function disruptionLines({ jumps, kill, redisRestart }: DisruptionLog): string[] {
  const lines: { atMs: number; text: string }[] = jumps.map((jump) => ({
    atMs: jump.atMs,
    text: `clock jump of ${jump.seconds} s (${jump.blocks} C-Chain blocks asked, ${jump.cChainBlocksGained} came)`,
  }));
  if (kill) {
    lines.push({
      atMs: kill.atMs,
      text: `\`kill -9\` of gateway ${kill.gateway} (${kill.chosen}; calls on the blocks route while watched ${cell(kill.holder.callsWhileWatched)}; its locks ${cell(kill.holder.locksOfHolder)}), restarted ${Math.round(kill.restartedAtMs - kill.atMs)} ms later, healthy after ${Math.round(kill.healthyAtMs - kill.restartedAtMs)} ms`,
    });
  }
  if (redisRestart) {
    lines.push({
      atMs: redisRestart.atMs,
      text: `Redis killed, up again ${Math.round(redisRestart.upAtMs - redisRestart.atMs)} ms later (empty)`,
    });
  }
  return lines.sort((a, b) => a.atMs - b.atMs).map((line) => `- ${Math.round(line.atMs / 1000)} s: ${line.text}`);
}

const cell = (value: unknown) => (typeof value === "object" ? JSON.stringify(value) : String(value)).replaceAll("|", "\\|");

function markdown(report: SoakLiveReport): string {
  const lines = [
    "# Live soak",
    "",
    `Written by \`npm run soak:live\` on ${report.date}: ${report.subscribers} subscribers over every live subscription kind, half over WebSocket and half over SSE, on two production gateways sharing one Redis, for ${report.minutes} minutes on the live simulator, through clock jumps, a \`kill -9\` of the gateway reading the upstream and a restart of Redis. Every event is checked against the simulator's own answers.`,
    "",
    `**${report.pass ? "PASS" : "FAIL"}**: ${report.checks.filter((check) => !check.pass).length} of ${report.checks.length} checks failed.`,
    "",
    "## Checks",
    "",
    "| check | pass | found |",
    "|---|---|---|",
    ...report.checks.map((check) => `| ${cell(check.name)} | ${check.pass ? "pass" : "**FAIL**"} | ${cell(check.found)} |`),
    "",
    "## Settings",
    "",
    `Duration ${report.durationSeconds} s. ${Object.entries(report.settings)
      .map(([key, value]) => `${key} = ${cell(value)}`)
      .join("; ")}.`,
    "",
    ...report.gatewaySettings.map((setting) => `- ${setting}`),
    "",
    "Each subscriber is a client of its own that holds one stream for the whole run: when the stream ends (completed, refused, its connection dropped), it subscribes again on the same gateway, with `after` = the last block it saw where the kind has `after` (at once after a stream that delivered, backing off up to 4 s while subscriptions end before an item); after 3 `SLOW_SUBSCRIBER` endings in a row it gives up `after` and starts from now, and what it missed counts as lost. A kind without `after` (`newNetworkBlocks`, `chainMetricUpdates`) starts anew, and what it could not have had is counted apart.",
    "",
    "## Streams by kind",
    "",
    "| kind | questions | subscribers | events | items | lost | dup | out of order | wrong | parent chain | null links (unexplained / explained) | skipped by gaps | skipped by resubscription without `after` | resubscriptions | endings | error codes |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ...report.kinds
      .map((kind) =>
        [
          kind.kind,
          kind.questions,
          cell(kind.subscribers),
          kind.events,
          kind.counts.items,
          kind.counts.lost,
          kind.counts.duplicated,
          kind.counts.outOfOrder,
          kind.wrongEvents + kind.counts.unknown,
          kind.counts.brokenParentChain,
          `${kind.nullLinks.unexplained} / ${kind.nullLinks.explained} ${cell(kind.nullLinks.byLink)}`,
          kind.counts.skippedByGaps,
          kind.counts.skippedByResubscription,
          kind.resubscriptions,
          cell(kind.endings),
          cell(kind.errorCodes),
        ].join(" | "),
      )
      .map((row) => `| ${row} |`),
    "",
    ...report.kinds
      .filter((kind) => kind.wrongSamples.length)
      .map((kind) => `- wrong ${kind.kind}: ${kind.wrongSamples.join("; ")}`),
    "",
    "Errors in events, by kind, path and cause (an upstream code explains a null link only when the upstream failed: an error status, a failed connection; not the request's deadline, not an open circuit), each with its first message:",
    "",
    ...Object.entries(report.errorSamples).map(([what, message]) => `- ${what}: ${message}`),
    "",
    "## Disruptions",
    "",
    ...disruptionLines(report.disruptions),
    "",
    "### LIVE_GAP per jump",
    "",
    "| jump | items in the jump, by question | expected | streams by LIVE_GAP events got | streams wrong |",
    "|---|---|---|---|---|",
    ...report.gapsAtJumps.map(
      (jump) =>
        `| ${jump.blocks} blocks | ${cell(jump.itemsInJump)} | ${cell(jump.expected)} | ${cell(jump.streamsByGaps)} | ${jump.wrongStreams} |`,
    ),
    "",
    "### Take-over after the kill (ms from the kill to the next event)",
    "",
    "| kind | on the surviving gateway (streams open at the kill) | on the killed gateway, resubscribed | bound | checked |",
    "|---|---|---|---|---|",
    ...report.kinds.map(
      (kind) =>
        `| ${kind.kind} | ${kind.takeOver?.survivorMs ?? "none"} (${kind.takeOver?.survivorStreamsOpen ?? 0}) | ${kind.takeOver?.resubscribedMs ?? "none"} | ${kind.takeOver?.boundMs ?? ""} | ${kind.takeOver?.checked ?? ""} |`,
    ),
    "",
    "## Resident memory",
    "",
    `MB, from /proc/<pid>/status (VmRSS) every ${report.rssSampleSeconds} s; each life of a gateway apart (the killed one has two). Windows: warm-up ${report.rssWindows.warmUpSeconds} s, then the first steady window of ${report.rssWindows.steadySeconds} s, against the last ${report.rssWindows.lastSeconds} s.`,
    "",
    "| gateway | pid | from (s) | samples | first | first steady window max | last window max | peak | last | flat | max each minute |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
    ...report.rss.map(
      (life) =>
        `| ${life.gateway} | ${life.pid} | ${Math.round(life.startedAtMs / 1000)} | ${life.samples} | ${life.firstMb} | ${life.steady?.maxMb ?? "-"} | ${life.last?.maxMb ?? "-"} | ${life.peakMb} | ${life.lastMb} | ${life.flat ?? "too short to tell"} | ${life.perMinuteMaxMb.join(", ")} |`,
    ),
    "",
    "## Upstream calls a minute",
    "",
    `Each minute of the run, by route (both gateways; the simulator's counters); \`*\` marks a calm minute, without a disruption or a resubscription's catch-up, whose calls on a polled route are the pollers' alone: the per-question figures are theirs. The checks' ${report.simulatorReadsToCheck} reads of the simulator came after the last count.`,
    "",
    "| route | calls each minute | questions | per question in calm minutes: median / max | bound |",
    "|---|---|---|---|---|",
    ...report.upstreamCalls.map(
      (route) =>
        `| ${route.route} | ${route.perMinute.join(", ")} | ${route.questions ?? "links"} | ${route.medianPerQuestion ?? "-"} / ${route.maxPerQuestion ?? "-"} | ${route.boundPerQuestion ?? "-"} |`,
    ),
    "",
  ];
  return lines.join("\n");
}

/** Every subscriber's events, one JSON line each: what a failed check is looked into with. */
export async function dumpEvents(path: string, subscribers: Subscriber[]): Promise<void> {
  const lines = subscribers.map((subscriber) =>
    JSON.stringify({
      index: subscriber.index,
      kind: subscriber.kind.name,
      question: subscriber.question,
      transport: subscriber.transport,
      gateway: subscriber.gatewayName,
      segments: subscriber.segments,
      events: subscriber.received.map((event) => [
        Math.round(event.atMs),
        event.segment,
        event.item ? `${event.item.stream}:${event.item.number}:${event.item.id}` : null,
        event.errors.map((error) => `${error.path}:${error.cause}`),
      ]),
    }),
  );
  await writeFile(path, `${lines.join("\n")}\n`);
}

export async function writeReport(report: SoakLiveReport): Promise<void> {
  await writeFile(new URL("../results/soak-live.json", import.meta.url), `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(new URL("../results/soak-live.md", import.meta.url), markdown(report));
}
