/** The newest place of each stream of a question, and the order in which items are pushed. */
import type { Position } from "./live-question.ts";

/** The newest place of each stream, and the items at it. */
export class Heads {
  private readonly heads = new Map<string, { number: bigint; ids: Set<string> }>();

  constructor(private readonly latestValue: boolean) {}

  number(stream: string): bigint | undefined {
    return this.heads.get(stream)?.number;
  }

  get empty(): boolean {
    return this.heads.size === 0;
  }

  /** Whether the item comes after everything noted of its stream; undefined for a stream not seen. */
  isAfter(position: Position): boolean | undefined {
    const head = this.heads.get(position.stream);
    if (head === undefined) return undefined;
    if (position.number !== head.number) return position.number > head.number;
    return !head.ids.has(position.id);
  }

  note(position: Position): void {
    const head = this.heads.get(position.stream);
    if (head === undefined || position.number > head.number) {
      this.heads.set(position.stream, { number: position.number, ids: new Set([position.id]) });
    } else if (position.number === head.number) {
      if (this.latestValue) head.ids = new Set([position.id]);
      else head.ids.add(position.id);
    }
  }
}

export interface Placed<Item> {
  item: Item;
  position: Position;
}

/** Oldest first: by time, then stream, then place; items at one place keep the order they were read in. */
export function inOrder<Item>(placed: Placed<Item>[]): Placed<Item>[] {
  return placed.sort(
    (a, b) =>
      a.position.time - b.position.time ||
      a.position.stream.localeCompare(b.position.stream) ||
      (a.position.number === b.position.number ? 0 : a.position.number < b.position.number ? -1 : 1),
  );
}
