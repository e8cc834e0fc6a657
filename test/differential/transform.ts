/**
 * Two rewrites of an operation that must not change its answer: inlining its variables' values
 * as literals, and the reverse, lifting literal arguments (or the scalar leaves of literal input
 * objects) into variables. Both keep the document's operation and fragments otherwise as they are.
 */
import {
  Kind,
  TypeInfo,
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  parse,
  print,
  typeFromAST,
  valueFromASTUntyped,
  visit,
  visitWithTypeInfo,
  type ArgumentNode,
  type DocumentNode,
  type GraphQLInputType,
  type GraphQLSchema,
  type ObjectFieldNode,
  type OperationDefinitionNode,
  type TypeNode,
  type ValueNode,
  type VariableDefinitionNode,
} from "graphql";

export type Variables = Record<string, unknown>;

export interface Operation {
  query: string;
  variables: Variables;
}

/** A JSON value as a literal of `type`: strings of an enum type become enum values. */
export function literalOf(value: unknown, type: GraphQLInputType): ValueNode {
  if (value === null || value === undefined) return { kind: Kind.NULL };
  const nullable = getNullableType(type);
  if (isListType(nullable)) {
    const items = Array.isArray(value) ? value : [value];
    return { kind: Kind.LIST, values: items.map((item) => literalOf(item, nullable.ofType)) };
  }
  if (isInputObjectType(nullable) && typeof value === "object" && !Array.isArray(value)) {
    const fields = nullable.getFields();
    return {
      kind: Kind.OBJECT,
      fields: Object.entries(value as Record<string, unknown>).map(([name, fieldValue]) => ({
        kind: Kind.OBJECT_FIELD,
        name: { kind: Kind.NAME, value: name },
        // A field the type lacks keeps its value as an untyped literal: the gateway refuses it alike.
        value: fields[name] ? literalOf(fieldValue, fields[name].type) : untypedLiteral(fieldValue),
      })),
    };
  }
  if (
    isEnumType(nullable) &&
    typeof value === "string" &&
    /^[_A-Za-z][_0-9A-Za-z]*$/.test(value) &&
    !["true", "false", "null"].includes(value)
  ) {
    return { kind: Kind.ENUM, value };
  }
  return untypedLiteral(value);
}

function untypedLiteral(value: unknown): ValueNode {
  if (value === null || value === undefined) return { kind: Kind.NULL };
  if (typeof value === "boolean") return { kind: Kind.BOOLEAN, value };
  if (typeof value === "number")
    return Number.isInteger(value) ? { kind: Kind.INT, value: String(value) } : { kind: Kind.FLOAT, value: String(value) };
  if (typeof value === "string") return { kind: Kind.STRING, value };
  if (Array.isArray(value)) return { kind: Kind.LIST, values: value.map(untypedLiteral) };
  return {
    kind: Kind.OBJECT,
    fields: Object.entries(value as Record<string, unknown>).map(([name, fieldValue]) => ({
      kind: Kind.OBJECT_FIELD,
      name: { kind: Kind.NAME, value: name },
      value: untypedLiteral(fieldValue),
    })),
  };
}

