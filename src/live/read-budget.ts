/**
 * The upstream reads a gateway's live pollers may make per second, all of them together
 * (LIVE_MAX_READS_PER_SECOND), shared out when they ask for more: each read waits for its turn,
 * so that an over-subscribed pool stretches its pollers' intervals instead of saturating the
 * process (and the upstream connections its queries need).
 *
 * Turns go by rank, lowest first, and in order of asking among equals. A question's rank is the
 * number of pollers the lightest caller subscribing to it subscribes to (`PollerPool.rank`): a
 * chain's blocks, which light callers share, and a caller who holds few pollers read first; a
 * caller who holds many waits while lighter ones want the budget, and its pollers share what is
 * left evenly.
 */

export interface ReadTurns {
  /**
   * Resolves once the read may be made, with how long it waited in ms; rejects once `close` is
   * called. A turn reserved and given is taken at once (waited 0: the read is made after it).
   */
  take(): Promise<number>;
  /**
   * Waits for a turn, holding only `then` (no promise, no async function suspended), and calls
   * it once the turn is given: the next `take` has it. A poller waits for its interval's read
   * so, and only then begins the read, whose objects die young instead of waiting in the old
   * generation (and keeping what the read left in them alive past scavenges: it is dead there).
   */
  reserve(then: () => void): void;
  /** Gives back a turn reserved and given but not taken (the interval made no read). */
  unreserve(): void;
  /** The poller stopped: the turns it waits for are given up. */
  close(): void;
}

interface Waiter {
  rank: number;
  /** Order of asking: breaks ties. */
  seq: number;
  askedAt: number;
  /**
   * Dropped once the turn is given or given up (which tells a pending turn from one that is
   * not): a turn given up stays in the heap until its place comes, holding nothing.
   */
  resolve: ((waitedMs: number) => void) | undefined;
  reject: ((error: Error) => void) | undefined;
}

/** Why a stopped poller's turns end; one error for all (a turn given up is not a fault to trace). */
const POLLER_STOPPED = new Error("the poller stopped");

export class ReadBudget {
  private tokens: number;
  private refilledAt = performance.now();
  private readonly waiting: Waiter[] = [];
  private seq = 0;
  /** Turns given up that are still in the heap. */
  private givenUp = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly readsPerSecond: number,
    /** Reads that may go at once after a quiet spell: a second's worth. */
    private readonly burst = Math.max(1, readsPerSecond),
  ) {
    this.tokens = burst;
  }

  /** Reads waiting for their turn now. */
  get waitingCount(): number {
    return this.waiting.length - this.givenUp;
  }

  /** The turns of one poller, whose question's rank `rank` tells when it asks. */
  turns(rank: () => number): ReadTurns {
    const mine = new Set<Waiter>();
    /** A turn reserved and given, not taken yet. */
    let reserved = false;
    const wait = (resolve: (waitedMs: number) => void, reject: ((error: Error) => void) | undefined) => {
      const waiter: Waiter = {
        rank: rank(),
        seq: (this.seq += 1),
        askedAt: performance.now(),
        resolve: (waitedMs) => {
          mine.delete(waiter);
          resolve(waitedMs);
        },
        reject,
      };
      mine.add(waiter);
      this.push(waiter);
      this.schedule();
    };
    const now = (): boolean => {
      this.refill();
      if (this.waiting.length > 0 || this.tokens < 1) return false;
      this.tokens -= 1;
      return true;
    };
    return {
      take: () => {
        if (reserved) {
          reserved = false;
          return Promise.resolve(0);
        }
        if (now()) return Promise.resolve(0);
        return new Promise<number>((resolve, reject) => wait(resolve, reject));
      },
      reserve: (then) => {
        const given = () => {
          reserved = true;
          // Called as a promise's reaction would be: never inside the budget's own bookkeeping.
          queueMicrotask(then);
        };
        if (now()) given();
        else wait(given, undefined);
      },
      unreserve: () => {
        if (!reserved) return;
        reserved = false;
        this.refill();
        this.tokens = Math.min(this.burst, this.tokens + 1);
        clearTimeout(this.timer);
        this.grant();
      },
      close: () => {
        for (const waiter of mine) {
          const reject = waiter.reject;
          waiter.resolve = waiter.reject = undefined;
          reject?.(POLLER_STOPPED);
        }
        this.givenUp += mine.size;
        mine.clear();
        reserved = false;
        this.compact();
      },
    };
  }

  private refill(): void {
    const now = performance.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.refilledAt) * this.readsPerSecond) / 1000);
    this.refilledAt = now;
  }

  /** Gives the tokens there are to the first waiters, then waits for the next token if any are left. */
  private grant(): void {
    this.timer = undefined;
    this.refill();
    while (this.waiting.length > 0 && this.tokens >= 1) {
      const waiter = this.pop();
      const resolve = waiter.resolve;
      if (resolve === undefined) {
        this.givenUp -= 1;
        continue;
      }
      waiter.resolve = waiter.reject = undefined;
      this.tokens -= 1;
      resolve(performance.now() - waiter.askedAt);
    }
    this.schedule();
  }

  /**
   * Rebuilds the heap without the turns given up once they are most of it: a pool whose pollers
   * were stopped in numbers (a caller's evicted, a flood's refused) does not keep their husks
   * until each one's place comes.
   */
  private compact(): void {
    if (this.givenUp < 64 || this.givenUp * 2 < this.waiting.length) return;
    const waiting = this.waiting.filter((waiter) => waiter.resolve !== undefined);
    this.waiting.length = 0;
    this.givenUp = 0;
    for (const waiter of waiting) this.push(waiter);
  }

  private schedule(): void {
    if (this.timer !== undefined || this.waiting.length === 0) return;
    const wait = Math.max(0, ((1 - this.tokens) * 1000) / this.readsPerSecond);
    this.timer = setTimeout(() => this.grant(), Math.ceil(wait));
    this.timer.unref();
  }

  // A binary heap on (rank, seq): a turn costs log(waiting), however many wait.
  private push(waiter: Waiter): void {
    const heap = this.waiting;
    heap.push(waiter);
    for (let index = heap.length - 1; index > 0;) {
      const parent = (index - 1) >> 1;
      if (!before(heap[index]!, heap[parent]!)) break;
      [heap[index], heap[parent]] = [heap[parent]!, heap[index]!];
      index = parent;
    }
  }

  private pop(): Waiter {
    const heap = this.waiting;
    const first = heap[0]!;
    const last = heap.pop()!;
    if (heap.length === 0) return first;
    heap[0] = last;
    for (let index = 0; ;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let least = index;
      if (left < heap.length && before(heap[left]!, heap[least]!)) least = left;
      if (right < heap.length && before(heap[right]!, heap[least]!)) least = right;
      if (least === index) break;
      [heap[index], heap[least]] = [heap[least]!, heap[index]!];
      index = least;
    }
    return first;
  }
}

function before(a: Waiter, b: Waiter): boolean {
  return a.rank !== b.rank ? a.rank < b.rank : a.seq < b.seq;
}
