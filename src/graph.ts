/** Assembles the schema: the builder, every domain's types, then every domain's resolvers. */
import { builder } from "../schema/builder.ts";
import "../schema/scalars.ts";
import "../schema/chains.ts";
import "../schema/blocks.ts";
import "../resolvers/chains.ts";
import "../resolvers/blocks.ts";

export const schema = builder.toSchema();
