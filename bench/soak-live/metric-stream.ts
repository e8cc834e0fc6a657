/**
 * A metric subscriber's events: the point now, then each change. Within one subscription its
 * points' times never go back, a point's value never goes back (TX_COUNT only grows as its
 * interval fills), and the same value is not pushed twice in a row. A resubscription starts
 * with the value now again, which is not a repeat.
 */
import type { SequenceCounts } from "./sequences.ts";
import type { Subscriber } from "./subscriber.ts";

export function walkMetricStream(subscriber: Subscriber, counts: SequenceCounts): void {
  let segment = -1;
  let last: { time: number; value: number } | undefined;
  for (const event of subscriber.received) {
    if (event.segment !== segment) {
      segment = event.segment;
      last = undefined;
    }
    const item = event.item;
    if (!item) continue;
    counts.items += 1;
    const value = Number(item.id);
    if (last !== undefined) {
      if (item.number === last.time && value === last.value) counts.duplicated += 1;
      else if (item.number < last.time || (item.number === last.time && value < last.value)) counts.outOfOrder += 1;
    }
    last = { time: item.number, value };
  }
}
