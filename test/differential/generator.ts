/**
 * Seeded documents over the printed schema: random selections under Query with aliases, named
 * fragments, inline fragments on interfaces and unions, @include/@skip, list and enum arguments,
 * and input objects (literal, through variables, and with fields left to their defaults). Driven
 * by the schema alone, so that renamed fields need no change here. Pages stay small (`first` ≤ 3)
 * and nesting shallow, so that a thousand documents cost little upstream, but for `first: 0` and
 * `first` at its largest (the bound each connection's description states, from its route) now
 * and then.
 *
 * Selections merge as execution merges them: a response key is now and then selected again,
 * with the same arguments and another sub-selection, under another `@skip`/`@include` (literal or
 * through a variable) or none, bare or inside an inline or named fragment that may carry its own;
 * a named fragment is now and then spread again where it merges, and a fragment of a type's
 * argument-free leaves is spread wherever that type is, under its own conditions. Each merged
 * selection set keeps the arguments of each response key it has given (see `Scope`).
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
/** How often a selected field is selected again under its response key, somewhere among its siblings. */
const AGAIN_SHARE = 0.06;
/** How often a selection set spreads again a named fragment written for it (in a document of conditional merges). */
const SPREAD_AGAIN_SHARE = 0.1;
/** How often a selection set spreads its type's fragment of argument-free leaves, shared by every place of the type. */
const SHARED_FRAGMENT_SHARE = 0.05;
/**
 * The share of documents whose selections merged again carry `@skip`/`@include` (and whose
 * fragments are spread again in one selection set): compiled execution leaves those to graphql-js
 * (src/plugins/compiled-execution.ts), so the other documents merge selections without conditions.
 */
const CONDITIONAL_MERGES_SHARE = 0.2;
/** How often a connection's `first` is 0, and how often its largest. */
const FIRST_ZERO_SHARE = 0.08;
const FIRST_MAX_SHARE = 0.04;
/** Root fields the generator leaves out: mutations have their own cases, and these make no sense at random. */
const SKIPPED_ROOT_FIELDS = new Set<string>([]);

/**
 * One merged selection set: what it has selected so far, so that a field selected again there
 * (bare, in a fragment, or under another selection of the key above) merges with the others.
 */
interface Scope {
  /** The head (alias, name and arguments) given to each response key, with the field and arguments it names. */
  heads: Map<string, { text: string; field: string; args: string[] }>;
  /** The merged selection set under each of those keys. */
  below: Map<string, Scope>;
  /** Named fragments written for this selection set, by type condition: spread here again, they merge. */
  fragments: Map<string, string[]>;
  /** The types' shared fragments spread here. */
  shared: Set<string>;
}

const newScope = (): Scope => ({ heads: new Map(), below: new Map(), fragments: new Map(), shared: new Set() });

interface Builder {
  schema: GraphQLSchema;
  pool: ValuePool;
  random: Random;
  fragments: string[];
  variableDefinitions: string[];
  variables: Record<string, unknown>;
  names: number;
  /** Each type's fragment of argument-free leaves (null for a type without any), spread wherever the type is. */
  shared: Map<string, string | null>;
  /** Whether selections merged again (fragments spread again) may carry conditions: see CONDITIONAL_MERGES_SHARE. */
  conditionalMerges: boolean;
}

