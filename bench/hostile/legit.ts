/**
 * The legitimate load of `npm run bench:hostile`: `clients` callers, each from its own loopback
 * address over one keep-alive connection, sending the reference operations in turn, one at a
 * time, at most `perClientRps` a second. autocannon cannot bind its sockets to an address, so this is written with undici.
 */
import { build } from "hdr-histogram-js";
import { legitAddress, outcomeOf, parseGraphQL, pool, send, sleep } from "./client.ts";

export interface LegitResult {
  /** Answers received (any status); requests that got none are only counted as errors. */
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Answers that were not 2xx, carried GraphQL errors, or never came. */
  errors: number;
  /** The errors by outcome (status and code, or socket failure). */
  errorOutcomes: Record<string, number>;
  /** The first few error messages, to tell what went wrong. */
  errorSamples: string[];
  /**
   * The callers' connections: those opened, those that ended before the phase did (closed or
   * reset by the gateway; a caller keeps one open throughout otherwise), and attempts that
   * failed, each by its error code.
   */
  connections: { opened: number; lost: number; failedToOpen: number; by: Record<string, number> };
}

/**
 * @param perClientRps how many requests a second each caller sends at most (the next one leaves
 * 1/perClientRps after the previous one did, or when its answer comes if that is later).
 */
export async function legitLoad(
  url: string,
  bodies: string[],
  clients: number,
  seconds: number,
  perClientRps: number,
): Promise<LegitResult> {
  const target = new URL(url);
  // Microseconds, up to a minute.
  const latencies = build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3 });
  const errorOutcomes: Record<string, number> = {};
  const errorSamples: string[] = [];
  let errors = 0;
  const fail = (outcome: string, sample: string) => {
    errors += 1;
    errorOutcomes[outcome] = (errorOutcomes[outcome] ?? 0) + 1;
    if (errorSamples.length < 5) errorSamples.push(`${outcome}: ${sample.slice(0, 300)}`);
  };
  const connections: LegitResult["connections"] = { opened: 0, lost: 0, failedToOpen: 0, by: {} };
  const codeOf = (error: unknown) => {
    const code = (error as { code?: unknown } | null)?.code;
    return typeof code === "string" ? code : error instanceof Error ? error.message.slice(0, 60) : "no error";
  };
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, index) => {
      const client = pool(target.origin, legitAddress(index), 1);
      client.on("connect", () => {
        connections.opened += 1;
      });
      client.on("disconnect", (_origin, _targets, error) => {
        if (performance.now() >= deadline) return;
        connections.lost += 1;
        const key = `lost: ${codeOf(error)}`;
        connections.by[key] = (connections.by[key] ?? 0) + 1;
      });
      client.on("connectionError", (_origin, _targets, error) => {
        if (performance.now() >= deadline) return;
        connections.failedToOpen += 1;
        const key = `failed to open: ${codeOf(error)}`;
        connections.by[key] = (connections.by[key] ?? 0) + 1;
      });
      try {
        for (let turn = index; performance.now() < deadline; turn += 1) {
          const begun = performance.now();
          try {
            const answer = await send(client, { method: "POST", path: target.pathname, body: bodies[turn % bodies.length]! });
            latencies.recordValue(Math.max(1, Math.round((performance.now() - begun) * 1000)));
            const body = parseGraphQL(answer.text);
            if (answer.status < 200 || answer.status > 299 || !body || body.errors)
              fail(outcomeOf(answer), body?.errors?.[0]?.message ?? answer.text);
            const next = begun + 1000 / perClientRps - performance.now();
            if (next > 0) await sleep(next);
          } catch (error) {
            // No answer: an error, not a latency.
            const code = (error as { code?: unknown }).code;
            fail(`failed ${typeof code === "string" ? code : "unknown"}`, String(error));
            await sleep(100);
          }
        }
      } finally {
        await client.destroy();
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const ms = (microseconds: number) => Math.round(microseconds / 10) / 100;
  const result: LegitResult = {
    requests: latencies.totalCount,
    rps: Math.round(latencies.totalCount / elapsed),
    p50Ms: ms(latencies.getValueAtPercentile(50)),
    p99Ms: ms(latencies.getValueAtPercentile(99)),
    maxMs: ms(latencies.maxValue),
    errors,
    errorOutcomes,
    errorSamples,
    connections,
  };
  latencies.destroy();
  return result;
}
