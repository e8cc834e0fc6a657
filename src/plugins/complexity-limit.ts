import type { ExecutionArgs, ExecutionResult } from "graphql";
import type { Plugin } from "graphql-yoga";
import type { QueryLimits } from "../config.ts";
import { operationOverLimit, type GatewayError } from "../execution/errors.ts";
import { analyzeOperation, type OperationComplexity } from "../limits/operation-analysis.ts";

/** The first limit the operation goes over, depth before breadth before cost. */
function overLimit(complexity: OperationComplexity, limits: QueryLimits): GatewayError | null {
  for (const limit of ["depth", "breadth", "cost"] as const) {
    const [max, actual] = [limits[limit], complexity[limit]];
    if (actual > max) {
      return operationOverLimit(
        limit,
        max,
        actual,
        `The operation's ${limit} is ${actual}, over the limit of ${max}; ask for fewer items (smaller first) or fewer fields`,
      );
    }
  }
  return null;
}

/**
 * Refuses an operation over MAX_QUERY_COST, MAX_QUERY_DEPTH or MAX_QUERY_BREADTH (defaults
 * 50,000, 15 and 500) after validation and before anything runs or is charged to the caller's
 * rate limit. Cost, depth and breadth are the schema's complexity plugin's measures, which know
 * what a connection costs.
 */
export function useComplexityLimit(limits: QueryLimits): Plugin {
  const check = (args: ExecutionArgs, stop: (result: ExecutionResult) => void) => {
    const { complexity } = analyzeOperation(args);
    const error = complexity && overLimit(complexity, limits);
    if (error) stop({ errors: [error] });
  };
  return {
    onExecute: ({ args, setResultAndStopExecution }) => check(args, setResultAndStopExecution),
    onSubscribe: ({ args, setResultAndStopExecution }) => check(args, setResultAndStopExecution),
  };
}
