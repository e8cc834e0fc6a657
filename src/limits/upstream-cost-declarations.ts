/**
 * What resolving a field costs upstream, declared on the field itself, next to its resolver
 * (`extensions: upstreamCalls(…)`, an `UpstreamCost`). Every field whose resolver makes an
 * upstream call declares it; the estimate of an operation's calls (src/limits/upstream-calls.ts)
 * reads it from the schema it is given, and the schema build fails for a field that can call
 * upstream and declares nothing (`assertUpstreamCostsDeclared`).
 */
import {
  getNamedType,
  isAbstractType,
  isCompositeType,
  isObjectType,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
} from "graphql";
import { ROUTES, type PagedRoute, type Route } from "../upstream/routes.ts";

/** Records that items of one page share, fetched once each by the request's loaders. */
export type Pool = "evm block" | "primary-network transaction" | "primary-network block";

/** A record that several fields share and that one call answers. */
export type SharedRecord = "chain list" | "complete transaction" | "creation transaction" | "consuming transaction";

/** What resolving a field costs upstream, declared on the field (`extensions: upstreamCalls(…)`). */
export interface UpstreamCost {
  /** Calls per resolution of the field, that is per item of the lists around it, beside a shared record's. */
  calls: number | ((args: Record<string, unknown>, outerArgs: Record<string, unknown>) => number);
  /** A connection over upstream pages: `first`, else this default of its resolver, is how many items it holds. */
  defaultFirst?: number;
  /** The calls are one look-up per item of the list the field returns. */
  callsPerItem?: boolean;
  /** Answered by a record the request loads once for every field that asks it. */
  oncePerOperation?: "chain list";
  /** Needs a record of the parent that one call loads for all the fields that name it. */
  sharedPerObject?: Exclude<SharedRecord, "chain list">;
  /**
   * The field's call is a link to a record that items of a page share: across a page's items
   * the links of one pool reach `SHARED_RECORDS_PER_ITEM` distinct records per item.
   */
  pool?: Pool;
  /** The link is there on this share of a page's items only (others answer null without a call). */
  presentOnShare?: number;
  /** A connection whose page the data keeps shorter than `first`: the items it is expected to hold. */
  expectedItems?: number;
  /** The object the field returns already holds this shared record. */
  holds?: "complete transaction";
  /** No call when nothing but these fields is selected under it: the parent already tells them. */
  freeWhenSelectingOnly?: ReadonlySet<string>;
  /** CPU work per resolution, counted in upstream calls. */
  cpu?: number;
  /**
   * A look-up of one record through a request loader, keyed by the parent and the arguments: the
   * same look-up twice under the same parent (as the document shows it) is one call.
   */
  loaderKeyed?: boolean;
  /**
   * No call when the object was listed by one of these fields (through its connection): the
   * record looked up is the one the list was read from, which the request already holds.
   */
  heldWhenListedBy?: ReadonlySet<string>;
  /** The list is the held chain list, filtered by the field's `network` and `feature`. */
  listsChains?: boolean;
  /**
   * At most this many calls per list, when the object was listed by one of these fields: "chain"
   * for one per chain the list's `network` covers (counted in the held chain list).
   */
  atMostPerList?: Readonly<Record<string, number | "chain">>;
  /**
   * A list of objects of several types, each looked up by a key the arguments give
   * (`Query._entities`): the distinct look-ups of each type and what one costs. The items below
   * are walked type by type, each type as many times as it has look-ups.
   */
  lookups?: (args: Record<string, unknown>) => EntityLookups;
}

/** The look-ups a list of several types makes: per type, how many distinct ones and what one costs. */
export type EntityLookups = ReadonlyArray<{ type: string; count: number; cost: UpstreamCost }>;

/** Declared by a field whose resolver takes the request context but makes no upstream call. */
export const NO_UPSTREAM_CALL = "no upstream call";

/** An interface's field whose cost differs by the type implementing it: a cost per implementation. */
interface CostByImplementation {
  readonly byImplementation: Readonly<Record<string, UpstreamCost>>;
}

export type UpstreamCostDeclaration = UpstreamCost | typeof NO_UPSTREAM_CALL | CostByImplementation;

/** The field `extensions` key the estimate reads a field's cost from. */
const EXTENSION = "upstreamCalls";

/** A field's `extensions` declaring what resolving it costs upstream: `extensions: upstreamCalls(connectionCost(ROUTES.x))`. */
export function upstreamCalls(declaration: UpstreamCostDeclaration): { readonly [EXTENSION]: UpstreamCostDeclaration } {
  return { [EXTENSION]: declaration };
}

/** An interface field's cost on each type implementing it (every implementation must be named). */
export function byImplementation(costs: Readonly<Record<string, UpstreamCost>>): CostByImplementation {
  return { byImplementation: costs };
}

type Rules = Omit<UpstreamCost, "calls" | "defaultFirst">;

