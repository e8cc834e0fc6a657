/**
 * Hive Gateway in front of this gateway ("avalanche") and the labels subgraph:
 *
 *   npx @graphql-hive/gateway supergraph examples/federation/supergraph.graphql -c examples/federation/gateway.config.ts
 *
 * The test (test/federation-router.test.ts) runs this same header propagation in
 * `createGatewayRuntime`, with the subgraphs' locations overridden to its own ports.
 */
import type { PropagateHeadersOpts } from "@graphql-hive/gateway-runtime";

/**
 * The caller's Data API key goes to the gateway's subgraph only (no other subgraph needs it, so no
 * other sees it); the request id to every subgraph, so that one request reads as one in their logs.
 */
export const propagateHeaders: PropagateHeadersOpts<Record<string, never>> = {
  fromClientToSubgraphs({ request, subgraphName }) {
    const headers: Record<string, string | null> = { "x-request-id": request.headers.get("x-request-id") };
    if (subgraphName === "avalanche") headers["x-glacier-api-key"] = request.headers.get("x-glacier-api-key");
    return headers;
  },
};

export const gatewayConfig = {
  supergraph: "./examples/federation/supergraph.graphql",
  propagateHeaders,
};
