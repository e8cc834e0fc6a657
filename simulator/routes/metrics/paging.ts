/**
 * Metrics API page tokens: the simulator's page tokens, stamped with the time they were issued.
 * A token older than the token lifetime (24 hours, the `metricsTokenTtlMs` knob) is refused with
 * 400 and a message that says it expired, so that a client knows to start again from the first page.
 */
import { badRequest } from "../../http/errors.ts";
import { decodeTokenJson, encodeTokenJson, paginate, type Page, type PageRequest } from "../../http/pagination.ts";
import type { Sequence } from "../../network/index.ts";
import type { MetricPoint } from "../../network/metrics/time.ts";
import type { MetricValue } from "../../../src/upstream/types.ts";

/**
 * Points as the contract types them. A bigint value (a wei amount) is sent as a JSON number with
 * all its digits (see `jsonText`): what the contract's `number` stands for on the wire.
 */
export function contractPoints(points: readonly MetricPoint[]): MetricValue[] {
  return points as MetricValue[];
}

export const EXPIRED_TOKEN_MESSAGE = "pageToken has expired; request the first page again";

export function metricsPage<T>(source: Sequence<T>, request: PageRequest, tokenTtlMs: number): Page<T> {
  const pageToken = request.pageToken === undefined ? undefined : unstamp(request.pageToken, tokenTtlMs);
  const page = paginate(source, { ...request, pageToken });
  return { items: page.items, nextPageToken: page.nextPageToken === undefined ? undefined : stamp(page.nextPageToken) };
}

/**
 * Whether the simulator may keep a Metrics API answer for its URL: not when the read sent a
 * token (it must still be refused once expired) or the answer holds one (stamped anew each time).
 */
export function keepsMetricsAnswer(rawQuery: string, body: unknown): boolean {
  if (rawQuery.includes("pageToken") || rawQuery.includes("pageStartKey")) return false;
  const answer = body as { nextPageToken?: unknown; nextPageStartKey?: unknown } | null;
  return answer?.nextPageToken === undefined && answer?.nextPageStartKey === undefined;
}

function stamp(token: string): string {
  return encodeTokenJson([Date.now(), token]);
}

function unstamp(text: string, tokenTtlMs: number): string {
  const stamped = decodeTokenJson(text);
  if (!Array.isArray(stamped) || stamped.length !== 2 || !Number.isSafeInteger(stamped[0]) || typeof stamped[1] !== "string") {
    throw badRequest("pageToken is malformed");
  }
  if (Date.now() - (stamped[0] as number) > tokenTtlMs) throw badRequest(EXPIRED_TOKEN_MESSAGE);
  return stamped[1] as string;
}
