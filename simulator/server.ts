import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import { CONTROL_PREFIX, handleControl, readJsonBody, type ControlTarget } from "./http/control.ts";
import { HttpError, errorBody } from "./http/errors.ts";
import { DEFAULT_KNOBS, FaultInjector, validateKnobs, type Knobs } from "./http/knobs.ts";
import { RequestLog, type RecordedRequest } from "./http/request-log.ts";
import { AnswerCache, CHANGING_ROUTES } from "./http/answer-cache.ts";
import { SimulatorClock, type ClockState } from "./http/clock.ts";
import { jsonText, sendJson, sendJsonText } from "./http/respond.ts";
import type { RouteTable } from "./http/router.ts";
import { DEFAULT_NETWORK_OPTIONS, SampleNetwork, type NetworkOptions } from "./network/index.ts";
import { EXPORT_DOWNLOAD_PATH, ExportJobs } from "./network/exports/index.ts";
import { serveExportDownload } from "./routes/data/exports.ts";
import { keepsMetricsAnswer } from "./routes/metrics/paging.ts";
import { dataApiRoutes, metricsApiRoutes, type RouteOptions } from "./routes/index.ts";

export type { ClockState } from "./http/clock.ts";
export type { Knobs } from "./http/knobs.ts";
export type { RecordedRequest } from "./http/request-log.ts";
export type { SampleNetwork } from "./network/index.ts";

export interface ListenOptions {
  /** Loopback by default. */
  host: string;
  /** 0 picks a free port. */
  dataPort: number;
  metricsPort: number;
}

export interface ClockOptions {
  /**
   * Live mode: the clock follows the wall clock from the start, so every chain gains blocks at its
   * own rhythm. Otherwise it stays at the head time until told to advance.
   */
  live: boolean;
}

export type SimulatorOptions = NetworkOptions & ListenOptions & RouteOptions & ClockOptions & Knobs;

export const DEFAULT_SIMULATOR_OPTIONS: SimulatorOptions = {
  ...DEFAULT_NETWORK_OPTIONS,
  host: "127.0.0.1",
  dataPort: 0,
  metricsPort: 0,
  metricsChainsPageSize: 100,
  live: false,
  ...DEFAULT_KNOBS,
};

export interface RunningSimulator {
  /** Base URL of the Data API, e.g. "http://127.0.0.1:4010". */
  dataUrl: string;
  metricsUrl: string;
  network: SampleNetwork;
  /** Requests per route since the last reset, keyed "GET /v1/chains/{chainId}". */
  counters(): Record<string, number>;
  /** Clears the counters and the request log. */
  resetCounters(): void;
  /** The latest requests of both services, oldest first. */
  requests(): RecordedRequest[];
  knobs(): Knobs;
  /** @throws RangeError when a knob value is invalid; no knob changes then. */
  setKnobs(knobs: Partial<Knobs>): void;
  /** The clock, and the heads of the chains, once the network has caught up with it. */
  clock(): ClockState;
  /**
   * Moves the clock on (0 < seconds <= 86,400), as `POST /_simulator/clock` does; every chain gains the blocks due.
   * @throws RangeError for another number of seconds.
   */
  advanceClock(seconds: number): ClockState;
  close(): Promise<void>;
}

const API_KEY_HEADER = "x-glacier-api-key";
const KEEP_ALIVE_TIMEOUT_MS = 60_000;
const KNOB_NAMES = Object.keys(DEFAULT_KNOBS) as (keyof Knobs)[];

interface Service {
  routes: RouteTable;
  requiresApiKey: boolean;
  /** Answers of reads kept serialized. */
  answers?: AnswerCache;
  /** Whether a read's answer may be kept; every one when absent. */
  keeps?: (rawQuery: string, body: unknown) => boolean;
}