/** One call of `route` per resolution, under `rules`. */
export function callCost(route: Route, rules: Rules = {}): UpstreamCost {
  return { calls: route.cost, ...rules };
}

/** One look-up of a record of `route` through a request loader (the same look-up twice under a parent is one call). */
export function lookupCost(route: Route): UpstreamCost {
  return callCost(route, { loaderKeyed: true });
}

/** A connection over `route`: one call per page, of `first` items, else the route's default. */
export function connectionCost(route: PagedRoute, rules: Rules = {}): UpstreamCost {
  return { calls: route.cost, defaultFirst: route.page.default, ...rules };
}

/** A chain by id, or the list: the held chain list answers every one, one call at most per operation. */
export const CHAIN_LIST_LOOKUP: UpstreamCost = callCost(ROUTES.chains, { oncePerOperation: "chain list" });

/** A field of a transaction's complete view, which one call loads for all the fields that need it. */
export const FROM_COMPLETE_VIEW: UpstreamCost = { calls: 0, sharedPerObject: "complete transaction" };

/**
 * The cost `field` declares on `type`: an implementation's own for an interface's field declared
 * by implementation; undefined for a field that calls nothing upstream.
 */
export function declaredCost(type: GraphQLObjectType, field: GraphQLField<unknown, unknown>): UpstreamCost | undefined {
  const declaration = field.extensions[EXTENSION] as UpstreamCostDeclaration | undefined;
  if (declaration === undefined || declaration === NO_UPSTREAM_CALL) return undefined;
  return "byImplementation" in declaration ? declaration.byImplementation[type.name] : declaration;
}

/** The resolver or subscriber Pothos was given for a field (the built field's may be wrapped), else the field's own. */
function definedResolvers(field: GraphQLField<unknown, unknown>): unknown[] {
  const options = field.extensions.pothosOptions as { resolve?: unknown; subscribe?: unknown } | undefined;
  return [options?.resolve ?? field.resolve, options?.subscribe ?? field.subscribe];
}

function isValidDeclaration(declaration: unknown, type: GraphQLObjectType): boolean {
  if (declaration === NO_UPSTREAM_CALL) return true;
  if (typeof declaration !== "object" || declaration === null) return false;
  if ("byImplementation" in declaration) {
    return isValidDeclaration((declaration as CostByImplementation).byImplementation[type.name] ?? null, type);
  }
  const calls = (declaration as { calls?: unknown }).calls;
  return typeof calls === "number" || typeof calls === "function";
}

/**
 * Throws at schema build unless every field that can call upstream declares what it costs.
 * A field can when its resolver (or subscriber) takes the request context, the only way to the
 * upstream clients and the request's loaders: `(parent, args, context) => …`. It then declares
 * `extensions: upstreamCalls(…)`, `NO_UPSTREAM_CALL` when it calls nothing. A Node's `id`, which
 * the relay plugin encodes from the parent, never calls upstream.
 */
export function assertUpstreamCostsDeclared(schema: GraphQLSchema): void {
  const undeclared: string[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith("__")) continue;
    const isNode = type.getInterfaces().some((face) => face.name === "Node");
    for (const field of Object.values(type.getFields())) {
      const declaration = field.extensions[EXTENSION];
      const takesContext = definedResolvers(field).some((resolver) => typeof resolver === "function" && resolver.length >= 3);
      const mustDeclare = takesContext && !(isNode && field.name === "id");
      if ((mustDeclare || declaration !== undefined) && !isValidDeclaration(declaration, type)) {
        undeclared.push(`${type.name}.${field.name}`);
      }
    }
  }
  if (undeclared.length > 0) {
    throw new Error(
      `fields that can call upstream without a declared cost (extensions: upstreamCalls(…), src/limits/upstream-cost-declarations.ts): ${undeclared.join(", ")}`,
    );
  }
}

const reachingBySchema = new WeakMap<GraphQLSchema, ReadonlySet<string>>();

/** The composite types under which some field calls upstream; the estimate walks no others. */
export function typesReachingUpstream(schema: GraphQLSchema): ReadonlySet<string> {
  const known = reachingBySchema.get(schema);
  if (known) return known;
  const reaching = new Set<string>();
  const composites = Object.values(schema.getTypeMap()).filter(isCompositeType);
  for (let grew = true; grew;) {
    grew = false;
    for (const type of composites) {
      if (reaching.has(type.name)) continue;
      const reaches = isAbstractType(type)
        ? schema.getPossibleTypes(type).some((possible) => reaching.has(possible.name))
        : Object.values(type.getFields()).some(
            (field) => declaredCost(type, field) !== undefined || reaching.has(getNamedType(field.type).name),
          );
      if (reaches) {
        reaching.add(type.name);
        grew = true;
      }
    }
  }
  reachingBySchema.set(schema, reaching);
  return reaching;
}
