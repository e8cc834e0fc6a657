/**
 * A query whose document ran before, executed by the listener past Yoga's HTTP layer: a miss of
 * a known query spends more on Yoga's `Request`/`Response` machinery and hooks than on its own
 * execution (a cache hit skips them already: ./cache-hit-lane.ts). The lane runs the execution
 * Yoga runs (`yoga.getEnveloped`: every plugin's parse, validate, context and execute hooks, the
 * limits, the budget's charge and settlement, compiled execution, the deadline, the masking of
 * errors, the metrics) and answers as Yoga's HTTP hooks would: the same status, body and
 * headers (`ratelimit-*`, `x-request-id`, `vary`, compression by `accept-encoding`), the answer
 * stored in the response cache, a 429 held on its connection, the refusal counted and logged,
 * the request logged with its line.
 *
 * It takes only what it answers exactly so: a JSON POST to the endpoint, from no browser (no
 * `Origin`: CORS is Yoga's) and no graphql-sse stream, asking for JSON, whose body holds `query`
 * (a document the parse cache holds and that validated before), `operationName` and
 * `variables` and nothing else; a query that delivers nothing incrementally; a caller who owes
 * only the 1 every request pays, whose key the upstream has not refused lately, who can pay
 * now; no identical request under way; no persisted-only mode, no shared response tier.
 * Anything else goes to Yoga as it came, having paid nothing here, or its 1 only (not taken again).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { GraphQLError, getOperationAST, type DocumentNode, type ExecutionResult, type OperationDefinitionNode } from "graphql";
import { TOKEN_HEADER_KEY } from "graphql-sse";
import { createGraphQLError, maskError, processRegularResult, type YogaServerInstance } from "graphql-yoga";
import type { CompressionConfig } from "../config.ts";
import type { GatewayContext } from "../execution/context.ts";
import { selectsOnlyIntrospection } from "../execution/selection.ts";
import type { RequestDeadlines } from "../limits/deadline.ts";
import type { RateLimitDecision } from "../limits/rate-limiter.ts";
import { inputCost, operationNameCost } from "../limits/request-costs.ts";
import { deliversIncrementally } from "../plugins/compiled-execution.ts";
import { compress, negotiateEncoding, type ContentEncoding } from "../plugins/compression.ts";
import type { LanePayments, PaidIncoming } from "../plugins/rate-limit.ts";
import { remainingOf } from "../plugins/rate-limit-refusals.ts";
import type { RefusalNotes, Refused } from "../plugins/refusal-notes.ts";
import { answerUnexpected } from "./refusal-answer.ts";
import { headerOf } from "./cache-hit-lane.ts";
import { OPERATION_NAME_CHARS, requestIdFrom, requestLineWriter, type RequestId } from "../plugins/request-log.ts";
import type { KeyedRequest } from "../plugins/response-cache.ts";
import type { ResponseStore } from "../plugins/response-store.ts";
import type { CachedResponse } from "../shared-state/shared-tiers.ts";
import { truncated, type Logger } from "../telemetry/logger.ts";

export interface OperationLaneOptions {
  yoga: Pick<YogaServerInstance<Record<string, never>, GatewayContext>, "getEnveloped" | "fetchAPI">;
  graphqlEndpoint: string;
  /** The header that carries the caller's API key. */
  sessionHeader: string;
  /** The parsed document of `query`, when the parse cache holds it. */
  parsed(query: string): DocumentNode | undefined;
  /** Whether `document` passed validation before (src/plugins/validated-documents.ts). */
  validated(document: DocumentNode): boolean;
  isRefusedKey(apiKey: string): boolean;
  /** The budget: undefined when rate limiting is off. */
  payment?:
    | (LanePayments & {
        /** Takes the 1 a request pays as it comes, from its caller's buckets (the cache-hit lane's). */
        pay(request: IncomingMessage): RateLimitDecision | Promise<RateLimitDecision>;
      })
    | undefined;
  /** The response cache, when it is on (and has no shared tier: the lane does not look one up). */
  responseCache?: { store: ResponseStore; joinWithinMs: number; onMiss(): void } | undefined;
  compression: CompressionConfig;
  refusalNotes: RefusalNotes;
  /** Where each request's id is kept for the context (Yoga's request log fills it for its own requests). */
  requestIds: WeakMap<Request, RequestId>;
  deadlines: RequestDeadlines;
  /** Told of each request taken: executed here, or handed on to Yoga before anything ran. */
  onTaken(outcome: "executed" | "handed_on"): void;
  logger: Logger;
}

/** A request body the lane may take: a query, its operation's name and its variables, nothing else. */
interface KnownOperation {
  query: string;
  operationName: string | undefined;
  variables: Record<string, unknown> | undefined;
  document: DocumentNode;
  operation: OperationDefinitionNode;
  /** The media type of the answer: `application/json` unless the client asked for the GraphQL one. */
  mediaType: string;
}

