/**
 * How many upstream HTTP calls an operation will make when nothing is cached, estimated before it
 * runs from the document alone: what the rate limiter charges a caller.
 *
 * `UPSTREAM_FIELDS` lists every field whose resolver makes an upstream call, by schema coordinate.
 * A field costs its calls times the product of the sizes of the lists around it: a connection's
 * `first` (or the default its resolver uses), a plain list's assumed length. Look-ups that a
 * request's DataLoader answers with one call however many items ask (the chain list) cost once per
 * operation; the fields that share a transaction's complete view cost one call per transaction.
 *
 * The estimate is an upper bound that is exact for the common shapes. It counts a call for every
 * linked record even where the request's loaders or the shared cache will answer some of them (a
 * parent block that is in the same page, two transactions of one block), for an empty block's
 * transactions, and it assumes every plain list of `ASSUMED_LIST_LENGTH` items unless
 * `LIST_LENGTHS` knows better. It leaves out what the document cannot tell: a chain id the chain
 * list lacks (one more call), upstream retries, longer lists than assumed, and a Warp
 * verification whose subnet has more than 100 validators (a call per 100 more).
 *
 * Beside the calls it estimates the CPU an operation takes where that is more than serving
 * fields: each `WarpMessage.verification` counts as `WARP_VERIFICATION_COST` calls.
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
  type GraphQLObjectType,
  type GraphQLSchema,
  type SelectionSetNode,
} from "graphql";
import { getArgumentValues, getDirectiveValues, getVariableValues } from "graphql/execution/values.js";
import { pagesToRead } from "./pagination.ts";
import { BLOCK_FIELDS_KNOWN_FROM_TRANSACTION, PARENT_BLOCK_FIELDS_KNOWN_FROM_CHILD, selectsOnlyFrom } from "./selection.ts";
import { queryBounds } from "./upstream/bounds.ts";

/**
 * What a plain list the upstream does not page is assumed to hold: a transaction's UTXOs, a
 * block's or a vertex's transactions, a vertex's parents (the same as the query cost limit assumes).
 */
export const ASSUMED_LIST_LENGTH = 5;

/** Plain lists whose length is known better than `ASSUMED_LIST_LENGTH`. */
export const LIST_LENGTHS: Readonly<Record<string, number>> = {
  // every chain the Data API indexes, of both networks
  "Query.chains": 100,
  // an accepted X-Chain transaction is in one vertex
  "XChainTransaction.vertices": 1,
};

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

export interface UpstreamField {
  /** Calls per resolution of the field, that is per item of the lists around it, beside a shared record's. */
  calls: number | ((args: Record<string, unknown>) => number);
  /** A connection over upstream pages: `first`, else this default of its resolver, is how many items it holds. */
  defaultFirst?: number;
  /** The calls are one look-up per item of the list the field returns. */
  callsPerItem?: boolean;
  /** Answered by a record the request loads once for every field that asks it. */
  oncePerOperation?: "chain list";
  /** Needs a record of the parent that one call loads for all the fields that name it. */
  sharedPerObject?: Exclude<SharedRecord, "chain list">;
  /** The object the field returns already holds this shared record. */
  holds?: "complete transaction";
  /** No call when nothing but these fields is selected under it: the parent already tells them. */
  freeWhenSelectingOnly?: ReadonlySet<string>;
  /** CPU work per resolution, counted in upstream calls. */
  cpu?: number;
}

function connection(service: "data" | "metrics", route: string, method = "get"): UpstreamField {
  return { calls: 1, defaultFirst: queryBounds(service, route, "pageSize", method).default ?? 10 };
}

const ONE: UpstreamField = { calls: 1 };
const CHAIN_LOOKUP: UpstreamField = { calls: 1, oncePerOperation: "chain list" };
const COMPLETE_VIEW: UpstreamField = { calls: 0, sharedPerObject: "complete transaction" };
const ONE_LOOKUP_PER_ITEM: UpstreamField = { calls: 1, callsPerItem: true };

const PN = "/v1/networks/{network}/blockchains/{blockchainId}";
const pnTransactions = connection("data", `${PN}/transactions`);
const pnUtxos = connection("data", `${PN}/utxos`, "post");
const chainMetrics = connection("metrics", "/v2/chains/{chainId}/metrics/{metric}");
/** Routes without a pageSize are paged by the gateway, in pages as large as the chain metrics route's. */
const gatewayPaged = chainMetrics;

