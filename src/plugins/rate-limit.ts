/**
 * Per-caller rate limiting. Every request pays before Yoga parses it: 1, and the reading of a
 * document the parse cache does not hold and of its operation name (src/limits/request-costs.ts,
 * which says what each costs). An operation that runs then pays, after validation and before
 * any resolver, the rest of its cost: the upstream calls it is estimated to make and the CPU it
 * is estimated to take (a Warp verification, an introspection), less the 1 already paid, and,
 * for a document parsed before, 1 for each of its other operations.
 * When it has run, it is settled: the requests it really sent upstream (counted per request by
 * the upstream client, retries included, cache hits and requests joined onto another caller's
 * not) beyond the calls it paid for are taken from the same buckets whatever they hold, into
 * debt if need be; nothing is given back for fewer. An operation thus pays the larger of its
 * estimate and its real calls, and a caller in debt is refused until its buckets refill. A
 * subscription pays for its first read when it starts, and 1 for each later read its poller
 * makes (src/live/); each of its events is settled as a query is, the requests its selection
 * sent since the last settlement taken whatever the buckets hold, so that a caller in debt has
 * its stream ended by its poller's next charge. A caller may hold `subscriptionsPerCaller` streams
 * open at once.
 * A caller over its budget gets HTTP 429 with `Retry-After`; an operation that costs more than a
 * full bucket holds can never run, and is refused as over a limit.
 *
 * Who pays (src/limits/caller-buckets.ts): the address's bucket, and with an API key the key's
 * as well, so that inventing keys or addresses (an IPv6 caller is its /64) buys no budget; a
 * request without a socket (`yoga.fetch`) pays from its key's bucket, else from `local`. With
 * Redis, all gateways share each bucket; while Redis cannot answer, each falls back to its own.
 *
 * What a request pays as it is read is ./reading-charge.ts; the refusals are ./rate-limit-refusals.ts;
 * the cap on open streams, src/limits/stream-slots.ts.
 */
import type { ExecutionArgs, ExecutionResult } from "graphql";
import { isAsyncIterable, type FetchAPI, type Plugin } from "graphql-yoga";
import type { RateLimitConfig } from "../config.ts";
import type { GatewayContext } from "../execution/context.ts";
import type { GatewayError } from "../errors.ts";
import type { BucketRef } from "../limits/token-buckets.ts";
import { bucketsOf, bucketsOfIncoming, type CallerContext } from "../limits/caller-buckets.ts";
import type { RateLimitDecision, RateLimiter } from "../limits/rate-limiter.ts";
import { analyzeOperation, operationCost } from "../limits/operation-analysis.ts";
import type { OperationCost } from "../limits/upstream-calls.ts";
import { ENDPOINT_COSTS } from "../limits/request-costs.ts";
import { StreamSlots } from "../limits/stream-slots.ts";
import type { IncomingMessage } from "node:http";
import { Socket } from "node:net";
import type { RefusalHolds } from "../limits/refusal-holds.ts";
import { rateLimited, refusedResponse, remainingOf, tooCostly, tooManyStreams } from "./rate-limit-refusals.ts";
import { readingCharge, type Paid } from "./reading-charge.ts";

/** Node's request, when the listener took its 1 before Yoga. */
export interface PaidIncoming {
  paidAsItCame?: RateLimitDecision;
}

/**
 * What an admitted operation paid for: from which buckets, and how many upstream calls (its
 * charge less its CPU, then what each settlement took).
 */
interface Admitted {
  buckets: readonly BucketRef[];
  paidCalls: number;
}

/** What `admit` decides: what the operation paid for, or undefined when it was refused; later when it must wait. */
type Admission = Admitted | undefined | Promise<Admitted | undefined>;

