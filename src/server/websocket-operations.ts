/**
 * A graphql-ws `subscribe` run as the HTTP request it stands for. The payload becomes a JSON POST
 * to the GraphQL path, with the upgrade's caller headers and the socket's API key, handed to
 * Yoga's whole pipeline (`yoga.handleRequest`) with the socket's address as its server context:
 * so it meets every rule an HTTP request meets. What comes back is turned into what graphql-ws
 * sends: the errors of a refusal (an `error` message), the single answer as the pipeline
 * formatted it (a `next`, with the caller's budget in `extensions.rateLimit`), or the stream the
 * pipeline handed over (src/plugins/socket-streams.ts).
 */
import type { IncomingMessage } from "node:http";
import {
  GraphQLError,
  parse,
  type ExecutionArgs,
  type ExecutionResult,
  type FormattedExecutionResult,
  type GraphQLFormattedError,
} from "graphql";
import type { OperationResult, SubscribePayload } from "graphql-ws";
import type { Gateway } from "../gateway.ts";
import { clientErrors } from "../plugins/socket-streams.ts";
import { API_KEY_HEADER } from "../upstream/call-options.ts";

/** Headers of the upgrade request an operation's Request carries: who the caller is, and its request id. */
const CARRIED_HEADERS = ["x-forwarded-for", "x-request-id", "user-agent"] as const;
/** graphql-ws picks `execute` or `subscribe` from a document: any one-operation document does, both return what the pipeline made. */
const PLACEHOLDER_DOCUMENT = parse("{ __typename }");
/** The part of an operation's server context that says it came over a WebSocket. */
const WEBSOCKET_TRANSPORT = { transport: "websocket" } as const;

/** Who sends the operation: the upgrade request, the socket's key and its address as it was at the upgrade. */
export interface SocketOperationCaller {
  upgrade: IncomingMessage;
  apiKey: string | undefined;
  remoteAddress: string | undefined;
  /** Told what the caller's budget holds once the operation was charged (0 when it was refused for its budget). */
  charged(remaining: number): void;
}

/** What a subscribe turned into: the pipeline's single answer (already formatted) or its stream. */
interface Produced {
  single?: FormattedExecutionResult;
  stream?: AsyncIterable<ExecutionResult>;
}

/** The JSON body of a GraphQL POST for a subscribe payload: what an HTTP client would have sent. */
function operationBody(payload: SubscribePayload & { documentId?: unknown }): string {
  const { query, variables, operationName, extensions, documentId } = payload;
  return JSON.stringify({
    ...(query ? { query } : {}),
    ...(variables ? { variables } : {}),
    ...(operationName ? { operationName } : {}),
    ...(extensions ? { extensions } : {}),
    ...(documentId !== undefined ? { documentId } : {}),
  });
}

export class SocketOperations {
  /** The errors of a refused operation as the pipeline formatted them, by the placeholder errors graphql-ws is given. */
  private readonly refusals = new WeakMap<GraphQLError, GraphQLFormattedError>();
  /** Single results already formatted by the pipeline, sent as they are. */
  private readonly answers = new WeakSet<object>();

  constructor(
    private readonly gateway: Gateway,
    private readonly path: string,
  ) {}

  /** Runs a subscribe payload through the pipeline: what graphql-ws executes, or the errors that refuse it. */
  async run(caller: SocketOperationCaller, payload: SubscribePayload): Promise<ExecutionArgs | GraphQLError[]> {
    const { gateway } = this;
    const headers = new Headers({
      "content-type": "application/json",
      accept: "application/graphql-response+json, application/json",
    });
    for (const name of CARRIED_HEADERS) {
      const value = caller.upgrade.headers[name];
      if (typeof value === "string") headers.set(name, value);
      else if (Array.isArray(value)) headers.set(name, value.join(","));
    }
    if (caller.apiKey) headers.set(API_KEY_HEADER, caller.apiKey);
    const body = operationBody(payload);
    headers.set("content-length", String(Buffer.byteLength(body)));
    const request = new gateway.yoga.fetchAPI.Request(`http://gateway${this.path}`, { method: "POST", headers, body });
    gateway.sockets.streams.expect(request);
    // Two parts, which the server adapter copies into a new plain object. Given one, it would make
    // that object the prototype of the context: each operation's context then has shapes of its
    // own (about 15 per subscription, held for its life), and every resolver reading it misses
    // its inline caches.
    const handleRequest = gateway.yoga.handleRequest as (request: Request, ...serverContext: object[]) => Promise<Response>;
    const response = await handleRequest(
      request,
      { req: { socket: { remoteAddress: caller.remoteAddress }, headers: caller.upgrade.headers } },
      WEBSOCKET_TRANSPORT,
    );
    const remainingHeader = response.headers.get("ratelimit-remaining");
    if (remainingHeader !== null) caller.charged(Number(remainingHeader));
    else if (response.status === 429) caller.charged(0);
    const stream = gateway.sockets.streams.take(request);
    if (stream) return this.executionArgs({ stream });
    let answer: FormattedExecutionResult;
    try {
      answer = (await response.json()) as FormattedExecutionResult;
    } catch {
      answer = { errors: [{ message: "Unexpected error.", extensions: { code: "INTERNAL_SERVER_ERROR" } }] };
    }
    if (!("data" in answer)) {
      return clientErrors(answer.errors ?? []).map((error) => {
        const placeholder = new GraphQLError(error.message);
        this.refusals.set(placeholder, error);
        return placeholder;
      });
    }
    // The socket's RateLimit-Limit and RateLimit-Remaining headers.
    const limit = response.headers.get("ratelimit-limit");
    if (limit !== null && remainingHeader !== null) {
      answer = {
        ...answer,
        extensions: { ...answer.extensions, rateLimit: { limit: Number(limit), remaining: Number(remainingHeader) } },
      };
    }
    this.answers.add(answer);
    return this.executionArgs({ single: answer });
  }

  /** graphql-ws's `execute` and `subscribe`: what the pipeline made, single answer or stream. */
  readonly result = (args: ExecutionArgs): OperationResult => {
    const produced = args.rootValue as Produced;
    return (produced.single as ExecutionResult | undefined) ?? produced.stream!;
  };

  /** graphql-ws's `onNext`: a single answer goes as the pipeline formatted it; a stream's events without their HTTP extensions. */
  readonly next = (result: ExecutionResult | FormattedExecutionResult): ExecutionResult | undefined => {
    if (this.answers.has(result)) return result as ExecutionResult;
    return result.errors ? ({ ...result, errors: clientErrors(result.errors) } as unknown as ExecutionResult) : undefined;
  };

  /** graphql-ws's `onError`: a refusal's errors as the pipeline formatted them. */
  readonly errors = (errors: readonly GraphQLError[]): GraphQLFormattedError[] =>
    errors.map((error) => this.refusals.get(error) ?? clientErrors([error])[0]!);

  private executionArgs(produced: Produced): ExecutionArgs {
    return { schema: this.gateway.yoga.getEnveloped().schema, document: PLACEHOLDER_DOCUMENT, rootValue: produced };
  }
}
