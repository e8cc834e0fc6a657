/** What a reference operation of the benchmark declares. */
import { readFileSync } from "node:fs";
import type { PlainUpstream } from "../upstream.ts";

export interface UpstreamPath {
  service: "data" | "metrics";
  method?: "GET" | "POST";
  path: string;
  body?: unknown;
}

export interface PreparedOperation {
  variables: Record<string, unknown>;
  /** The fewest upstream calls a cold gateway can make for this operation, from the data. */
  fewestCalls: number;
  /** The same upstream calls as the gateway makes, by hand; returns the data the operation returns. */
  baseline(): Promise<unknown>;
  /** The upstream requests the operation makes, for measuring the simulator alone. */
  upstreamPaths: UpstreamPath[];
}

export interface ReferenceOperation {
  name: string;
  /** The GraphQL document, from bench/operations/<name>.graphql. */
  document: string;
  /** Longest chain of upstream calls that wait on each other. */
  dependentCalls: number;
  /** Reads what the operation needs from the simulator (variables, the data behind the counts). */
  prepare(upstream: PlainUpstream): Promise<PreparedOperation>;
}

export function operationDocument(name: string): string {
  return readFileSync(new URL(`./${name}.graphql`, import.meta.url), "utf8");
}
