/**
 * How many upstream HTTP calls an operation will make when nothing is cached, estimated before it
 * runs from the document alone: what the rate limiter charges a caller.
 *
 * Every field whose resolver makes an upstream call declares what it costs on the field itself,
 * next to its resolver (`extensions: upstreamCalls(…)`, an `UpstreamCost`); the estimate reads it
 * from the schema it is given, and the schema build fails for a field that can call upstream and
 * declares nothing (`assertUpstreamCostsDeclared`). A field costs its calls times the product of
 * the sizes of the lists around it: a connection's `first` (or the default its resolver uses,
 * its route's), a plain list's assumed length. Look-ups that a
 * request's DataLoader answers with one call however many items ask (the chain list) cost once per
 * operation; the fields that share a transaction's complete view cost one call per transaction.
 *
 * Beside the document the estimate takes what the gateway knows (`KnownFacts`, passed in by the
 * caller, never kept here): the chain list it holds, whose size `chains { … }` multiplies by (per
 * network and feature when `chains(network:, feature:)` filters it). Without it, the chain list
 * is assumed `ASSUMED_CHAIN_COUNT` long, and the estimate says it would know better with it
 * (`wantsChainList`): the rate limiter then has the list fetched, the call the operation makes
 * first anyway, and estimates again.
 *
 * What the document shows the request's loaders answer is counted once: the same look-up of a
 * record by the same arguments under the same parent (`chain(id: "43114") { block(id: "1") }`
 * twice is one block call), a transaction's block where the transaction was listed by that block,
 * `first: 0` (no call at all), and a link whose parent holds every field asked (src/execution/selection.ts).
 *
 * The estimate is what a cold run (empty caches) is expected to make, not its worst case: exact
 * for the common shapes, and where the document cannot tell, what the data typically holds. A
 * plain list the upstream does not page holds `LIST_LENGTHS` (else `ASSUMED_LIST_LENGTH`) items;
 * links from a page's items to records the items share (an address's transactions to their
 * blocks, UTXOs to the transactions that created and spent them) reach `SHARED_RECORDS_PER_ITEM`
 * distinct records per item; a link only some transaction types have is there on
 * `TYPE_SPECIFIC_LINK_SHARE` of a page. Each rule says in its comment what it was measured on.
 * It does not count upstream retries, a chain id the chain list lacks, or a Warp verification
 * whose subnet has more than 100 validators. The rate limiter charges the estimate before the
 * operation runs and settles afterwards: the calls it really made beyond the estimate are taken
 * then (src/plugins/rate-limit.ts), so an estimate below the real calls never buys calls unpaid, and one
 * above them is what the caller pays (no refund). The estimate stays within 1.5 × the cold calls
 * of every bench and test operation (test/cost-budget.test.ts).
 *
 * Beside the calls it estimates the CPU an operation takes where that is more than serving
 * fields: each `WarpMessage.verification` counts as `WARP_VERIFICATION_COST` calls, and an
 * introspection (`__schema`, `__type`) 1 and 1 per `INTROSPECTION_VALUES_PER_UNIT` values of its answer
 * (src/limits/introspection-cost.ts).
 */
import {
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  getNamedType,
  getNullableType,
  getOperationAST,
  isAbstractType,
  isCompositeType,
  isListType,
  isObjectType,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type SelectionSetNode,
} from "graphql";
import { getArgumentValues, getDirectiveValues, getVariableValues } from "graphql/execution/values.js";
import { pagesToRead } from "../execution/pagination.ts";
import { selectsOnlyFrom } from "../execution/selection.ts";
import { introspectionCost } from "./introspection-cost.ts";
import { ROUTES, type PagedRoute, type Route } from "../upstream/routes.ts";
import type { ChainInfo } from "../upstream/types.ts";

/**
 * What a plain list the upstream does not page is expected to hold: a vertex's parents, a
 * transaction's UTXOs. The data holds 1 to 3 (the simulator's as the service's): lists longer
 * than expected make more calls than estimated, which the settlement after the operation charges.
 */
