import { readFileSync } from "node:fs";

/**
 * The parts of an OpenAPI 3.1 document that the simulator reads: the
 * parameters of each operation (names, types, bounds, defaults, enums) and
 * which success status it answers with.
 */
export interface SchemaObject {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  default?: unknown;
  items?: SchemaObject;
}

export interface ParameterObject {
  $ref?: string;
  name: string;
  in: "query" | "path" | "header" | "cookie";
  required?: boolean;
  schema?: SchemaObject;
}

export interface OperationObject {
  parameters?: ParameterObject[];
  responses: Record<string, unknown>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OperationObject>>;
  components: {
    schemas: Record<string, SchemaObject>;
    parameters?: Record<string, ParameterObject>;
  };
}

export type ServiceName = "data" | "metrics";

const CONTRACT_FILES: Record<ServiceName, string> = {
  data: "data-api.json",
  metrics: "metrics-api.json",
};

const loaded = new Map<ServiceName, OpenApiDocument>();

export function loadContract(service: ServiceName): OpenApiDocument {
  let document = loaded.get(service);
  if (document === undefined) {
    const url = new URL(`../../src/upstream/contract/${CONTRACT_FILES[service]}`, import.meta.url);
    document = JSON.parse(readFileSync(url, "utf8")) as OpenApiDocument;
    loaded.set(service, document);
  }
  return document;
}

/** Follows a local `#/components/...` reference. */
export function resolveRef<T>(document: OpenApiDocument, value: T & { $ref?: string }): T {
  if (value.$ref === undefined) return value;
  const segments = value.$ref.replace(/^#\//, "").split("/");
  let target: unknown = document;
  for (const segment of segments) {
    target = (target as Record<string, unknown> | undefined)?.[segment];
  }
  if (target === undefined) throw new Error(`unresolvable $ref ${value.$ref}`);
  return resolveRef(document, target as T & { $ref?: string });
}
