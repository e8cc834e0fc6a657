/**
 * What a request pays as it is read, before Yoga parses it: 1 (unless it paid it as it came, in
 * the listener's cache-hit lane), the reading of a document the parse cache does not hold and of
 * its operation name, and the characters of its variables and extensions (src/limits/request-costs.ts
 * says what each costs). A request refused here still pays what was read of it.
 */
import type { ExecutionResult } from "graphql";
import type { RateLimitConfig } from "../config.ts";
import { documentShapeOf, type DocumentShape } from "../limits/document-shape.ts";
import { bucketsOf, type CallerContext } from "../limits/caller-buckets.ts";
import type { RateLimitDecision, RateLimiter } from "../limits/rate-limiter.ts";
import { CHARACTERS_PER_TOKEN, costOfReading, inputCost, operationNameCost, wasBodyCharged } from "../limits/request-costs.ts";
import type { BucketRef } from "../limits/token-buckets.ts";
import { documentTooCostly, rateLimited } from "./rate-limit-refusals.ts";

/** What a request has paid for at the start, for its operation to pay the rest. */
export interface Paid {
  buckets: readonly BucketRef[];
  /** The parse cache did not hold the document: it paid for its reading (`NEW_DOCUMENT_COST`, size, definitions) already. */
  newDocument: boolean;
  /** For the response's ratelimit headers: the last decision. */
  decision: RateLimitDecision;
}

/**
 * The charge of each request as it is read: the result that refuses it, or undefined when it may
 * go on. What it paid is kept in `paid`, for its operation to pay the rest.
 */
export function readingCharge(
  config: RateLimitConfig,
  limiter: RateLimiter,
  isParsed: (source: string) => boolean,
  paid: WeakMap<Request, Paid>,
) {
  /** What a request owes for being read, beyond the 1 every request pays. */
  interface Reading {
    query: string;
    operationName: string;
    newDocument: boolean;
    shape: DocumentShape | undefined;
    documentCost: number;
    nameCost: number;
    valuesCost: number;
  }

  /**
   * The charge: the result that refuses the request, or undefined when it may go on. Decided at
   * once when it owes nothing beyond the 1 it paid as it came (a document the parse cache holds,
   * a short name, small values), as nearly every request does; else once the buckets answer.
   */
  return function payForReading(
    request: Request,
    req: CallerContext["req"],
    params: { query?: unknown; operationName?: unknown; variables?: unknown; extensions?: unknown },
  ): ExecutionResult | undefined | Promise<ExecutionResult | undefined> {
    const query = typeof params.query === "string" ? params.query : "";
    const operationName = typeof params.operationName === "string" ? params.operationName : "";
    const newDocument = query !== "" && isParsed(query) === false;
    const shape = newDocument ? documentShapeOf(request, query) : undefined;
    const reading: Reading = {
      query,
      operationName,
      newDocument,
      shape,
      documentCost: shape ? costOfReading(shape, query.length) : 0,
      nameCost: operationNameCost(operationName),
      // A body read but not usable paid for all its characters as it was read (src/plugins/spent-callers.ts).
      valuesCost: wasBodyCharged(req) ? 0 : inputCost(params.variables, params.extensions),
    };
    const before = paid.get(request);
    const buckets = before?.buckets ?? bucketsOf({ request, req }, config);
    const sizeCost = reading.documentCost + reading.nameCost + reading.valuesCost;
    if (before === undefined || sizeCost > 0 || buckets.some(({ limits }) => limits.burst < 1)) {
      return payForSize(request, buckets, before?.decision, reading);
    }
    paid.set(request, { buckets, newDocument, decision: before.decision });
    return before.decision.allowed ? undefined : { errors: [rateLimited(1, "this request", before.decision)] };
  };

  async function payForSize(
    request: Request,
    buckets: readonly BucketRef[],
    paidAsItCame: RateLimitDecision | undefined,
    { query, operationName, newDocument, shape, documentCost, nameCost, valuesCost }: Reading,
  ): Promise<ExecutionResult | undefined> {
    const sizeCost = documentCost + nameCost + valuesCost;
    const burst = Math.min(...buckets.map(({ limits }) => limits.burst));
    // The 1, paid as the request came, is kept even when the size cannot be paid: a caller who
    // keeps sending what it cannot afford runs its buckets dry, and is then refused before its
    // requests are read.
    let decision = paidAsItCame ?? (await limiter.take(buckets, 1));
    paid.set(request, { buckets, newDocument, decision });
    // A request that is refused here was still read and measured: the characters of its
    // document and operation name are paid whatever the bucket holds, into debt if need be
    // (then its caller is refused unread until the debt is paid back).
    const readCost = Math.floor((query.length + operationName.length) / CHARACTERS_PER_TOKEN) + valuesCost;
    if (decision.allowed && 1 + sizeCost > burst) {
      if (readCost > 0) paid.set(request, { buckets, newDocument, decision: await limiter.take(buckets, readCost, true) });
      return { errors: [documentTooCostly(1 + sizeCost, burst, shape)] };
    }
    if (decision.allowed && sizeCost > 0) {
      decision = await limiter.take(buckets, sizeCost);
      if (!decision.allowed && readCost > 0) {
        const charged = await limiter.take(buckets, readCost, true);
        decision = { ...decision, remaining: charged.remaining };
      }
      paid.set(request, { buckets, newDocument, decision });
    }
    if (decision.allowed) return undefined;
    const parts = [
      ...(documentCost > 0
        ? [`${documentCost} for its new document's ${shape!.tokens} tokens and ${shape!.definitions} definitions`]
        : []),
      ...(nameCost > 0 ? [`${nameCost} for its operation name`] : []),
      ...(valuesCost > 0 ? [`${valuesCost} for the characters of its variables and extensions`] : []),
    ];
    const what = parts.length > 0 ? `this request (1, and ${parts.join(" and ")})` : "this request";
    return { errors: [rateLimited(1 + sizeCost, what, decision)] };
  }
}
