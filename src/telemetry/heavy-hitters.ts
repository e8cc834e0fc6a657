/**
 * The most frequent items of a stream in bounded memory: Space-Saving (Metwally, Agrawal and
 * El Abbadi, 2005). At most `capacity` items are counted; an item not counted takes the place of
 * the one with the smallest count and inherits that count as its possible error. Any item seen
 * more than 1/capacity of the time is counted, and its count is never below its true count.
 */
interface Counted {
  item: string;
  count: number;
  /** How much of `count` may belong to the items it replaced. */
  error: number;
}

export class HeavyHitters {
  /** A min-heap by count: the first is the one to replace. */
  private readonly heap: Counted[] = [];
  private readonly positions = new Map<string, number>();

  constructor(readonly capacity: number) {
    if (!(capacity >= 1)) throw new Error("HeavyHitters needs a capacity of at least 1");
  }

  get size(): number {
    return this.heap.length;
  }

  add(item: string): void {
    const position = this.positions.get(item);
    if (position !== undefined) {
      this.heap[position]!.count += 1;
      this.sink(position);
    } else if (this.heap.length < this.capacity) {
      this.heap.push({ item, count: 1, error: 0 });
      this.positions.set(item, this.heap.length - 1);
      this.rise(this.heap.length - 1);
    } else {
      const least = this.heap[0]!;
      this.positions.delete(least.item);
      this.heap[0] = { item, count: least.count + 1, error: least.count };
      this.positions.set(item, 0);
      this.sink(0);
    }
  }

  /**
   * The `n` items with the most requests they surely had (count less error), then by count: an
   * item that only took the place of others ranks by what it was seen itself.
   */
  top(n: number): string[] {
    return [...this.heap]
      .sort((a, b) => b.count - b.error - (a.count - a.error) || b.count - a.count)
      .slice(0, n)
      .map(({ item }) => item);
  }

  clear(): void {
    this.heap.length = 0;
    this.positions.clear();
  }

  private rise(index: number): void {
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (this.heap[parent]!.count <= this.heap[index]!.count) return;
      this.swap(index, parent);
      index = parent;
    }
  }

  private sink(index: number): void {
    for (;;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let least = index;
      if (left < this.heap.length && this.heap[left]!.count < this.heap[least]!.count) least = left;
      if (right < this.heap.length && this.heap[right]!.count < this.heap[least]!.count) least = right;
      if (least === index) return;
      this.swap(index, least);
      index = least;
    }
  }

  private swap(a: number, b: number): void {
    const first = this.heap[a]!;
    const second = this.heap[b]!;
    this.heap[a] = second;
    this.heap[b] = first;
    this.positions.set(second.item, a);
    this.positions.set(first.item, b);
  }
}
