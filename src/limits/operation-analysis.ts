/**
 * What the gateway checks about an operation before it runs: whether its variables coerce, its
 * depth and breadth (measured by `complexityFromQuery` of the Pothos complexity plugin), and its
 * cost: the upstream calls it is estimated to make, and its CPU in the same units
 * (src/limits/upstream-calls.ts). Each is a walk of the document; together they took about 5 % of
 * the CPU of a 25-item page. They depend only on the document, the operation name and the
 * variables, so they are computed once per such triple: Yoga's parse cache hands back the same
 * DocumentNode for the same query text, and the clients that matter for load send the same
 * operations again. The cost with the chain list the gateway knows (`operationCost`) is worked
 * out once per execution, for MAX_QUERY_COST (src/plugins/operation-limits.ts) and the rate
 * limiter (src/plugins/rate-limit.ts) alike.
 */
import { complexityFromQuery } from "@pothos/plugin-complexity";
import {
  Kind,
  getOperationAST,
  visit,
  type DocumentNode,
  type ExecutionArgs,
  type OperationDefinitionNode,
  type OperationTypeNode,
} from "graphql";
import { getVariableValues } from "graphql/execution/values.js";
import { LRUCache } from "lru-cache";
import type { GatewayContext } from "../execution/context.ts";
import { NO_FACTS, type KnownFacts } from "./known-facts.ts";
import { estimateCost, type OperationCost } from "./upstream-calls.ts";

/** The operation's shape, whatever it costs: its deepest field's depth, and the fields it selects (fragments spread in). */
export interface OperationShape {
  depth: number;
  breadth: number;
}

export interface OperationAnalysis {
  /** True when the document holds no other operation than the one that runs. */
  soleOperation: boolean;
  /** The kind of the operation that runs; undefined when the document has no such operation. */
  kind: OperationTypeNode | undefined;
  /**
   * True when a field of an input object written in the document takes a variable that has no
   * value and no default: the field is then absent (and its own default applies), as if not written.
   */
  inputFieldWithoutValue: boolean;
  /** The operation definitions in the document. */
  operations: number;
  /** False when the variables do not coerce: execution then reports why, and nothing else is known. */
  variablesValid: boolean;
  shape: OperationShape | null;
  /**
   * The estimated upstream calls when nothing is cached, and the CPU work it is estimated to take
   * (Warp verifications, counted in upstream calls), given what the gateway knows now; 0 when the
   * operation cannot run.
   */
  cost(facts: KnownFacts): OperationCost;
}

const NO_COST: OperationCost = { upstreamCalls: 0, cpuCost: 0, wantsChainList: false };
const costsNothing = (): OperationCost => NO_COST;

/** Variable sets remembered per document; beyond this the least recently used is forgotten. */
const VARIABLE_SETS_PER_DOCUMENT = 64;
/** Variables longer than this when serialized (a list of a thousand addresses) are not remembered. */
const LONGEST_REMEMBERED_KEY = 4_096;

const analyses = new WeakMap<DocumentNode, LRUCache<string, OperationAnalysis>>();

function analyze({ schema, document, operationName, variableValues }: ExecutionArgs): OperationAnalysis {
  const operation = getOperationAST(document, operationName);
  const operations = document.definitions.filter((definition) => definition.kind === Kind.OPERATION_DEFINITION).length;
  const soleOperation = operations === 1;
  if (!operation)
    return {
      soleOperation,
      operations,
      kind: undefined,
      inputFieldWithoutValue: false,
      variablesValid: true,
      shape: null,
      cost: costsNothing,
    };
  const kind = operation.operation;
  const inputFieldWithoutValue = hasInputFieldWithoutValue(document, operation, variableValues ?? {});
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variableValues ?? {}, { maxErrors: 1 });
  if (coerced.errors)
    return {
      soleOperation,
      operations,
      kind,
      inputFieldWithoutValue,
      variablesValid: false,
      shape: null,
      cost: costsNothing,
    };
  // complexityFromQuery measures the first operation of a document: give it the one that runs.
  // Its own `complexity` (1 a field, lists multiplied) is not used: cost is the estimate below.
  const fragments = document.definitions.filter((definition) => definition.kind === Kind.FRAGMENT_DEFINITION);
  const measured = complexityFromQuery(
    { kind: Kind.DOCUMENT, definitions: [operation, ...fragments] },
    { schema, variables: variableValues ?? {}, ctx: {} },
  );
  // Estimates by the chain list they were made with (none, or the one held): it changes rarely.
  const estimates = new Map<KnownFacts["chains"], OperationCost>();
  const cost = (facts: KnownFacts): OperationCost => {
    let estimate = estimates.get(facts.chains);
    if (estimate === undefined) {
      if (estimates.size >= 2) estimates.clear();
      estimate = estimateCost(schema, document, operationName, variableValues, facts);
      estimates.set(facts.chains, estimate);
    }
    return estimate;
  };
  return {
    soleOperation,
    operations,
    kind,
    inputFieldWithoutValue,
    variablesValid: true,
    shape: { depth: measured.depth, breadth: measured.breadth },
    cost,
  };
}

