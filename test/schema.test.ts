import { readFileSync } from "node:fs";
import {
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  isSpecifiedScalarType,
  lexicographicSortSchema,
  printSchema,
} from "graphql";
import { describe, expect, it } from "vitest";
import { schema } from "../src/schema.ts";

/** Every named thing of the public schema that lacks a description, as a schema coordinate. */
function undescribed(): string[] {
  const missing: string[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith("__") || isSpecifiedScalarType(type)) continue;
    if (!type.description?.trim()) missing.push(type.name);
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        if (!field.description?.trim()) missing.push(`${type.name}.${field.name}`);
        for (const arg of field.args) {
          if (!arg.description?.trim()) missing.push(`${type.name}.${field.name}(${arg.name}:)`);
        }
      }
    }
    if (isInputObjectType(type)) {
      for (const field of Object.values(type.getFields())) {
        if (!field.description?.trim()) missing.push(`${type.name}.${field.name}`);
      }
    }
    if (isEnumType(type)) {
      for (const value of type.getValues()) {
        if (!value.description?.trim()) missing.push(`${type.name}.${value.name}`);
      }
    }
  }
  return missing;
}

describe("the public schema", () => {
  it("describes every type, field, argument, input field and enum value", () => {
    expect(undescribed()).toEqual([]);
  });

  it("is what schema/schema.graphql says (run npm run schema after a change)", () => {
    const committed = readFileSync(new URL("../schema/schema.graphql", import.meta.url), "utf8");
    expect(committed).toBe(`${printSchema(lexicographicSortSchema(schema))}\n`);
  });
});
