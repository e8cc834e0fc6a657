/**
 * `/metrics` of a cluster answers for all its workers. Whichever worker takes a scrape asks the
 * primary, which gathers every worker's registry over IPC (prom-client's AggregatorRegistry) and
 * sums them; each metric's `aggregator` says how (breaker state: the worst; Redis: up only if up
 * everywhere). A scrape answered by one worker alone would show a different worker's counters
 * each time, and Prometheus would read every switch as a counter reset.
 */
import cluster, { type Worker } from "node:cluster";
import type { IncomingMessage, ServerResponse } from "node:http";
import { AggregatorRegistry, Counter, Gauge, Registry } from "prom-client";
import type { Logger } from "./logger.ts";

const ASK = "gateway:cluster-metrics?";
const ANSWER = "gateway:cluster-metrics";
const ANSWER_TIMEOUT_MS = 10_000;

interface Ask {
  type: typeof ASK;
  id: number;
}

interface Answer {
  type: typeof ANSWER;
  id: number;
  contentType?: string;
  text?: string;
  error?: string;
}

function isMessage<T extends { type: string }>(message: unknown, type: T["type"]): message is T {
  return typeof message === "object" && message !== null && (message as { type?: unknown }).type === type;
}

/** What only the primary knows: how many workers serve, and how many died. */
export class ClusterMetrics {
  readonly registry = new Registry();
  private readonly listening = new Set<number>();
  private readonly listeningWorkers = new Gauge({
    name: "gateway_cluster_workers_listening",
    help: "Worker processes of the cluster that are listening.",
    registers: [this.registry],
  });
  private readonly deaths = new Counter({
    name: "gateway_cluster_worker_deaths_total",
    help: "Workers that died without being asked to stop (each replaced unless they keep dying).",
    registers: [this.registry],
  });

  workerListening(id: number): void {
    this.listening.add(id);
    this.listeningWorkers.set(this.listening.size);
  }

  workerExited(id: number, unexpectedly: boolean): void {
    this.listening.delete(id);
    this.listeningWorkers.set(this.listening.size);
    if (unexpectedly) this.deaths.inc();
  }
}

/** In the primary: answers the workers' requests for the cluster's metrics, its own included. */
export function answerClusterMetrics(own: ClusterMetrics, logger: Logger): void {
  const aggregator = new AggregatorRegistry();
  cluster.on("message", (worker: Worker, message: unknown) => {
    if (!isMessage<Ask>(message, ASK)) return;
    const reply = (answer: Omit<Answer, "type" | "id">) => {
      if (!worker.isConnected()) return;
      // With a callback, a worker gone meanwhile is an error passed here, not an 'error' event.
      worker.send({ type: ANSWER, id: message.id, ...answer } satisfies Answer, undefined, undefined, () => {});
    };
    Promise.all([aggregator.clusterMetrics(), own.registry.metrics()]).then(
      ([workers, primary]) => reply({ text: `${workers.trimEnd()}\n\n${primary}`, contentType: aggregator.contentType }),
      (error: Error) => {
        logger.warn({ err: error }, "could not gather the workers' metrics");
        reply({ error: error.message });
      },
    );
  });
}

/** In a worker: serves the cluster's metrics at GET /metrics, everything else through `listener`. */
export function withClusterMetrics(
  listener: (request: IncomingMessage, response: ServerResponse) => void,
  registry: Registry,
): (request: IncomingMessage, response: ServerResponse) => void {
  // Makes this worker answer the primary's gathering with this gateway's registry.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);

  let nextId = 0;
  const waiting = new Map<number, (answer: Answer) => void>();
  process.on("message", (message: unknown) => {
    if (isMessage<Answer>(message, ANSWER)) waiting.get(message.id)?.(message);
  });

  function ask(): Promise<Answer> {
    const id = nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => settle({ type: ANSWER, id, error: "the primary did not answer" }), ANSWER_TIMEOUT_MS);
      function settle(answer: Answer): void {
        clearTimeout(timer);
        waiting.delete(id);
        resolve(answer);
      }
      waiting.set(id, settle);
      process.send!({ type: ASK, id } satisfies Ask, undefined, undefined, (error: Error | null) => {
        if (error) settle({ type: ANSWER, id, error: error.message });
      });
    });
  }

  return (request, response) => {
    if (request.method !== "GET" || request.url?.split("?")[0] !== "/metrics") return listener(request, response);
    void ask().then((answer) => {
      if (answer.text === undefined) {
        response.writeHead(503, { "content-type": "text/plain" }).end(`${answer.error ?? "no metrics"}\n`);
        return;
      }
      response.writeHead(200, { "content-type": answer.contentType ?? "text/plain" }).end(answer.text);
    });
  };
}