export const ASSUMED_LIST_LENGTH = 2;

/**
 * Plain lists whose expected length is known better than `ASSUMED_LIST_LENGTH`; an expectation
 * may be fractional (the estimate is rounded up at the end).
 */
export const LIST_LENGTHS: Readonly<Record<string, number>> = {
  // an accepted X-Chain transaction is in one vertex
  "XChainTransaction.vertices": 1,
  // A primary-network block holds one transaction or none (the P-Chain's and the C-Chain's
  // atomic blocks since Banff; 0.4 on average in the simulator); a vertex holds one or a few.
  "PrimaryNetworkBlock.transactions": 1,
  "XChainVertex.transactions": 1,
  // A P-Chain transaction spends 1 or 2 UTXOs (1.4 on average over the latest 30 in the simulator).
  "PChainTransaction.consumedUtxos": 1.5,
  // An L1 validator transaction is about one validator (a conversion names several, and is rare);
  // other transactions have none, which the validator link's share counts.
  "PChainTransaction.l1ValidatorDetails": 1,
};

/**
 * Distinct records per item of a page, for a link from each item to a record that the items
 * share (`UpstreamCost.pool`): the request's loaders fetch each record once however many items
 * name it, whichever of the page's links reaches it. Measured in the simulator: the 25 and 40
 * latest transactions of a busy C-Chain address lie in 9 and 14 blocks; 120 P-Chain UTXOs of a
 * wallet were created and spent by 75 transactions in 75 blocks, 68 X-Chain UTXOs by 50
 * transactions (a transaction creates several outputs for the address, payment and change, and
 * the one that spends a UTXO creates the next). Half, rounded up, is near the measure or above
 * it; a page whose items share less pays the rest when the operation is settled.
 */
export const SHARED_RECORDS_PER_ITEM = 0.5;

/**
 * The share of a page's P-Chain transactions that have a link only one family of transaction
 * types has (a staking transaction's reward, a reward's staking transaction, an L1 validator
 * transaction's validator): of the simulator's latest 30, 7 were rewards, 7 stakings not yet
 * rewarded, 2 L1 validator transactions. A quarter, rounded up.
 */
export const TYPE_SPECIFIC_LINK_SHARE = 0.25;

/** Records that items of one page share, fetched once each by the request's loaders. */
type Pool = "evm block" | "primary-network transaction" | "primary-network block";

/**
 * How many chains `chains { … }` is assumed to list while the gateway holds no chain list (every
 * chain the Data API indexes, of both networks, with room to grow).
 */
export const ASSUMED_CHAIN_COUNT = 100;

/** What a chain record tells the estimate: whether `chains(network:, feature:)` lists it. */
export type KnownChain = Pick<ChainInfo, "chainId" | "isTestnet" | "enabledFeatures">;

/** What the gateway knows beside the document, handed to each estimate. */
export interface KnownFacts {
  /** The chain list (`GET /v1/chains` without filters) when the gateway holds it. */
  readonly chains?: readonly KnownChain[] | undefined;
}

export const NO_FACTS: KnownFacts = {};

/**
 * The CPU of one Warp signature check, in upstream calls: decompressing and checking the
 * validators' BLS keys (some 2.5 ms each), hashing the message to the curve and two pairings
 * (some 50 ms in all on one core). At the default 100 a second, a caller may have some 10 checks
 * a second made, half a core; a check already made is remembered, but the estimate cannot know
 * that and charges it again.
 */
export const WARP_VERIFICATION_COST = 10;

/** A record that several fields share and that one call answers. */
type SharedRecord = "chain list" | "complete transaction" | "creation transaction" | "consuming transaction";

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
}

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
      `fields that can call upstream without a declared cost (extensions: upstreamCalls(…), src/limits/upstream-calls.ts): ${undeclared.join(", ")}`,
    );
  }
}

