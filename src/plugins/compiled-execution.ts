/**
 * Compiled execution (graphql-jit through @envelop/graphql-jit) where it answers exactly as
 * graphql-js does, and graphql-js for the shapes where it would not. The differential test
 * (test/differential/) holds the two together over every document the project has and a thousand
 * generated ones; each rule below is a divergence it found.
 */
import { useGraphQlJit } from "@envelop/graphql-jit";
import {
  BREAK,
  GraphQLError,
  Kind,
  visit,
  type DocumentNode,
  type ExecutionArgs,
  type FieldNode,
  type InlineFragmentNode,
  type SelectionNode,
  type SelectionSetNode,
} from "graphql";
import type { Plugin } from "graphql-yoga";
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
 *   streamed items as incremental results.
 */
export function runsCompiled(args: ExecutionArgs): boolean {
  const analysis = analyzeOperation(args);
  return (
    analysis.soleOperation &&
    analysis.variablesValid &&
    analysis.kind !== "subscription" &&
    analysis.kind !== "mutation" &&
    !analysis.inputFieldWithoutValue &&
    !deliversIncrementally(args.document)
  );
}

const incremental = new WeakMap<DocumentNode, boolean>();

/** Whether a document holds a `@defer` or `@stream` directive anywhere (its fragments included); kept per parsed document. */
export function deliversIncrementally(document: DocumentNode): boolean {
  let found = incremental.get(document);
  if (found === undefined) {
    found = false;
    visit(document, {
      Directive(node) {
        if (node.name.value !== "defer" && node.name.value !== "stream") return undefined;
        found = true;
        return BREAK;
      },
    });
    incremental.set(document, found);
  }
  return found;
}

/**
 * The graphql-jit plugin for the operations `runsCompiled` admits, given the document in the
 * order graphql-jit needs to answer its fields in document order, and with its errors located as
 * graphql-js locates them.
 */
export function useCompiledExecution(): Plugin[] {
  const compiled = new WeakSet<ExecutionArgs>();
  const jit = useGraphQlJit({}, { enableIf: (args) => compiled.has(args) }) as Plugin;
  const choose: Plugin = {
    onExecute({ args }) {
      if (!runsCompiled(args)) return;
      compiled.add(args);
      // Only graphql-jit reads this document from here on; later plugins read the same operation.
      args.document = inJitOrder(args.document);
      return {
        onExecuteDone({ result, setResult }) {
          if (!("errors" in result) || !result.errors?.length) return;
          setResult({ ...result, errors: result.errors.map((error) => located(error, args.document)) });
        },
      };
    },
    // The same rule for subscriptions, which it refuses today (see `runsCompiled`).
    onSubscribe({ args }) {
      if (!runsCompiled(args)) return;
      compiled.add(args);
      args.document = inJitOrder(args.document);
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
  return new GraphQLError(error.message, {
    nodes: nodes as FieldNode[],
    path: error.path,
    originalError: error.originalError,
    extensions: error.extensions,
  });
}
