import { expect } from "vitest";
import { ContractSchemas } from "./contract-schemas.ts";

export interface JsonResponse {
  status: number;
  headers: Headers;
  body: unknown;
}

export async function getJson(url: string, headers: Record<string, string> = {}): Promise<JsonResponse> {
  const response = await fetch(url, { headers });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

export async function postJson(url: string, body: unknown): Promise<JsonResponse> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

const schemas = new ContractSchemas();

/** Asserts the status and that the body matches the contract's schema for that route and status. */
export function expectContract(response: JsonResponse, service: "data" | "metrics", route: string, status: number): void {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  const [method, template] = route.split(" ") as [string, string];
  expect(schemas.responseErrors(service, method, template, status, response.body)).toEqual([]);
}

export function schemaProperties(service: "data" | "metrics", name: string): string[] {
  return schemas.schemaProperties(service, name);
}