type Fragments = Readonly<Record<string, FragmentDefinitionNode | undefined>>;

/** The pool a shared record of each item belongs to, where items of a page share it. */
const POOL_OF_SHARED_RECORD: Readonly<Partial<Record<SharedRecord, Pool>>> = {
  "creation transaction": "primary-network transaction",
  "consuming transaction": "primary-network transaction",
};

/**
 * The distinct records `links` links of one pool reach from `items` items: one per link for a
 * single item, `SHARED_RECORDS_PER_ITEM` per item for a page (however many of its links reach
 * the pool), never more than one per link and item.
 */
function distinctRecords(items: number, links: number): number {
  return Math.min(links * items, Math.max(links, Math.ceil(items * SHARED_RECORDS_PER_ITEM)));
}

/** The calls one more link of `pool` adds for `items` items, counting it in `pools`. */
function pooledLinks(pools: Map<Pool, number>, pool: Pool, items: number): number {
  const links = pools.get(pool) ?? 0;
  pools.set(pool, links + 1);
  return distinctRecords(items, links + 1) - distinctRecords(items, links);
}

/** The items of a page that have a link present on `share` of them: all of a single one. */
function present(items: number, share: number): number {
  return items <= 1 ? items : Math.ceil(items * share);
}

/** The objects whose fields a field's own selection runs on, as far as calls under them go. */
function childItems(entry: UpstreamCost | undefined, items: number): number {
  if (entry === undefined) return items;
  // The records a pooled link reaches are loaded once each: what is under them is asked once each.
  if (
    entry.pool !== undefined ||
    (entry.sharedPerObject !== undefined && POOL_OF_SHARED_RECORD[entry.sharedPerObject] !== undefined)
  ) {
    return Math.min(items, distinctRecords(items, 1));
  }
  if (entry.presentOnShare !== undefined) return present(items, entry.presentOnShare);
  return items;
}

const NOTHING_HELD: ReadonlySet<SharedRecord> = new Set();

const reachingBySchema = new WeakMap<GraphQLSchema, ReadonlySet<string>>();

