/** What a query asks of a field's result, for resolvers that can answer without a fetch. */
import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from "graphql";

/** The names of the fields selected directly under the current field, through fragments. */
export function selectedFieldNames(info: GraphQLResolveInfo): Set<string> {
  const names = new Set<string>();
  const visit = (selectionSet: SelectionSetNode | undefined) => {
    for (const selection of selectionSet?.selections ?? []) {
      if (selection.kind === Kind.FIELD) names.add(selection.name.value);
      else if (selection.kind === Kind.INLINE_FRAGMENT) visit(selection.selectionSet);
      else visit(info.fragments[selection.name.value]?.selectionSet);
    }
  };
  for (const node of info.fieldNodes) visit(node.selectionSet);
  return names;
}

/** True when every field the query selects is in `answerable`. */
export function selectsOnly(info: GraphQLResolveInfo, answerable: ReadonlySet<string>): boolean {
  for (const name of selectedFieldNames(info)) if (!answerable.has(name)) return false;
  return true;
}
