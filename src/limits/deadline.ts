/**
 * Every GraphQL request has a deadline, REQUEST_TIMEOUT_MS after it reached the gateway.
 *
 * - Its upstream calls end at the deadline wherever they are (queued for a connection, waiting
 *   for headers, reading a body, backing off to retry): each fails with UPSTREAM_UNAVAILABLE
 *   "the request's deadline passed", so execution completes with the partial data it has.
 * - Execution itself is bounded too, for whatever else could hold it: shortly after the
 *   deadline the answer is sent as it stands then, `data: null` and one TIMEOUT error, with
 *   HTTP 504 (the gateway timed out; a GraphQL client reads the error from the JSON body).
 *
 * So no answer arrives later than REQUEST_TIMEOUT_MS plus a few tens of milliseconds. Each event
 * of a subscription is its own execution with a deadline of its own, REQUEST_TIMEOUT_MS after its
 * execution starts, bounded the same way (src/plugins/event-execution.ts).
 */
import type { ExecutionArgs, ExecutionResult } from "graphql";
import type { Plugin } from "graphql-yoga";
import type { GatewayContext } from "../execution/context.ts";
import { GatewayError } from "../errors.ts";

/** Time after the deadline for the answer that execution completes with partial data. */
const COMPLETION_GRACE_MS = 75;

type Execute = (args: ExecutionArgs) => unknown;

export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === "function";
}

export class RequestDeadlines {
  private readonly arrivals = new WeakMap<Request, number>();

  constructor(readonly timeoutMs: number) {}

  /** Epoch milliseconds by which the request must be answered. */
  of(request: Request): number {
    return (this.arrivals.get(request) ?? Date.now()) + this.timeoutMs;
  }

  /** Notes that `request` arrived now: its deadline is REQUEST_TIMEOUT_MS from here. */
  arrive(request: Request): void {
    this.arrivals.set(request, Date.now());
  }

  /** Notes when each request arrived; goes first in the plugin list. */
  arrival(): Plugin {
    return {
      onRequest: ({ request }) => this.arrive(request),
    };
  }

  /**
   * Bounds execution. Wraps the execute function in place when it runs, so it must come after
   * every plugin that sets one (graphql-jit's), or theirs would replace the bound.
   */
  executionBound(): Plugin<GatewayContext> {
    const timeoutMs = this.timeoutMs;
    return {
      onExecute({ executeFn, setExecuteFn }) {
        const bounded: Execute = (args) => {
          const running = (executeFn as Execute)(args);
          if (!isPromiseLike(running)) return running;
          const deadline = (args.contextValue as GatewayContext).call.deadline ?? Date.now() + timeoutMs;
          return withinDeadline(running, deadline, timeoutMs);
        };
        setExecuteFn(bounded as typeof executeFn);
      },
    };
  }
}

/**
 * What `running` completes with, or, shortly after `deadline` when it has not completed by then,
 * `data: null` and one TIMEOUT error in its place (a query's answer, a subscription's event).
 */
export function withinDeadline<T>(
  running: PromiseLike<T>,
  deadline: number,
  timeoutMs: number,
  what = "The request",
): Promise<T | ExecutionResult> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve(timedOut(timeoutMs, what)), Math.max(0, deadline - Date.now()) + COMPLETION_GRACE_MS);
    running.then(
      (result) => {
        clearTimeout(timer);
        resolve(result);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

function timedOut(timeoutMs: number, what: string): ExecutionResult {
  return {
    data: null,
    errors: [
      new GatewayError(`${what} took longer than REQUEST_TIMEOUT_MS (${timeoutMs} ms) and was cut short`, "TIMEOUT", {
        timeoutMs,
        http: { status: 504 },
      }),
    ],
  };
}
