/**
 * The event streams graphql-sse's single-connection mode reserves (a PUT), listens to (a GET)
 * and sends operations onto (POSTs naming the stream's token), and what they may hold.
 *
 * - A reservation is an entry here only (its token, its caller, a timer): graphql-sse's handler
 *   holds a stream only while someone listens to it. One not listened to within `listenWithinMs`
 *   lapses; a caller (an address, an IPv6 /64) holds at most `perCaller`, listened to or not, and
 *   the process at most `unlistened` not listened to yet. So hostile PUTs hold a bounded number of
 *   small entries for a bounded time, each bought for 1 (src/plugins/sse-single-connection.ts).
 * - A listened stream counts the bytes of the results put on it and the bytes its client read;
 *   one whose client leaves more than `maxUnreadBytes` unread is ended, as a WebSocket is.
 */
import { randomUUID } from "node:crypto";

export interface ReservationLimits {
  perCaller: number;
  unlistened: number;
  listenWithinMs: number;
  maxUnreadBytes: number;
}

export class StreamReservation {
  listening = false;
  private queuedBytes = 0;
  private readBytes = 0;
  /** Ends the listener's stream, saying why; set once it listens. */
  private endListener: ((why: string) => void) | undefined;
  lapse: NodeJS.Timeout | undefined;

  constructor(
    readonly token: string,
    readonly caller: string,
  ) {}

  /** Starts listening: `end` ends the listener's stream (its client leaves too much unread, or the gateway stops). */
  listen(end: (why: string) => void): void {
    this.listening = true;
    this.endListener = end;
    clearTimeout(this.lapse);
  }

  /** A result of `bytes` put on the stream; ends it when its client leaves more than `max` unread. */
  queued(bytes: number, max: number): void {
    this.queuedBytes += bytes;
    if (this.queuedBytes - this.readBytes > max) this.end(`SLOW_SUBSCRIBER: over ${max} bytes of results unread`);
  }

  end(why: string): void {
    this.endListener?.(why);
  }

  /** `bytes` of results the client read. */
  read(bytes: number): void {
    this.readBytes += bytes;
  }
}

export type Refused = "caller" | "process";

export class StreamReservations {
  private readonly byToken = new Map<string, StreamReservation>();
  private readonly perCaller = new Map<string, number>();
  private unlistened = 0;

  constructor(readonly limits: ReservationLimits) {}

  /** A new reservation for `caller`, or why there is none: the caller's cap, or the process's. */
  reserve(caller: string): StreamReservation | Refused {
    if ((this.perCaller.get(caller) ?? 0) >= this.limits.perCaller) return "caller";
    if (this.unlistened >= this.limits.unlistened) return "process";
    const reservation = new StreamReservation(randomUUID(), caller);
    this.byToken.set(reservation.token, reservation);
    this.perCaller.set(caller, (this.perCaller.get(caller) ?? 0) + 1);
    this.unlistened += 1;
    reservation.lapse = setTimeout(() => this.release(reservation), this.limits.listenWithinMs);
    reservation.lapse.unref();
    return reservation;
  }

  find(token: string): StreamReservation | undefined {
    return this.byToken.get(token);
  }

  /** The reservation's client listens: it no longer lapses, and is released when its stream ends. */
  listen(reservation: StreamReservation, end: (why: string) => void): void {
    if (reservation.listening) return;
    this.unlistened -= 1;
    reservation.listen(end);
  }

  /** Ends every listened stream (shutdown): each client gets `why` and reconnects. */
  endAll(why: string): void {
    for (const reservation of [...this.byToken.values()]) reservation.end(why);
  }

  /** Ends a reservation (it lapsed, or its stream ended); its token names nothing any more. */
  release(reservation: StreamReservation): void {
    if (this.byToken.get(reservation.token) !== reservation) return;
    this.byToken.delete(reservation.token);
    clearTimeout(reservation.lapse);
    if (!reservation.listening) this.unlistened -= 1;
    const left = (this.perCaller.get(reservation.caller) ?? 1) - 1;
    if (left > 0) this.perCaller.set(reservation.caller, left);
    else this.perCaller.delete(reservation.caller);
  }

  /** Reservations held now: for tests and metrics. */
  get size(): number {
    return this.byToken.size;
  }
}
