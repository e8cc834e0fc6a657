/**
 * Compiled execution (graphql-jit through @envelop/graphql-jit) where it answers exactly as
 * graphql-js does, and graphql-js for the shapes where it would not. The differential test
 * (test/differential/) holds the two together over every document the project has and a thousand
 * generated ones; each rule below is a divergence it found.
 */
import { useGraphQlJit } from "@envelop/graphql-jit";
import {
  GraphQLError,
  Kind,
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  TypeNameMetaFieldDef,
  getNamedType,
  getOperationAST,
  isAbstractType,
  isCompositeType,
  print,
  visit,
  type DocumentNode,
  type ExecutionArgs,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
  type InlineFragmentNode,
  type NamedTypeNode,
  type SelectionNode,
  type SelectionSetNode,
} from "graphql";
import type { Plugin } from "graphql-yoga";
import { withoutStackFrames } from "../errors.ts";
import { analyzeOperation } from "../limits/operation-analysis.ts";

/**
 * When an operation runs compiled. Not when:
 * - its variables do not coerce: compiled execution coerces them itself, with terser messages
 *   than our scalars give ("expected type Hash"); graphql-js reports each scalar's own;
 * - the document holds several operations (as GraphiQL sends): the plugin keeps one compiled
 *   query per document, whichever operation it was compiled for, and would run it under any name;
 * - it is a subscription: graphql-jit 0.8 calls the root field's `subscribe` with the
 *   operation's variables in place of the field's arguments, so an id written inline (or passed
 *   through a variable named otherwise than the argument) reaches the resolver as undefined;
 * - it is a mutation: graphql-jit 0.8 runs the root fields one after another (each with its
 *   subtree), but stops where graphql-js would not and goes on where graphql-js stops. A root
 *   field whose non-null argument gets null from a variable (one with a default, given null)
 *   fails and stalls the queue: the mutations after it never run and answer null without an
 *   error, where graphql-js runs them. A failing non-null root field does not stop the queue,
 *   where graphql-js stops: the later mutations' jobs were created upstream and their ids lost
 *   with `data`. A mutation starts work upstream that nothing may repeat or skip behind the
 *   client's back, and its upstream call outweighs any compiling: mutations run on graphql-js;
 * - a field of an input object written in the document takes a variable that has no value and
 *   no default: graphql-jit sets the field to null, where graphql-js leaves it out so that the
 *   input field's own default applies (and "absent" stays distinct from "null");
 * - the document uses `@defer` or `@stream`: graphql-jit ignores both and answers everything in
 *   one result, where graphql-js (with the defer/stream plugin) sends the deferred fragments and
 *   streamed items as incremental results;
 * - a selection set, merged as execution merges it (through fragments, and under every field of
 *   one response key above), selects one response key more than once where any of those
 *   selections carries `@skip` or `@include`, on itself or on a fragment around it: graphql-jit
 *   collects every selection whatever its condition, so the key keeps the place of its first
 *   selection even when that one is skipped (graphql-js: of its first included one), the
 *   fields inside fragments under a skipped selection are answered when another selection of
 *   the key is included (the condition reaches only the skipped field's direct subfields), and
 *   an error of the key is located at the skipped selections too;
 * - a named fragment is spread more than once in one such merged selection set, or at several
 *   places under different `@skip`/`@include` conditions: graphql-jit marks a fragment visited
 *   when it meets its spread, skipped or not (so a later spread of it is dropped, and its fields
 *   move to where graphql-jit met it first), where graphql-js marks it when it takes it, in
 *   document order; and graphql-jit keeps a fragment's fields' conditions on the document's own
 *   nodes, so that every place the fragment is spread gets the conditions of the others too.
 */
export function runsCompiled(args: ExecutionArgs): boolean {
  const analysis = analyzeOperation(args);
  return (
    analysis.soleOperation &&
    analysis.variablesValid &&
    analysis.kind !== "subscription" &&
    analysis.kind !== "mutation" &&
    !analysis.inputFieldWithoutValue &&
    !deliversIncrementally(args.document) &&
    !mergesConditionally(args.schema, args.document, args.operationName)
  );
}

/** What one walk of a document tells of it, kept per parsed document. */
interface DocumentShape {
  /** It holds a `@defer` or `@stream` directive. */
  incremental: boolean;
  /** It holds a `@skip` or `@include` directive. */
  conditional: boolean;
  /** A named fragment is spread in more than one place of it. */
  repeatedSpread: boolean;
}

const shapes = new WeakMap<DocumentNode, DocumentShape>();

function shapeOf(document: DocumentNode): DocumentShape {
  let shape = shapes.get(document);
  if (!shape) {
    const found: DocumentShape = { incremental: false, conditional: false, repeatedSpread: false };
    const spread = new Set<string>();
    visit(document, {
      Directive(node) {
        const name = node.name.value;
        if (name === "defer" || name === "stream") found.incremental = true;
        else if (name === "skip" || name === "include") found.conditional = true;
      },
      FragmentSpread(node) {
        if (spread.has(node.name.value)) found.repeatedSpread = true;
        spread.add(node.name.value);
      },
    });
    shape = found;
    shapes.set(document, shape);
  }
  return shape;
}