export const UPSTREAM_FIELDS: Readonly<Record<string, UpstreamField>> = {
  // EVM chains, blocks and transactions (resolvers/chains.ts, blocks.ts, evm-transactions.ts)
  "Query.chains": ONE,
  "Query.chain": CHAIN_LOOKUP,
  "Query.latestBlocks": connection("data", "/v1/blocks"),
  "Query.node": ONE,
  "EvmChain.metricsInfo": ONE,
  "EvmChain.blocks": connection("data", "/v1/chains/{chainId}/blocks"),
  "EvmChain.block": ONE,
  "EvmChain.transaction": { calls: 1, holds: "complete transaction" },
  "EvmAccount.transactions": connection("data", "/v1/chains/{chainId}/addresses/{address}/transactions"),
  // The resolver's default is the route's largest page, which holds nearly every block whole.
  "EvmBlock.transactions": { calls: 1, defaultFirst: queryBounds("data", "/v1/chains/{chainId}/blocks/{blockId}/transactions").max },
  "EvmBlock.chain": CHAIN_LOOKUP,
  "EvmBlock.parent": { calls: 1, freeWhenSelectingOnly: PARENT_BLOCK_FIELDS_KNOWN_FROM_CHILD },
  "EvmTransaction.chain": CHAIN_LOOKUP,
  "EvmTransaction.block": { calls: 1, freeWhenSelectingOnly: BLOCK_FIELDS_KNOWN_FROM_TRANSACTION },
  "EvmTransaction.input": COMPLETE_VIEW,
  "EvmTransaction.baseFeePerGas": COMPLETE_VIEW,
  "EvmTransaction.maxFeePerGas": COMPLETE_VIEW,
  "EvmTransaction.maxPriorityFeePerGas": COMPLETE_VIEW,
  "EvmTransaction.erc20Transfers": COMPLETE_VIEW,
  "EvmTransaction.erc721Transfers": COMPLETE_VIEW,
  "EvmTransaction.erc1155Transfers": COMPLETE_VIEW,
  "EvmTransaction.internalTransactions": COMPLETE_VIEW,
  "EvmTransaction.networkTokenDetails": COMPLETE_VIEW,
  "EvmTransaction.teleporterMessageInfo": COMPLETE_VIEW,

  // The primary network (resolvers/primary-network.ts, primary-network-links.ts)
  "PrimaryNetwork.l1Validators": connection("data", "/v1/networks/{network}/l1Validators"),
  "PChain.block": ONE,
  "XChain.block": ONE,
  "CChain.block": ONE,
  "PChain.transactions": pnTransactions,
  "XChain.transactions": pnTransactions,
  "CChain.transactions": pnTransactions,
  "PChain.utxos": pnUtxos,
  "XChain.utxos": pnUtxos,
  "CChain.utxos": pnUtxos,
  "XChain.vertex": ONE,
  "XChain.verticesAtHeight": connection("data", `${PN}/vertices:listByHeight`),
  "CChain.evmChain": CHAIN_LOOKUP,
  "PChainTransaction.block": ONE,
  "XChainTransaction.block": ONE,
  "CChainAtomicTransaction.block": ONE,
  "PChainTransaction.rewardTransaction": ONE,
  "PChainTransaction.stakingTransaction": ONE,
  "CChainAtomicTransaction.evmBlock": ONE,
  "PChainUtxo.creationTransaction": ONE,
  "PChainUtxo.consumingTransaction": ONE,
  // A P-Chain UTXO names its blocks; the others' blocks are those of their transactions, which
  // the request loads once for both fields.
  "PChainUtxo.creationBlock": ONE,
  "PChainUtxo.consumingBlock": ONE,
  "Utxo.creationTransaction": { calls: 0, sharedPerObject: "creation transaction" },
  "Utxo.creationBlock": { calls: 1, sharedPerObject: "creation transaction" },
  "Utxo.consumingTransaction": { calls: 0, sharedPerObject: "consuming transaction" },
  "Utxo.consumingBlock": { calls: 1, sharedPerObject: "consuming transaction" },
  "L1ValidatorTransactionDetails.validator": ONE,
  "XChainTransactionVertex.vertex": ONE,
  "PrimaryNetworkBlock.parent": ONE,
  "PrimaryNetworkBlock.transactions": ONE_LOOKUP_PER_ITEM,
  "XChainVertex.parents": ONE_LOOKUP_PER_ITEM,
  "XChainVertex.transactions": ONE_LOOKUP_PER_ITEM,

  // Metrics (resolvers/metrics.ts)
  "Query.networkMetrics": chainMetrics,
  "Query.subnetMetrics": gatewayPaged,
  "Query.validatorFeeMetrics": gatewayPaged,
  "Query.btcbBridgedAddresses": connection("metrics", "/v2/chains/43114/btcb/bridged:getAddresses"),
  "EvmChain.metrics": chainMetrics,
  // The chain the series was asked of, in hand (null for a network-wide series): no call.
  "ChainMetricConnection.chain": { calls: 0 },
  "EvmChain.tokenHolders": connection("metrics", "/v2/chains/{chainId}/contracts/{address}/balances"),
  "EvmChain.avgTps": gatewayPaged,
  "PrimaryNetwork.stakingMetrics": connection("metrics", "/v2/networks/{network}/metrics/{metric}"),

  // Export jobs (resolvers/exports.ts); a subscription is charged once, for its first read.
  "Mutation.exportTransactions": ONE,
  "Query.exportOperation": ONE,
  "Subscription.exportOperation": ONE,

  // Warp (resolvers/warp.ts)
  "Mutation.aggregateWarpSignatures": ONE,
  "Query.warpSignature": ONE,
  // Finding the signing subnet takes up to three look-ups (the P-Chain transaction, an L1
  // validator, the source chain) unless it is given; then one page of up to 100 validators.
  "WarpMessage.verification": { calls: (args) => (args.signingSubnetId != null ? 1 : 4), cpu: WARP_VERIFICATION_COST },
};

