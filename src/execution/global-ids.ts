/**
 * Global ids (`Query.node(id:)`): base64 of `Type:key`. A global id is a client's value like any
 * argument: it is bounded, decoded and its key checked as strictly as the direct argument for
 * the same record, before any upstream call. Every refusal is a BAD_USER_INPUT on `node`.
 *
 * The relay plugin decodes and parses ids as it maps arguments, which may happen before the
 * operation runs (an analysis of the document): an error thrown there would fail the whole
 * operation, without a path. So decoding and parsing return a refusal inside the id instead, and
 * `node` throws it when it resolves; its siblings keep their data.
 */
import { isObjectType, type GraphQLResolveInfo } from "graphql";
import { badUserInput, GatewayError } from "../errors.ts";
import { operationIdArgument, quoted } from "../upstream/identifiers.ts";

/** Longer than any id this gateway gives out (~180 characters for a P-Chain transaction). */
export const MAX_GLOBAL_ID_LENGTH = 512;
/** Standard base64 with its padding, as the gateway writes ids. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const TYPENAME = /^[A-Za-z_]\w{0,63}$/;

function notAGlobalId(globalId: string, why: string): GatewayError {
  return badUserInput(
    "id",
    `id is not a global id of this gateway (${why}); pass an object's \`id\` unchanged, got ${quoted(globalId, 40)}`,
    {
      maxLength: MAX_GLOBAL_ID_LENGTH,
    },
  );
}

/** Stands for the type of an id that was refused: no GraphQL name starts with "!". */
const REFUSED_TYPENAME = "!refused";

interface DecodedId {
  typename: string;
  id: string;
}

/** The relay plugin's `decodeGlobalID`: the type name and the key, or the refusal in their place. */
export function decodeGlobalId(globalId: string): DecodedId {
  try {
    return decode(globalId);
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    return { typename: REFUSED_TYPENAME, id: error as unknown as string };
  }
}

function decode(globalId: string): DecodedId {
  if (globalId.length === 0 || globalId.length > MAX_GLOBAL_ID_LENGTH) {
    throw notAGlobalId(globalId, `it must be 1 to ${MAX_GLOBAL_ID_LENGTH} characters`);
  }
  if (!BASE64.test(globalId)) throw notAGlobalId(globalId, "it is not base64");
  const text = Buffer.from(globalId, "base64").toString("utf8");
  const separator = text.indexOf(":");
  const typename = text.slice(0, separator);
  if (separator <= 0 || !TYPENAME.test(typename) || separator === text.length - 1) {
    throw notAGlobalId(globalId, "it does not hold a type and a key");
  }
  return { typename, id: text.slice(separator + 1) };
}

/**
 * For `node`'s resolver: throws the refusal a decoded (and parsed) id carries, or refuses a
 * type that `node` cannot load (unknown, or not a Node).
 */
export function checkNodeId(decoded: { typename: string; id: unknown }, info: GraphQLResolveInfo): void {
  if (decoded.id instanceof GatewayError) throw decoded.id;
  const { typename } = decoded;
  const type = info.schema.getType(typename);
  const node = info.schema.getType("Node");
  const isNode = isObjectType(type) && type.getInterfaces().some((implemented) => implemented === node);
  if (!isNode)
    throw badUserInput(
      "id",
      `id names a type that cannot be refetched: ${quoted(typename, 64)} is not a Node type of this gateway`,
    );
}

/** The error for a global id whose key does not have its type's shape. */
export function malformedGlobalIdKey(typename: string, shape: string, key: string): GatewayError {
  return badUserInput("id", `id is not a global id of type ${typename}: its key must be ${shape}, got ${quoted(key)}`);
}

/** A node type's `id.parse`: runs a check that throws, and returns its refusal instead (see above). */
export function parsedOrRefused<Key>(parse: () => Key): Key | GatewayError {
  try {
    return parse();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
}

/** A node type's `loadOne`: the parsed key, or the refusal thrown (`node` throws it first). */
export function validKey<Key>(key: Key | GatewayError): Key {
  if (key instanceof GatewayError) throw key;
  return key;
}

const EXPORT_OPERATION = "ExportOperation";

/**
 * An export job's id as `exportOperation(id:)` takes it: the job's `operationId`, or the
 * `ExportOperation.id` the gateway gave out (a global id, whose key is the `operationId`). An
 * operation id has `-` (a UUID) or `.`/`_`/`:`, which base64 does not; a value that decodes to
 * another type's global id is refused, naming the argument.
 */
export function exportOperationKey(argument: string, value: string): string {
  if (!BASE64.test(value) || value.length > MAX_GLOBAL_ID_LENGTH) return operationIdArgument(argument, value);
  const decoded = decodeGlobalId(value);
  if (decoded.typename === EXPORT_OPERATION) return operationIdArgument(argument, decoded.id);
  if (decoded.typename === REFUSED_TYPENAME) return operationIdArgument(argument, value);
  throw badUserInput(
    argument,
    `${argument} is the global id of a ${quoted(decoded.typename, 64)}, not of an ExportOperation: pass the job's operationId or its ExportOperation.id`,
  );
}