/** `Accept` headers answered with JSON by Yoga's result processors, and the media type of each. */
const MEDIA_TYPES = new Map<string | undefined, string>([
  [undefined, "application/json"],
  ["*/*", "application/json"],
  ["application/json", "application/json"],
  ["application/graphql-response+json", "application/graphql-response+json"],
]);
const BODY_KEYS = new Set(["query", "operationName", "variables"]);

type Body = Record<string, unknown>;

/**
 * Answers `request` (a JSON POST whose body parsed to `body`) when it is a known query the lane
 * takes: true, and it is answered (or handed to `toYoga` later, before anything ran). False: it
 * was not taken, and nothing happened.
 */
export type OperationLane = (
  request: IncomingMessage,
  response: ServerResponse,
  body: Body,
  startedAt: number,
  toYoga: () => void,
) => boolean;

export function operationLane(options: OperationLaneOptions): OperationLane {
  const { yoga, payment, responseCache } = options;
  const logRequest = requestLineWriter(options.logger);

  function known(request: IncomingMessage, body: Body): KnownOperation | undefined {
    if (request.url !== options.graphqlEndpoint || request.headers.origin !== undefined) return;
    if (request.headers[TOKEN_HEADER_KEY] !== undefined) return;
    const mediaType = MEDIA_TYPES.get(request.headers.accept);
    if (mediaType === undefined) return;
    for (const key in body) if (!BODY_KEYS.has(key)) return;
    const { query, operationName, variables } = body;
    if (typeof query !== "string") return;
    if (operationName !== undefined && operationName !== null && typeof operationName !== "string") return;
    if (variables !== undefined && variables !== null && (typeof variables !== "object" || Array.isArray(variables))) return;
    const document = options.parsed(query);
    if (document === undefined || !options.validated(document) || deliversIncrementally(document)) return;
    const operation = getOperationAST(document, operationName as string | undefined);
    if (operation?.operation !== "query") return;
    const name = (operationName as string | null | undefined) ?? undefined;
    // A request that owes more than its 1 for what was read pays it through Yoga (src/plugins/reading-charge.ts).
    if (payment && (operationNameCost(name) > 0 || inputCost(variables, undefined) > 0)) return;
    return {
      query,
      operationName: name,
      variables: (variables ?? undefined) as Body | undefined,
      document,
      operation,
      mediaType,
    };
  }

  return function answerKnownOperation(request, response, body, startedAt, toYoga): boolean {
    const operation = known(request, body);
    if (!operation) return false;
    const sent = request.headers[options.sessionHeader];
    const apiKey = typeof sent === "string" ? sent.trim() : undefined;
    if (apiKey && options.isRefusedKey(apiKey)) return false;
    const cacheKey = (request as IncomingMessage & KeyedRequest).responseCacheKey;
    if (responseCache) {
      const { store } = responseCache;
      if (cacheKey === undefined || store.get(cacheKey) !== undefined || store.underWayFor(cacheKey)) return false;
    }
    const paying = payment?.pay(request);
    const handOn = (decision: RateLimitDecision | undefined) => {
      // Yoga goes on from the 1 taken here (and refuses the request when it was refused), without taking it again.
      if (decision) (request as IncomingMessage & PaidIncoming).paidAsItCame = decision;
      options.onTaken("handed_on");
      toYoga();
    };
    const run = (decision: RateLimitDecision | undefined) => {
      if (decision && !decision.allowed) return handOn(decision);
      // An identical request that missed meanwhile leads: this one joins it inside Yoga.
      const answered =
        responseCache && cacheKey !== undefined ? responseCache.store.lead(cacheKey, responseCache.joinWithinMs) : undefined;
      if (responseCache && !answered) return handOn(decision);
      options.onTaken("executed");
      responseCache?.onMiss();
      return execute(request, response, operation, decision, startedAt, cacheKey)
        .catch((error: unknown) => failed(error, response))
        .finally(() => answered?.());
    };
    if (paying instanceof Promise) paying.then(run).catch((error: unknown) => failed(error, response));
    else void run(paying);
    return true;
  };

  async function execute(
    request: IncomingMessage,
    response: ServerResponse,
    known: KnownOperation,
    decision: RateLimitDecision | undefined,
    startedAt: number,
    cacheKey: string | undefined,
  ): Promise<void> {
    const host = request.headers.host ?? "localhost";
    const operationRequest = new yoga.fetchAPI.Request(`http://${host}${request.url}`, {
      method: "POST",
      headers: request.headers as Record<string, string>,
    });
    const requestId = requestIdFrom(request.headers["x-request-id"]);
    options.requestIds.set(operationRequest, requestId);
    options.deadlines.arrive(operationRequest);
    if (decision) payment?.paidAsItCame(operationRequest, request, decision);
    const params = { query: known.query, operationName: known.operationName, variables: known.variables };
    // What Yoga's server context holds for a request over Node's HTTP, and what it adds.
    const enveloped = yoga.getEnveloped({
      req: request,
      res: response,
      waitUntil: (pending: unknown) => void Promise.resolve(pending).catch(() => {}),
      request: operationRequest,
      params,
    } as never);
    let result: ExecutionResult;
    try {
      // As Yoga's processRequest runs it: the document, validated again (both cached), then the context and execution.
      const document = enveloped.parse(known.query);
      const errors = enveloped.validate(enveloped.schema, document);
      result = errors.length
        ? { errors }
        : ((await enveloped.execute({
            schema: enveloped.schema,
            document,
            contextValue: await enveloped.contextFactory(),
            variableValues: known.variables,
            operationName: known.operationName,
          })) as ExecutionResult);
    } catch (error) {
      result = { errors: [masked(error)] };
    }
    await answer(request, response, known, result, operationRequest, requestId, startedAt, cacheKey);
  }

  /** An error that escaped execution, as Yoga masks one (its `handleError`): "Unexpected error.", the error logged. */
  function masked(error: unknown): GraphQLError {
    const shown = maskError(error, "Unexpected error.");
    if (shown !== error) options.logger.error({ err: error }, "unexpected error executing an operation");
    return shown instanceof GraphQLError ? shown : createGraphQLError(shown.message, { originalError: shown });
  }

  async function answer(
    request: IncomingMessage,
    response: ServerResponse,
    known: KnownOperation,
    result: ExecutionResult,
    operationRequest: Request,
    requestId: RequestId,
    startedAt: number,
    cacheKey: string | undefined,
  ): Promise<void> {
    const headers: Record<string, string | number> = {};
    let status = 200;
    let text: string;
    let refused: Refused | undefined;
    // An answer without errors is written as Yoga writes one; any other as Yoga processes it.
    const plain = !result.errors?.length && result.extensions === undefined;
    if (plain) {
      const stringify = (result as { stringify?: (value: unknown) => string }).stringify ?? JSON.stringify;
      text = stringify(result);
      headers["content-type"] = `${known.mediaType}; charset=utf-8`;
    } else {
      const normalized = options.refusalNotes.normalizedResult(result);
      refused = normalized.refused;
      const processed = processRegularResult(normalized.result, yoga.fetchAPI, known.mediaType);
      status = processed.status;
      processed.headers.forEach((value, name) => (headers[name] = value));
      text = await processed.text();
    }
    const decision = payment?.lastDecision(operationRequest);
    if (decision) {
      headers["ratelimit-limit"] = decision.burst;
      headers["ratelimit-remaining"] = remainingOf(decision);
    }
    if (status === 429) await payment?.holdRefusal(request, Number(headers["retry-after"] ?? 1));
    headers["x-request-id"] = requestId;
    const operation = known.operationName === undefined ? null : truncated(known.operationName, OPERATION_NAME_CHARS);
    const encoding = options.compression.enabled ? negotiateEncoding(headerOf(request, "accept-encoding")) : undefined;
    // The text itself when it goes as it is and is not stored: Node encodes it as it writes, with no copy of it as bytes here.
    let sending: { body: Buffer | string; length: number; encoding: ContentEncoding | undefined };
    if (responseCache && cacheKey !== undefined && plain) {
      const entry: CachedResponse = { body: text, contentType: String(headers["content-type"]), operation };
      if (selectsOnlyIntrospection(known.document, known.operation)) responseCache.store.setLasting(cacheKey, entry);
      else responseCache.store.set(cacheKey, entry);
      options.refusalNotes.note(status, refused, requestId);
      logRequest({ requestId, method: "POST", operation, status, startedAt });
      const answer = await responseCache.store.encoded(cacheKey, entry, encoding);
      sending = { body: answer.body, length: answer.body.byteLength, encoding: answer.encoding };
    } else {
      options.refusalNotes.note(status, refused, requestId);
      logRequest({ requestId, method: "POST", operation, status, startedAt });
      const length = Buffer.byteLength(text);
      if (encoding === undefined || length < options.compression.minBytes) sending = { body: text, length, encoding: undefined };
      else {
        const body = await compress(Buffer.from(text), encoding);
        sending = { body, length: body.byteLength, encoding };
      }
    }
    if (options.compression.enabled) headers.vary = "accept-encoding";
    if (sending.encoding) headers["content-encoding"] = sending.encoding;
    headers["content-length"] = sending.length;
    if (response.destroyed) return;
    response.writeHead(status, headers);
    response.end(sending.body);
  }

  const failed = (error: unknown, response: ServerResponse) =>
    answerUnexpected(response, error, options.logger, "answering an operation");
}
