/**
 * A call's deadline as undici watches it: an EventEmitter, which undici accepts as a request's
 * `signal`, rather than an AbortController. On Node 20 every AbortSignal survives each
 * young-generation collection it meets and is reclaimed only by a full one, keeping whatever
 * listens to it at the time (an in-flight request's handler, its parser's buffers): at one signal
 * per upstream call that promoted several kB per call into the old space, and a gateway near its
 * heap bound under steady upstream traffic ran a full collection every few seconds.
 */
import { EventEmitter } from "node:events";

export class CallDeadline extends EventEmitter {
  /** Read by undici: a signal that is already aborted fails the request before it is sent. */
  aborted = false;
  private readonly timer: NodeJS.Timeout;

  constructor(remainingMs: number) {
    super();
    this.timer = setTimeout(() => {
      this.aborted = true;
      this.emit("abort");
    }, remainingMs);
  }

  /** The call settled: the timer goes at once rather than keep the call reachable until the deadline. */
  clear(): void {
    clearTimeout(this.timer);
  }
}
