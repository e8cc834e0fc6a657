/**
 * What answering an operation's introspection (`__schema`, `__type`) costs, counted before it
 * runs. Introspection calls nothing upstream, but its work grows with its answer: the full
 * introspection that GraphiQL and code generators send is some 13,500 values (300 kB), and a
 * document within every limit can ask for it under 20 aliases. The schema never changes in a
 * process, so the answer's size is known before it runs: the count walks the selection over the
 * schema itself, calling the introspection types' own resolvers for every list and object it
 * selects (never for a leaf), with fragments and `@skip`/`@include` applied as execution applies
 * them. It takes about a tenth of the CPU of answering, once per operation and values of the
 * variables its introspection reads (another variable changes nothing, and buys no new count).
 */
import {
  SchemaMetaFieldDef,
  visit,
  type ASTNode,
  defaultFieldResolver,
  TypeMetaFieldDef,
  getNamedType,
  getNullableType,
  isLeafType,
  isListType,
  type FieldNode,
  type GraphQLField,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from "graphql";
import { collectFields, collectSubfields } from "graphql/execution/collectFields.js";
import { getArgumentValues } from "graphql/execution/values.js";
import { LRUCache } from "lru-cache";

/**
 * An introspection costs 1, and 1 per this many values of its answer (every object and list, and
 * every entry of them, leaves and nulls included), rounded up. On a loaded 2-core machine
 * (test/hostile/cpu-share.test.ts) the cheapest request took some 2 ms of CPU for its 1; a full
 * introspection (13,500 values) 14 ms; a `__type` of 200 values 3.7 ms, most of it what any
 * answer over COMPRESSION_MIN_BYTES takes, which the 1 an introspection costs beside its values
 * pays for. The full introspection costs 15.
 */
export const INTROSPECTION_VALUES_PER_UNIT = 1_000;

const META_FIELDS = new Map([
  [SchemaMetaFieldDef.name, SchemaMetaFieldDef],
  [TypeMetaFieldDef.name, TypeMetaFieldDef],
]);

/** Counts remembered per operation, by the values of the variables its introspection reads. */
const COUNTS_PER_OPERATION = 16;
interface Counts {
  /** The variables the introspection fields read, in their arguments and directives or on the way to them. */
  read: readonly string[];
  byValues: LRUCache<string, number>;
}
const counts = new WeakMap<OperationDefinitionNode, Counts>();

/** The values an answer to the operation's introspection fields holds; 0 when it has none. */
export function introspectionValues(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: Record<string, FragmentDefinitionNode>,
  variables: Record<string, unknown>,
): number {
  const root = schema.getQueryType();
  if (operation.operation !== "query" || !root) return 0;
  let remembered = counts.get(operation);
  if (!remembered) {
    remembered = { read: variablesRead(operation, fragments), byValues: new LRUCache({ max: COUNTS_PER_OPERATION }) };
    counts.set(operation, remembered);
  }
  // A variable the introspection does not read changes nothing, and buys no new count.
  const key = JSON.stringify(remembered.read.map((name) => (name in variables ? [variables[name]] : [])));
  let values = remembered.byValues.get(key);
  if (values === undefined) {
    values = new AnswerCount(schema, root, fragments, variables).operation(operation);
    remembered.byValues.set(key, values);
  }
  return values;
}

/** The variables an operation's introspection fields read: within them, and on the root selections and fragments that lead to them. */
function variablesRead(operation: OperationDefinitionNode, fragments: Record<string, FragmentDefinitionNode>): string[] {
  const read = new Set<string>();
  const walked = new Set<string>();
  const walk = (node: ASTNode, within: boolean): void => {
    visit(node, {
      Variable: (variable) => void read.add(variable.name.value),
      Field(field) {
        if (within) return undefined;
        // At the root: another field's arguments and directives play no part in the introspection's answer.
        if (META_FIELDS.has(field.name.value)) walk(field, true);
        return false;
      },
      FragmentSpread(spread) {
        const fragment = fragments[spread.name.value];
        const key = `${within}:${spread.name.value}`;
        if (!fragment || walked.has(key)) return;
        walked.add(key);
        walk(fragment.selectionSet, within);
      },
    });
  };
  walk(operation.selectionSet, false);
  return [...read].sort();
}

/** One count of an answer, with the subfields selected on each type under each field, collected once as execution does. */
class AnswerCount {
  private readonly args = new Map<FieldNode, Record<string, unknown> | undefined>();
  private readonly subfields = new Map<readonly FieldNode[], Map<GraphQLObjectType, Map<string, readonly FieldNode[]>>>();
  // The resolvers of __Type.possibleTypes and of the meta fields read the schema from `info`, and nothing else.
  private readonly info: GraphQLResolveInfo;

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly root: GraphQLObjectType,
    private readonly fragments: Record<string, FragmentDefinitionNode>,
    private readonly variables: Record<string, unknown>,
  ) {
    this.info = { schema } as GraphQLResolveInfo;
  }

  operation(operation: OperationDefinitionNode): number {
    let values = 0;
    for (const nodes of collectFields(this.schema, this.fragments, this.variables, this.root, operation.selectionSet).values()) {
      if (META_FIELDS.has(nodes[0]!.name.value)) values += this.fields(this.root, undefined, new Map([["", nodes]]));
    }
    return values;
  }

  private value(type: GraphQLOutputType, value: unknown, nodes: readonly FieldNode[]): number {
    const nullable = getNullableType(type);
    if (value === null || value === undefined || isLeafType(nullable)) return 1;
    if (isListType(nullable)) {
      let values = 1;
      for (const item of value as Iterable<unknown>) values += this.value(nullable.ofType, item, nodes);
      return values;
    }
    const objectType = getNamedType(nullable) as GraphQLObjectType;
    return 1 + this.fields(objectType, value, this.selected(objectType, nodes));
  }

  private fields(type: GraphQLObjectType, source: unknown, selected: Map<string, readonly FieldNode[]>): number {
    let values = 0;
    for (const nodes of selected.values()) {
      const name = nodes[0]!.name.value;
      const definition = type === this.root ? META_FIELDS.get(name) : type.getFields()[name];
      if (!definition || isLeafType(getNullableType(definition.type))) {
        values += 1;
        continue;
      }
      const args = this.argumentsOf(definition, nodes[0]!);
      if (!args) continue; // an argument that does not coerce fails the field before its resolver runs
      const resolve = definition.resolve ?? defaultFieldResolver;
      values += this.value(definition.type, resolve(source, args, undefined, this.info), nodes);
    }
    return values;
  }

  private argumentsOf(definition: GraphQLField<unknown, unknown>, node: FieldNode): Record<string, unknown> | undefined {
    if (!this.args.has(node)) {
      try {
        this.args.set(node, getArgumentValues(definition, node, this.variables));
      } catch {
        this.args.set(node, undefined);
      }
    }
    return this.args.get(node);
  }

  private selected(type: GraphQLObjectType, nodes: readonly FieldNode[]): Map<string, readonly FieldNode[]> {
    let byType = this.subfields.get(nodes);
    if (!byType) this.subfields.set(nodes, (byType = new Map()));
    let selected = byType.get(type);
    if (!selected) byType.set(type, (selected = collectSubfields(this.schema, this.fragments, this.variables, type, nodes)));
    return selected;
  }
}

/** What the operation's introspection costs, in units: 1, and 1 per `INTROSPECTION_VALUES_PER_UNIT` values of its answer; 0 without introspection. */
export function introspectionCost(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: Record<string, FragmentDefinitionNode>,
  variables: Record<string, unknown>,
): number {
  const values = introspectionValues(schema, operation, fragments, variables);
  return values === 0 ? 0 : 1 + Math.ceil(values / INTROSPECTION_VALUES_PER_UNIT);
}
