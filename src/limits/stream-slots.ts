/** Open streams per bucket name, for the cap on a caller's subscriptions (src/plugins/rate-limit.ts). */
export class StreamSlots {
  private readonly open = new Map<string, number>();

  constructor(private readonly max: number) {}

  /** Holds a slot under every name, or none when one of them has all its slots taken; returns the release. */
  hold(names: readonly string[]): (() => void) | undefined {
    if (names.some((name) => (this.open.get(name) ?? 0) >= this.max)) return undefined;
    for (const name of names) this.open.set(name, (this.open.get(name) ?? 0) + 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      for (const name of names) {
        const left = (this.open.get(name) ?? 1) - 1;
        if (left > 0) this.open.set(name, left);
        else this.open.delete(name);
      }
    };
  }
}
