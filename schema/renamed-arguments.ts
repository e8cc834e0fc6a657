/**
 * Arguments renamed for one vocabulary, each beside its older name, which stays deprecated and
 * still works (src/upstream/identifiers.ts `renamedArgument` reads either and refuses both):
 * `afterBlock`, how a live stream resumes (on connections `after` is an opaque cursor, on
 * subscriptions it was a block number), and `validationId`, an L1 validation's id everywhere
 * (the Data API's filter is `l1ValidationId`).
 */
import type { ArgBuilder } from "@pothos/core";
import type { builder } from "./builder.ts";

type SchemaTypes = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer Types> ? Types : never;

/** `afterBlock` and its deprecated alias `after`, described as `seen` says what the number counts. */
export function resumeArguments(arg: ArgBuilder<SchemaTypes>, seen: string) {
  return {
    afterBlock: arg({
      type: "BigInt",
      description: `${seen} (to resume after a reconnect), a block number in decimal: what came after it comes first, within \`LIVE_MAX_CATCH_UP\`.`,
    }),
    after: arg({
      type: "BigInt",
      deprecationReason: "Use `afterBlock`: on connections `after` is a cursor, here it is a block number.",
      description: "The older name of `afterBlock`; give one of them.",
    }),
  };
}

/** `validationId` and its deprecated alias `l1ValidationId`, described as `what` says it filters. */
export function validationIdArguments(arg: ArgBuilder<SchemaTypes>, what: string) {
  return {
    validationId: arg.string({ description: `${what} (cb58 or 0x hex).` }),
    l1ValidationId: arg.string({
      deprecationReason: "Use `validationId`, the name an L1 validation's id has everywhere in the graph.",
      description: "The older name of `validationId`.",
    }),
  };
}