function soleOperation(document: DocumentNode): OperationDefinitionNode {
  const operations = document.definitions.filter(
    (definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION,
  );
  if (operations.length !== 1) throw new Error(`expected one operation, found ${operations.length}`);
  return operations[0]!;
}

/**
 * The operation with every variable replaced by its value as a literal. A variable without a value
 * takes its definition's default; with neither, the argument or input field it fills is left
 * out (as graphql-js treats it), and a list item becomes null.
 */
export function inlineVariables(schema: GraphQLSchema, operation: Operation): Operation {
  const document = parse(operation.query);
  const definitions = new Map<string, VariableDefinitionNode>();
  for (const definition of soleOperation(document).variableDefinitions ?? [])
    definitions.set(definition.variable.name.value, definition);
  const valueOf = (name: string): { value: ValueNode } | undefined => {
    const definition = definitions.get(name);
    if (!definition) return undefined;
    if (Object.prototype.hasOwnProperty.call(operation.variables, name)) {
      const type = typeFromAST(schema, definition.type as never) as GraphQLInputType | undefined;
      if (!type) return undefined;
      return { value: literalOf(operation.variables[name], type) };
    }
    return definition.defaultValue ? { value: definition.defaultValue } : undefined;
  };
  const inlined = visit(document, {
    VariableDefinition: () => null,
    Argument(node: ArgumentNode) {
      if (node.value.kind !== Kind.VARIABLE) return undefined;
      const given = valueOf(node.value.name.value);
      return given ? { ...node, value: given.value } : null;
    },
    ObjectField(node: ObjectFieldNode) {
      if (node.value.kind !== Kind.VARIABLE) return undefined;
      const given = valueOf(node.value.name.value);
      return given ? { ...node, value: given.value } : null;
    },
    ListValue(node) {
      return {
        ...node,
        values: node.values.map((item) =>
          item.kind === Kind.VARIABLE ? (valueOf(item.name.value)?.value ?? { kind: Kind.NULL }) : item,
        ),
      };
    },
  });
  return { query: print(inlined), variables: {} };
}

export type LiftMode = "arguments" | "leaves";

/**
 * The operation with literal values moved into variables of fresh names, named after what they
 * fill but never the same as the argument (`$chain_id_0` for `id:`), so that an executor that
 * confused a field's arguments with the operation's variables would be caught.
 * "arguments": each argument whose value holds no variable becomes one variable of the
 * argument's type. "leaves": each scalar or enum inside a literal input object becomes a
 * variable of the input field's type, the object staying literal around it.
 */
export function liftLiterals(schema: GraphQLSchema, operation: Operation, mode: LiftMode): Operation {
  const document = parse(operation.query);
  const typeInfo = new TypeInfo(schema);
  const variables: Variables = { ...operation.variables };
  const added: VariableDefinitionNode[] = [];
  const taken = new Set(Object.keys(variables));
  for (const definition of soleOperation(document).variableDefinitions ?? []) taken.add(definition.variable.name.value);
  const variableFor = (hint: string, type: GraphQLInputType, literal: ValueNode): ValueNode => {
    let index = 0;
    const base = hint.replace(/[^_0-9A-Za-z]/g, "_");
    while (taken.has(`${base}_${index}`)) index++;
    const name = `${base}_${index}`;
    taken.add(name);
    variables[name] = valueFromASTUntyped(literal);
    added.push({
      kind: Kind.VARIABLE_DEFINITION,
      variable: { kind: Kind.VARIABLE, name: { kind: Kind.NAME, value: name } },
      type: typeNodeOf(type),
    });
    return { kind: Kind.VARIABLE, name: { kind: Kind.NAME, value: name } };
  };
  const fieldNames: string[] = [];
  const lifted = visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field: {
        enter(node) {
          fieldNames.push(node.alias?.value ?? node.name.value);
        },
        leave() {
          fieldNames.pop();
        },
      },
      Directive: () => false,
      Argument(node) {
        if (mode !== "arguments" || holdsVariable(node.value)) return undefined;
        const type = typeInfo.getInputType();
        if (!type) return undefined;
        return { ...node, value: variableFor(`${fieldNames.at(-1) ?? "op"}_${node.name.value}`, type, node.value) };
      },
      ObjectField(node) {
        if (mode !== "leaves" || holdsVariable(node.value) || node.value.kind === Kind.OBJECT || node.value.kind === Kind.LIST)
          return undefined;
        const type = typeInfo.getInputType();
        if (!type) return undefined;
        return { ...node, value: variableFor(`${fieldNames.at(-1) ?? "op"}_${node.name.value}`, type, node.value) };
      },
    }),
  );
  if (added.length === 0) return operation;
  const withDefinitions = visit(lifted, {
    OperationDefinition(node) {
      return { ...node, variableDefinitions: [...(node.variableDefinitions ?? []), ...added] };
    },
  });
  return { query: print(withDefinitions), variables };
}

function holdsVariable(value: ValueNode): boolean {
  if (value.kind === Kind.VARIABLE) return true;
  if (value.kind === Kind.LIST) return value.values.some(holdsVariable);
  if (value.kind === Kind.OBJECT) return value.fields.some((field) => holdsVariable(field.value));
  return false;
}

function typeNodeOf(type: GraphQLInputType): TypeNode {
  if (isNonNullType(type)) return { kind: Kind.NON_NULL_TYPE, type: typeNodeOf(type.ofType) as never };
  if (isListType(type)) return { kind: Kind.LIST_TYPE, type: typeNodeOf(type.ofType as GraphQLInputType) };
  return { kind: Kind.NAMED_TYPE, name: { kind: Kind.NAME, value: getNamedType(type).name } };
}
