/**
 * The reference operations of the benchmark, one module each beside its GraphQL document. Each
 * names the longest chain of dependent upstream calls it needs, the fewest upstream calls its
 * data allows (from the simulator's own answers), and its baseline: the same upstream calls
 * made by hand with undici.
 */
import { addressPage } from "./address-page.ts";
import { blockPage } from "./block-page.ts";
import { chainMetric90Days } from "./chain-metric-90-days.ts";
import { deepQuery } from "./deep-query.ts";
import { latestBlocks } from "./latest-blocks.ts";
import { primaryNetworkTransactions } from "./primary-network-transactions.ts";
import type { PreparedOperation, ReferenceOperation } from "./types.ts";

export type { PreparedOperation, ReferenceOperation } from "./types.ts";

export const referenceOperations: ReferenceOperation[] = [
  latestBlocks,
  addressPage,
  blockPage,
  primaryNetworkTransactions,
  deepQuery,
  chainMetric90Days,
];

/** What a bench loads: a reference operation, or the fixed-cost probe. */
export type Compared = Pick<ReferenceOperation & PreparedOperation, "name" | "document" | "variables">;

/**
 * A request that needs no upstream call and almost no execution: what every request costs the
 * gateway whatever it asks (reading, admission, the plugin chain, writing the answer). A change
 * to that path shows here undiluted by execution and the simulator.
 */
export const FIXED_COST: Compared = { name: "typename", document: "query Typename { __typename }", variables: {} };