/** Whether some object field of the operation or of a fragment is a variable with neither a value nor a default. */
function hasInputFieldWithoutValue(
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variableValues: Record<string, unknown>,
): boolean {
  const withoutValue = new Set<string>();
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    if (!definition.defaultValue && !Object.prototype.hasOwnProperty.call(variableValues, name)) withoutValue.add(name);
  }
  if (withoutValue.size === 0) return false;
  let found = false;
  for (const definition of document.definitions) {
    if (found) break;
    if (definition !== operation && definition.kind !== Kind.FRAGMENT_DEFINITION) continue;
    visit(definition, {
      ObjectField(field) {
        if (field.value.kind === Kind.VARIABLE && withoutValue.has(field.value.name.value)) found = true;
      },
    });
  }
  return found;
}

/**
 * The limits, the rate limiter and compiled execution each ask in turn about the same execution
 * (the same ExecutionArgs): the answer kept with it spares them building the key again, and goes
 * when the execution does.
 */
const byExecution = new WeakMap<ExecutionArgs, OperationAnalysis>();

export function analyzeOperation(args: ExecutionArgs): OperationAnalysis {
  let analysis = byExecution.get(args);
  if (!analysis) {
    analysis = rememberedAnalysis(args);
    byExecution.set(args, analysis);
  }
  return analysis;
}

function rememberedAnalysis(args: ExecutionArgs): OperationAnalysis {
  const key = `${args.operationName ?? ""}\u0000${JSON.stringify(args.variableValues ?? {})}`;
  if (key.length > LONGEST_REMEMBERED_KEY) return analyze(args);
  let byVariables = analyses.get(args.document);
  if (!byVariables) {
    byVariables = new LRUCache({ max: VARIABLE_SETS_PER_DOCUMENT });
    analyses.set(args.document, byVariables);
  }
  let analysis = byVariables.get(key);
  if (!analysis) {
    analysis = analyze(args);
    byVariables.set(key, analysis);
  }
  return analysis;
}

const costs = new WeakMap<ExecutionArgs, OperationCost | Promise<OperationCost>>();

/**
 * The operation's cost with the chain list's size when it depends on it (`chains { … }` with
 * calls under it, a latest-blocks page's parents): the held list (the gateway keeps it fresh, so
 * nearly always), else the list fetched now through the same cache, once per process, which
 * nearly every operation needs anyway and the settlement charges; a list that cannot be had leaves
 * the estimate's assumed length. Worked out once per execution: MAX_QUERY_COST and the rate
 * limiter ask for the same answer.
 */
export function operationCost(args: ExecutionArgs): OperationCost | Promise<OperationCost> {
  let cost = costs.get(args);
  if (cost === undefined) {
    cost = withKnownChains(analyzeOperation(args), args.contextValue as GatewayContext);
    costs.set(args, cost);
  }
  return cost;
}

function withKnownChains(analysis: OperationAnalysis, context: GatewayContext): OperationCost | Promise<OperationCost> {
  const held = context.upstreams.evm.heldChains();
  if (held) return analysis.cost({ chains: held });
  const estimate = analysis.cost(NO_FACTS);
  if (!estimate.wantsChainList) return estimate;
  return context.upstreams.evm
    .listChains(context.call)
    .then((chains) => analysis.cost({ chains }))
    .catch(() => estimate);
}
