/**
 * What the data typically holds, where the document cannot tell: the estimate of upstream calls
 * (src/limits/upstream-calls.ts) is what a cold run (empty caches) is expected to make, not its
 * worst case. A plain list the upstream does not page holds `LIST_LENGTHS` (else
 * `ASSUMED_LIST_LENGTH`) items; links from a page's items to records the items share (an
 * address's transactions to their blocks, UTXOs to the transactions that created and spent them)
 * reach `SHARED_RECORDS_PER_ITEM` distinct records per item; a link only some transaction types
 * have is there on `TYPE_SPECIFIC_LINK_SHARE` of a page; a Warp verification's CPU counts as
 * `WARP_VERIFICATION_COST` calls. Each rule says in its comment what it was measured on.
 */
import type { Pool, SharedRecord, UpstreamCost } from "./upstream-cost-declarations.ts";

/**
 * What a plain list the upstream does not page is expected to hold: a vertex's parents, a
 * transaction's UTXOs. The data holds 1 to 3 (the simulator's as the service's): lists longer
 * than expected make more calls than estimated, which the settlement after the operation charges.
 */
export const ASSUMED_LIST_LENGTH = 2;

/**
 * Plain lists whose expected length is known better than `ASSUMED_LIST_LENGTH`; an expectation
 * may be fractional (the estimate is rounded up at the end).
 */
export const LIST_LENGTHS: Readonly<Record<string, number>> = {
  // an accepted X-Chain transaction is in one vertex
  "XChainTransaction.vertices": 1,
  // A primary-network block holds one transaction or none (the P-Chain's and the C-Chain's
  // atomic blocks since Banff; 0.4 on average in the simulator); a vertex holds one or a few.
  "PrimaryNetworkBlock.transactions": 1,
  "XChainVertex.transactions": 1,
  // A P-Chain transaction spends 1 or 2 UTXOs (1.4 on average over the latest 30 in the simulator).
  "PChainTransaction.consumedUtxos": 1.5,
  // An L1 validator transaction is about one validator (a conversion names several, and is rare);
  // other transactions have none, which the validator link's share counts.
  "PChainTransaction.l1ValidatorDetails": 1,
};

/**
 * Distinct records per item of a page, for a link from each item to a record that the items
 * share (`UpstreamCost.pool`): the request's loaders fetch each record once however many items
 * name it, whichever of the page's links reaches it. Measured in the simulator: the 25 and 40
 * latest transactions of a busy C-Chain address lie in 9 and 14 blocks; 120 P-Chain UTXOs of a
 * wallet were created and spent by 75 transactions in 75 blocks, 68 X-Chain UTXOs by 50
 * transactions (a transaction creates several outputs for the address, payment and change, and
 * the one that spends a UTXO creates the next). Half, rounded up, is near the measure or above
 * it; a page whose items share less pays the rest when the operation is settled.
 */
export const SHARED_RECORDS_PER_ITEM = 0.5;

/**
 * The share of a page's P-Chain transactions that have a link only one family of transaction
 * types has (a staking transaction's reward, a reward's staking transaction, an L1 validator
 * transaction's validator): of the simulator's latest 30, 7 were rewards, 7 stakings not yet
 * rewarded, 2 L1 validator transactions. A quarter, rounded up.
 */
export const TYPE_SPECIFIC_LINK_SHARE = 0.25;

/**
 * The CPU of one Warp signature check, in upstream calls: decompressing and checking the
 * validators' BLS keys (some 2.5 ms each), hashing the message to the curve and two pairings
 * (some 50 ms in all on one core). At the default 100 a second, a caller may have some 10 checks
 * a second made, half a core; a check already made is remembered, but the estimate cannot know
 * that and charges it again.
 */
export const WARP_VERIFICATION_COST = 10;

/** The pool a shared record of each item belongs to, where items of a page share it. */
export const POOL_OF_SHARED_RECORD: Readonly<Partial<Record<SharedRecord, Pool>>> = {
  "creation transaction": "primary-network transaction",
  "consuming transaction": "primary-network transaction",
};

/**
 * The distinct records `links` links of one pool reach from `items` items: one per link for a
 * single item, `SHARED_RECORDS_PER_ITEM` per item for a page (however many of its links reach
 * the pool), never more than one per link and item.
 */
function distinctRecords(items: number, links: number): number {
  return Math.min(links * items, Math.max(links, Math.ceil(items * SHARED_RECORDS_PER_ITEM)));
}

/** The calls one more link of `pool` adds for `items` items, counting it in `pools`. */
export function pooledLinks(pools: Map<Pool, number>, pool: Pool, items: number): number {
  const links = pools.get(pool) ?? 0;
  pools.set(pool, links + 1);
  return distinctRecords(items, links + 1) - distinctRecords(items, links);
}

/** The items of a page that have a link present on `share` of them: all of a single one. */
export function present(items: number, share: number): number {
  return items <= 1 ? items : Math.ceil(items * share);
}

/** The objects whose fields a field's own selection runs on, as far as calls under them go. */
export function childItems(entry: UpstreamCost | undefined, items: number): number {
  if (entry === undefined) return items;
  // The records a pooled link reaches are loaded once each: what is under them is asked once each.
  if (
    entry.pool !== undefined ||
    (entry.sharedPerObject !== undefined && POOL_OF_SHARED_RECORD[entry.sharedPerObject] !== undefined)
  ) {
    return Math.min(items, distinctRecords(items, 1));
  }
  if (entry.presentOnShare !== undefined) return present(items, entry.presentOnShare);
  return items;
}
