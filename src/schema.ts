/** Assembles the schema: the builder, every domain's types, then every domain's resolvers. */
import { builder } from "../schema/builder.ts";
import "../schema/scalars.ts";
import "../schema/chains.ts";
import "../schema/blocks.ts";
import "../schema/primary-network.ts";
import "../schema/primary-network-blocks.ts";
import "../schema/primary-network-utxos.ts";
import "../schema/primary-network-transaction-kinds.ts";
import "../schema/primary-network-transaction-details.ts";
import "../schema/primary-network-transactions.ts";
import "../schema/primary-network-validators.ts";
import "../schema/evm-transactions.ts";
import "../schema/metrics.ts";
import "../schema/exports.ts";
import "../schema/warp.ts";
import "../resolvers/chains.ts";
import "../resolvers/blocks.ts";
import "../resolvers/primary-network.ts";
import "../resolvers/primary-network-blocks.ts";
import "../resolvers/primary-network-utxos.ts";
import "../resolvers/primary-network-transactions.ts";
import "../resolvers/primary-network-validators.ts";
import "../resolvers/primary-network-links.ts";
import "../resolvers/evm-transactions.ts";
import "../resolvers/metrics.ts";
import "../resolvers/exports.ts";
import "../resolvers/warp.ts";

import { assertUpstreamCostsDeclared } from "./limits/upstream-cost-declarations.ts";

/** The gateway's schema; throws when a field that calls upstream declares no cost. */
export function buildSchema() {
  const built = builder.toSchema();
  assertUpstreamCostsDeclared(built);
  return built;
}

export const schema = buildSchema();
