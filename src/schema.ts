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
import "../schema/subnets.ts";
import { describeService } from "../schema/federation.ts";
import "../schema/entities.ts";
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
import "../resolvers/evm-accounts.ts";
import "../resolvers/subnets.ts";
import "../resolvers/federation.ts";

import { assertUpstreamCostsDeclared } from "./limits/upstream-cost-declarations.ts";

/** Federation v2.6, the link the Pothos plugin writes by default, named so that it does not move with the plugin. */
const FEDERATION_LINK = "https://specs.apollo.dev/federation/v2.6";

/**
 * The gateway's schema, a Federation v2 subgraph (`_service`, `_entities`); throws when a field
 * that calls upstream declares no cost.
 */
export function buildSchema() {
  const built = builder.toSubGraphSchema({ linkUrl: FEDERATION_LINK, federationDirectives: ["@key"] });
  describeService(built);
  assertUpstreamCostsDeclared(built);
  return built;
}

export const schema = buildSchema();
