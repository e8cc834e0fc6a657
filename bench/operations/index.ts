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
import type { ReferenceOperation } from "./types.ts";

export type { PreparedOperation, ReferenceOperation } from "./types.ts";

export const referenceOperations: ReferenceOperation[] = [
  latestBlocks,
  addressPage,
  blockPage,
  primaryNetworkTransactions,
  deepQuery,
  chainMetric90Days,
];
