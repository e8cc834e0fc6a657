/**
 * A federated deployment on real loopback sockets: the simulator, this gateway over it as the
 * "avalanche" subgraph, the example labels subgraph, and Hive Gateway's runtime in front of both,
 * serving the committed supergraph with the example's header propagation.
 */
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createGatewayRuntime, type GatewayPlugin, type GatewayRuntime } from "@graphql-hive/gateway-runtime";
import http from "@graphql-mesh/transport-http";
import type { ExecutionResult, GraphQLFormattedError } from "graphql";
import { propagateHeaders } from "../../examples/federation/gateway.config.ts";
import { startLabelsSubgraph, type RunningLabelsSubgraph } from "../../examples/federation/labels-subgraph.ts";
import { serveGateway, startHarness, type Harness, type ServedGateway } from "./harness.ts";

const SUPERGRAPH = new URL("../../examples/federation/supergraph.graphql", import.meta.url);

export interface Federation {
  harness: Harness;
  /** The gateway's own endpoint, for the direct questions. */
  gatewayUrl: string;
  labelsUrl: string;
  routerUrl: string;
  /** The subgraph of each fetch the router has sent, in order (empty it to count afresh). */
  subgraphFetches: string[];
  close(): Promise<void>;
}

export async function startFederation(env: Record<string, string> = {}): Promise<Federation> {
  const harness = await startHarness(env);
  let served: ServedGateway | undefined;
  let labels: RunningLabelsSubgraph | undefined;
  let runtime: GatewayRuntime | undefined;
  let router: Server | undefined;
  const subgraphFetches: string[] = [];
  async function close(): Promise<void> {
    if (router) {
      router.closeAllConnections();
      await new Promise<void>((resolve) => router!.close(() => resolve()));
    }
    await runtime?.dispose();
    await labels?.close();
    await served?.close();
    await harness.close();
  }
  try {
    served = await serveGateway(harness);
    labels = await startLabelsSubgraph(0);
    const gatewayUrl = `http://127.0.0.1:${served.port}/graphql`;
    runtime = createGatewayRuntime({
      supergraph: await readFile(SUPERGRAPH, "utf8"),
      // The committed supergraph names localhost:4000 and :4001; this deployment's ports differ.
      transportEntries: { avalanche: { location: gatewayUrl }, labels: { location: labels.url } },
      // The transport the Hive Gateway CLI loads by name for a federation subgraph.
      transports: { http },
      propagateHeaders,
      logging: false,
      plugins: (): GatewayPlugin[] => [
        {
          onSubgraphExecute({ subgraphName }) {
            subgraphFetches.push(subgraphName);
          },
        },
      ],
    });
    router = createServer(runtime);
    await new Promise<void>((resolve) => router!.listen(0, "127.0.0.1", resolve));
    const routerUrl = `http://127.0.0.1:${(router.address() as AddressInfo).port}/graphql`;
    return { harness, gatewayUrl, labelsUrl: labels.url, routerUrl, subgraphFetches, close };
  } catch (error) {
    await close();
    throw error;
  }
}

export type Answer<T = Record<string, unknown>> = ExecutionResult<T> & { errors?: GraphQLFormattedError[] };

/** One GraphQL POST over HTTP; the answer's body, whatever its status. */
export async function post<T = Record<string, unknown>>(
  url: string,
  query: string,
  variables: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<Answer<T>> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/graphql-response+json", ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as Answer<T>;
}
