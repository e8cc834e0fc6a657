/**
 * What a live poller asks the upstream over and over (a route and its arguments), and where each
 * item it reads stands in the question's order. `live-questions.ts` builds the questions.
 */
import type { GatewayError } from "../errors.ts";
import type { CallOptions } from "../upstream/call-options.ts";

/** Where an item stands in its question's order. */
export interface Position {
  /** The sequence it belongs to: one chain's, when a question spans several. */
  stream: string;
  /** Its place in the stream: a block number (a transaction's block's), a metric point's time. */
  number: bigint;
  /** Unix seconds: orders the streams of one question among themselves. */
  time: number;
  /** Tells apart the items at one place: a hash; a metric point's value. */
  id: string;
}

export interface LivePage<Item> {
  items: Item[];
  nextPageToken?: string | undefined;
}

/** One question a poller asks the upstream over and over. */
export interface LiveQuestion<Item> {
  /** One poller per key, on every gateway: the route and its arguments, never an API key. */
  key: string;
  /** For messages: "chain 43114". */
  what: string;
  /** The route's largest page: the fewest reads to fill a gap. */
  pageSize: number;
  /**
   * The first read's page: it must hold every item at the newest place of each stream (a chain's
   * newest block: 1; an address's transactions in its newest block: a whole page), which are old.
   */
  firstPageSize: number;
  /** The interval between two reads while items arrive, and the longest, reached while none does. */
  intervalMs: number;
  maxIntervalMs: number;
  /** One page of the question's newest items, newest first. */
  read(pageSize: number, pageToken: string | undefined, call: CallOptions): Promise<LivePage<Item>>;
  /** Where an item stands; undefined for an item with no place in the order, which is never pushed. */
  position(item: Item): Position | undefined;
  /**
   * A value that changes (a metric's latest point) rather than a sequence that grows: the value
   * now is pushed to each subscriber when it comes, and a new value at the same place is new.
   */
  latestValue?: boolean;
  /** Restores what JSON loses (a record's origin) in an item another gateway's poller read. */
  revive?(item: Item): Item;
}

export type LiveEvent<Item> = Item | GatewayError;
