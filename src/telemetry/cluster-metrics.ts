/**
 * `/metrics` of a cluster answers for all its workers. Whichever worker takes a scrape asks the
 * primary, which gathers the registry of every listening worker over IPC and sums them with
 * prom-client's AggregatorRegistry; each metric's `aggregator` says how (breaker state: the worst;
 * Redis: up only if up everywhere). A scrape answered by one worker alone would show a different
 * worker's counters each time, and Prometheus would read every switch as a counter reset.
 */
import cluster, { type Worker } from "node:cluster";
import type { IncomingMessage, ServerResponse } from "node:http";
import { AggregatorRegistry, Counter, Gauge, Registry } from "prom-client";
import type { Logger } from "./logger.ts";

/** Worker → primary: the cluster's metrics, please. */
const ASK = "gateway:metrics:ask";
/** Primary → every listening worker: your registry, please. */
const COLLECT = "gateway:metrics:collect";
/** Worker → primary: my registry. */
const PART = "gateway:metrics:part";
/** Primary → the asking worker: the cluster's metrics, or why not. */
const ANSWER = "gateway:metrics:answer";
const GATHER_TIMEOUT_MS = 5_000;

type Metrics = Awaited<ReturnType<Registry["getMetricsAsJSON"]>>;

interface Ask {
  type: typeof ASK;
  id: number;
}
interface Collect {
  type: typeof COLLECT;
  gather: number;
}
interface Part {
  type: typeof PART;
  gather: number;
  metrics?: Metrics;
  error?: string;
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

/** A send that never throws nor emits: a worker gone meanwhile simply misses the message. */
function sendTo(worker: Worker, message: Collect | Answer): void {
  if (worker.isConnected()) worker.send(message, undefined, undefined, () => {});
}

/** What only the primary knows: which workers serve, and how many died. */
export class ClusterMetrics {
  readonly registry = new Registry();
  readonly listening = new Set<number>();
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

interface Gathering {
  /** Workers still to answer. */
  pending: Set<number>;
  parts: Metrics[];
  finish(): void;
  fail(error: Error): void;
}

/**
 * In the primary: answers the workers' requests for the cluster's metrics, its own included.
 * Only listening workers are asked (one still starting has no registry to give), and a worker
 * that exits while asked is no longer waited for.
 */
export function answerClusterMetrics(own: ClusterMetrics, logger: Logger): void {
  let nextGather = 0;
  const gatherings = new Map<number, Gathering>();

  function gather(): Promise<string> {
    const id = nextGather++;
    const workers = [...own.listening].map((workerId) => cluster.workers?.[workerId]).filter((worker) => worker !== undefined);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        gatherings.delete(id);
        reject(
          new Error(
            `${gathering.pending.size} of ${workers.length} workers did not give their metrics in ${GATHER_TIMEOUT_MS} ms`,
          ),
        );
      }, GATHER_TIMEOUT_MS);
      const gathering: Gathering = {
        pending: new Set(workers.map((worker) => worker.id)),
        parts: [],
        fail(error) {
          clearTimeout(timer);
          gatherings.delete(id);
          reject(error);
        },
        finish() {
          if (this.pending.size > 0) return;
          clearTimeout(timer);
          gatherings.delete(id);
          Promise.all([AggregatorRegistry.aggregate(this.parts).metrics(), own.registry.metrics()]).then(
            ([workersText, primaryText]) => resolve(`${workersText.trimEnd()}\n\n${primaryText}`),
            reject,
          );
        },
      };
      gatherings.set(id, gathering);
      for (const worker of workers) sendTo(worker, { type: COLLECT, gather: id });
      gathering.finish();
    });
  }

  function settled(gathering: Gathering, workerId: number): void {
    gathering.pending.delete(workerId);
    gathering.finish();
  }

  cluster.on("message", (worker: Worker, message: unknown) => {
    if (isMessage<Part>(message, PART)) {
      const gathering = gatherings.get(message.gather);
      if (!gathering?.pending.has(worker.id)) return;
      if (message.metrics === undefined)
        return gathering.fail(new Error(`worker ${worker.id}: ${message.error ?? "no metrics"}`));
      gathering.parts.push(message.metrics);
      settled(gathering, worker.id);
    } else if (isMessage<Ask>(message, ASK)) {
      gather().then(
        (text) => sendTo(worker, { type: ANSWER, id: message.id, text, contentType: AggregatorRegistry.PROMETHEUS_CONTENT_TYPE }),
        (error: Error) => {
          logger.warn({ err: error }, "could not gather the workers' metrics");
          sendTo(worker, { type: ANSWER, id: message.id, error: error.message });
        },
      );
    }
  });
  cluster.on("exit", (worker) => {
    for (const gathering of gatherings.values()) if (gathering.pending.has(worker.id)) settled(gathering, worker.id);
  });
}

/** In a worker: serves the cluster's metrics at GET /metrics, everything else through `listener`. */
/**
 * @param chargeScrape charges the scrape's caller (0 when paid, else the seconds to wait): the
 * gateway's own /metrics is paid for in its rate limit, and a cluster's costs more.
 */
export function withClusterMetrics(
  listener: (request: IncomingMessage, response: ServerResponse) => void,
  registry: Registry,
  chargeScrape: (request: IncomingMessage) => Promise<number> = async () => 0,
): (request: IncomingMessage, response: ServerResponse) => void {
  let nextId = 0;
  const waiting = new Map<number, (answer: Answer) => void>();
  process.on("message", (message: unknown) => {
    if (isMessage<Answer>(message, ANSWER)) {
      waiting.get(message.id)?.(message);
    } else if (isMessage<Collect>(message, COLLECT)) {
      const reply = (part: Omit<Part, "type" | "gather">) =>
        process.send?.({ type: PART, gather: message.gather, ...part } satisfies Part, undefined, undefined, () => {});
      registry.getMetricsAsJSON().then(
        (metrics) => reply({ metrics }),
        (error: Error) => reply({ error: error.message }),
      );
    }
  });

  function ask(): Promise<Answer> {
    const id = nextId++;
    return new Promise((resolve) => {
      // The primary answers within its own timeout; this one is for a primary that is gone.
      const timer = setTimeout(() => settle({ type: ANSWER, id, error: "the primary did not answer" }), GATHER_TIMEOUT_MS * 2);
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
    const refuse = (status: number, message: string, code: string, headers: Record<string, string> = {}) =>
      response
        .writeHead(status, { ...headers, "content-type": "application/json; charset=utf-8" })
        .end(JSON.stringify({ errors: [{ message, extensions: { code } }] }));
    void chargeScrape(request)
      .then(async (wait) => {
        if (wait > 0)
          return refuse(429, `Rate limit exceeded: a scrape of /metrics is paid for; retry after ${wait} s`, "RATE_LIMITED", {
            "retry-after": String(wait),
          });
        const answer = await ask();
        if (answer.text === undefined)
          return refuse(
            503,
            `The cluster's metrics could not be gathered: ${answer.error ?? "no metrics"}`,
            "METRICS_UNAVAILABLE",
          );
        response.writeHead(200, { "content-type": answer.contentType ?? "text/plain" }).end(answer.text);
      })
      .catch(() => refuse(500, "Unexpected error.", "INTERNAL_SERVER_ERROR"));
  };
}
