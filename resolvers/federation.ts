/**
 * `Query._entities`, the field a federation router asks this subgraph's entities by: each
 * representation is read and checked first, all of them before any look-up, then looked up through
 * the request's loaders as the matching look-up field would, each failing on its own item.
 */
import { EntityRef, Representation, asEntityOf, entityLookup, isObject, type EntityLookup } from "../schema/federation.ts";
import { builder } from "../schema/builder.ts";
import type { GatewayContext } from "../src/execution/context.ts";
import { badUserInput } from "../src/errors.ts";
import { upstreamCalls, type EntityLookups } from "../src/limits/upstream-cost-declarations.ts";

interface KeyedRepresentation {
  typename: string;
  lookup: EntityLookup;
  key: unknown;
}

/** Every representation's entity type and key, or the first refusal; at most `max` representations. */
function readRepresentations(representations: readonly unknown[], max: number): KeyedRepresentation[] {
  if (representations.length > max) {
    throw badUserInput(
      "representations",
      `representations holds ${representations.length} representations, over the limit of ${max} (MAX_ENTITY_REPRESENTATIONS): representations[${max}] and after are too many; ask for fewer entities per request`,
      { index: max, max },
    );
  }
  return representations.map((value, index) => {
    if (!isObject(value)) {
      throw badUserInput("representations", `representations[${index}] must be an object with a __typename and a key`, {
        index,
      });
    }
    const representation = new Representation(index, value);
    const typename = value.__typename;
    const lookup = typeof typename === "string" ? entityLookup(typename) : undefined;
    if (lookup === undefined || typeof typename !== "string") {
      throw representation.refused("__typename", "must name an entity type of this subgraph", typename);
    }
    return { typename, lookup, key: lookup.key(representation) };
  });
}

/** The distinct look-ups of each entity type the representations name; none when one is refused (nothing then runs). */
function distinctLookups(args: Record<string, unknown>): EntityLookups {
  let keyed: KeyedRepresentation[];
  try {
    keyed = readRepresentations((args.representations as readonly unknown[] | undefined) ?? [], Number.POSITIVE_INFINITY);
  } catch {
    return [];
  }
  const byType = new Map<string, { cost: EntityLookup["cost"]; keys: Set<string> }>();
  for (const { typename, lookup, key } of keyed) {
    let group = byType.get(typename);
    if (!group) byType.set(typename, (group = { cost: lookup.cost, keys: new Set() }));
    group.keys.add(JSON.stringify(key));
  }
  return [...byType].map(([type, { cost, keys }]) => ({ type, count: keys.size, cost }));
}

async function found(keyed: KeyedRepresentation, context: GatewayContext): Promise<unknown> {
  const entity = await keyed.lookup.load(keyed.key, context);
  return entity === null ? null : asEntityOf(entity, keyed.typename);
}

builder.queryField("_entities", (t) =>
  t.field({
    type: [EntityRef],
    nullable: { list: false, items: true },
    // Each representation costs what its matching look-up field costs: the same loaders answer it.
    extensions: upstreamCalls({ calls: 0, lookups: distinctLookups }),
    description:
      "The entities that a federation router asks this subgraph for, one per representation, in order; an entity that does not exist is null, and one whose look-up fails is null with its error at its index. Every representation is checked before anything is looked up: a malformed key, an unknown `__typename` or more than MAX_ENTITY_REPRESENTATIONS representations refuse them all (BAD_USER_INPUT naming the index).",
    args: {
      representations: t.arg({
        type: ["_Any"],
        required: true,
        description: "Each entity's `__typename` and the fields of one of its `@key`s.",
      }),
    },
    resolve: (_root, args, context) =>
      readRepresentations(args.representations, context.maxEntityRepresentations).map((keyed) => found(keyed, context)),
  }),
);
