/**
 * Tells a worker that died of a passing cause from one that will die again: replacing workers
 * that keep dying (a port taken, a file missing, memory too small) would only loop.
 */
export class CrashLoopGuard {
  private deaths: number[] = [];

  constructor(
    /** Deaths within the window that mean a loop. */
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  /** Records a death at `now` (ms); true when it makes `limit` deaths within the last `windowMs`. */
  recordDeath(now: number): boolean {
    this.deaths = this.deaths.filter((time) => now - time < this.windowMs);
    this.deaths.push(now);
    return this.deaths.length >= this.limit;
  }
}
