/**
 * How a live stream is resumed after a reconnect: `afterBlock`, the last block number (or height)
 * the client saw. On connections `after` is an opaque cursor; here it was a block number, so the
 * older name stays only as a deprecated alias of `afterBlock`.
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
