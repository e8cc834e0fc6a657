/**
 * HTTP clients of `npm run bench:hostile`, each bound to a loopback address of its own: the
 * gateway tells callers apart by their socket address, and every client on loopback would
 * otherwise be 127.0.0.1.
 */
import { Pool } from "undici";

/** Legitimate clients are 127.0.0.1 … 127.0.0.16. */
export const legitAddress = (index: number): string => `127.0.0.${index + 1}`;

/** The attacker of a row of the table is 127.0.0.(100 + row). */
export const attackerAddress = (row: number): string => `127.0.0.${100 + row}`;

/**
 * The attacker of a row that needs many addresses: 127.(row).1.1, 127.(row).1.2 … (250 to a
 * third octet): loopback, and apart from the legitimate callers and every other row.
 */
export const attackerAddresses = (row: number, count: number): string[] =>
  Array.from({ length: count }, (_, index) => `127.${row}.${1 + Math.floor(index / 250)}.${1 + (index % 250)}`);

/** A caller that has sent nothing before, for what a newcomer gets while an attack runs. */
export const freshCallerAddress = (row: number): string => `127.${row}.0.1`;

export function pool(origin: string, localAddress: string, connections: number): Pool {
  return new Pool(origin, {
    connections,
    localAddress,
    // An attack that stalls the gateway must not stall the bench: every answer has 30 s.
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
    connectTimeout: 10_000,
  });
}

export interface Answer {
  status: number;
  contentType: string;
  text: string;
  /** The `retry-after` header, in seconds, when the answer has one. */
  retryAfterSeconds?: number;
}

export async function send(
  client: Pool,
  request: { method: "GET" | "POST"; path: string; headers?: Record<string, string>; body?: string },
): Promise<Answer> {
  const response = await client.request({
    method: request.method,
    path: request.path,
    headers:
      request.body === undefined
        ? { accept: "application/json", ...request.headers }
        : { "content-type": "application/json", accept: "application/json", ...request.headers },
    ...(request.body === undefined ? {} : { body: request.body }),
  });
  const text = await response.body.text();
  const contentType = String(response.headers["content-type"] ?? "").split(";")[0] ?? "";
  const retryAfter = Number(response.headers["retry-after"]);
  return { status: response.statusCode, contentType, text, ...(retryAfter >= 0 ? { retryAfterSeconds: retryAfter } : {}) };
}

interface GraphQLBody {
  data?: unknown;
  errors?: { message?: string; extensions?: { code?: unknown } }[];
}

export function parseGraphQL(text: string): GraphQLBody | undefined {
  try {
    const body = JSON.parse(text) as unknown;
    return typeof body === "object" && body !== null ? (body as GraphQLBody) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What an answer was, for counting: its status and its first error's `extensions.code`
 * ("no code" when the error has none, "data" without errors, the content type when not JSON).
 */
export function outcomeOf(answer: Answer): string {
  const body = parseGraphQL(answer.text);
  if (body === undefined) return `${answer.status} ${answer.contentType || "no content type"}${answer.text ? "" : " (empty)"}`;
  const error = body.errors?.[0];
  if (!error) return `${answer.status} data`;
  return `${answer.status} ${typeof error.extensions?.code === "string" ? error.extensions.code : "no code"}`;
}

/** A socket-level failure, named by its code. */
export function failureOf(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  return `failed ${typeof code === "string" ? code : error instanceof Error ? error.name : "unknown"}`;
}

export class Tally {
  readonly counts: Record<string, number> = {};

  add(outcome: string, times = 1): void {
    if (times === 0) return;
    this.counts[outcome] = (this.counts[outcome] ?? 0) + times;
  }

  get total(): number {
    return Object.values(this.counts).reduce((sum, count) => sum + count, 0);
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * `loops` sequential loops of `step` until `deadline` (a `performance.now()` time) or until
 * `maxSteps` steps in all. A step that fails at the socket waits 100 ms, so that a dead gateway
 * is not hammered in a tight loop.
 */
export async function loops(
  loops: number,
  deadline: number,
  maxSteps: number,
  step: (index: number) => Promise<void>,
  tally: Tally,
): Promise<void> {
  let started = 0;
  await Promise.all(
    Array.from({ length: loops }, async () => {
      while (performance.now() < deadline && started < maxSteps) {
        const index = started++;
        try {
          await step(index);
        } catch (error) {
          // Requests still in flight at the deadline are cut: not the gateway's doing.
          if (performance.now() >= deadline) return;
          tally.add(failureOf(error));
          await sleep(100);
        }
      }
    }),
  );
}
