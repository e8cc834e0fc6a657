/**
 * `npm run soak:live`: SOAK_LIVE_SUBSCRIBERS (default 1,000) subscribers over every live
 * subscription kind, each selecting links that cost upstream calls, half over WebSocket and half
 * over SSE, spread over two production gateways that share one Redis, on the live simulator, for
 * SOAK_LIVE_MINUTES (default 30). On a schedule scaled to the run: clock jumps of 300 and 3,000
 * C-Chain blocks, a `kill -9` of the gateway that reads the upstream for the C-Chain's blocks
 * (its clients resubscribe with `afterBlock` once it is back on its port), and a restart of Redis.
 *
 * Every event is checked against the simulator's own answers: none lost, duplicated, out of
 * order or wrong, no null link without an upstream failure, LIVE_GAP exactly where a jump passes
 * LIVE_MAX_CATCH_UP; each gateway's RSS stays flat; each question costs the upstream one poller.
 * Writes bench/results/soak-live.{json,md} and exits non-zero when a check fails. The parts are
 * in bench/soak-live/. SOAK_LIVE_BUILD=false runs the last build (dist/) as it is;
 * SOAK_LIVE_DUMP=file writes every subscriber's events there, to look into a failed check.
 */
import { startRedisServer } from "../test/support/redis-server.ts";
import { buildGateway } from "./build.ts";
import { startSimulator } from "./processes.ts";
import { analyseKind } from "./soak-live/analyse.ts";
import { collectTruth } from "./soak-live/collect-truth.ts";
import { runDisruptions, simulatorNow, type DisruptionLog } from "./soak-live/disruptions.ts";
import { callsPerMinute, rssLives, rssWindows } from "./soak-live/figures.ts";
import { startSoakGateway, type SoakGateway } from "./soak-live/fleet.ts";
import { KINDS } from "./soak-live/kinds.ts";
import { countUpstreamCalls, sampleRss } from "./soak-live/observe.ts";
import { checksOf, dumpEvents, writeReport } from "./soak-live/report.ts";
import { gapExpectation, type GapsAtJump } from "./soak-live/sequences.ts";
import {
  ADDRESSES,
  C_CHAIN,
  GATEWAY_SETTINGS_SAID,
  LIVE_MAX_CATCH_UP,
  LIVE_MAX_PENDING_EVENTS,
  MINUTES,
  POLL_MS,
  RSS_SAMPLE_MS,
  SUBSCRIBERS,
  gatewayEnv,
  schedule,
} from "./soak-live/settings.ts";
import { Subscriber, distinctItems, errorSamples } from "./soak-live/subscriber.ts";
import { closeTransports } from "./soak-live/transports.ts";
import { busyAddresses } from "./soak-live/upstream-truth.ts";

/** Items of slack around LIVE_MAX_CATCH_UP, where the poller's last read before a jump decides whether it gaps. */
const GAP_SLACK = Math.ceil(LIVE_MAX_CATCH_UP * 0.05);
/** How long after a disruption or a resubscription the pollers may still read more than their interval's page. */
const SETTLE_MS = 30_000;
/** Subscribers opened at once, then a pause: a crowd of clients arriving, not one burst. */
const OPEN_BATCH = 50;

