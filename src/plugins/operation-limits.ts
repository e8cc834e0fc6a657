import type { ExecutionArgs, ExecutionResult } from "graphql";
import type { Plugin } from "graphql-yoga";
import type { QueryLimits } from "../config.ts";
import { operationOverLimit, type GatewayError } from "../errors.ts";
import { analyzeOperation, operationCost, type OperationShape } from "../limits/operation-analysis.ts";
import type { OperationCost } from "../limits/upstream-calls.ts";

/** An estimate in words: "12 upstream calls", with its CPU and the document's other operations when they count. */
export function describeEstimate(upstreamCalls: number, cpuCost: number, otherOperations = 0): string {
  const parts = [`${upstreamCalls} upstream calls`];
  if (cpuCost > 0) parts.push(`CPU (Warp verifications, introspection) worth ${cpuCost} calls`);
  if (otherOperations > 0) parts.push(`${otherOperations} for the document's other operations`);
  return parts.length > 1 ? `${parts.join(" and ")}, ${upstreamCalls + cpuCost + otherOperations} in all` : parts[0]!;
}

/** The first shape limit the operation goes over, depth before breadth. */
function overShapeLimit(shape: OperationShape, limits: QueryLimits): GatewayError | null {
  for (const limit of ["depth", "breadth"] as const) {
    const [max, actual] = [limits[limit], shape[limit]];
    if (actual > max) {
      return operationOverLimit(
        limit,
        max,
        actual,
        `The operation's ${limit} is ${actual}, over the limit of ${max}; select fewer fields, or nest them less deeply`,
      );
    }
  }
  return null;
}

function overCostLimit({ upstreamCalls, cpuCost }: OperationCost, max: number): GatewayError | null {
  const actual = upstreamCalls + cpuCost;
  if (actual <= max) return null;
  return operationOverLimit(
    "cost",
    max,
    actual,
    `The operation would make an estimated ${describeEstimate(upstreamCalls, cpuCost)}, over the limit of ${max} (MAX_QUERY_COST); ask for fewer items (smaller first) or fewer linked records`,
  );
}

/**
 * Refuses an operation over MAX_QUERY_DEPTH or MAX_QUERY_BREADTH (defaults 15 and 500), the
 * shape of its document, or over MAX_QUERY_COST (default 1,000, RATE_LIMIT_BURST's default), its
 * cost: the upstream calls it is estimated to make and its CPU counted in calls, what the rate
 * limiter charges for it (src/limits/upstream-calls.ts). It checks after validation and before
 * anything runs or is charged to the caller's rate limit, whether or not rate limiting is on.
 *
 * The cost is the one the rate limiter then charges (`operationCost`, worked out once), refined
 * by the chain list's length when it depends on it. Refining it adds no upstream call of its own:
 * the list is nearly always held (preloaded and kept fresh); when it is not, it is fetched through
 * the process's cache, one call for every caller until it expires (a refused operation costs the
 * upstream at most that shared call), and an admitted operation needs it anyway. Checking the
 * estimate with the assumed length (`ASSUMED_CHAIN_COUNT`) instead would refuse operations that
 * fit the list there is, and admit ones that do not.
 */
export function useOperationLimits(limits: QueryLimits): Plugin {
  const check = (args: ExecutionArgs, stop: (result: ExecutionResult) => void): void | Promise<void> => {
    const { shape } = analyzeOperation(args);
    // Variables that do not coerce: execution reports why, and nothing runs.
    if (!shape) return;
    const overShape = overShapeLimit(shape, limits);
    if (overShape) return stop({ errors: [overShape] });
    const cost = operationCost(args);
    const refuse = (known: OperationCost) => {
      const overCost = overCostLimit(known, limits.cost);
      if (overCost) stop({ errors: [overCost] });
    };
    return cost instanceof Promise ? cost.then(refuse) : refuse(cost);
  };
  return {
    onExecute: ({ args, setResultAndStopExecution }) => check(args, setResultAndStopExecution),
    onSubscribe: ({ args, setResultAndStopExecution }) => check(args, setResultAndStopExecution),
  };
}
