/**
 * The disruptions of the soak, each at its time: clock jumps on the simulator, a `kill -9` of the
 * gateway that reads the upstream for the C-Chain's blocks (then its restart on the same port),
 * and a restart of Redis on the same port.
 */
import type { RedisServer } from "../../test/support/redis-server.ts";
import type { SoakGateway } from "./fleet.ts";
import { findLockHolder, type LockHolder } from "./observe.ts";
import type { JumpMade } from "./sequences.ts";
import { C_CHAIN, GATEWAY_DOWN_MS, POLL_MS, REDIS_DOWN_MS, type Disruption } from "./settings.ts";

interface ClockAnswer {
  nowMs: number;
  heads: { chainId: string; blockNumber: number }[];
}

export interface KillMade {
  atMs: number;
  /** The simulator's time at the kill, Unix seconds: items after it were read by the gateway that took over. */
  simAtKill: number;
  gateway: string;
  /** How the holder was found; `chosen` says when it was a guess. */
  holder: LockHolder;
  chosen: "lock holder" | "guess: the gateway with more calls";
  restartedAtMs: number;
  healthyAtMs: number;
}

export interface DisruptionLog {
  jumps: (JumpMade & { seconds: number; cChainBlocksGained: number })[];
  kill: KillMade | undefined;
  redisRestart: { atMs: number; upAtMs: number } | undefined;
  /** When each disruption began, in order. */
  times: number[];
  /** Disruptions that could not be made, and why. */
  failures: string[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

async function clockOf(dataUrl: string, advanceSeconds?: number): Promise<ClockAnswer> {
  const response = await fetch(`${dataUrl}/_simulator/clock`, {
    method: advanceSeconds === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json" },
    body: advanceSeconds === undefined ? undefined : JSON.stringify({ advanceSeconds }),
  });
  if (!response.ok) throw new Error(`simulator clock: HTTP ${response.status}`);
  return (await response.json()) as ClockAnswer;
}

const cChainHead = (clock: ClockAnswer) => clock.heads.find((head) => head.chainId === C_CHAIN)?.blockNumber ?? 0;

export async function simulatorNow(dataUrl: string): Promise<number> {
  return (await clockOf(dataUrl)).nowMs / 1000;
}

export interface DisruptionTargets {
  dataUrl: string;
  gateways: SoakGateway[];
  redis: RedisServer;
  clock: () => number;
  log: (message: string) => void;
  /** Whether the run is stopping (an error elsewhere). */
  stopping: () => boolean;
}

export async function runDisruptions(plan: Disruption[], targets: DisruptionTargets): Promise<DisruptionLog> {
  const { clock, log } = targets;
  const made: DisruptionLog = { jumps: [], kill: undefined, redisRestart: undefined, times: [], failures: [] };
  // Watching the lock holder takes a few of its poller's intervals, before the kill's time.
  const watchMs = 2 * POLL_MS.blocks.base + 1_000;
  for (const disruption of plan) {
    const lead = disruption.kind === "kill-lock-holder" ? watchMs : 0;
    await sleep(disruption.atMs - lead - clock());
    if (targets.stopping()) break;
    try {
      await disrupt(disruption, targets, made, watchMs);
    } catch (error) {
      const why = `${disruption.kind} at ${Math.round(disruption.atMs / 1000)} s: ${error instanceof Error ? error.message : String(error)}`;
      made.failures.push(why);
      log(`could not make the ${why}`);
    }
  }
  return made;
}

async function disrupt(disruption: Disruption, targets: DisruptionTargets, made: DisruptionLog, watchMs: number): Promise<void> {
  const { clock, log } = targets;
  if (disruption.kind === "jump") {
    const before = await clockOf(targets.dataUrl);
    const atMs = clock();
    made.times.push(atMs);
    const after = await clockOf(targets.dataUrl, disruption.seconds);
    const gained = cChainHead(after) - cChainHead(before);
    log(
      `clock jump of ${disruption.seconds} s: ${gained} C-Chain blocks (asked for ${disruption.blocks}), took ${Math.round(clock() - atMs)} ms`,
    );
    made.jumps.push({
      blocks: disruption.blocks,
      seconds: disruption.seconds,
      cChainBlocksGained: gained,
      atMs,
      simBefore: before.nowMs / 1000,
      simAfter: after.nowMs / 1000,
    });
  } else if (disruption.kind === "kill-lock-holder") {
    const holder = await findLockHolder(
      targets.redis.url,
      `chain-blocks:${C_CHAIN}`,
      "/v1/chains/{chainId}/blocks",
      targets.gateways,
      watchMs,
    );
    const byCalls = [...targets.gateways].sort(
      (a, b) => (holder.callsWhileWatched[b.name] ?? 0) - (holder.callsWhileWatched[a.name] ?? 0),
    )[0]!;
    const victim = targets.gateways.find((gateway) => gateway.name === holder.gateway) ?? byCalls;
    const simAtKill = (await clockOf(targets.dataUrl)).nowMs / 1000;
    const atMs = clock();
    made.times.push(atMs);
    await victim.kill(atMs);
    log(
      `kill -9 of gateway ${victim.name} (pid ${victim.lives.at(-1)?.pid}), the reader of chain-blocks:${C_CHAIN}: ${JSON.stringify(holder.callsWhileWatched)} calls while watched`,
    );
    await sleep(GATEWAY_DOWN_MS);
    const restartedAtMs = clock();
    await victim.start(restartedAtMs);
    const healthyAtMs = clock();
    log(
      `gateway ${victim.name} restarted on port ${victim.port} (pid ${victim.pid}), healthy in ${Math.round(healthyAtMs - restartedAtMs)} ms`,
    );
    made.kill = {
      atMs,
      simAtKill,
      gateway: victim.name,
      holder,
      chosen: holder.gateway ? "lock holder" : "guess: the gateway with more calls",
      restartedAtMs,
      healthyAtMs,
    };
  } else {
    const atMs = clock();
    made.times.push(atMs);
    await targets.redis.kill();
    log("Redis killed");
    await sleep(REDIS_DOWN_MS);
    await targets.redis.restart();
    made.redisRestart = { atMs, upAtMs: clock() };
    log(`Redis up again on port ${targets.redis.port}, empty`);
  }
}
