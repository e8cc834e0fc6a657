/**
 * Counts of a prom-client counter whose label sets are few and fixed, kept as plain numbers and
 * added to the counter when it is collected (a scrape, or a cluster's gathering): prom-client's
 * labelled `inc` hashes its labels on every call, which on a cache hit cost more than the hit's
 * own look-up. A scrape reads the same totals as if each had been added at once.
 */
import type { Counter } from "prom-client";

export interface TallySlot {
  count: number;
}

export class CounterTally<L extends string> {
  private readonly slots: { labels: Partial<Record<L, string | number>>; slot: TallySlot }[] = [];

  /** The slot to add to for one label set; made once, when the counter is built. */
  slot(labels: Partial<Record<L, string | number>>): TallySlot {
    const slot = { count: 0 };
    this.slots.push({ labels, slot });
    return slot;
  }

  /** Adds what was counted since the last collection to `counter` (its `collect` calls this). */
  addTo(counter: Counter<L>): void {
    for (const { labels, slot } of this.slots) {
      if (slot.count === 0) continue;
      counter.inc(labels, slot.count);
      slot.count = 0;
    }
  }
}