export interface RateLimitPluginOptions {
  /** The path GraphQL is served at: each request to it pays 1 as it comes. */
  graphqlEndpoint: string;
  /** Whether the parse cache holds this query text (then a request pays 1, not its reading). */
  isParsed(source: string): boolean;
  /** Where a 429 waits before it is sent (src/limits/refusal-holds.ts). */
  refusalHolds: RefusalHolds;
}

export interface RateLimitPlugins {
  beforeParsing: Plugin<GatewayContext>;
  beforeExecution: Plugin<GatewayContext>;
  /**
   * Charges a request that is answered before it is parsed (the GraphiQL page) `cost` in all, the
   * 1 it paid as it came included; the 429 that refuses it, or undefined.
   */
  payInAll(
    request: Request,
    req: CallerContext["req"],
    cost: number,
    what: string,
    fetchAPI: FetchAPI,
  ): Promise<Response | undefined>;
  /**
   * Counts the 1 `carrier` paid as it came as `operation`'s own: `operation` is the request made
   * for the operation `carrier` carries (graphql-sse's POST onto a stream), which then pays the
   * rest as any request does, and not its 1 again.
   */
  carryPayment(carrier: Request, operation: Request): void;
  /** What the listener's operation lane (src/server/operation-lane.ts) pays through: it runs an operation under a Request of its own. */
  lane: LanePayments;
}

export interface LanePayments {
  /** `operation` paid its 1 as it came, from the buckets of `req`: its operation pays the rest as any does. */
  paidAsItCame(operation: Request, req: IncomingMessage, decision: RateLimitDecision): void;
  /** The last decision its buckets gave, for the answer's `ratelimit-*` headers. */
  lastDecision(operation: Request): RateLimitDecision | undefined;
  /** A 429 waits on its connection (REFUSAL_HOLD_MS) before it is sent, as one answered through Yoga does. */
  holdRefusal(req: IncomingMessage, retryAfterSeconds: number): Promise<void> | undefined;
}

/**
 * Two plugins: `beforeParsing` charges every request as it comes (place it before any plugin
 * that may refuse a request after reading it), `beforeExecution` charges an operation the rest of
 * its cost (place it after the operation limits, which refuse before anything is charged).
 */