/** Whether a document holds a `@defer` or `@stream` directive anywhere (its fragments included); kept per parsed document. */
export function deliversIncrementally(document: DocumentNode): boolean {
  return shapeOf(document).incremental;
}

/** Selections the merge check looks at, at most, before it gives the operation to graphql-js unchecked. */
const MERGE_CHECK_BUDGET = 10_000;

const mergeChecks = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, boolean>>();

/**
 * Whether the operation merges selections in a way graphql-jit answers otherwise than graphql-js
 * (the last two rules of `runsCompiled`), kept per schema and parsed document (of one operation,
 * as `runsCompiled` asks it only then). A document without `@skip`/`@include` that spreads each
 * fragment once cannot, and is not walked again.
 */
export function mergesConditionally(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): boolean {
  const shape = shapeOf(document);
  if (!shape.conditional && !shape.repeatedSpread) return false;
  let checked = mergeChecks.get(schema);
  if (!checked) {
    checked = new WeakMap();
    mergeChecks.set(schema, checked);
  }
  let found = checked.get(document);
  if (found === undefined) {
    found = checkMerges(schema, document, operationName);
    checked.set(document, found);
  }
  return found;
}

/** A selection's `@skip` and `@include` directives as written, in one text ("" for none). */
function conditionsOf(selection: SelectionNode): string {
  let text = "";
  for (const directive of selection.directives ?? [])
    if (directive.name.value === "skip" || directive.name.value === "include") text += `${print(directive)} `;
  return text;
}

/**
 * Walks the operation's merged selection sets as execution collects them (per object type that
 * a fragment's type condition admits) and finds the shapes of `runsCompiled`'s last two rules.
 */
function checkMerges(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): boolean {
  const operation = getOperationAST(document, operationName);
  const root = operation && schema.getRootType(operation.operation);
  if (!operation || !root) return false;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  /** Each fragment's conditions where it was first spread (those of the spread and the fragments around it). */
  const spreadConditions = new Map<string, string>();
  let budget = MERGE_CHECK_BUDGET;

  const applies = (condition: NamedTypeNode | undefined, object: GraphQLObjectType) => {
    if (!condition) return true;
    const type = schema.getType(condition.name.value);
    return type === object || (type !== undefined && isAbstractType(type) && schema.isSubType(type, object));
  };

  /** True when the merged selection set of `sets` on `type` (and below) holds one of the shapes. */
  const diverges = (type: GraphQLCompositeType, sets: readonly SelectionSetNode[]): boolean => {
    for (const object of isAbstractType(type) ? schema.getPossibleTypes(type) : [type]) {
      const fields = new Map<string, { node: FieldNode; conditional: boolean }[]>();
      const spread = new Set<string>();
      const collect = (set: SelectionSetNode, around: string): boolean => {
        for (const selection of set.selections) {
          if (--budget < 0) return true;
          const conditions = around + conditionsOf(selection);
          if (selection.kind === Kind.FIELD) {
            const key = selection.alias?.value ?? selection.name.value;
            let entries = fields.get(key);
            if (!entries) fields.set(key, (entries = []));
            entries.push({ node: selection, conditional: conditions !== "" });
          } else if (selection.kind === Kind.INLINE_FRAGMENT) {
            if (applies(selection.typeCondition, object) && collect(selection.selectionSet, conditions)) return true;
          } else {
            const name = selection.name.value;
            const fragment = fragments.get(name);
            if (!fragment || !applies(fragment.typeCondition, object)) continue;
            if (spread.has(name)) return true;
            spread.add(name);
            const first = spreadConditions.get(name);
            if (first === undefined) spreadConditions.set(name, conditions);
            else if (first !== conditions) return true;
            if (collect(fragment.selectionSet, conditions)) return true;
          }
        }
        return false;
      };
      for (const set of sets) if (collect(set, "")) return true;
      for (const entries of fields.values()) {
        if (entries.length > 1 && entries.some((entry) => entry.conditional)) return true;
        const below = entries.flatMap((entry) => (entry.node.selectionSet ? [entry.node.selectionSet] : []));
        if (below.length === 0) continue;
        const field = fieldOf(schema, object, entries[0]!.node.name.value);
        const named = field && getNamedType(field.type);
        if (named && isCompositeType(named) && diverges(named, below)) return true;
      }
    }
    return false;
  };
  return diverges(root, [operation.selectionSet]);
}

function fieldOf(schema: GraphQLSchema, type: GraphQLObjectType, name: string): GraphQLField<unknown, unknown> | undefined {
  if (name === TypeNameMetaFieldDef.name) return TypeNameMetaFieldDef;
  if (type === schema.getQueryType() && name === SchemaMetaFieldDef.name) return SchemaMetaFieldDef;
  if (type === schema.getQueryType() && name === TypeMetaFieldDef.name) return TypeMetaFieldDef;
  return type.getFields()[name];
}

