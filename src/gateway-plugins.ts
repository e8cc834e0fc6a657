/**
 * The Yoga plugins of a gateway, in the order that matters (src/gateway.ts builds their parts).
 */
import { useDeferStream } from "@graphql-yoga/plugin-defer-stream";
import type { Plugin } from "graphql-yoga";
import type { GatewayConfig } from "./config.ts";
import { forgetOpeningLoads, type GatewayContext } from "./execution/context.ts";
import type { RequestDeadlines } from "./limits/deadline.ts";
import { useBodyLimit } from "./plugins/body-limit.ts";
import { useCompiledExecution } from "./plugins/compiled-execution.ts";
import type { Compression } from "./plugins/compression.ts";
import { useEventExecution } from "./plugins/event-execution.ts";
import { useGraphiQLPage } from "./plugins/graphiql-page.ts";
import { useOperationMetrics } from "./plugins/operation-metrics.ts";
import { persistedOperationNames } from "./plugins/persisted-documents.ts";
import type { useRateLimit } from "./plugins/rate-limit.ts";
import { useReadiness, type UpstreamReadiness } from "./plugins/readiness.ts";
import type { RefusalNotes } from "./plugins/refusal-notes.ts";
import { useRefusals } from "./plugins/refusals.ts";
import { useRefusedKeys, type KeyVerdicts } from "./plugins/refused-keys.ts";
import { useRequestLog, type RequestId } from "./plugins/request-log.ts";
import { securityPlugins } from "./plugins/security.ts";
import type { SocketStreams } from "./plugins/socket-streams.ts";
import type { Logger } from "./telemetry/logger.ts";
import type { GatewayMetrics } from "./telemetry/metrics.ts";
import { OperationNameLabels } from "./telemetry/operation-name-labels.ts";
import { OperationSeries } from "./telemetry/operation-series.ts";
import { GRAPHQL_ENDPOINT } from "./gateway-parts.ts";

export interface PluginParts {
  config: GatewayConfig;
  refusalNotes: RefusalNotes;
  validated: Plugin;
  logger: Logger;
  metrics: GatewayMetrics;
  first: Plugin[];
  deadlines: RequestDeadlines;
  rateLimit: ReturnType<typeof useRateLimit> | undefined;
  /** Whether the parse cache holds this query text. */
  isParsed(source: string): boolean;
  keyVerdicts: KeyVerdicts;
  responseCache: Plugin[];
  requestIds: WeakMap<Request, RequestId>;
  readiness: UpstreamReadiness;
  compression: Compression;
  streams: SocketStreams;
  contextForEvent(parent: GatewayContext, deadline: number): GatewayContext;
  eventStreams: Plugin;
}

/** Every plugin, in the order that matters: each comment says why a plugin stands where it does. */
export function pluginsInOrder(parts: PluginParts) {
  const { config, logger, metrics, deadlines, rateLimit, requestIds } = parts;
  return [
    // Each event of a subscription its own execution, with its own deadline and loaders. It sets
    // the subscribe function, which the plugins after it wrap (tracing's) and none replaces
    // (graphql-jit never runs a subscription).
    useEventExecution({
      timeoutMs: deadlines.timeoutMs,
      contextFor: parts.contextForEvent,
      opened: forgetOpeningLoads,
    }) as Plugin,
    ...parts.first,
    deadlines.arrival(),
    useBodyLimit(config.security.maxBodyBytes),
    // Before any plugin that can refuse a request after reading it: every request pays first.
    ...(rateLimit ? [rateLimit.beforeParsing as Plugin] : []),
    // After the 1 every request pays, and before anything that reads a GraphQL request.
    ...(config.graphiql
      ? [useGraphiQLPage({ endpoint: GRAPHQL_ENDPOINT, negotiate: parts.compression.negotiate, pay: rateLimit?.payInAll })]
      : []),
    useRefusals({
      notes: parts.refusalNotes,
      maxNestingDepth: config.security.maxNestingDepth,
      isParsed: parts.isParsed,
      requestIdOf: (request) => requestIds.get(request),
    }),
    // Before the response cache: a key the upstream refused is never served what is held.
    useRefusedKeys(parts.keyVerdicts, GRAPHQL_ENDPOINT),
    // graphql-sse's single-connection mode: before the response cache, which would answer its POSTs
    // as requests of their own; each operation they carry runs this whole pipeline.
    parts.eventStreams,
    // Before the request log: a hit is logged and carries its request id like any answer.
    ...parts.responseCache,
    useRequestLog({ logger, requestIds, graphqlEndpoint: GRAPHQL_ENDPOINT }),
    ...securityPlugins(config.security, config.limits),
    // Each document's validation, kept (after the security plugins: one of them adds the
    // introspection rule to some requests), and which documents the operation lane may take
    // (src/server/operation-lane.ts): those that validated.
    parts.validated,
    // Incremental delivery of queries: multipart/mixed or SSE over HTTP, `next` messages over WebSocket.
    useDeferStream(),
    ...(rateLimit ? [rateLimit.beforeExecution as Plugin] : []),
    // Compiled execution where it answers as graphql-js does (src/plugins/compiled-execution.ts).
    ...(config.compiledExecution
      ? useCompiledExecution({ compileFromRun: config.compileFromRun, compiling: () => metrics.documentCompiled() })
      : []),
    // After every plugin that sets the execute function, which it wraps.
    deadlines.executionBound() as Plugin,
    useReadiness("/ready", parts.readiness),
    // WebSocket operations run this pipeline too: their streams are handed to the socket, not written to an HTTP body.
    parts.streams.plugin,
    // Count and latency by operation, and errors. Operation names are a bounded set of label
    // values, whatever names clients send.
    useOperationMetrics({
      endpoint: "/metrics",
      registry: metrics.registry,
      series: new OperationSeries(
        metrics.registry,
        new OperationNameLabels({
          max: config.security.metricsOperationNames,
          windowMs: config.security.metricsOperationNamesWindowMs,
          seeds: persistedOperationNames(config.security.persistedOperationsFile),
        }),
      ),
    }),
    // Last: every plugin before it may read or replace the answer's body.
    parts.compression.plugin,
  ];
}
