/**
 * Optional OpenTelemetry tracing (TRACING=otlp): a span per GraphQL operation and per upstream
 * HTTP call (undici's diagnostics channels), exported over OTLP/HTTP to
 * OTEL_EXPORTER_OTLP_ENDPOINT. Off by default; nothing here loads unless it is on.
 * Upstream spans carry the method, URL path and status, never request headers (the API key).
 */
import { useOpenTelemetry } from "@envelop/opentelemetry";
import { registerInstrumentations } from "@opentelemetry/instrumentation";
import { UndiciInstrumentation } from "@opentelemetry/instrumentation-undici";
import { Resource } from "@opentelemetry/resources";
import { BatchSpanProcessor, SimpleSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import type { Plugin } from "graphql-yoga";

export interface Tracing {
  plugin: Plugin;
  shutdown(): Promise<void>;
}

export function startTracing(exporter: SpanExporter, options: { batch?: boolean; serviceName?: string } = {}): Tracing {
  const provider = new NodeTracerProvider({
    resource: new Resource({ "service.name": options.serviceName ?? "avalanche-graphql-gateway" }),
    spanProcessors: [options.batch === false ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(exporter)],
  });
  provider.register();
  const unregister = registerInstrumentations({ tracerProvider: provider, instrumentations: [new UndiciInstrumentation()] });
  return {
    plugin: useOpenTelemetry({ resolvers: false, variables: false, result: false }, provider) as Plugin,
    async shutdown() {
      unregister();
      await provider.shutdown();
    },
  };
}

/** The OTLP/HTTP exporter, loaded only when tracing is on. */
export async function otlpExporter(): Promise<SpanExporter> {
  const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
  return new OTLPTraceExporter();
}