function log(message: string): void {
  process.stderr.write(`[soak:live] ${new Date().toISOString().slice(11, 19)} ${message}\n`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Whether nothing but the pollers read the polled routes between two times: no disruption settling, no catch-up. */
function calmBetween(fromMs: number, toMs: number, made: DisruptionLog, subscribers: Subscriber[]): boolean {
  const settled = made.times.every((atMs) => atMs + SETTLE_MS < fromMs || atMs > toMs);
  const resumed = subscribers.some((subscriber) =>
    subscriber.segments.some(
      (segment) => segment.after !== undefined && segment.startedAtMs >= fromMs - SETTLE_MS && segment.startedAtMs <= toMs,
    ),
  );
  return settled && !resumed;
}

async function main(): Promise<void> {
  if (process.env.SOAK_LIVE_BUILD !== "false") buildGateway(log);
  const totalMs = MINUTES * 60_000;
  const redis = await startRedisServer();
  const simulator = await startSimulator({ SIM_LIVE: "true" });
  const gateways: SoakGateway[] = [];
  let stopping = false;
  try {
    for (const name of ["A", "B"]) gateways.push(await startSoakGateway(name, simulator, gatewayEnv(redis.url)));
    log(`simulator ${simulator.dataUrl}, Redis ${redis.url}, gateways ${gateways.map((gateway) => gateway.url).join(" and ")}`);
    const addresses = await busyAddresses(simulator.dataUrl, C_CHAIN, ADDRESSES);
    const startedAt = performance.now();
    const clock = () => performance.now() - startedAt;

    const subscribers: Subscriber[] = [];
    for (let index = 0; index < SUBSCRIBERS; index += 1) {
      const kind = KINDS[index % KINDS.length]!;
      const spread = Math.floor(index / KINDS.length);
      const gateway = gateways[Math.floor(spread / 2) % 2]!;
      const address = kind.name === "address-transactions" ? addresses[Math.floor(spread / 4) % addresses.length] : undefined;
      const forwardedFor = `198.18.${index >> 8}.${index & 255}`;
      const transport = spread % 2 === 0 ? "websocket" : "sse";
      subscribers.push(new Subscriber(index, kind, transport, gateway.name, gateway.url, forwardedFor, address, clock));
    }
    const running: Promise<void>[] = [];
    for (let from = 0; from < subscribers.length; from += OPEN_BATCH) {
      for (const subscriber of subscribers.slice(from, from + OPEN_BATCH)) running.push(subscriber.run());
      await sleep(200);
    }
    log(`${subscribers.length} subscribers over ${KINDS.length} kinds, ${addresses.length} addresses; ${MINUTES} min`);

    const rss = sampleRss(gateways, clock, RSS_SAMPLE_MS);
    const calls = countUpstreamCalls(simulator, clock);
    const progress = setInterval(() => {
      const events = subscribers.reduce((sum, subscriber) => sum + subscriber.received.length, 0);
      const resubscriptions = subscribers.reduce((sum, subscriber) => sum + subscriber.segments.length - 1, 0);
      log(`${Math.round(clock() / 1000)} s: ${events} events, ${resubscriptions} resubscriptions`);
    }, 60_000);
    const plan = schedule(totalMs);
    const disruptions: Promise<DisruptionLog> = runDisruptions(plan, {
      dataUrl: simulator.dataUrl,
      gateways,
      redis,
      clock,
      log,
      stopping: () => stopping,
    });
    await sleep(totalMs - clock());
    const made = await disruptions;
    clearInterval(progress);
    rss.stop();
    await calls.stop();
    const simEnd = await simulatorNow(simulator.dataUrl);
    const endMs = clock();
    for (const subscriber of subscribers) subscriber.stop();
    await Promise.all(running);
    log(`run over after ${Math.round(endMs / 1000)} s; reading the simulator's answers to check every event`);

    const { sequences, truth, reads } = await collectTruth(simulator.dataUrl, simulator.metricsUrl, subscribers);
    const gapsAtJumps: GapsAtJump[] = made.jumps.map((jump) => {
      const itemsInJump: Record<string, number> = {};
      const expected: GapsAtJump["expected"] = {};
      for (const [question, sequence] of sequences) {
        itemsInJump[question] = sequence.countBetween(jump.simBefore, jump.simAfter);
        expected[question] = gapExpectation(itemsInJump[question], LIVE_MAX_CATCH_UP, GAP_SLACK);
      }
      return { blocks: jump.blocks, itemsInJump, expected, streamsByGaps: {}, wrongStreams: 0 };
    });
    const kinds = KINDS.map((kind) =>
      analyseKind({
        kind,
        subscribers: subscribers.filter((subscriber) => subscriber.kind === kind),
        sequences,
        truth,
        jumps: made.jumps,
        gapsAtJumps,
        kill: made.kill,
        simEnd,
        endMs,
        maxCatchUp: LIVE_MAX_CATCH_UP,
        gapSlack: GAP_SLACK,
      }),
    );
    const rssSummary = rssLives(rss.samples, endMs);
    const addressQuestions = new Set(subscribers.flatMap((subscriber) => subscriber.address ?? [])).size;
    const upstreamCalls = callsPerMinute(calls.snapshots, addressQuestions, (fromMs, toMs) =>
      calmBetween(fromMs, toMs, made, subscribers),
    );
    if (process.env.SOAK_LIVE_DUMP) await dumpEvents(process.env.SOAK_LIVE_DUMP, subscribers);
    const checks = checksOf(kinds, gapsAtJumps, rssSummary, upstreamCalls, made);
    const pass = checks.every((check) => check.pass);
    await writeReport({
      date: new Date().toISOString(),
      minutes: MINUTES,
      durationSeconds: Math.round(endMs / 1000),
      settings: {
        SOAK_LIVE_MINUTES: MINUTES,
        SOAK_LIVE_SUBSCRIBERS: SUBSCRIBERS,
        addressesSubscribed: addressQuestions,
        LIVE_MAX_CATCH_UP,
        LIVE_MAX_PENDING_EVENTS,
        pollMs: POLL_MS,
        gapSlackItems: GAP_SLACK,
        schedule: plan,
      },
      gatewaySettings: GATEWAY_SETTINGS_SAID,
      subscribers: subscribers.length,
      events: kinds.reduce((sum, kind) => sum + kind.events, 0),
      distinctAnswers: distinctItems(),
      kinds,
      disruptions: made,
      gapsAtJumps,
      rss: rssSummary,
      rssSampleSeconds: RSS_SAMPLE_MS / 1000,
      rssWindows: {
        warmUpSeconds: Math.round(rssWindows(endMs).warmUpMs / 1000),
        steadySeconds: Math.round(rssWindows(endMs).steadyMs / 1000),
        lastSeconds: Math.round(rssWindows(endMs).lastMs / 1000),
      },
      upstreamCalls,
      simulatorReadsToCheck: reads,
      errorSamples: Object.fromEntries(errorSamples),
      checks,
      pass,
    });
    for (const check of checks.filter((candidate) => !candidate.pass)) log(`FAIL ${check.name}: ${check.found}`);
    log(`${pass ? "pass" : "FAIL"}; see bench/results/soak-live.md`);
    if (!pass) process.exitCode = 1;
  } finally {
    stopping = true;
    await Promise.all(gateways.map((gateway) => gateway.stop()));
    await simulator.stop();
    await redis.stop();
    await closeTransports();
  }
}

await main();
// Clients' sockets and timers may linger; the run is over.
process.exit(process.exitCode ?? 0);