/**
 * The graphql-jit plugin for the operations `runsCompiled` admits, given the document in the
 * order graphql-jit needs to answer its fields in document order, and with its errors located as
 * graphql-js locates them. A document runs compiled from its `compileFromRun`th run on: compiling
 * costs more than a run (about 3 ms for a page of 100 blocks with a field of each, which runs in
 * 4), so a document sent once (a new alias defeats every cache) is not worth it, and a caller who
 * sends a new one each time must not make the gateway compile each.
 */
export function useCompiledExecution({
  compileFromRun,
  compiling = () => {},
}: {
  compileFromRun: number;
  /** Told of each document's first compiled run (graphql-jit compiles it then, once while the parse cache holds it). */
  compiling?: () => void;
}): Plugin[] {
  const compiled = new WeakSet<ExecutionArgs>();
  // Runs so far of each parsed document (the parse cache hands out the same one for the same
  // text), up to its first compiled one.
  const runs = new WeakMap<DocumentNode, number>();
  const jit = useGraphQlJit({}, { enableIf: (args) => compiled.has(args) }) as Plugin;
  const admit = (args: ExecutionArgs): boolean => {
    if (!runsCompiled(args)) return false;
    const run = (runs.get(args.document) ?? 0) + 1;
    if (run <= compileFromRun) {
      runs.set(args.document, run);
      if (run < compileFromRun) return false;
      compiling();
    }
    compiled.add(args);
    // Only graphql-jit reads this document from here on; later plugins read the same operation.
    args.document = inJitOrder(args.document);
    return true;
  };
  const choose: Plugin = {
    onExecute({ args }) {
      if (!admit(args)) return;
      return {
        onExecuteDone({ result, setResult }) {
          if (!("errors" in result) || !result.errors?.length) return;
          setResult({ ...result, errors: result.errors.map((error) => located(error, args.document)) });
        },
      };
    },
    // The same rule for subscriptions, which it refuses today (see `runsCompiled`).
    onSubscribe({ args }) {
      admit(args);
    },
  };
  return [choose, jit];
}

const reordered = new WeakMap<DocumentNode, DocumentNode>();

/**
 * graphql-jit collects a selection set's own fields first and its fragments (inline and spread)
 * after them, last in first out, where graphql-js (and the spec's CollectFields) takes every
 * selection in document order: `{ ...BlockFields chain { chainId } }` answered `chain` before the
 * fragment's fields (and, when mutations still ran compiled, ran a mutation's root fields in
 * another order). Rewritten for graphql-jit, a selection set keeps its leading fields and gives
 * the rest in reverse, each run of fields inside an inline fragment without type condition (which
 * always applies): taken last in first out, they come back in document order. The document is
 * kept per parsed document, so that the plugin's compiled query is kept too.
 */
export function inJitOrder(document: DocumentNode): DocumentNode {
  let result = reordered.get(document);
  if (!result) {
    result = visit(document, {
      SelectionSet: {
        leave(node: SelectionSetNode): SelectionSetNode {
          return { ...node, selections: jitOrder(node.selections) };
        },
      },
    });
    reordered.set(document, result);
  }
  return result;
}

function jitOrder(selections: readonly SelectionNode[]): readonly SelectionNode[] {
  const leading = selections.findIndex((selection) => selection.kind !== Kind.FIELD);
  if (leading < 0) return selections;
  const rest = selections.slice(leading);
  // One fragment last: graphql-jit already takes it after the fields before it.
  if (rest.length === 1) return selections;
  const groups: SelectionNode[] = [];
  let fields: FieldNode[] = [];
  const closeFields = () => {
    if (fields.length === 0) return;
    groups.push({
      kind: Kind.INLINE_FRAGMENT,
      selectionSet: { kind: Kind.SELECTION_SET, selections: fields },
    } satisfies InlineFragmentNode);
    fields = [];
  };
  for (const selection of rest) {
    if (selection.kind === Kind.FIELD) {
      fields.push(selection);
      continue;
    }
    closeFields();
    groups.push(selection);
  }
  closeFields();
  return [...selections.slice(0, leading), ...groups.reverse()];
}

const fieldsByPlace = new WeakMap<DocumentNode, Map<string, FieldNode>>();

/**
 * graphql-jit's errors carry `locations` but not the field nodes they come from; every later step
 * that rebuilds an error (Yoga's masking, our refusals' normalisation) builds it from its nodes,
 * and so dropped the locations graphql-js gives. The nodes are found again by their place.
 */
function located(error: GraphQLError, document: DocumentNode): GraphQLError {
  if (error.nodes?.length || !error.locations?.length) return error;
  let fields = fieldsByPlace.get(document);
  if (!fields) {
    const found = new Map<string, FieldNode>();
    visit(document, {
      [Kind.FIELD](node: FieldNode) {
        if (node.loc) found.set(`${node.loc.startToken.line}:${node.loc.startToken.column}`, node);
      },
    });
    fields = found;
    fieldsByPlace.set(document, fields);
  }
  const nodes = error.locations.map((location) => fields.get(`${location.line}:${location.column}`));
  if (nodes.some((node) => node === undefined)) return error;
  return withoutStackFrames(
    () =>
      new GraphQLError(error.message, {
        nodes: nodes as FieldNode[],
        path: error.path,
        originalError: error.originalError,
        extensions: error.extensions,
      }),
  );
}
