/**
 * What a query asks of a field's result, for resolvers that can answer without a fetch, and for
 * the estimate of an operation's upstream calls, which must know when they do.
 */
import {
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  TypeNameMetaFieldDef,
  getDirectiveValues,
  type FieldNode,
  type FragmentDefinitionNode,
  type DocumentNode,
  type GraphQLResolveInfo,
  type OperationDefinitionNode,
  type SelectionNode,
  type SelectionSetNode,
} from "graphql";

/** Fields of a parent block that its child already tells: `EvmBlock.parent` fetches nothing for them. */
export const PARENT_BLOCK_FIELDS_KNOWN_FROM_CHILD: ReadonlySet<string> = new Set([
  "__typename",
  "id",
  "chainId",
  "blockHash",
  "blockNumber",
  "chain",
]);

/** Fields of a chain that an account on it already tells: `EvmAccount.chain` fetches nothing for them. */
export const CHAIN_FIELDS_KNOWN_FROM_ACCOUNT: ReadonlySet<string> = new Set(["__typename", "id", "chainId"]);

/** Fields of a block that a transaction in it already tells: `EvmTransaction.block` fetches nothing for them. */
export const BLOCK_FIELDS_KNOWN_FROM_TRANSACTION: ReadonlySet<string> = new Set([
  "__typename",
  "id",
  "chainId",
  "blockNumber",
  "blockHash",
  "blockTimestamp",
  "blockTime",
  "blockTimestampMilliseconds",
  "blockMinDelayExcess",
  "chain",
]);

/**
 * Fields of a primary-network block that a transaction in it already tells (its block's height,
 * id and time, and the chain): `block` of a P-, X- or C-Chain transaction fetches nothing for them.
 */
export const PRIMARY_NETWORK_BLOCK_FIELDS_KNOWN_FROM_TRANSACTION: ReadonlySet<string> = new Set([
  "__typename",
  "id",
  "network",
  "blockchainId",
  "chainName",
  "blockNumber",
  "blockHash",
  "blockTimestamp",
  "blockTime",
]);

/**
 * Fields of a primary-network block that a P-Chain UTXO already tells of the blocks that created
 * and spent it (height and time, not the block's id): `creationBlock` and `consumingBlock` of a
 * P-Chain UTXO fetch nothing for them.
 */
export const PRIMARY_NETWORK_BLOCK_FIELDS_KNOWN_FROM_UTXO: ReadonlySet<string> = new Set([
  "__typename",
  "network",
  "blockchainId",
  "chainName",
  "blockNumber",
  "blockTimestamp",
  "blockTime",
]);

/**
 * The names of the fields selected directly under some field nodes, through fragments; with
 * `included`, only through the selections it keeps (their `@skip` and `@include`).
 */
export function fieldNamesUnder(
  fieldNodes: readonly { readonly selectionSet?: SelectionSetNode | undefined }[],
  fragments: Readonly<Record<string, FragmentDefinitionNode | undefined>>,
  included: (selection: SelectionNode) => boolean = () => true,
): Set<string> {
  const names = new Set<string>();
  const visit = (selectionSet: SelectionSetNode | undefined) => {
    for (const selection of selectionSet?.selections ?? []) {
      if (!included(selection)) continue;
      if (selection.kind === Kind.FIELD) names.add(selection.name.value);
      else if (selection.kind === Kind.INLINE_FRAGMENT) visit(selection.selectionSet);
      else visit(fragments[selection.name.value]?.selectionSet);
    }
  };
  for (const node of fieldNodes) visit(node.selectionSet);
  return names;
}

const INTROSPECTION_FIELDS: ReadonlySet<string> = new Set(
  [SchemaMetaFieldDef, TypeMetaFieldDef, TypeNameMetaFieldDef].map((field) => field.name),
);

/** True when an operation selects nothing at its root but introspection (`__schema`, `__type`, `__typename`), through fragments. */
export function selectsOnlyIntrospection(document: DocumentNode, operation: OperationDefinitionNode): boolean {
  const fragments: Record<string, FragmentDefinitionNode> = {};
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
  return [...fieldNamesUnder([operation], fragments)].every((name) => INTROSPECTION_FIELDS.has(name));
}

/** True when every field selected under the field nodes is in `answerable`. */
export function selectsOnlyFrom(
  fieldNodes: readonly FieldNode[],
  fragments: Readonly<Record<string, FragmentDefinitionNode | undefined>>,
  answerable: ReadonlySet<string>,
): boolean {
  for (const name of fieldNamesUnder(fieldNodes, fragments)) if (!answerable.has(name)) return false;
  return true;
}

/**
 * What `selectsOnly` found for a field's nodes, per set asked about. A list's items share their
 * field's nodes (graphql-jit's across requests too, for as long as the document is compiled):
 * the walk is made once for them, not once per item. Nodes belong to one document, whose
 * fragments they are read with.
 */
const selectionAnswers = new WeakMap<readonly FieldNode[], Map<ReadonlySet<string>, boolean>>();

/** True when every field the query selects is in `answerable`. */
export function selectsOnly(info: GraphQLResolveInfo, answerable: ReadonlySet<string>): boolean {
  let answers = selectionAnswers.get(info.fieldNodes);
  if (answers === undefined) selectionAnswers.set(info.fieldNodes, (answers = new Map()));
  let answer = answers.get(answerable);
  if (answer === undefined) answers.set(answerable, (answer = selectsOnlyFrom(info.fieldNodes, info.fragments, answerable)));
  return answer;
}

/**
 * True when the query asks for one of `names` directly under the field (through fragments), as
 * its `@skip` and `@include` decide: a field or fragment they leave out asks nothing. The field
 * nodes' own directives count too (graphql-jit passes every node of a response key).
 */
export function selectsAnyOf(info: GraphQLResolveInfo, names: ReadonlySet<string>): boolean {
  const included = (node: SelectionNode) =>
    getDirectiveValues(GraphQLSkipDirective, node, info.variableValues)?.if !== true &&
    getDirectiveValues(GraphQLIncludeDirective, node, info.variableValues)?.if !== false;
  const asked = fieldNamesUnder(info.fieldNodes.filter(included), info.fragments, included);
  return [...names].some((name) => asked.has(name));
}
