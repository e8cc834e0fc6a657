import { resolveRef, type OpenApiDocument, type ParameterObject, type SchemaObject } from "./contract.ts";
import { badRequest } from "./errors.ts";

type Parsed = { value: unknown } | { violation: string } | undefined;

interface ParameterRule {
  name: string;
  location: "path" | "query";
  parse(values: readonly string[]): Parsed;
}

export interface ParsedParameters {
  path: Record<string, unknown>;
  query: Record<string, unknown>;
}

/**
 * Validates and converts the path and query parameters of one operation as
 * its contract declares them, with messages in the wording of the real
 * services ("pageSize must not be greater than 100"). Defaults from the
 * contract are filled in; unknown query parameters are ignored.
 */
export class OperationParameters {
  private readonly rules: ParameterRule[];

  constructor(document: OpenApiDocument, parameters: readonly ParameterObject[]) {
    this.rules = parameters
      .map((parameter) => resolveRef(document, parameter))
      .filter((parameter) => parameter.in === "path" || parameter.in === "query")
      .map((parameter) => compileRule(document, parameter));
  }

  /** @throws HttpError 400 naming every violated parameter rule. */
  parse(pathParams: Record<string, string>, searchParams: URLSearchParams): ParsedParameters {
    const parsed: ParsedParameters = { path: {}, query: {} };
    const violations: string[] = [];
    for (const rule of this.rules) {
      const values =
        rule.location === "path"
          ? pathParams[rule.name] === undefined
            ? []
            : [pathParams[rule.name]!]
          : searchParams.getAll(rule.name);
      const result = rule.parse(values);
      if (result === undefined) continue;
      if ("violation" in result) violations.push(result.violation);
      else parsed[rule.location][rule.name] = result.value;
    }
    if (violations.length > 0) throw badRequest(violations.join("; "));
    return parsed;
  }
}

function compileRule(document: OpenApiDocument, parameter: ParameterObject): ParameterRule {
  const { name } = parameter;
  const schema = resolveRef(document, parameter.schema ?? {});
  const required = parameter.required === true;
  const convert = compileSchema(document, name, schema);
  return {
    name,
    location: parameter.in === "path" ? "path" : "query",
    parse(values) {
      if (values.length === 0) {
        if (required) return { violation: `${name} should not be empty` };
        return schema.default === undefined ? undefined : { value: schema.default };
      }
      return convert(values);
    },
  };
}

type Converter = (values: readonly string[]) => Parsed;

function compileSchema(document: OpenApiDocument, name: string, schema: SchemaObject): Converter {
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  if (type === "array") {
    const items = resolveRef(document, schema.items ?? {});
    const convertItem = compileScalar(`each value in ${name}`, items);
    return (values) => {
      const converted: unknown[] = [];
      for (const value of values.flatMap((text) => text.split(","))) {
        const result = convertItem(value);
        if ("violation" in result) return result;
        converted.push(result.value);
      }
      return { value: converted };
    };
  }
  const convertScalar = compileScalar(name, { ...schema, type });
  return (values) => {
    if (values.length > 1) return { violation: `${name} must be a single value` };
    return convertScalar(values[0]!);
  };
}

function compileScalar(subject: string, schema: SchemaObject): (text: string) => { value: unknown } | { violation: string } {
  const { enum: allowed, minimum, maximum } = schema;
  const withinBounds = (value: number): { value: unknown } | { violation: string } => {
    if (minimum !== undefined && value < minimum) return { violation: `${subject} must not be less than ${minimum}` };
    if (maximum !== undefined && value > maximum) return { violation: `${subject} must not be greater than ${maximum}` };
    return { value };
  };
  if (allowed !== undefined) {
    const message = `${subject} must be one of the following values: ${allowed.join(", ")}`;
    return (text) => (allowed.includes(text) ? { value: text } : { violation: message });
  }
  switch (schema.type) {
    case "integer":
      return (text) =>
        /^-?\d+$/.test(text) ? withinBounds(Number(text)) : { violation: `${subject} must be an integer number` };
    case "number":
      return (text) => {
        const value = Number(text);
        return text.trim() !== "" && Number.isFinite(value)
          ? withinBounds(value)
          : { violation: `${subject} must be a number conforming to the specified constraints` };
      };
    case "boolean":
      return (text) =>
        text === "true" || text === "false" ? { value: text === "true" } : { violation: `${subject} must be a boolean value` };
    default:
      return (text) => ({ value: text });
  }
}
