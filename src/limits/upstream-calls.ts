/**
 * How many upstream HTTP calls an operation will make when nothing is cached, estimated before it
 * runs from the document alone: what the rate limiter charges a caller.
 *
 * Each field that can call upstream declares what it costs (src/limits/upstream-cost-declarations.ts).
 * A field costs its calls times the product of the sizes of the lists around it: a connection's
 * `first` (or the default its resolver uses, its route's), a plain list's assumed length. Look-ups
 * that a request's DataLoader answers with one call however many items ask (the chain list) cost
 * once per operation; the fields that share a transaction's complete view cost one call per
 * transaction. Beside the document the estimate takes what the gateway knows (`KnownFacts`,
 * src/limits/known-facts.ts): the chain list it holds, whose size `chains { … }` multiplies by.
 *
 * What the document shows the request's loaders answer is counted once: the same look-up of a
 * record by the same arguments under the same parent (`chain(id: "43114") { block(id: "1") }`
 * twice is one block call), a transaction's block where the transaction was listed by that block,
 * `first: 0` (no call at all), and a link whose parent holds every field asked (src/execution/selection.ts).
 *
 * The estimate is what a cold run (empty caches) is expected to make, not its worst case: exact
 * for the common shapes, and where the document cannot tell, what the data typically holds
 * (src/limits/upstream-cost-rules.ts, each rule measured). It does not count upstream retries, a
 * chain id the chain list lacks, or a Warp verification whose subnet has more than 100 validators. The rate limiter charges the estimate before the
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
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type SelectionSetNode,
} from "graphql";
import { getArgumentValues, getDirectiveValues, getVariableValues } from "graphql/execution/values.js";
import { pagesToRead } from "../execution/pagination.ts";
import { selectsOnlyFrom } from "../execution/selection.ts";
import { introspectionCost } from "./introspection-cost.ts";
import { ASSUMED_CHAIN_COUNT, countChains, type KnownFacts } from "./known-facts.ts";
import {
  declaredCost,
  typesReachingUpstream,
  type EntityLookups,
  type Pool,
  type SharedRecord,
  type UpstreamCost,
} from "./upstream-cost-declarations.ts";
import {
  ASSUMED_LIST_LENGTH,
  LIST_LENGTHS,
  POOL_OF_SHARED_RECORD,
  childItems,
  pooledLinks,
  present,
} from "./upstream-cost-rules.ts";

type Fragments = Readonly<Record<string, FragmentDefinitionNode | undefined>>;

const NOTHING_HELD: ReadonlySet<SharedRecord> = new Set();

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
      if (entry?.lookups) {
        calls += this.lookedUp(entry.lookups(args), nodes, items, { ...childOrigin, identity: undefined });
        continue;
      }
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

  /** A list of several types' look-ups (`_entities`): each type's look-ups, then the fields under each type's objects. */
  private lookedUp(groups: EntityLookups, nodes: readonly FieldNode[], items: number, origin: Origin): number {
    const childSets = nodes.flatMap((node) => (node.selectionSet ? [node.selectionSet] : []));
    let calls = 0;
    for (const { type: name, count, cost } of groups) {
      const type = this.schema.getType(name);
      const objects = items * count;
      if (!isObjectType(type) || objects === 0) continue;
      calls += this.own(cost, {}, nodes, objects, 1, new Set(), new Map(), origin, undefined);
      if (this.reaching.has(name)) {
        calls += this.selection(type, childSets, objects, cost.holds ? new Set([cost.holds]) : NOTHING_HELD, origin);
      }
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
