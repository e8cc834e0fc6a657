/**
 * How the pollers of one question on several gateways take turns, so that the upstream sees one
 * poller in all: the one whose turn it is reads and publishes what it read; the others follow.
 */
import type { GatewayError } from "../errors.ts";

/**
 * A poller's role for one interval: read the upstream and publish (`lead`), wait for what the
 * leader publishes (`follow`), or read the upstream for this gateway alone (`alone`: the relay
 * is unavailable).
 */
export type Turn = "lead" | "follow" | "alone";

/** What a relay tells one gateway's poller of a question. */
export interface TopicListener<T> {
  /** What the leader published: a read, or the error that ends the streams. */
  deliver(event: T | GatewayError): void;
  /**
   * This gateway took the lead between two of its turns (the leader stopped keeping it): the
   * read it left to the leader this interval is its own to make, now.
   */
  lead(): void;
}

/** The pollers of one question on every gateway that asks it; `T` is what a read gives (JSON). */
export interface PollerTopic<T> {
  /** This interval's role; what others publish arrives through the listener given to `join`. */
  turn(): Promise<Turn>;
  /** Hands a read, or the error that ends the streams, to the followers. */
  publish(event: T | GatewayError): void;
  /** This gateway asks the question no more: gives up its turn. */
  leave(): Promise<void>;
}

/** Coordinates the pollers of several gateways; it must never throw. */
export interface PollerRelay<T> {
  /**
   * `topic` names the question; it must never hold an API key (a hash of one at most).
   * `longestIntervalMs`: the longest a poller waits between two reads, which tells how long a
   * read may still be news to a gateway that joins.
   */
  join(topic: string, listener: TopicListener<T>, longestIntervalMs: number): PollerTopic<T>;
}
