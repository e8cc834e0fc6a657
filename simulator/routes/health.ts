import type { paths as DataPaths } from "../../src/upstream/contract/data-api.ts";
import type { paths as MetricsPaths } from "../../src/upstream/contract/metrics-api.ts";
import { routeDefiner, type RouteDefinition } from "../http/router.ts";

const dataRoute = routeDefiner<DataPaths>();
const metricsRoute = routeDefiner<MetricsPaths>();

const healthy = () => ({
  status: "ok" as const,
  info: { database: { status: "up" as const } },
  error: {},
  details: { database: { status: "up" as const } },
});

export function dataHealthRoutes(): RouteDefinition[] {
  return [dataRoute("GET", "/v1/health-check", healthy), dataRoute("GET", "/v1/live-check", healthy)];
}

export function metricsHealthRoutes(): RouteDefinition[] {
  return [metricsRoute("GET", "/v2/health-check", healthy), metricsRoute("GET", "/v2/live-check", healthy)];
}