/** The composite types under which some field calls upstream; the estimate walks no others. */
function typesReachingUpstream(schema: GraphQLSchema): ReadonlySet<string> {
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

/** Coerced arguments as a key, the same whatever order the document gives them in. */
function argumentsKey(args: Record<string, unknown>): string {
  const names = Object.keys(args).sort();
  return names.length === 0 ? "" : JSON.stringify(names.map((name) => [name, args[name]]));
}

/**
 * Where the objects a selection runs on came from: the field that listed or looked them up
 * (through a connection's edges and nodes), and, for a single object the document names
 * exactly (a root look-up by literal arguments, and the single records under it), a key that
 * tells it from every other object of the operation.
 */
interface Origin {
  listedBy: string | undefined;
  /** The listing field's arguments, how many lists it made, and how long each is. */
  listedWith?: { args: Record<string, unknown>; lists: number; length: number };
  identity: string | undefined;
  /** The arguments of the nearest field above that calls upstream. */
  outerArgs: Record<string, unknown>;
}

const ROOT: Origin = { listedBy: undefined, identity: "", outerArgs: {} };

/** One walk over an operation, with its coerced variables and the once-per-operation records it reached. */
class Estimate {
  readonly onceReached = new Set<SharedRecord>();
  /** The CPU of the fields walked, in upstream calls. */
  cpu = 0;
  /** The estimate assumed the chain list's length: with the list in hand it would be tighter. */
  wantsChainList = false;
  /** The look-ups of loader-keyed records made so far, by parent and arguments. */
  private lookups = new Set<string>();
  private readonly reaching: ReadonlySet<string>;

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly fragments: Fragments,
    private readonly variables: Record<string, unknown>,
    private readonly facts: KnownFacts,
  ) {
    this.reaching = typesReachingUpstream(schema);
  }

  /** Calls under selection sets on `type`: for an abstract type, the costliest type it may be. */
  selection(
    type: GraphQLCompositeType,
    selectionSets: readonly SelectionSetNode[],
    items: number,
    held: ReadonlySet<SharedRecord>,
    origin: Origin,
  ): number {
    if (!isAbstractType(type)) return isObjectType(type) ? this.object(type, selectionSets, items, held, origin) : 0;
    // Each type it may be is walked from the look-ups made before it; none of its own are kept
    // for the fields after it, as which type it is only the answer tells.
    const before = this.lookups;
    let most = 0;
    for (const runtimeType of this.schema.getPossibleTypes(type)) {
      this.lookups = new Set(before);
      most = Math.max(most, this.object(runtimeType, selectionSets, items, held, origin));
    }
    this.lookups = before;
    return most;
  }

  private object(
    type: GraphQLObjectType,
    selectionSets: readonly SelectionSetNode[],
    items: number,
    held: ReadonlySet<SharedRecord>,
    origin: Origin,
  ): number {
    const fields = new Map<string, FieldNode[]>();
    for (const selectionSet of selectionSets) this.collect(type, selectionSet, fields, new Set());
    const shared = new Set(held);
    const pools = new Map<Pool, number>();
    const definitions = type.getFields();
    const isConnection = definitions.pageInfo !== undefined;
    let calls = 0;
    for (const nodes of fields.values()) {
      const name = nodes[0]!.name.value;
      const definition = definitions[name];
      const entry = definition && declaredCost(type, definition);
      const named = definition && getNamedType(definition.type);
      const callsBelow = named !== undefined && this.reaching.has(named.name);
      if (!definition || (!entry && !callsBelow)) continue;
      const coordinate = `${type.name}.${name}`;
      let args: Record<string, unknown> = {};
      try {
        args = getArgumentValues(definition, nodes[0]!, this.variables);
      } catch {
        continue; // an argument that does not coerce fails the field before its resolver runs
      }
      const isList = isListType(getNullableType(definition.type));
      let length = 1;
      if (entry?.defaultFirst !== undefined) {
        length = typeof args.first === "number" ? args.first : entry.defaultFirst;
        if (entry.expectedItems !== undefined) length = Math.min(length, entry.expectedItems);
      } else if (entry?.listsChains) length = this.chainCount(args, callsBelow && this.callsUnderOne(named, nodes, origin));
      else if (isList && !(isConnection && (name === "edges" || name === "nodes"))) {
        length = LIST_LENGTHS[coordinate] ?? ASSUMED_LIST_LENGTH;
      }
      // An object reached through a connection's edges and nodes was listed by the connection's field.
      const passesThrough = !entry && (isConnection || name === "node");
      const childOrigin: Origin = {
        listedBy: entry ? coordinate : passesThrough ? origin.listedBy : undefined,
        listedWith: entry ? { args, lists: items, length } : passesThrough ? origin.listedWith : undefined,
        identity:
          !isList && entry?.defaultFirst === undefined && origin.identity !== undefined && items === 1
            ? `${origin.identity}/${coordinate}${argumentsKey(args)}`
            : undefined,
        outerArgs: entry ? args : origin.outerArgs,
      };
      if (entry && items > 0) calls += this.own(entry, args, nodes, items, length, shared, pools, origin, childOrigin.identity);
      if (!callsBelow || !isCompositeType(named) || items * length === 0) continue;
      const childSets = nodes.flatMap((node) => (node.selectionSet ? [node.selectionSet] : []));
      calls += this.selection(
        named,
        childSets,
        childItems(entry, items * length),
        entry?.holds ? new Set([entry.holds]) : NOTHING_HELD,
        childOrigin,
      );
    }
    return calls;
  }

  /** Whether one object of `type` under the field nodes makes calls of its own; the walk leaves no trace. */
  private callsUnderOne(type: GraphQLNamedType, nodes: readonly FieldNode[], origin: Origin): boolean {
    if (!isCompositeType(type)) return false;
    const { cpu, wantsChainList, lookups } = this;
    const onceReached = [...this.onceReached];
    const childSets = nodes.flatMap((node) => (node.selectionSet ? [node.selectionSet] : []));
    this.lookups = new Set(lookups);
    const calls = this.selection(type, childSets, 1, NOTHING_HELD, {
      listedBy: undefined,
      identity: undefined,
      outerArgs: origin.outerArgs,
    });
    this.cpu = cpu;
    this.wantsChainList = wantsChainList;
    this.lookups = lookups;
    this.onceReached.clear();
    for (const record of onceReached) this.onceReached.add(record);
    return calls > 0;
  }

  /** The chains `chains(network:, feature:)` lists: counted in the held list, else assumed. */
  private chainCount(args: Record<string, unknown>, callsBelow: boolean): number {
    const chains = this.facts.chains;
    if (chains === undefined) {
      if (callsBelow) this.wantsChainList = true;
      return ASSUMED_CHAIN_COUNT;
    }
    // The list is had for the estimate: a cold gateway fetches it first, once.
    this.onceReached.add("chain list");
    return countChains(chains, args);
  }

  /** The calls of one field itself, for `items` parent objects. */
  private own(
    entry: UpstreamCost,
    args: Record<string, unknown>,
    nodes: readonly FieldNode[],
    items: number,
    length: number,
    shared: Set<SharedRecord>,
    pools: Map<Pool, number>,
    origin: Origin,
    lookup: string | undefined,
  ): number {
    if (entry.cpu) this.cpu += entry.cpu * items;
    if (entry.defaultFirst !== undefined && length === 0) return 0; // `first: 0` asks nothing upstream
    // A field the parent answers still needs the shared record it is answered from.
    const free = entry.freeWhenSelectingOnly !== undefined && selectsOnlyFrom(nodes, this.fragments, entry.freeWhenSelectingOnly);
    if (free && !entry.sharedPerObject) return 0;
    if (entry.heldWhenListedBy && origin.listedBy !== undefined && entry.heldWhenListedBy.has(origin.listedBy)) return 0;
    if (entry.oncePerOperation) {
      this.onceReached.add(entry.oncePerOperation);
      return 0;
    }
    const perList = entry.atMostPerList && origin.listedBy !== undefined ? entry.atMostPerList[origin.listedBy] : undefined;
    if (perList !== undefined && origin.listedWith !== undefined) {
      const { args: listArgs, lists, length: listLength } = origin.listedWith;
      const most = perList === "chain" ? this.chainCount({ network: listArgs.network }, true) : perList;
      return (
        lists *
        Math.min(listLength, most) *
        (typeof entry.calls === "function" ? entry.calls(args, origin.outerArgs) : entry.calls)
      );
    }
    if (entry.loaderKeyed && lookup !== undefined) {
      if (this.lookups.has(lookup)) return 0;
      this.lookups.add(lookup);
    }
    let calls = free ? 0 : typeof entry.calls === "function" ? entry.calls(args, origin.outerArgs) : entry.calls;
    if (entry.defaultFirst !== undefined) calls *= pagesToRead(args.after as string | null | undefined);
    if (entry.callsPerItem) calls *= length;
    let total: number;
    if (entry.pool !== undefined && calls > 0) total = calls * pooledLinks(pools, entry.pool, items);
    else if (entry.presentOnShare !== undefined) total = calls * present(items, entry.presentOnShare);
    else total = calls * items;
    if (entry.sharedPerObject && !shared.has(entry.sharedPerObject)) {
      shared.add(entry.sharedPerObject);
      const pool = POOL_OF_SHARED_RECORD[entry.sharedPerObject];
      total += pool === undefined ? items : pooledLinks(pools, pool, items);
    }
    return total;
  }

  /** Fields by response key, as execution collects them: fragments that apply to `type`, without the skipped. */
  private collect(
    type: GraphQLObjectType,
    selectionSet: SelectionSetNode,
    into: Map<string, FieldNode[]>,
    visited: Set<string>,
  ): void {
    for (const selection of selectionSet.selections) {
      if (!this.included(selection)) continue;
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        into.set(key, [...(into.get(key) ?? []), selection]);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if (!selection.typeCondition || this.applies(selection.typeCondition.name.value, type))
          this.collect(type, selection.selectionSet, into, visited);
      } else {
        const name = selection.name.value;
        const fragment = this.fragments[name];
        if (visited.has(name) || !fragment || !this.applies(fragment.typeCondition.name.value, type)) continue;
        visited.add(name);
        this.collect(type, fragment.selectionSet, into, visited);
      }
    }
  }

  private included(node: Parameters<typeof getDirectiveValues>[1]): boolean {
    if (!node.directives?.length) return true;
    if (getDirectiveValues(GraphQLSkipDirective, node, this.variables)?.if === true) return false;
    return getDirectiveValues(GraphQLIncludeDirective, node, this.variables)?.if !== false;
  }

  private applies(condition: string, type: GraphQLObjectType): boolean {
    const conditionType = this.schema.getType(condition);
    if (conditionType === type) return true;
    return conditionType !== undefined && isAbstractType(conditionType) && this.schema.isSubType(conditionType, type);
  }
}

