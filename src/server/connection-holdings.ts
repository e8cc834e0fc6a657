/**
 * The open connections by caller address (an IPv6 address's /64), kept in the order a full
 * process closes them to make room: first from the address that holds the most; of its
 * connections, first one that has not sent a whole request head yet (a slow or silent sender)
 * over an idle keep-alive one that has been served; among equals, the one held longest. A busy
 * connection (an answer in flight, a WebSocket running an operation) is never chosen.
 *
 * A connection is closed for a new caller (an address that holds none), or for one that holds at
 * least two fewer than the victim's address: one that would take a connection of its own, or of
 * an address that holds as many, is refused instead. Otherwise a flood that fills the process
 * churns, each of its reconnects closing another of its connections (or an equal neighbour's) as
 * fast as it can reconnect, every one an accept and a close paid by the gateway's core.
 *
 * Addresses sit in buckets by how many connections they hold, so that finding the victim does
 * not scan every connection: only the busy ones it has to pass over.
 */
import type { Socket } from "node:net";

interface Holding {
  readonly address: string;
  /** Connections that have not reached a request yet, oldest first. */
  readonly fresh: Set<Socket>;
  /** Connections that have been served (a request read, or a WebSocket upgraded), oldest first. */
  readonly served: Set<Socket>;
}

interface Bucket {
  /** Every address that holds this many connections, in the order it came to hold them. */
  readonly all: Set<Holding>;
  /** Those of them with a fresh connection. */
  readonly withFresh: Set<Holding>;
}

const size = (holding: Holding) => holding.fresh.size + holding.served.size;

export class ConnectionHoldings {
  private readonly byAddress = new Map<string, Holding>();
  private readonly bySocket = new Map<Socket, Holding>();
  private readonly buckets = new Map<number, Bucket>();
  /** At least the most connections any address holds. */
  private most = 0;

  get size(): number {
    return this.bySocket.size;
  }

  /** Connections the address holds. */
  count(address: string): number {
    const holding = this.byAddress.get(address);
    return holding ? size(holding) : 0;
  }

  add(socket: Socket, address: string): void {
    let holding = this.byAddress.get(address);
    if (holding === undefined) {
      holding = { address, fresh: new Set(), served: new Set() };
      this.byAddress.set(address, holding);
    }
    this.unplace(holding);
    holding.fresh.add(socket);
    this.bySocket.set(socket, holding);
    this.place(holding);
  }

  /** The connection reached a request (or was upgraded): from now on it is an idle one when it is not busy. */
  served(socket: Socket): void {
    const holding = this.bySocket.get(socket);
    if (holding === undefined || !holding.fresh.has(socket)) return;
    this.unplace(holding);
    holding.fresh.delete(socket);
    holding.served.add(socket);
    this.place(holding);
  }

  /** Whether it was held (it is no longer). */
  delete(socket: Socket): boolean {
    const holding = this.bySocket.get(socket);
    if (holding === undefined) return false;
    this.bySocket.delete(socket);
    this.unplace(holding);
    holding.fresh.delete(socket);
    holding.served.delete(socket);
    if (size(holding) === 0) this.byAddress.delete(holding.address);
    else this.place(holding);
    return true;
  }

  /**
   * The connection to close to make room for a new one from `address`, or undefined when every
   * one is busy, or `address` holds some and no address holds two more.
   */
  victim(address: string, busy: (socket: Socket) => boolean): Socket | undefined {
    // Lowered here rather than as buckets empty: it rises by one per connection, so this is paid once per rise.
    while (this.most > 0 && !this.buckets.has(this.most)) this.most -= 1;
    const held = this.count(address);
    const fewest = held === 0 ? 1 : held + 2;
    for (let count = this.most; count >= fewest; count -= 1) {
      const bucket = this.buckets.get(count);
      if (bucket === undefined) continue;
      // A fresh connection is never busy: its request has not reached the gateway.
      for (const holding of bucket.withFresh) return holding.fresh.values().next().value;
      for (const holding of bucket.all) {
        for (const socket of holding.served) if (!busy(socket)) return socket;
      }
    }
    return undefined;
  }

  private unplace(holding: Holding): void {
    const bucket = this.buckets.get(size(holding));
    if (bucket === undefined) return;
    bucket.all.delete(holding);
    bucket.withFresh.delete(holding);
    if (bucket.all.size === 0) this.buckets.delete(size(holding));
  }

  private place(holding: Holding): void {
    const count = size(holding);
    if (count === 0) return;
    let bucket = this.buckets.get(count);
    if (bucket === undefined) {
      bucket = { all: new Set(), withFresh: new Set() };
      this.buckets.set(count, bucket);
    }
    bucket.all.add(holding);
    if (holding.fresh.size > 0) bucket.withFresh.add(holding);
    this.most = Math.max(this.most, count);
  }
}
