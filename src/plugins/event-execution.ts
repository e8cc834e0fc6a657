/**
 * Each event of a subscription is its own execution. graphql's subscribe executes every event
 * with the context of the request that opened the stream: from REQUEST_TIMEOUT_MS after it was
 * opened, every link of an event that needs an upstream call would fail at once (the request's
 * deadline passed), and the request's loaders would hold every record any event loaded. Here the
 * source stream is made once, with the opening request's context (the root field's `subscribe`,
 * and what the rate limiter set on it for its poller), and each event is executed with a context
 * of its own (`contextFor`): a deadline REQUEST_TIMEOUT_MS after its execution starts, its own
 * loaders. Its execution is bounded as a query's is (src/limits/deadline.ts): an event that
 * outlives its deadline is sent as `data: null` and a TIMEOUT error, and the stream goes on.
 */
import { execute, flattenIncrementalResults } from "@graphql-tools/executor";
import {
  createSourceEventStream,
  getOperationAST,
  GraphQLError,
  type ExecutionArgs,
  type ExecutionResult,
  type OperationDefinitionNode,
} from "graphql";
import { isAsyncIterable, type Plugin } from "graphql-yoga";
import { isPromiseLike, withinDeadline } from "../limits/deadline.ts";
import { analyzeOperation } from "../limits/operation-analysis.ts";

export interface EventExecutionOptions<Context> {
  /** REQUEST_TIMEOUT_MS: each event's execution has this long from when it starts. */
  timeoutMs: number;
  /** The context one event executes with, given the opening request's and the event's deadline. */
  contextFor(parent: Context, deadline: number): Context;
  /**
   * The source stream is made: the opening request's context stays for as long as the stream
   * (each event's is made from it), so what it held only to open the stream may be let go.
   */
  opened?(parent: Context): void;
}

type Results = AsyncIterator<ExecutionResult, undefined> & AsyncIterable<ExecutionResult>;

/**
 * Replaces the engine's subscribe function, so it goes before every plugin that wraps that
 * function (tracing's), which then wraps this one.
 */
export function useEventExecution<Context extends object>(options: EventExecutionOptions<Context>): Plugin<Context> {
  return {
    onSubscribe({ args, setSubscribeFn }) {
      // Variables that do not coerce: the engine's subscribe reports why, as for any operation.
      const analysis = analyzeOperation(args);
      if (analysis.kind !== "subscription" || !analysis.variablesValid) return;
      setSubscribeFn(((subscribeArgs: ExecutionArgs) => subscribe(subscribeArgs, options)) as never);
    },
  };
}

async function subscribe<Context>(
  args: ExecutionArgs,
  options: EventExecutionOptions<Context>,
): Promise<Results | ExecutionResult> {
  const source = await createSourceEventStream(args);
  if (!isAsyncIterable(source)) return source;
  options.opened?.(args.contextValue as Context);
  return new EventResults(source[Symbol.asyncIterator](), args, options);
}

/**
 * The source stream's events, each executed on its own: as graphql's subscribe maps them, an
 * event whose selection is delivered incrementally (`@defer`, `@stream`) giving all its parts
 * before the next event's, and an error the source stream throws ending the stream as the
 * operation's error. Leaving (`return`) reaches the source stream at once, even while it waits
 * for its next event.
 */
class EventResults<Context> implements Results {
  /** The parts of the event being delivered incrementally, while it has more. */
  private parts: AsyncIterator<ExecutionResult> | undefined;
  private done = false;

  constructor(
    private readonly source: AsyncIterator<unknown>,
    private readonly args: ExecutionArgs,
    private readonly options: EventExecutionOptions<Context>,
  ) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<ExecutionResult, undefined>> {
    while (!this.done) {
      if (this.parts) {
        const part = await this.parts.next();
        if (!part.done) return part;
        this.parts = undefined;
        continue;
      }
      let event: IteratorResult<unknown>;
      try {
        event = await this.source.next();
      } catch (error) {
        this.done = true;
        throw operationError(error, getOperationAST(this.args.document, this.args.operationName));
      }
      if (event.done) break;
      const result = await this.execute(event.value);
      if (!("initialResult" in result)) return { value: result as ExecutionResult, done: false };
      this.parts = flattenIncrementalResults(result) as AsyncIterator<ExecutionResult>;
    }
    this.done = true;
    return { value: undefined, done: true };
  }

  async return(): Promise<IteratorResult<ExecutionResult, undefined>> {
    this.done = true;
    await Promise.all([this.parts?.return?.(), this.source.return?.()]);
    return { value: undefined, done: true };
  }

  async throw(error: unknown): Promise<IteratorResult<ExecutionResult, undefined>> {
    this.done = true;
    await Promise.all([this.parts?.throw?.(error), this.source.throw?.(error)]);
    throw error;
  }

  /** One event's execution, with its own context and deadline; one that throws ends the stream (and leaves the source stream), as in graphql's subscribe. */
  private async execute(payload: unknown) {
    const { timeoutMs, contextFor } = this.options;
    const deadline = Date.now() + timeoutMs;
    const contextValue = contextFor(this.args.contextValue as Context, deadline);
    try {
      const running = execute({ ...this.args, rootValue: payload, contextValue });
      return await (isPromiseLike(running) ? withinDeadline(running, deadline, timeoutMs, "This event") : running);
    } catch (error) {
      this.done = true;
      await this.source.return?.();
      throw error;
    }
  }
}

/** An error the source stream threw, as graphql's subscribe reports it: located at the operation. */
function operationError(error: unknown, operation: OperationDefinitionNode | null | undefined): GraphQLError {
  const original = error instanceof Error ? error : new Error(String(error));
  return new GraphQLError(original.message, { originalError: original, nodes: operation ?? undefined });
}