/**
 * The upstream calls an operation will make when nothing is cached (see the module's comment);
 * 0 when it cannot run (no such operation, variables that do not coerce).
 */
export function estimateUpstreamCalls(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variableValues: Readonly<Record<string, unknown>> | null | undefined,
  facts: KnownFacts,
): number {
  return estimateCost(schema, document, operationName, variableValues, facts).upstreamCalls;
}

export interface OperationCost {
  upstreamCalls: number;
  /** The CPU it takes beyond serving fields (Warp verifications, introspection), in upstream calls. */
  cpuCost: number;
  /**
   * True when the estimate assumed `ASSUMED_CHAIN_COUNT` chains for want of the chain list: the
   * same estimate with the list in `facts` is tighter (and no less an upper bound).
   */
  wantsChainList: boolean;
}

const NOTHING: OperationCost = { upstreamCalls: 0, cpuCost: 0, wantsChainList: false };

/** The chains of a list that `chains(network:, feature:)` would keep. */
function countChains(chains: readonly KnownChain[], args: Record<string, unknown>): number {
  const network = args.network as string | null | undefined;
  const feature = args.feature as string | null | undefined;
  return chains.filter(
    (chain) =>
      (network == null || chain.isTestnet === (network !== "mainnet")) &&
      (feature == null || (chain.enabledFeatures ?? []).includes(feature as never)),
  ).length;
}

