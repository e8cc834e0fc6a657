/**
 * A client typed by the contract: routes are the contract's path templates, and their
 * parameters and 2xx bodies are the types openapi-typescript generated from it.
 */
import type { CallOptions } from "./call-options.ts";
import type { UpstreamService } from "./http.ts";
import type { QueryValue } from "./request-target.ts";

type Method = "get" | "post";

/** The routes of `Paths` that have method `M`. */
export type RoutesWith<Paths, M extends Method> = {
  [P in keyof Paths]: Paths[P] extends { [K in M]: infer Op } ? ([Op] extends [never | undefined] ? never : P) : never;
}[keyof Paths] &
  string;

type Operation<Paths, P extends keyof Paths, M extends Method> = Paths[P] extends { [K in M]: infer Op } ? Op : never;

type JsonContent<R> = R extends { content: { "application/json": infer Body } } ? Body : never;

/** The JSON body of the operation's success status (200 or 201). */
export type SuccessBody<Op> = Op extends { responses: infer R }
  ? 200 extends keyof R
    ? JsonContent<R[200]>
    : 201 extends keyof R
      ? JsonContent<R[201]>
      : never
  : never;

type QueryOf<Op> = Op extends { parameters: { query?: infer Q } } ? ([Q] extends [never | undefined] ? undefined : Q) : undefined;
type PathOf<Op> = Op extends { parameters: { path: infer Pp } } ? ([Pp] extends [never | undefined] ? undefined : Pp) : undefined;
type BodyOf<Op> = Op extends { requestBody?: { content: { "application/json": infer B } } } ? B : never;

export interface CallInput<Op> {
  params?: PathOf<Op>;
  query?: QueryOf<Op>;
}

export class ContractClient<Paths> {
  constructor(readonly service: UpstreamService) {}

  get<P extends RoutesWith<Paths, "get">>(
    route: P,
    input: CallInput<Operation<Paths, P, "get">>,
    options?: CallOptions,
  ): Promise<SuccessBody<Operation<Paths, P, "get">>> {
    return this.service.get(
      {
        route,
        params: input.params as Record<string, string | number> | undefined,
        query: input.query as Record<string, QueryValue> | undefined,
      },
      options,
    );
  }

  post<P extends RoutesWith<Paths, "post">>(
    route: P,
    input: CallInput<Operation<Paths, P, "post">> & { body: BodyOf<Operation<Paths, P, "post">> },
    options?: CallOptions,
  ): Promise<SuccessBody<Operation<Paths, P, "post">>> {
    return this.service.post(
      {
        route,
        params: input.params as Record<string, string | number> | undefined,
        query: input.query as Record<string, QueryValue> | undefined,
      },
      input.body,
      options,
    );
  }
}