export function useRateLimit(config: RateLimitConfig, limiter: RateLimiter, options: RateLimitPluginOptions): RateLimitPlugins {
  const paid = new WeakMap<Request, Paid>();
  const slots = new StreamSlots(config.subscriptionsPerCaller);
  const payForReading = readingCharge(config, limiter, options.isParsed, paid);

  /**
   * Charges an operation its estimate; what it paid for, or undefined when it was refused (and
   * stopped). Decided at once when the estimate and the buckets are at hand (the chain list held,
   * no Redis to ask), as they are for nearly every operation.
   */
  function admit(args: ExecutionArgs, stop: (result: ExecutionResult) => void): Admission {
    // The cost MAX_QUERY_COST admitted the operation for (the same answer, worked out once).
    const estimate = operationCost(args);
    return estimate instanceof Promise ? estimate.then((known) => admitAt(args, known, stop)) : admitAt(args, estimate, stop);
  }

  function admitAt(args: ExecutionArgs, estimate: OperationCost, stop: (result: ExecutionResult) => void): Admission {
    const context = args.contextValue as CallerContext & GatewayContext;
    const analysis = analyzeOperation(args);
    const ownCost = Math.max(1, estimate.upstreamCalls + estimate.cpuCost);
    const before = paid.get(context.request);
    const buckets = before?.buckets ?? bucketsOf(context, config);
    // Every other operation of the document costs 1 (finding the one to run among them); a new
    // document paid for its definitions before it was parsed.
    const otherOperations = before?.newDocument ? 0 : analysis.operations - 1;
    const burst = Math.min(...buckets.map(({ limits }) => limits.burst));
    if (ownCost + otherOperations > burst) {
      return void stop({ errors: [tooCostly(ownCost - estimate.cpuCost, estimate.cpuCost, otherOperations, burst)] });
    }
    // The request paid 1 at the start.
    const cost = ownCost - (before ? 1 : 0) + otherOperations;
    const admitted: Admitted = { buckets, paidCalls: ownCost - estimate.cpuCost };
    if (cost <= 0) return admitted;
    const decided = (decision: RateLimitDecision): Admitted | undefined => {
      if (before) before.decision = decision;
      else paid.set(context.request, { buckets, newDocument: false, decision });
      const what = before
        ? `running this operation (its estimated upstream calls and CPU, less the 1 the request paid${otherOperations > 0 ? `, plus ${otherOperations} for the document's other operations` : ""})`
        : "this operation";
      if (!decision.allowed) return void stop({ errors: [rateLimited(cost, what, decision)] });
      return admitted;
    };
    const decision = limiter.takeSoon(buckets, cost);
    return decision instanceof Promise ? decision.then(decided) : decided(decision);
  }

  /**
   * After an operation ran (or a subscription's event): when it sent more requests upstream than
   * its charge paid for, the rest is taken from the same buckets whatever they hold (debt, paid
   * back as they refill, and until then its caller is refused). Nothing is given back for fewer:
   * the charge is the larger of the estimate and the real calls, so no estimate lets a caller
   * make more calls than it pays.
   */
  function settle(context: CallerContext & GatewayContext, admitted: Admitted): Promise<void> | undefined {
    const owed = context.call.sentRequests.count - admitted.paidCalls;
    if (owed <= 0) return;
    // A subscription's next event owes only what it sends itself.
    admitted.paidCalls += owed;
    const settled = (decision: RateLimitDecision) => {
      const before = paid.get(context.request);
      if (before) before.decision = decision;
      else paid.set(context.request, { buckets: admitted.buckets, newDocument: false, decision });
    };
    const decision = limiter.takeSoon(admitted.buckets, owed, true);
    if (decision instanceof Promise) return decision.then(settled);
    settled(decision);
  }

  /** Charges a subscription's caller for one read of its poller; the error ends the stream. */
  function chargeRead(buckets: readonly BucketRef[]): () => Promise<GatewayError | null> {
    return async () => {
      const decision = await limiter.take(buckets, 1);
      if (decision.allowed) return null;
      return rateLimited(1, "each read of its poller for your subscription (the stream ends)", decision);
    };
  }

  const payInAll: RateLimitPlugins["payInAll"] = async (request, req, cost, what, fetchAPI) => {
    const before = paid.get(request);
    const buckets = before?.buckets ?? bucketsOf({ request, req }, config);
    const rest = cost - (before ? 1 : 0);
    if (rest <= 0) return undefined;
    const decision = await limiter.take(buckets, rest);
    paid.set(request, { buckets, newDocument: false, decision });
    return decision.allowed ? undefined : refusedResponse(fetchAPI, cost, what, decision);
  };

  const beforeParsing: Plugin<GatewayContext> = {
    // The endpoints beside /graphql pay too: a health check costs the upstream calls it may make,
    // a scrape the CPU of printing every metric.
    // Every GraphQL request pays its 1 as it comes, before the response cache may answer it.
    onRequest({ request, url, serverContext, endResponse, fetchAPI }) {
      const graphql = url.pathname === options.graphqlEndpoint;
      if (graphql && paid.has(request)) return;
      const cost = graphql ? 1 : ENDPOINT_COSTS[url.pathname];
      if (cost === undefined) return;
      const req = (serverContext as Partial<CallerContext>).req;
      const buckets = bucketsOf({ request, req }, config);
      const decided = (decision: RateLimitDecision) => {
        if (graphql) paid.set(request, { buckets, newDocument: false, decision });
        if (!decision.allowed) endResponse(refusedResponse(fetchAPI, cost, graphql ? "this request" : url.pathname, decision));
      };
      // The listener's cache-hit lane took the 1 already, and was refused (src/server/cache-hit-lane.ts).
      const decision = (graphql ? (req as PaidIncoming | undefined)?.paidAsItCame : undefined) ?? limiter.takeSoon(buckets, cost);
      if (decision instanceof Promise) return decision.then(decided);
      decided(decision);
    },
    onParams({ params, request, context, setResult }) {
      const refused = payForReading(request, (context as Partial<CallerContext>).req, params);
      if (refused instanceof Promise) return refused.then((result) => result && setResult(result));
      if (refused) setResult(refused);
    },
    onResponse({ request, response, serverContext }) {
      const decision = paid.get(request)?.decision;
      if (decision !== undefined) {
        response.headers.set("ratelimit-limit", String(decision.burst));
        response.headers.set("ratelimit-remaining", String(remainingOf(decision)));
      }
      if (response.status !== 429) return;
      return holdRefusal(
        (serverContext as Partial<CallerContext> | undefined)?.req,
        Number(response.headers.get("retry-after") ?? 1),
      );
    },
  };

  const beforeExecution: Plugin<GatewayContext> = {
    onExecute({ args, setResultAndStopExecution }) {
      const context = args.contextValue as CallerContext & GatewayContext;
      const hooks = (admitted: Admitted | undefined) =>
        admitted && {
          // A stream of incremental results settles when it ends; a single result at once.
          onExecuteDone: ({ result }: { result: unknown }) =>
            isAsyncIterable(result) ? { onEnd: () => void settle(context, admitted) } : settle(context, admitted),
        };
      const admission = admit(args, setResultAndStopExecution);
      return admission instanceof Promise ? admission.then(hooks) : hooks(admission);
    },
    async onSubscribe({ args, setResultAndStopExecution, extendContext }) {
      const context = args.contextValue as CallerContext & GatewayContext;
      const buckets = paid.get(context.request)?.buckets ?? bucketsOf(context, config);
      const release = slots.hold(buckets.map(({ name }) => name));
      if (!release) return setResultAndStopExecution({ errors: [tooManyStreams(config.subscriptionsPerCaller)] });
      const admitted = await admit(args, setResultAndStopExecution);
      if (!admitted) return release();
      const liveCaller = buckets.find(({ name }) => name.startsWith("address:"))?.name ?? buckets[0]!.name;
      extendContext({ chargeRead: chargeRead(buckets), liveCaller });
      return {
        onSubscribeResult({ result }) {
          // A stream holds its slot until it ends, or its client leaves; anything else ends at once.
          if (!(Symbol.asyncIterator in result)) {
            release();
            return void settle(context, admitted);
          }
          // Each event is settled before it is sent: what its selection fetched is paid for.
          return { onNext: () => settle(context, admitted), onEnd: release };
        },
      };
    },
  };

  function carryPayment(carrier: Request, operation: Request): void {
    const carried = paid.get(carrier);
    if (carried) paid.set(operation, { ...carried, newDocument: false });
  }

  /**
   * A refusal read and parsed costs more than one refused unread: held as long, so that a caller
   * who sends what it can never pay for (a query beyond what its bucket holds) is answered once
   * per connection per hold too. Over HTTP only: a WebSocket's operations have their own refusals
   * (src/server/websocket-frames.ts).
   */
  function holdRefusal(req: CallerContext["req"], retryAfterSeconds: number): Promise<void> | undefined {
    const socket = req?.socket;
    if (!(socket instanceof Socket)) return;
    return options.refusalHolds.wait(socket, retryAfterSeconds * 1_000);
  }

  const lane: LanePayments = {
    paidAsItCame: (operation, req, decision) =>
      paid.set(operation, { buckets: bucketsOfIncoming(req, config), newDocument: false, decision }),
    lastDecision: (operation) => paid.get(operation)?.decision,
    holdRefusal,
  };

  return { beforeParsing, beforeExecution, payInAll, carryPayment, lane };
}