/** The upstream calls and the CPU of an operation, given what the gateway knows; both 0 when it cannot run. */
export function estimateCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variableValues: Readonly<Record<string, unknown>> | null | undefined,
  facts: KnownFacts,
): OperationCost {
  const operation = getOperationAST(document, operationName);
  const root = operation ? schema.getRootType(operation.operation) : undefined;
  if (!operation || !root) return NOTHING;
  const variables = getVariableValues(schema, operation.variableDefinitions ?? [], variableValues ?? {}, { maxErrors: 1 });
  if (variables.errors) return NOTHING;
  const fragments: Record<string, FragmentDefinitionNode> = {};
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
  }
  const estimate = new Estimate(schema, fragments, variables.coerced, facts);
  const calls = estimate.selection(root, [operation.selectionSet], 1, NOTHING_HELD, ROOT) + estimate.onceReached.size;
  // Expected list lengths may be fractional; the estimate is whole calls (the tolerance absorbs float error).
  const upstreamCalls = Math.ceil(calls - 1e-9);
  return {
    upstreamCalls: Math.max(0, upstreamCalls),
    cpuCost: Math.max(0, Math.ceil(estimate.cpu - 1e-9)) + introspectionCost(schema, operation, fragments, variables.coerced),
    wantsChainList: estimate.wantsChainList,
  };
}
