import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { createLogger } from "../src/telemetry/logger.ts";
import { startTracing, type Tracing } from "../src/telemetry/tracing.ts";
import { createGateway, type Gateway } from "../src/gateway.ts";
import { startSimulator } from "../simulator/server.ts";

const exporter = new InMemorySpanExporter();
let tracing: Tracing;
let simulator: Awaited<ReturnType<typeof startSimulator>>;
let gateway: Gateway;

beforeAll(async () => {
  tracing = startTracing(exporter, { batch: false });
  simulator = await startSimulator({ dataPort: 0, metricsPort: 0 });
  gateway = createGateway(
    loadConfig({ RESPONSE_CACHE_TTL_MS: "0" }),
    { dataApiUrl: simulator.dataUrl, metricsApiUrl: simulator.metricsUrl },
    createLogger("silent"),
    { plugins: [tracing.plugin] },
  );
});
afterAll(async () => {
  await gateway.close();
  await simulator.close();
  await tracing.shutdown();
});

describe("OpenTelemetry tracing", () => {
  it("records the operation and its upstream calls, without the API key", async () => {
    const response = await gateway.yoga.fetch("http://gateway.test/graphql", {
      method: "POST",
      headers: { "content-type": "application/json", "x-glacier-api-key": "secret-key-456" },
      body: JSON.stringify({ query: `query TracedChain { chain(id: "43114") { chainName block(id: "3") { blockHash } } }` }),
    });
    expect(response.status).toBe(200);
    const spans = exporter.getFinishedSpans();
    expect(spans.some((span) => span.name.includes("TracedChain"))).toBe(true);
    const upstream = spans.filter((span) => String(span.attributes["url.full"] ?? "").startsWith(simulator.dataUrl));
    expect(upstream.map((span) => new URL(String(span.attributes["url.full"])).pathname)).toEqual(
      expect.arrayContaining(["/v1/chains", "/v1/chains/43114/blocks/3"]),
    );
    expect(JSON.stringify(spans.map((span) => span.attributes))).not.toContain("secret-key-456");
  });
});
