/**
 * Seeded documents over the printed schema: random selections under Query with aliases, named
 * fragments, inline fragments on interfaces and unions, @include/@skip, list and enum arguments,
 * and input objects (literal, through variables, and with fields left to their defaults). Driven
 * by the schema alone, so that renamed fields need no change here. Pages stay small (`first` ≤ 3)
 * and nesting shallow, so that a thousand documents cost little upstream.
 */
import {
  getNamedType,
  getNullableType,
  isAbstractType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  print,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type GraphQLInterfaceType,
  type GraphQLUnionType,
} from "graphql";
import { literalOf, type Operation } from "./transform.ts";
import { argumentValue, Random, type ValuePool } from "./values.ts";

const MAX_DEPTH = 4;
const ROOT_FIELDS_AT_MOST = 3;
const FIELDS_AT_MOST = 4;
const MUTATION_SHARE = 0.05;
/** Root fields the generator leaves out: mutations have their own cases, and these make no sense at random. */
const SKIPPED_ROOT_FIELDS = new Set<string>([]);

interface Builder {
  schema: GraphQLSchema;
  pool: ValuePool;
  random: Random;
  fragments: string[];
  variableDefinitions: string[];
  variables: Record<string, unknown>;
  names: number;
}

export function generateOperation(schema: GraphQLSchema, pool: ValuePool, seed: number): Operation {
  const random = new Random(seed);
  const builder: Builder = { schema, pool, random, fragments: [], variableDefinitions: [], variables: {}, names: 0 };
  // One document in twenty is a mutation: the only fields that take input objects.
  const mutation = schema.getMutationType();
  const root = mutation && random.chance(MUTATION_SHARE) ? mutation : schema.getQueryType()!;
  const rootFields = Object.values(root.getFields()).filter((field) => !SKIPPED_ROOT_FIELDS.has(field.name));
  const count = root === mutation ? 1 : 1 + random.int(ROOT_FIELDS_AT_MOST);
  const selections: string[] = [];
  for (const field of distinct(random, rootFields, count)) selections.push(fieldSelection(builder, root, field, 1));
  const definitions = builder.variableDefinitions.length > 0 ? `(${builder.variableDefinitions.join(", ")})` : "";
  const keyword = root === mutation ? "mutation" : "query";
  const text = [`${keyword} Generated${seed}${definitions} {\n${selections.join("\n")}\n}`, ...builder.fragments].join("\n\n");
  return { query: text, variables: builder.variables };
}

/** Up to `count` different items: one response name per field keeps selections mergeable. */
function distinct<T>(random: Random, items: readonly T[], count: number): T[] {
  const left = [...items];
  const chosen: T[] = [];
  while (chosen.length < count && left.length > 0) chosen.push(left.splice(random.int(left.length), 1)[0]!);
  return chosen;
}

function freshName(builder: Builder, base: string): string {
  builder.names += 1;
  return `${base}${builder.names}`;
}

function fieldSelection(
  builder: Builder,
  parent: GraphQLObjectType | GraphQLInterfaceType,
  field: GraphQLField<unknown, unknown>,
  depth: number,
): string {
  const { random } = builder;
  const alias = random.chance(0.15) ? `${freshName(builder, "a")}: ` : "";
  const args = field.args
    .filter((argument) => isNonNullType(argument.type) || argument.name === "first" || random.chance(argumentChance(argument)))
    .map((argument) => `${argument.name}: ${argumentText(builder, parent.name, field.name, argument)}`);
  const directive = directiveText(builder);
  const head = `${alias}${field.name}${args.length ? `(${args.join(", ")})` : ""}${directive}`;
  const type = getNamedType(field.type);
  if (isLeafType(type)) return head;
  return `${head} { ${subselection(builder, type, depth + 1)} }`;
}

function argumentChance(argument: GraphQLArgument): number {
  // Cursors and `last` are mostly left out: random ones only make errors.
  if (["after", "before", "last"].includes(argument.name)) return 0.04;
  return 0.3;
}

function argumentText(builder: Builder, parent: string, field: string, argument: GraphQLArgument): string {
  const { random, pool } = builder;
  const invalid = random.chance(0.04);
  const named = getNamedType(argument.type);
  if (isInputObjectType(named) && !isListType(getNullableType(argument.type))) return inputObjectText(builder, named, invalid);
  const value = argumentValue(pool, random, { parent, field, argument }, invalid);
  // Now and then through a variable written by hand (the transforms lift and inline the rest).
  if (random.chance(0.1)) return variableText(builder, argument.name, argument.type, value);
  return print(literalOf(value, argument.type));
}

