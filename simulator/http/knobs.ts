import { createRandom, type Random } from "../network/random.ts";

/** Behaviour that tests and benchmarks can change while the simulator runs. */
export interface Knobs {
  /** Delay added before every answer of a service route. */
  latencyMs: number;
  /** Share of requests, 0..1, answered with `errorStatus` instead of their result. */
  errorRate: number;
  /** Status of injected errors: a 4xx or 5xx, e.g. 429, 500, 503. */
  errorStatus: number;
  /** Route keys ("GET /v1/chains/{chainId}") that injected errors are limited to; empty means every route. */
  errorRoutes: readonly string[];
  /**
   * What an injected fault is: `status` answers `errorStatus`; `reset` drops the connection
   * without an answer; `malformed` answers 200 with a body that is not JSON; `slow-body` sends
   * the real answer's first half, stalls `slowBodyMs`, then sends the rest.
   */
  faultKind: FaultKind;
  slowBodyMs: number;
  /** Value of the retry-after header on injected 429s, in seconds. */
  retryAfterSeconds: number;
  /**
   * Accepted values of the x-glacier-api-key header. When set, Data API
   * requests without the header get 401 and with another value 403. The
   * Metrics API never needs a key.
   */
  apiKeys: readonly string[] | null;
  /** How long a transaction export job runs before it ends, in ms; applies to jobs created after a change. */
  exportJobMs: number;
  /** How long a Metrics API page token stays valid after it is issued, in ms; an older one gets a 400. */
  metricsTokenTtlMs: number;
}

export const FAULT_KINDS = ["status", "reset", "malformed", "slow-body"] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export const DEFAULT_KNOBS: Knobs = {
  latencyMs: 0,
  errorRate: 0,
  errorStatus: 500,
  errorRoutes: [],
  faultKind: "status",
  slowBodyMs: 5_000,
  retryAfterSeconds: 1,
  apiKeys: null,
  exportJobMs: 3_000,
  metricsTokenTtlMs: 24 * 60 * 60 * 1000,
};

type Check = (value: unknown) => string | undefined;

const isStringList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === "string");

/**
 * Validates a partial update of the knobs, e.g. the JSON body of
 * `POST /_simulator/knobs`. `routeKeys` are the keys errorRoutes may name.
 * @throws RangeError naming the first invalid knob.
 */
export function validateKnobs(update: unknown, routeKeys: ReadonlySet<string>): Partial<Knobs> {
  if (typeof update !== "object" || update === null || Array.isArray(update)) {
    throw new RangeError("knobs must be a JSON object");
  }
  const checks: Record<keyof Knobs, Check> = {
    latencyMs: (value) => (Number.isInteger(value) && (value as number) >= 0 ? undefined : "must be a non-negative integer"),
    errorRate: (value) => (typeof value === "number" && value >= 0 && value <= 1 ? undefined : "must be a number from 0 to 1"),
    errorStatus: (value) =>
      Number.isInteger(value) && (value as number) >= 400 && (value as number) <= 599
        ? undefined
        : "must be an HTTP error status from 400 to 599",
    errorRoutes: (value) => {
      if (!isStringList(value)) return "must be an array of route keys";
      const unknown = value.find((key) => !routeKeys.has(key));
      return unknown === undefined ? undefined : `has an unknown route key: ${unknown}`;
    },
    faultKind: (value) => (FAULT_KINDS.includes(value as FaultKind) ? undefined : `must be one of ${FAULT_KINDS.join(", ")}`),
    slowBodyMs: (value) => (Number.isInteger(value) && (value as number) >= 0 ? undefined : "must be a non-negative integer"),
    retryAfterSeconds: (value) =>
      Number.isInteger(value) && (value as number) >= 0 ? undefined : "must be a non-negative integer",
    apiKeys: (value) => (value === null || isStringList(value) ? undefined : "must be null or an array of strings"),
    exportJobMs: (value) => (Number.isInteger(value) && (value as number) >= 0 ? undefined : "must be a non-negative integer"),
    metricsTokenTtlMs: (value) =>
      Number.isInteger(value) && (value as number) >= 0 ? undefined : "must be a non-negative integer",
  };
  // An undefined value (possible in a Partial<Knobs> from code, never in JSON) leaves that knob as it is.
  const changes = Object.entries(update).filter(([, value]) => value !== undefined);
  for (const [name, value] of changes) {
    const check = checks[name as keyof Knobs] as Check | undefined;
    if (check === undefined) throw new RangeError(`unknown knob ${name}`);
    const problem = check(value);
    if (problem !== undefined) throw new RangeError(`${name} ${problem}`);
  }
  return Object.fromEntries(changes) as Partial<Knobs>;
}

/** Decides which requests get an injected error, with a seeded draw so that rates of 0 and 1 are exact. */
export class FaultInjector {
  private readonly random: Random;

  constructor(seed: string) {
    this.random = createRandom(seed, "faults");
  }

  shouldFail(routeKey: string, knobs: Knobs): boolean {
    if (knobs.errorRate <= 0) return false;
    if (knobs.errorRoutes.length > 0 && !knobs.errorRoutes.includes(routeKey)) return false;
    return this.random.chance(knobs.errorRate);
  }
}