/** Starts the Data API and the Metrics API on two loopback listeners over one generated network. */
export async function startSimulator(options: Partial<SimulatorOptions> = {}): Promise<RunningSimulator> {
  const given = Object.entries(options).filter(([, value]) => value !== undefined);
  const settings: SimulatorOptions = { ...DEFAULT_SIMULATOR_OPTIONS, ...Object.fromEntries(given) };
  const network = new SampleNetwork({
    seed: settings.seed,
    blocksPerChain: settings.blocksPerChain,
    headTime: settings.headTime,
    blockIntervalSeconds: settings.blockIntervalSeconds,
  });
  // Knobs are read when a job is created, long after `knobs` is set below.
  const exportJobs = new ExportJobs(network, () => knobs.exportJobMs);
  const data: Service = { routes: dataApiRoutes(network, exportJobs), requiresApiKey: true, answers: new AnswerCache(10_000) };
  const metrics: Service = {
    routes: metricsApiRoutes(network, settings, () => knobs.metricsTokenTtlMs),
    requiresApiKey: false,
    answers: new AnswerCache(10_000),
    keeps: keepsMetricsAnswer,
  };
  const routeKeys = new Set([...data.routes.routes, ...metrics.routes.routes].map((route) => route.key));

  let knobs: Knobs = { ...DEFAULT_KNOBS };
  const setKnobs = (update: unknown): void => {
    knobs = { ...knobs, ...validateKnobs(update, routeKeys) };
  };
  setKnobs(Object.fromEntries(KNOB_NAMES.map((name) => [name, settings[name]])));

  const log = new RequestLog();
  const faults = new FaultInjector(settings.seed);
  const shutdown = new AbortController();
  const clock = new SimulatorClock(network, settings.live);
  const dropKeptAnswers = () => {
    data.answers?.clear();
    metrics.answers?.clear();
  };
  const syncClock = () => {
    if (clock.sync()) dropKeptAnswers();
  };
  const control: ControlTarget = { log, knobs: () => knobs, setKnobs, clock, onChange: dropKeptAnswers };

  const listener = (service: Service) => (request: IncomingMessage, response: ServerResponse) => {
    serve(service, request, response).catch((error: unknown) => {
      if (shutdown.signal.aborted) return;
      console.error("simulator: unexpected error", error);
      if (!response.headersSent) sendJson(response, 500, errorBody(500, "Internal server error"));
    });
  };

  async function serve(service: Service, request: IncomingMessage, response: ServerResponse): Promise<void> {
    const method = request.method ?? "GET";
    const url = request.url ?? "/";
    const queryStart = url.indexOf("?");
    const pathname = queryStart < 0 ? url : url.slice(0, queryStart);
    const rawQuery = queryStart < 0 ? "" : url.slice(queryStart + 1);

    if (pathname.startsWith(CONTROL_PREFIX)) return handleControl(request, response, pathname, control);
    if (service === data && pathname.startsWith(EXPORT_DOWNLOAD_PATH))
      return serveExportDownload(exportJobs, request, response, pathname);

    // Every answer is as of the clock's time when the request arrived.
    syncClock();
    const { route, pathParams } = service.routes.match(method, pathname);
    const apiKey = firstHeader(request, API_KEY_HEADER);
    log.record({
      method,
      route: route?.key ?? null,
      path: pathname,
      rawQuery,
      apiKey,
      requestId: firstHeader(request, "x-request-id"),
    });
    // Read the knobs once so that a concurrent change cannot mix two settings in one answer.
    const current = knobs;
    if (current.latencyMs > 0) await delay(current.latencyMs, undefined, { signal: shutdown.signal });

    if (route === undefined) {
      return sendJson(response, 404, errorBody(404, `Cannot ${method} ${pathname}`));
    }
    try {
      if (service.requiresApiKey && current.apiKeys !== null) {
        if (apiKey === null) throw new HttpError(401, `Missing API key: send it in the ${API_KEY_HEADER} header`);
        if (!current.apiKeys.includes(apiKey)) throw new HttpError(403, "Invalid API key");
      }
      const fault = faults.shouldFail(route.key, current) ? current.faultKind : null;
      if (fault === "status") throw injectedError(current);
      if (fault === "reset") {
        request.socket.destroy();
        return;
      }
      if (fault === "malformed") {
        response.writeHead(200, { "content-type": "application/json; charset=utf-8" });
        response.end('{"truncated": [');
        return;
      }

      const remembered = service.answers && fault === null && method === "GET" && !CHANGING_ROUTES.has(route.key);
      const answer = remembered ? service.answers?.get(url) : undefined;
      if (answer !== undefined) return sendJsonText(response, route.successStatus, answer);

      const searchParams = new URLSearchParams(rawQuery);
      const { path, query } = route.parameters.parse(pathParams, searchParams);
      const body = await route.handle({
        path,
        query,
        sentQuery: searchParams,
        headers: request.headers,
        pageScope: pageScope(route.key, path, query),
        body: method === "POST" ? await readJsonBody(request) : undefined,
      });
      if (fault === "slow-body") {
        const text = jsonText(body);
        response.writeHead(route.successStatus, {
          "content-type": "application/json; charset=utf-8",
          "content-length": Buffer.byteLength(text),
        });
        const half = Math.floor(text.length / 2);
        response.write(text.slice(0, half));
        await delay(current.slowBodyMs, undefined, { signal: shutdown.signal }).catch(() => undefined);
        if (!response.destroyed) response.end(text.slice(half));
        return;
      }
      if (remembered && (service.keeps?.(rawQuery, body) ?? true)) {
        const text = jsonText(body);
        service.answers?.set(url, text);
        return sendJsonText(response, route.successStatus, text);
      }
      sendJson(response, route.successStatus, body);
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      sendJson(response, error.status, error.body, error.headers);
    }
  }

  const started = await Promise.allSettled([
    listen(listener(data), settings.host, settings.dataPort),
    listen(listener(metrics), settings.host, settings.metricsPort),
  ]);
  const servers = started.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
  const failure = started.find((result) => result.status === "rejected");
  if (failure !== undefined) {
    await Promise.all(servers.map(stop));
    throw failure.reason;
  }
  const [dataServer, metricsServer] = servers as [Server, Server];
  let closed: Promise<void> = Promise.resolve();

  return {
    dataUrl: baseUrl(settings.host, dataServer),
    metricsUrl: baseUrl(settings.host, metricsServer),
    network,
    counters: () => log.counters(),
    resetCounters: () => log.reset(),
    requests: () => log.requests(),
    knobs: () => ({ ...knobs }),
    setKnobs,
    clock: () => {
      syncClock();
      return clock.state();
    },
    advanceClock: (seconds) => {
      clock.advance(seconds);
      syncClock();
      return clock.state();
    },
    close: () => {
      if (!shutdown.signal.aborted) {
        shutdown.abort();
        closed = Promise.all([stop(dataServer), stop(metricsServer)]).then(() => undefined);
      }
      return closed;
    },
  };
}

const INJECTED_ERROR_MESSAGES: Record<number, string> = {
  429: "ThrottlerException: Too Many Requests",
  500: "Internal server error",
};

function injectedError(knobs: Knobs): HttpError {
  const { errorStatus } = knobs;
  const headers: Record<string, string> = errorStatus === 429 ? { "retry-after": String(knobs.retryAfterSeconds) } : {};
  const message = INJECTED_ERROR_MESSAGES[errorStatus] ?? errorBody(errorStatus, "").error;
  return new HttpError(errorStatus, message, headers);
}

function pageScope(routeKey: string, path: Record<string, unknown>, query: Record<string, unknown>): string {
  const filters = Object.entries(query)
    .filter(([name]) => name !== "pageToken" && name !== "pageSize")
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([routeKey, path, filters]);
}

function firstHeader(request: IncomingMessage, name: string): string | null {
  const value = request.headers[name];
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

function listen(
  handler: (request: IncomingMessage, response: ServerResponse) => void,
  host: string,
  port: number,
): Promise<Server> {
  const server = createServer(handler);
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1000;
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve(server);
    });
  });
}

function stop(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeAllConnections();
  });
}

function baseUrl(host: string, server: Server): string {
  const { port } = server.address() as AddressInfo;
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}
