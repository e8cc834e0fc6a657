/**
 * Every document the project has, one operation each with the fragments it spreads: the test
 * operations, the GraphiQL examples, the bench operations and the examples. Variables come with
 * the document where it has them (GraphiQL examples, the bench's `prepare`), otherwise from the
 * value pool, by the argument each variable fills.
 */
import { readdirSync, readFileSync } from "node:fs";
import {
  Kind,
  TypeInfo,
  getNamedType,
  isNonNullType,
  parse,
  print,
  visit,
  visitWithTypeInfo,
  type DefinitionNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from "graphql";
import { GRAPHIQL_EXAMPLES } from "../../src/plugins/graphiql-examples.ts";
import { referenceOperations } from "../../bench/operations/index.ts";
import { PlainUpstream } from "../../bench/upstream.ts";
import type { Operation } from "./transform.ts";
import { argumentValue, Random, type ValuePool } from "./values.ts";

export interface NamedOperation extends Operation {
  /** Where it comes from, e.g. "test/operations/blocks.graphql#ChainBlock". */
  source: string;
  kind: OperationDefinitionNode["operation"];
}

const root = new URL("../../", import.meta.url);

function graphqlFiles(folder: string): { path: string; text: string }[] {
  const directory = new URL(folder, root);
  return readdirSync(directory)
    .filter((name) => name.endsWith(".graphql"))
    .sort()
    .map((name) => ({ path: `${folder}${name}`, text: readFileSync(new URL(name, directory), "utf8") }));
}

/** Each operation of the documents with the fragments it spreads, through fragments too. */
export function splitOperations(
  documents: { path: string; document: DocumentNode }[],
): { source: string; operation: OperationDefinitionNode; document: DocumentNode }[] {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const { document } of documents)
    for (const definition of document.definitions)
      if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const result: { source: string; operation: OperationDefinitionNode; document: DocumentNode }[] = [];
  for (const { path, document } of documents) {
    document.definitions.forEach((definition, index) => {
      if (definition.kind !== Kind.OPERATION_DEFINITION) return;
      const needed = new Map<string, FragmentDefinitionNode>();
      const collect = (node: DefinitionNode) =>
        visit(node, {
          FragmentSpread(spread) {
            const name = spread.name.value;
            const fragment = fragments.get(name);
            if (!fragment || needed.has(name)) return;
            needed.set(name, fragment);
            collect(fragment);
          },
        });
      collect(definition);
      result.push({
        source: `${path}#${definition.name?.value ?? index}`,
        operation: definition,
        document: { kind: Kind.DOCUMENT, definitions: [definition, ...needed.values()] },
      });
    });
  }
  return result;
}

/** Values for an operation's variables: each from the argument (or input field) it fills. */
export function variablesFor(
  schema: GraphQLSchema,
  document: DocumentNode,
  pool: ValuePool,
  random: Random,
): Record<string, unknown> {
  const typeInfo = new TypeInfo(schema);
  const usage = new Map<string, { parent: string; field: string; name: string; type: GraphQLInputType }>();
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Argument(node) {
        if (node.value.kind !== Kind.VARIABLE || usage.has(node.value.name.value)) return;
        const argument = typeInfo.getArgument();
        const parent = typeInfo.getParentType();
        const field = typeInfo.getFieldDef();
        if (argument && parent && field)
          usage.set(node.value.name.value, { parent: parent.name, field: field.name, name: argument.name, type: argument.type });
      },
      ObjectField(node) {
        if (node.value.kind !== Kind.VARIABLE || usage.has(node.value.name.value)) return;
        const type = typeInfo.getInputType();
        const parent = typeInfo.getParentInputType();
        if (type && parent)
          usage.set(node.value.name.value, { parent: getNamedType(parent).name, field: "", name: node.name.value, type });
      },
    }),
  );
  const variables: Record<string, unknown> = {};
  const operation = document.definitions.find(
    (definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION,
  )!;
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    const used = usage.get(name);
    if (!used) continue;
    const required = definition.type.kind === Kind.NON_NULL_TYPE && !definition.defaultValue;
    // Optional variables: page sizes always (small pages), others now and then.
    if (!required && used.name !== "first" && !random.chance(0.4)) continue;
    const given = INPUTS[getNamedType(used.type).name];
    variables[name] = given
      ? given(pool)
      : argumentValue(
          pool,
          random,
          { parent: used.parent, field: used.field, argument: { name: used.name, type: used.type } },
          false,
        );
    if (isNonNullType(used.type) && variables[name] === null) delete variables[name];
  }
  return variables;
}

/** Input objects the pool cannot make up field by field. */
const INPUTS: Record<string, (pool: ValuePool) => unknown> = {
  ExportTransactionsInput: () => ({ primaryNetwork: { includeChains: ["p-chain"] } }),
  AggregateWarpSignaturesInput: (pool) => ({ network: "FUJI", justification: "0x00", signingSubnetId: pool.subnetIds[0] }),
};

export async function projectOperations(
  schema: GraphQLSchema,
  pool: ValuePool,
  simulator: { dataUrl: string; metricsUrl: string },
  seed: number,
): Promise<NamedOperation[]> {
  const random = new Random(seed);
  const operations: NamedOperation[] = [];
  const fromFiles = (folder: string) => {
    const documents = graphqlFiles(folder).map(({ path, text }) => ({ path, document: parse(text) }));
    for (const { source, operation, document } of splitOperations(documents)) {
      operations.push({
        source,
        kind: operation.operation,
        query: print(document),
        variables: variablesFor(schema, document, pool, random),
      });
    }
  };
  fromFiles("test/operations/");
  fromFiles("examples/");

  GRAPHIQL_EXAMPLES.forEach((example, index) => {
    for (const { source, operation, document } of splitOperations([
      { path: `graphiql#${index}`, document: parse(example.query) },
    ])) {
      operations.push({
        source,
        kind: operation.operation,
        query: print(document),
        variables: example.variables ?? variablesFor(schema, document, pool, random),
      });
    }
  });

  const upstream = new PlainUpstream(simulator.dataUrl, simulator.metricsUrl);
  try {
    for (const reference of referenceOperations) {
      const prepared = await reference.prepare(upstream);
      for (const { source, operation, document } of splitOperations([
        { path: `bench/operations/${reference.name}.graphql`, document: parse(reference.document) },
      ])) {
        operations.push({ source, kind: operation.operation, query: print(document), variables: prepared.variables });
      }
    }
  } finally {
    await upstream.close();
  }
  return operations;
}
