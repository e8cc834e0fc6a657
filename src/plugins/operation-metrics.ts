/**
 * Feeds each operation's duration and errors to its series (src/telemetry/operation-series.ts)
 * and serves the registry at `/metrics`: what Yoga's Prometheus plugin did for the two series
 * the gateway keeps, with one hook per phase that has something to count and nothing made per
 * request that is not needed (that plugin built and filtered its label parameters on every
 * parse, validation, context and execution).
 */
import { getOperationAST, type DocumentNode, type ExecutionResult } from "graphql";
import { isAsyncIterable, type Plugin } from "graphql-yoga";
import type { Registry } from "prom-client";
import type { OperationSeries } from "../telemetry/operation-series.ts";

export interface OperationMetricsOptions {
  series: OperationSeries;
  registry: Registry;
  /** Where the registry is served. */
  endpoint: string;
}

/** The operation's name as its series know it: the one asked for, else the document's. */
function operationOf(
  document: DocumentNode,
  operationName: string | null | undefined,
): { name: string | undefined; type: string | undefined } {
  const operation = getOperationAST(document, operationName ?? undefined);
  return { name: operationName || operation?.name?.value, type: operation?.operation };
}

const askedName = (context: unknown): string | undefined =>
  (context as { params?: { operationName?: string | null } } | undefined)?.params?.operationName || undefined;

/**
 * An operation from the moment it starts. `finished` takes what it answered: a single result is
 * counted (its time and errors) at once, a stream's parts as they come and its time at its end.
 */
function timed(series: OperationSeries, args: { document: DocumentNode; operationName?: string | null | undefined }) {
  const startedAt = performance.now();
  const { name, type } = operationOf(args.document, args.operationName);
  const ran = () => series.ran(name, type, (performance.now() - startedAt) / 1000);
  const counted = (result: ExecutionResult) => {
    const errors = result.errors?.length ?? 0;
    if (errors > 0) series.failed(name, type, "execute", errors);
  };
  return {
    name,
    type,
    finished(result: ExecutionResult | AsyncIterable<ExecutionResult>) {
      if (isAsyncIterable(result))
        return { onNext: ({ result: part }: { result: ExecutionResult }) => counted(part), onEnd: ran };
      counted(result);
      ran();
      return undefined;
    },
  };
}

export function useOperationMetrics({ series, registry, endpoint }: OperationMetricsOptions): Plugin {
  return {
    onRequest({ url, fetchAPI, endResponse }) {
      if (url.pathname !== endpoint) return;
      return registry.metrics().then((text) => {
        endResponse(new fetchAPI.Response(text, { headers: { "content-type": registry.contentType } }));
      });
    },
    onPluginInit({ registerContextErrorHandler }) {
      registerContextErrorHandler(({ context }) => series.failed(askedName(context), undefined, "context"));
    },
    onParse() {
      return ({ result }) => {
        if (result instanceof Error) series.failed(undefined, undefined, "parse");
      };
    },
    onValidate({ params, context }) {
      return ({ valid }) => {
        if (valid) return;
        const { name, type } = operationOf(params.documentAST, askedName(context));
        series.failed(name, type, "validate");
      };
    },
    onExecute({ args }) {
      const operation = timed(series, args);
      return { onExecuteDone: ({ result }) => operation.finished(result) };
    },
    onSubscribe({ args }) {
      const operation = timed(series, args);
      return {
        onSubscribeResult: ({ result }) => operation.finished(result),
        onSubscribeError: () => series.failed(operation.name, operation.type, "subscribe"),
      };
    },
  };
}
