/**
 * The gateway as a Federation v2 subgraph: the types another subgraph may refer to or extend
 * (entities, each with its `@key`s, declared next to its type with `entity`), the `_Any` scalar a
 * representation comes as, and the `_Entity` union `Query._entities` answers with
 * (resolvers/federation.ts).
 */
import { isObjectType, valueFromASTUntyped, type GraphQLSchema } from "graphql";
import type { ObjectRef } from "@pothos/core";
import type { GatewayContext } from "../src/execution/context.ts";
import { badUserInput, type GatewayError } from "../src/errors.ts";
import type { UpstreamCost } from "../src/limits/upstream-cost-declarations.ts";
import { quoted } from "../src/upstream/identifiers.ts";
import { builder } from "./builder.ts";
import { NETWORK_VALUES, upstreamNetwork, type NetworkName } from "./networks.ts";

builder.scalarType("_Any", {
  description:
    "An entity's representation, as a federation router sends it: an object with the entity's `__typename` and the fields of one of its `@key`s.",
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (node, variables) => valueFromASTUntyped(node, variables),
});

/**
 * One representation of `_entities(representations:)`, read field by field. Every refusal is a
 * BAD_USER_INPUT on `representations` that names the representation's index and the key field.
 */
export class Representation {
  constructor(
    readonly index: number,
    private readonly value: Readonly<Record<string, unknown>>,
    private readonly path = "",
  ) {}

  /** A key field that is a string, checked like the matching argument. */
  string(field: string, shape: string, valid: (value: string) => boolean): string {
    const value = this.value[field];
    if (typeof value === "string" && valid(value)) return value;
    throw this.refused(field, `must be ${shape}`, value);
  }

  /** A `Network` key field, by the enum value's name (`TESTNET` is `FUJI`, as in arguments). */
  network(field = "network"): NetworkName {
    const value = this.value[field];
    const named = typeof value === "string" && Object.hasOwn(NETWORK_VALUES, value) ? value : undefined;
    if (named === undefined) throw this.refused(field, "must be MAINNET or FUJI", value);
    return upstreamNetwork(NETWORK_VALUES[named as keyof typeof NETWORK_VALUES].value);
  }

  /** A key field that is an object with key fields of its own (`chain { chainId }`). */
  object(field: string): Representation {
    const value = this.value[field];
    if (!isObject(value)) throw this.refused(field, "must be an object", value);
    return new Representation(this.index, value, `${this.path}${field}.`);
  }

  /** Whether the representation gives a value for the field (one key of several may be given). */
  has(field: string): boolean {
    return this.value[field] !== undefined && this.value[field] !== null;
  }

  refused(field: string, why: string, value: unknown): GatewayError {
    const given = value === undefined ? "nothing" : quoted(typeof value === "string" ? value : JSON.stringify(value));
    return badUserInput("representations", `representations[${this.index}].${this.path}${field} ${why}, got ${given}`, {
      index: this.index,
      field: `${this.path}${field}`,
    });
  }
}

export function isObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** How an entity is found from a representation: its key read and checked, then looked up. */
export interface EntityLookup<Key = unknown, Parent = unknown> {
  /** The key a representation gives, checked like the matching argument (throws BAD_USER_INPUT). */
  key(representation: Representation): Key;
  /** The entity, through the request's loaders, as the matching look-up field finds it; null when there is none. */
  load(key: Key, context: GatewayContext): Parent | null | Promise<Parent | null>;
  /** What one distinct look-up costs upstream: the matching look-up field's declaration. */
  cost: UpstreamCost;
}

const lookups = new Map<string, EntityLookup>();
const entityRefs: ObjectRef<SchemaTypes, unknown>[] = [];

type SchemaTypes = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer Types> ? Types : never;

/** Makes a type an entity with these `@key`s (each a field set of the type's own fields), found by `lookup`. */
export function entity<Key, Shape, Parent>(
  ref: ObjectRef<SchemaTypes, Shape, Parent>,
  keys: readonly string[],
  lookup: EntityLookup<Key, Parent>,
): void {
  lookups.set(ref.name, lookup as EntityLookup);
  entityRefs.push(ref as ObjectRef<SchemaTypes, unknown>);
  builder.asEntity(ref as never, {
    key: keys.map((key) => builder.selection(key as never)),
    resolveReference: (representation: object, context: GatewayContext) =>
      lookup.load(lookup.key(new Representation(0, representation as Record<string, unknown>)), context) as never,
  });
}

/** The look-up of an entity type by its name; undefined for a type that is not an entity. */
export function entityLookup(typename: string): EntityLookup | undefined {
  return lookups.get(typename);
}

// Where `_entities` found an entity, the type it is: a record is the parent of one type only.
const ENTITY_TYPE = Symbol("entity type");

/** Marks what `_entities` found with its type, for `_Entity`'s resolveType. */
export function asEntityOf<T>(value: T, typename: string): T {
  if (isObject(value)) (value as { [ENTITY_TYPE]?: string })[ENTITY_TYPE] = typename;
  return value;
}

export const EntityRef = builder.unionType("_Entity", {
  description: "Every type of this subgraph that another subgraph may refer to by a `@key`.",
  types: () => entityRefs as never,
  resolveType: (value) => (value as { [ENTITY_TYPE]?: string })[ENTITY_TYPE] as never,
});

/**
 * Describes `Query._service` and `_Service`, which the federation plugin adds to the built schema
 * without a description (every named thing of the schema has one).
 */
export function describeService(schema: GraphQLSchema): void {
  const service = schema.getQueryType()?.getFields()._service;
  const type = schema.getType("_Service");
  if (!service || !isObjectType(type)) throw new Error("the subgraph schema has no _service");
  service.description = "This subgraph's SDL, as a federation composer reads it: `@link`, `@key`s and every type.";
  type.description = "What a federation composer asks a subgraph for.";
}
