/**
 * What the soak watches while it runs: each gateway's resident memory, the simulator's upstream
 * call counters minute by minute, and which gateway reads the upstream for a question (the
 * holder of the question's lock in Redis).
 */
import { Redis } from "ioredis";
import type { RunningSimulator } from "../processes.ts";
import { rssMb, type SoakGateway } from "./fleet.ts";

export interface RssSample {
  atMs: number;
  gateway: string;
  pid: number;
  mb: number;
}

/** Reads each gateway's RSS every `everyMs`; a dead process is skipped. */
export function sampleRss(gateways: SoakGateway[], clock: () => number, everyMs: number): { samples: RssSample[]; stop(): void } {
  const samples: RssSample[] = [];
  const read = () => {
    for (const gateway of gateways) {
      const mb = rssMb(gateway.pid);
      if (mb !== undefined) samples.push({ atMs: clock(), gateway: gateway.name, pid: gateway.pid, mb });
    }
  };
  read();
  const timer = setInterval(read, everyMs);
  return { samples, stop: () => clearInterval(timer) };
}

export interface CounterSnapshot {
  atMs: number;
  counts: Record<string, number>;
}

/** The simulator's per-route counters every minute (they count every upstream call of both gateways). */
export function countUpstreamCalls(
  simulator: RunningSimulator,
  clock: () => number,
): { snapshots: CounterSnapshot[]; stop(): Promise<void> } {
  const snapshots: CounterSnapshot[] = [];
  const read = async () => {
    try {
      snapshots.push({ atMs: clock(), counts: await simulator.counters() });
    } catch {
      // A missed minute merges into the next.
    }
  };
  void read();
  const timer = setInterval(() => void read(), 60_000);
  return {
    snapshots,
    stop: async () => {
      clearInterval(timer);
      await read();
    },
  };
}

/** The upstream calls a gateway made on one route, from its /metrics. */
async function callsOnRoute(gateway: SoakGateway, route: string): Promise<number> {
  const text = await (await fetch(gateway.url.replace(/\/graphql$/, "/metrics"))).text();
  let total = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("gateway_upstream_requests_total{") && line.includes(`route="${route}"`)) {
      total += Number(line.slice(line.lastIndexOf(" ") + 1));
    }
  }
  return total;
}

export interface LockHolder {
  /** The gateway whose calls on the question's route grew at least twice as much as the other's, the lock unchanged; undefined when that was not clear. */
  gateway: string | undefined;
  /** Calls on the route each gateway made while watched. */
  callsWhileWatched: Record<string, number>;
  /** The question's lock in Redis: its key, its holder's id and the time it has left. */
  lock: { key: string; holder: string | null; ttlMs: number };
  /** Every live question's lock the same gateway held. */
  locksOfHolder: string[];
  watchedMs: number;
}

/**
 * Which gateway reads the upstream for a question: the lock's value is an id the gateway draws
 * at start and shows nowhere else, so the holder is told by which gateway's calls on the
 * question's route grow while the lock is held.
 */
export async function findLockHolder(
  redisUrl: string,
  question: string,
  route: string,
  gateways: SoakGateway[],
  watchMs: number,
): Promise<LockHolder> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const key = `avalanche-gateway:live:${question}:lock`;
    const before = await Promise.all(gateways.map((gateway) => callsOnRoute(gateway, route)));
    const holderBefore = await redis.get(key);
    await new Promise((resolve) => setTimeout(resolve, watchMs));
    const after = await Promise.all(gateways.map((gateway) => callsOnRoute(gateway, route)));
    const holder = await redis.get(key);
    const ttlMs = await redis.pttl(key);
    const grew = gateways.map((gateway, index) => ({ name: gateway.name, calls: after[index]! - before[index]! }));
    // The reader polls at every interval; the other reads the route only for its clients' catch-ups.
    const [most, next] = [...grew].sort((a, b) => b.calls - a.calls);
    const locks = await redis.keys("avalanche-gateway:live:*:lock");
    const values = await Promise.all(locks.map((lockKey) => redis.get(lockKey)));
    return {
      gateway: most && most.calls > 0 && most.calls >= 2 * (next?.calls ?? 0) && holder === holderBefore ? most.name : undefined,
      callsWhileWatched: Object.fromEntries(grew.map((entry) => [entry.name, entry.calls])),
      lock: { key, holder, ttlMs },
      locksOfHolder: locks
        .filter((_, index) => holder !== null && values[index] === holder)
        .map((lockKey) => lockKey.replace(/^avalanche-gateway:live:/, "").replace(/:lock$/, "")),
      watchedMs: watchMs,
    };
  } finally {
    redis.disconnect();
  }
}