type Fragments = Readonly<Record<string, FragmentDefinitionNode | undefined>>;

/** `UPSTREAM_FIELDS` by type, then field: no coordinate string is built per field of an operation. */
const FIELDS_BY_TYPE = new Map<string, Map<string, UpstreamField>>();
for (const [coordinate, entry] of Object.entries(UPSTREAM_FIELDS)) {
  const [typeName, fieldName] = coordinate.split(".") as [string, string];
  const fields = FIELDS_BY_TYPE.get(typeName) ?? new Map<string, UpstreamField>();
  FIELDS_BY_TYPE.set(typeName, fields.set(fieldName, entry));
}
const NO_FIELDS: ReadonlyMap<string, UpstreamField> = new Map();
const NOTHING_HELD: ReadonlySet<SharedRecord> = new Set();

const reachingBySchema = new WeakMap<GraphQLSchema, ReadonlySet<string>>();

/** The composite types under which some field calls upstream; the estimate walks no others. */
function typesReachingUpstream(schema: GraphQLSchema): ReadonlySet<string> {
  const known = reachingBySchema.get(schema);
  if (known) return known;
  const reaching = new Set<string>();
  const composites = Object.values(schema.getTypeMap()).filter(isCompositeType);
  for (let grew = true; grew; ) {
    grew = false;
    for (const type of composites) {
      if (reaching.has(type.name)) continue;
      const reaches = isAbstractType(type)
        ? schema.getPossibleTypes(type).some((possible) => reaching.has(possible.name))
        : Object.values(type.getFields()).some(
            (field) => FIELDS_BY_TYPE.get(type.name)?.has(field.name) || reaching.has(getNamedType(field.type).name),
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

/** One walk over an operation, with its coerced variables and the once-per-operation records it reached. */
class Estimate {
  readonly onceReached = new Set<SharedRecord>();
  /** The CPU of the fields walked, in upstream calls. */
  cpu = 0;
  private readonly reaching: ReadonlySet<string>;

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly fragments: Fragments,
    private readonly variables: Record<string, unknown>,
  ) {
    this.reaching = typesReachingUpstream(schema);
  }

  /** Calls under selection sets on `type`: for an abstract type, the costliest type it may be. */
  selection(type: GraphQLCompositeType, selectionSets: readonly SelectionSetNode[], items: number, held: ReadonlySet<SharedRecord>): number {
    const runtimeTypes = isAbstractType(type) ? this.schema.getPossibleTypes(type) : isObjectType(type) ? [type] : [];
    let most = 0;
    for (const runtimeType of runtimeTypes) most = Math.max(most, this.object(runtimeType, selectionSets, items, held));
    return most;
  }

  private object(type: GraphQLObjectType, selectionSets: readonly SelectionSetNode[], items: number, held: ReadonlySet<SharedRecord>): number {
    const fields = new Map<string, FieldNode[]>();
    for (const selectionSet of selectionSets) this.collect(type, selectionSet, fields, new Set());
    const shared = new Set(held);
    const definitions = type.getFields();
    const entries = FIELDS_BY_TYPE.get(type.name) ?? NO_FIELDS;
    const isConnection = definitions.pageInfo !== undefined;
    let calls = 0;
    for (const nodes of fields.values()) {
      const name = nodes[0]!.name.value;
      const definition = definitions[name];
      const entry = entries.get(name);
      const named = definition && getNamedType(definition.type);
      const callsBelow = named !== undefined && this.reaching.has(named.name);
      if (!definition || (!entry && !callsBelow)) continue;
      let args: Record<string, unknown> = {};
      if (entry) {
        try {
          args = getArgumentValues(definition, nodes[0]!, this.variables);
        } catch {
          continue; // an argument that does not coerce fails the field before its resolver runs
        }
      }
      let length = 1;
      if (entry?.defaultFirst !== undefined) length = typeof args.first === "number" ? args.first : entry.defaultFirst;
      else if (isListType(getNullableType(definition.type)) && !(isConnection && (name === "edges" || name === "nodes"))) {
        length = LIST_LENGTHS[`${type.name}.${name}`] ?? ASSUMED_LIST_LENGTH;
      }
      if (entry && items > 0) calls += this.own(entry, args, nodes, items, length, shared);
      if (!callsBelow || !isCompositeType(named) || items * length === 0) continue;
      const childSets = nodes.flatMap((node) => (node.selectionSet ? [node.selectionSet] : []));
      calls += this.selection(named, childSets, items * length, entry?.holds ? new Set([entry.holds]) : NOTHING_HELD);
    }
    return calls;
  }

  /** The calls of one field itself, for `items` parent objects. */
  private own(entry: UpstreamField, args: Record<string, unknown>, nodes: readonly FieldNode[], items: number, length: number, shared: Set<SharedRecord>): number {
    if (entry.cpu) this.cpu += entry.cpu * items;
    if (entry.freeWhenSelectingOnly && selectsOnlyFrom(nodes, this.fragments, entry.freeWhenSelectingOnly)) return 0;
    if (entry.oncePerOperation) {
      this.onceReached.add(entry.oncePerOperation);
      return 0;
    }
    let calls = typeof entry.calls === "function" ? entry.calls(args) : entry.calls;
    if (entry.defaultFirst !== undefined) calls *= pagesToRead(args.after as string | null | undefined);
    if (entry.callsPerItem) calls *= length;
    if (entry.sharedPerObject && !shared.has(entry.sharedPerObject)) {
      shared.add(entry.sharedPerObject);
      calls += 1;
    }
    return calls * items;
  }

  /** Fields by response key, as execution collects them: fragments that apply to `type`, without the skipped. */
  private collect(type: GraphQLObjectType, selectionSet: SelectionSetNode, into: Map<string, FieldNode[]>, visited: Set<string>): void {
    for (const selection of selectionSet.selections) {
      if (!this.included(selection)) continue;
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        into.set(key, [...(into.get(key) ?? []), selection]);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if (!selection.typeCondition || this.applies(selection.typeCondition.name.value, type)) this.collect(type, selection.selectionSet, into, visited);
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
): number {
  return estimateCost(schema, document, operationName, variableValues).upstreamCalls;
}

export interface OperationCost {
  upstreamCalls: number;
  /** The CPU it takes beyond serving fields, in upstream calls. */
  cpuCost: number;
}

/** The upstream calls and the CPU of an operation; both 0 when it cannot run. */
export function estimateCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variableValues: Readonly<Record<string, unknown>> | null | undefined,
): OperationCost {
  const operation = getOperationAST(document, operationName);
  const root = operation ? schema.getRootType(operation.operation) : undefined;
  if (!operation || !root) return { upstreamCalls: 0, cpuCost: 0 };
  const variables = getVariableValues(schema, operation.variableDefinitions ?? [], variableValues ?? {}, { maxErrors: 1 });
  if (variables.errors) return { upstreamCalls: 0, cpuCost: 0 };
  const fragments: Record<string, FragmentDefinitionNode> = {};
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
  }
  const estimate = new Estimate(schema, fragments, variables.coerced);
  const upstreamCalls = estimate.selection(root, [operation.selectionSet], 1, NOTHING_HELD) + estimate.onceReached.size;
  return { upstreamCalls, cpuCost: estimate.cpu };
}
