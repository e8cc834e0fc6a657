/** Page size bounds, read from the contract so that they are exactly the routes' own. */
import dataContract from "./contract/data-api.json" with { type: "json" };
import metricsContract from "./contract/metrics-api.json" with { type: "json" };

/** A connection's page bounds: the route's, with the default `first` the gateway gives. */
export interface PageBounds {
  /** Smallest `pageSize` the route accepts (`first` may still be 0, which reads no page). */
  min: number;
  /** Largest `pageSize` the route accepts. */
  max: number;
  /** `first` when the client gives none. */
  default: number;
}

/** The smallest `first` of every connection: 0 asks for no items and makes no upstream call. */
export const MIN_FIRST = 0;

/**
 * How a field's description states its `first`: the range from `lowest`, the default, and a
 * note after a semicolon if any ("`first`: 0 to 100, default 10.").
 */
export function describeFirst(bounds: PageBounds, lowest = MIN_FIRST, note?: string): string {
  return `\`first\`: ${lowest} to ${bounds.max}, default ${bounds.default}${note === undefined ? "" : `; ${note}`}.`;
}

export interface RouteBounds {
  min: number;
  max: number;
  /** The route's default, when it has one. */
  default: number | undefined;
}

interface Parameter {
  name: string;
  in: string;
  schema?: { minimum?: number; maximum?: number; default?: number };
}

type Contract = { paths: Record<string, Record<string, { parameters?: Parameter[] }>> };

const contracts: Record<"data" | "metrics", Contract> = {
  data: dataContract as unknown as Contract,
  metrics: metricsContract as unknown as Contract,
};

/** The bounds of a numeric query parameter of a route; throws at startup if the contract lacks them. */
export function queryBounds(service: "data" | "metrics", route: string, parameter = "pageSize", method = "get"): RouteBounds {
  const operation = contracts[service].paths[route]?.[method];
  const schema = operation?.parameters?.find((p) => p.in === "query" && p.name === parameter)?.schema;
  if (schema?.minimum === undefined || schema.maximum === undefined) {
    throw new Error(`the contract has no bounds for ${parameter} of ${method.toUpperCase()} ${route}`);
  }
  return { min: schema.minimum, max: schema.maximum, default: schema.default };
}

/** The lower bound of a numeric query parameter that the contract bounds from below only (timestamps). */
export function queryMinimum(service: "data" | "metrics", route: string, parameter: string, method = "get"): number {
  const operation = contracts[service].paths[route]?.[method];
  const minimum = operation?.parameters?.find((p) => p.in === "query" && p.name === parameter)?.schema?.minimum;
  if (minimum === undefined) throw new Error(`the contract has no minimum for ${parameter} of ${method.toUpperCase()} ${route}`);
  return minimum;
}
