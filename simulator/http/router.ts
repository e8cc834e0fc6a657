import type { IncomingHttpHeaders } from "node:http";
import { LRUCache } from "lru-cache";
import { loadContract, type OpenApiDocument, type ServiceName } from "./contract.ts";
import { OperationParameters } from "./parameters.ts";
import type { SuccessBody } from "../../src/upstream/contract-client.ts";

export type HttpMethod = "GET" | "POST";

export interface RouteRequest<PathParams, Query> {
  path: PathParams;
  query: Query;
  headers: IncomingHttpHeaders;
  /**
   * Identifies the query for page tokens: the route, its path parameters and
   * every query parameter except pageToken and pageSize.
   */
  pageScope: string;
  /** The query as sent, before the contract's defaults fill `query`: tells an absent parameter from its default. */
  sentQuery: URLSearchParams;
  /** The parsed JSON body of a POST; undefined for a GET. Routes check its shape themselves. */
  body: unknown;
}

/** A route as the router stores it, before the contract's types are erased. */
export interface RouteDefinition {
  method: HttpMethod;
  template: string;
  handle(request: RouteRequest<unknown, unknown>): unknown;
}

// Types of the contract's operations, from the generated `paths` of one service.
type OperationAt<Paths, P extends keyof Paths, M extends HttpMethod> = Paths[P] extends { [K in Lowercase<M>]: infer Operation }
  ? Operation
  : never;
type Present<T> = [NonNullable<T>] extends [never] ? Record<string, never> : NonNullable<T>;
type PathParamsOf<Operation> = Operation extends { parameters: { path?: infer P } } ? Present<P> : never;
type QueryOf<Operation> = Operation extends { parameters: { query?: infer Q } } ? Present<Q> : never;

export type RouteHandler<Operation> = (
  request: RouteRequest<PathParamsOf<Operation>, QueryOf<Operation>>,
) => SuccessBody<Operation> | Promise<SuccessBody<Operation>>;

/**
 * Defines routes of one service, typed by its generated contract: the
 * template must be a path of the contract, and the handler receives the
 * operation's parameters and must return its success body.
 */
export function routeDefiner<Paths>() {
  return <P extends keyof Paths & string, M extends HttpMethod>(
    method: M,
    template: P,
    handle: RouteHandler<OperationAt<Paths, P, M>>,
  ): RouteDefinition => ({
    method,
    template,
    // The router validates parameters against the same contract before calling the handler.
    handle: handle as RouteDefinition["handle"],
  });
}

export interface Route extends RouteDefinition {
  /** The counter key: the method and the contract's path template, e.g. "GET /v1/chains/{chainId}". */
  key: string;
  successStatus: number;
  parameters: OperationParameters;
}

export type RouteMatch = { route: Route; pathParams: Record<string, string> } | { route: undefined; pathParams?: undefined };

interface CompiledRoute {
  route: Route;
  pattern: RegExp;
  paramNames: string[];
}

/** Paths whose match is remembered; beyond this the least recently used is forgotten. */
const REMEMBERED_MATCHES = 10_000;

/** The routes of one service, matched by method and path. */
export class RouteTable {
  readonly routes: readonly Route[];
  private readonly compiled: CompiledRoute[];
  private readonly matched = new LRUCache<string, RouteMatch>({ max: REMEMBERED_MATCHES });

  constructor(
    readonly service: ServiceName,
    definitions: readonly RouteDefinition[],
  ) {
    const document = loadContract(service);
    this.compiled = definitions
      .map((definition) => compileRoute(document, definition))
      // Where two templates could match one path, the one with more literal text wins.
      .sort((a, b) => literalLength(b.route.template) - literalLength(a.route.template));
    this.routes = this.compiled.map(({ route }) => route);
  }

  /** Matches by method and path, remembered: a benchmark sends the same few paths again and again. */
  match(method: string, pathname: string): RouteMatch {
    const key = `${method} ${pathname}`;
    let found = this.matched.get(key);
    if (found === undefined) {
      found = this.matchRoutes(method, pathname);
      this.matched.set(key, found);
    }
    return found;
  }

  private matchRoutes(method: string, pathname: string): RouteMatch {
    const path = pathname.length > 1 && pathname.endsWith("/") ? pathname.slice(0, -1) : pathname;
    for (const { route, pattern, paramNames } of this.compiled) {
      if (route.method !== method) continue;
      const found = pattern.exec(path);
      if (found === null) continue;
      const pathParams: Record<string, string> = {};
      try {
        paramNames.forEach((name, index) => {
          pathParams[name] = decodeURIComponent(found[index + 1]!);
        });
      } catch {
        continue;
      }
      return { route, pathParams };
    }
    return { route: undefined };
  }
}

function compileRoute(document: OpenApiDocument, definition: RouteDefinition): CompiledRoute {
  const operation = document.paths[definition.template]?.[definition.method.toLowerCase()];
  if (operation === undefined) {
    throw new Error(`${definition.method} ${definition.template} is not an operation of the contract`);
  }
  const successStatus = Object.keys(operation.responses).find((status) => /^2\d\d$/.test(status));
  if (successStatus === undefined) {
    throw new Error(`${definition.method} ${definition.template} has no success response in the contract`);
  }
  const paramNames: string[] = [];
  const source = definition.template
    .split(/(\{[^}]+\})/)
    .map((part) => {
      const param = /^\{([^}]+)\}$/.exec(part);
      if (param === null) return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      paramNames.push(param[1]!);
      return "([^/]+?)";
    })
    .join("");
  return {
    route: {
      ...definition,
      key: `${definition.method} ${definition.template}`,
      successStatus: Number(successStatus),
      parameters: new OperationParameters(document, operation.parameters ?? []),
    },
    pattern: new RegExp(`^${source}$`),
    paramNames,
  };
}

function literalLength(template: string): number {
  return template.replace(/\{[^}]+\}/g, "").length;
}