/**
 * An input object literal: required fields given, optional ones sometimes, each as a literal, a
 * variable given a value, or a variable declared but left without one (its field's default, if
 * any, must then apply, as graphql-js applies it).
 */
function inputObjectText(
  builder: Builder,
  type: ReturnType<typeof getNamedType> & {
    getFields(): Record<string, { name: string; type: GraphQLInputType; defaultValue?: unknown }>;
  },
  invalid: boolean,
): string {
  const { random, pool } = builder;
  const fields: string[] = [];
  for (const field of Object.values(type.getFields())) {
    const required = isNonNullType(field.type);
    if (!required && !random.chance(field.defaultValue !== undefined ? 0.7 : 0.3)) continue;
    const named = getNamedType(field.type);
    if (isInputObjectType(named) && !isListType(getNullableType(field.type))) {
      fields.push(`${field.name}: ${inputObjectText(builder, named, false)}`);
      continue;
    }
    const value = argumentValue(
      pool,
      random,
      { parent: type.name, field: field.name, argument: field },
      invalid && random.chance(0.5),
    );
    const form = random.int(3);
    if (form === 0 || required) fields.push(`${field.name}: ${print(literalOf(value, field.type))}`);
    else if (form === 1) fields.push(`${field.name}: ${variableText(builder, field.name, field.type, value)}`);
    else fields.push(`${field.name}: ${variableText(builder, field.name, field.type, undefined)}`);
  }
  return `{${fields.join(", ")}}`;
}

function variableText(builder: Builder, hint: string, type: GraphQLInputType, value: unknown): string {
  const name = freshName(builder, `${hint}_v`);
  builder.variableDefinitions.push(`$${name}: ${String(type)}`);
  if (value !== undefined) builder.variables[name] = value;
  return `$${name}`;
}

function directiveText(builder: Builder): string {
  const { random } = builder;
  if (!random.chance(0.1)) return "";
  const directive = random.pick(["include", "skip"]);
  if (random.chance(0.5)) return ` @${directive}(if: ${random.chance(0.5)})`;
  const name = freshName(builder, "flag");
  builder.variableDefinitions.push(`$${name}: Boolean!`);
  builder.variables[name] = random.chance(0.5);
  return ` @${directive}(if: $${name})`;
}

function subselection(builder: Builder, type: GraphQLNamedType, depth: number): string {
  const { random, schema } = builder;
  if (isAbstractType(type)) {
    const possible = schema.getPossibleTypes(type as GraphQLInterfaceType | GraphQLUnionType);
    const parts = ["__typename"];
    if ("getFields" in type && random.chance(0.6)) parts.push(objectFields(builder, type as GraphQLInterfaceType, depth));
    for (const member of possible)
      if (random.chance(0.4)) parts.push(`... on ${member.name} { ${objectFields(builder, member, depth)} }`);
    return parts.join(" ");
  }
  if (!isObjectType(type)) return "__typename";
  if (random.chance(0.1)) {
    const name = freshName(builder, `${type.name}Part`);
    builder.fragments.push(`fragment ${name} on ${type.name} { ${objectFields(builder, type, depth)} }`);
    return random.chance(0.5) ? `...${name}` : `... on ${type.name} { ...${name} }`;
  }
  return objectFields(builder, type, depth);
}

function objectFields(builder: Builder, type: GraphQLObjectType | GraphQLInterfaceType, depth: number): string {
  const { random } = builder;
  const fields = Object.values(type.getFields());
  const leaves = fields.filter(
    (field) => isLeafType(getNamedType(field.type)) && field.args.every((argument) => !isNonNullType(argument.type)),
  );
  const candidates = depth >= MAX_DEPTH ? leaves : fields;
  const pool = candidates.length > 0 ? candidates : fields;
  const count = 1 + random.int(FIELDS_AT_MOST);
  const chosen: string[] = [];
  for (const field of distinct(random, pool, count)) {
    const selection = fieldSelection(builder, type, field, depth);
    // Now and then a field inside a fragment among the others: the answer keeps document order.
    const wrap = random.int(10);
    if (wrap === 0) chosen.push(`... on ${type.name} { ${selection} }`);
    else if (wrap === 1) {
      const name = freshName(builder, `${type.name}Part`);
      builder.fragments.push(`fragment ${name} on ${type.name} { ${selection} }`);
      chosen.push(`...${name}`);
    } else chosen.push(selection);
  }
  // A selection that @skip or @include(if: false) may empty keeps one unconditional leaf.
  chosen.push("__typename");
  return chosen.join(" ");
}