export function generateOperation(schema: GraphQLSchema, pool: ValuePool, seed: number): Operation {
  const random = new Random(seed);
  const builder: Builder = {
    schema,
    pool,
    random,
    fragments: [],
    variableDefinitions: [],
    variables: {},
    names: 0,
    shared: new Map(),
    conditionalMerges: random.chance(CONDITIONAL_MERGES_SHARE),
  };
  // One document in twenty is a mutation: the only fields that take input objects.
  const mutation = schema.getMutationType();
  const root = mutation && random.chance(MUTATION_SHARE) ? mutation : schema.getQueryType()!;
  const rootFields = Object.values(root.getFields()).filter((field) => !SKIPPED_ROOT_FIELDS.has(field.name));
  const count = root === mutation ? 1 : 1 + random.int(ROOT_FIELDS_AT_MOST);
  const scope = newScope();
  const selections: string[] = [];
  const again: string[] = [];
  for (const field of distinct(random, rootFields, count)) {
    const head = fieldHead(builder, scope, root, field);
    // A mutation's field runs once, however often it is selected: left as it is.
    const selectAgain = root !== mutation && random.chance(AGAIN_SHARE);
    selections.push(
      rendered(builder, scope, head, field, selectAgain ? mergeCondition(builder, 0.1) : directiveText(builder), 1),
    );
    if (selectAgain) again.push(selectedAgain(builder, scope, root, head, field, 1));
  }
  for (const selection of again) selections.splice(random.int(selections.length + 1), 0, selection);
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

/**
 * A field's alias, name and arguments in `scope`: those its response key already has there (when
 * they fit the field: the same field, of this or a related type, with those arguments), else new ones.
 */
interface Head {
  text: string;
  /** The response key, which names the head and the selection set below it in the scope. */
  key: string;
}

function fieldHead(
  builder: Builder,
  scope: Scope,
  parent: GraphQLObjectType | GraphQLInterfaceType,
  field: GraphQLField<unknown, unknown>,
): Head {
  const { random } = builder;
  const alias = random.chance(0.15) ? freshName(builder, "a") : undefined;
  const key = alias ?? field.name;
  const known = scope.heads.get(key);
  const fits =
    known !== undefined &&
    known.field === field.name &&
    known.args.every((name) => field.args.some((argument) => argument.name === name)) &&
    field.args.every((argument) => !isNonNullType(argument.type) || known.args.includes(argument.name));
  if (fits) return { text: known.text, key };
  const args = field.args.filter(
    (argument) => isNonNullType(argument.type) || argument.name === "first" || random.chance(argumentChance(argument)),
  );
  const written = args.map((argument) => `${argument.name}: ${argumentText(builder, parent.name, field, argument)}`);
  const text = `${alias === undefined ? "" : `${alias}: `}${field.name}${written.length ? `(${written.join(", ")})` : ""}`;
  if (known === undefined) scope.heads.set(key, { text, field: field.name, args: args.map((argument) => argument.name) });
  return { text, key };
}

/** The field under its head with `directives`, and a sub-selection in the key's merged selection set. */
function rendered(
  builder: Builder,
  scope: Scope,
  head: Head,
  field: GraphQLField<unknown, unknown>,
  directives: string,
  depth: number,
): string {
  const type = getNamedType(field.type);
  if (isLeafType(type)) return `${head.text}${directives}`;
  let below = scope.below.get(head.key);
  if (!below) scope.below.set(head.key, (below = newScope()));
  return `${head.text}${directives} { ${subselection(builder, below, type, depth + 1)} }`;
}

/**
 * The same response key selected again: the same head, another sub-selection, mostly under a
 * condition of its own, and now and then inside an inline fragment (with or without a type
 * condition) or a named fragment, which may carry a condition too.
 */
function selectedAgain(
  builder: Builder,
  scope: Scope,
  parent: GraphQLObjectType | GraphQLInterfaceType,
  head: Head,
  field: GraphQLField<unknown, unknown>,
  depth: number,
): string {
  const { random } = builder;
  const selection = rendered(builder, scope, head, field, mergeCondition(builder, 0.6), depth);
  switch (random.int(4)) {
    case 0:
      return `... on ${parent.name}${mergeCondition(builder, 0.3)} { ${selection} }`;
    case 1:
      return `...${mergeCondition(builder, 0.8)} { ${selection} }`;
    case 2:
      return `...${namedFragment(builder, scope, parent.name, selection)}${mergeCondition(builder, 0.3)}`;
    default:
      return selection;
  }
}

/** A named fragment of `selection` on `type`, written for `scope` (which may spread it again). */
function namedFragment(builder: Builder, scope: Scope, type: string, selection: string): string {
  const name = freshName(builder, `${type}Part`);
  builder.fragments.push(`fragment ${name} on ${type} { ${selection} }`);
  let written = scope.fragments.get(type);
  if (!written) scope.fragments.set(type, (written = []));
  written.push(name);
  return name;
}

/**
 * The spread of the type's fragment of argument-free leaves (written on first use); undefined for
 * a type without any, and for one already spread in this selection set unless the document is
 * one of conditional merges (spread twice in one selection set, compiled execution leaves it to
 * graphql-js).
 */
function sharedSpread(builder: Builder, scope: Scope, type: GraphQLObjectType | GraphQLInterfaceType): string | undefined {
  if (scope.shared.has(type.name) && !builder.conditionalMerges) return undefined;
  scope.shared.add(type.name);
  let name = builder.shared.get(type.name);
  if (name === undefined) {
    const leaves = Object.values(type.getFields()).filter(
      (field) => field.args.length === 0 && isLeafType(getNamedType(field.type)),
    );
    if (leaves.length === 0) name = null;
    else {
      name = freshName(builder, `${type.name}Leaves`);
      const chosen = distinct(builder.random, leaves, 1 + builder.random.int(3));
      builder.fragments.push(`fragment ${name} on ${type.name} { ${chosen.map((field) => field.name).join(" ")} }`);
    }
    builder.shared.set(type.name, name);
  }
  return name === null ? undefined : `...${name}${mergeCondition(builder, 0.5)}`;
}

function argumentChance(argument: GraphQLArgument): number {
  // Cursors and `last` are mostly left out: random ones only make errors.
  if (["after", "before", "last"].includes(argument.name)) return 0.04;
  return 0.3;
}

function argumentText(
  builder: Builder,
  parent: string,
  field: GraphQLField<unknown, unknown>,
  argument: GraphQLArgument,
): string {
  const { random, pool } = builder;
  const invalid = random.chance(0.04);
  const named = getNamedType(argument.type);
  if (isInputObjectType(named) && !isListType(getNullableType(argument.type))) return inputObjectText(builder, named, invalid);
  const value =
    argument.name === "first" && !invalid
      ? firstValue(random, parent, field)
      : argumentValue(pool, random, { parent, field: field.name, argument }, invalid);
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

/**
 * A connection's `first`: now and then 0 or the largest its route takes (the bound its
 * description states, which the gateway takes from the route), else a small page.
 */
function firstValue(random: Random, parent: string, field: GraphQLField<unknown, unknown>): number {
  const roll = random.next();
  if (roll < FIRST_ZERO_SHARE) return 0;
  if (roll < FIRST_ZERO_SHARE + FIRST_MAX_SHARE) return firstBounds(parent, field).max;
  return 1 + random.int(3);
}

/** The bounds of a connection's `first` as its description states them ("`first`: 0 to 100, default 10."). */
export function firstBounds(parent: string, field: GraphQLField<unknown, unknown>): { min: number; max: number } {
  const stated = /`first`: (\d+) to (\d+)/.exec(field.description ?? "");
  if (!stated) throw new Error(`${parent}.${field.name} takes first but its description states no bounds for it`);
  return { min: Number(stated[1]), max: Number(stated[2]) };
}

/** Now and then (one selection in ten) a condition: see `conditionText`. */
function directiveText(builder: Builder): string {
  return conditionText(builder, 0.1);
}

/** A condition on a selection merged again, in a document of conditional merges: see `conditionText`. */
function mergeCondition(builder: Builder, chance: number): string {
  return builder.conditionalMerges ? conditionText(builder, chance) : "";
}

/**
 * With `chance`, `@skip` or `@include` (now and then both), each with a literal or a variable
 * given a value; else nothing.
 */
function conditionText(builder: Builder, chance: number): string {
  const { random } = builder;
  if (!random.chance(chance)) return "";
  const directives = random.chance(0.15) ? ["skip", "include"] : [random.pick(["include", "skip"])];
  return directives
    .map((directive) => {
      if (random.chance(0.5)) return ` @${directive}(if: ${random.chance(0.5)})`;
      const name = freshName(builder, "flag");
      builder.variableDefinitions.push(`$${name}: Boolean!`);
      builder.variables[name] = random.chance(0.5);
      return ` @${directive}(if: $${name})`;
    })
    .join("");
}

function subselection(builder: Builder, scope: Scope, type: GraphQLNamedType, depth: number): string {
  const { random, schema } = builder;
  if (isAbstractType(type)) {
    const possible = schema.getPossibleTypes(type as GraphQLInterfaceType | GraphQLUnionType);
    const parts = ["__typename"];
    if ("getFields" in type && random.chance(0.6)) parts.push(objectFields(builder, scope, type as GraphQLInterfaceType, depth));
    for (const member of possible)
      if (random.chance(0.4)) parts.push(`... on ${member.name} { ${objectFields(builder, scope, member, depth)} }`);
    return parts.join(" ");
  }
  if (!isObjectType(type)) return "__typename";
  if (random.chance(0.1)) {
    const name = namedFragment(builder, scope, type.name, objectFields(builder, scope, type, depth));
    return random.chance(0.5) ? `...${name}` : `... on ${type.name} { ...${name} }`;
  }
  return objectFields(builder, scope, type, depth);
}

function objectFields(builder: Builder, scope: Scope, type: GraphQLObjectType | GraphQLInterfaceType, depth: number): string {
  const { random } = builder;
  const fields = Object.values(type.getFields());
  const leaves = fields.filter(
    (field) => isLeafType(getNamedType(field.type)) && field.args.every((argument) => !isNonNullType(argument.type)),
  );
  const candidates = depth >= MAX_DEPTH ? leaves : fields;
  const pool = candidates.length > 0 ? candidates : fields;
  const count = 1 + random.int(FIELDS_AT_MOST);
  const chosen: string[] = [];
  const again: string[] = [];
  for (const field of distinct(random, pool, count)) {
    const head = fieldHead(builder, scope, type, field);
    const selectAgain = random.chance(AGAIN_SHARE);
    const selection = rendered(
      builder,
      scope,
      head,
      field,
      selectAgain ? mergeCondition(builder, 0.1) : directiveText(builder),
      depth,
    );
    // Now and then a field inside a fragment among the others: the answer keeps document order.
    const wrap = random.int(10);
    if (wrap === 0) chosen.push(`... on ${type.name} { ${selection} }`);
    else if (wrap === 1) chosen.push(`...${namedFragment(builder, scope, type.name, selection)}`);
    else chosen.push(selection);
    if (selectAgain) again.push(selectedAgain(builder, scope, type, head, field, depth));
  }
  // Selected again anywhere among the others: before the first selection of the key, or after it with others between.
  for (const selection of again) chosen.splice(random.int(chosen.length + 1), 0, selection);
  const written = scope.fragments.get(type.name);
  if (written && builder.conditionalMerges && random.chance(SPREAD_AGAIN_SHARE))
    chosen.splice(random.int(chosen.length + 1), 0, `...${random.pick(written)}${mergeCondition(builder, 0.5)}`);
  if (random.chance(SHARED_FRAGMENT_SHARE)) {
    const spread = sharedSpread(builder, scope, type);
    if (spread) chosen.splice(random.int(chosen.length + 1), 0, spread);
  }
  // A selection that @skip or @include(if: false) may empty keeps one unconditional leaf.
  chosen.push("__typename");
  return chosen.join(" ");
}
