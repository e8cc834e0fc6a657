/**
 * Operation names as metric label values: a bounded set that names earn by their requests and
 * lose when others have more. The persisted operations' names always have their own label. Of
 * the others, at most `max` do: while the set has room, a name gets a label the first time it is
 * seen; at the end of each window, the `max` names that ran the most operations in it (counted
 * in a bounded heavy-hitters summary) become the set, and the names that left it are told to
 * `onUnlabelled`, so that their series are removed. Whoever sends names first keeps no label
 * longer than a window unless it keeps sending them more than others do.
 */
import { HeavyHitters } from "./heavy-hitters.ts";

const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;
/** Names counted in a window for each label: enough that a name with a label's share of requests is always among them. */
const COUNTED_PER_LABEL = 4;

export interface OperationNameLabelsOptions {
  /** Names that label beside the persisted ones (METRICS_OPERATION_NAMES). */
  max: number;
  /** How long a name keeps a label it earned without earning it again (METRICS_OPERATION_NAMES_WINDOW_MS). */
  windowMs: number;
  /** The persisted operations' names: always labelled. */
  seeds?: Iterable<string>;
  /** Longer names are `other`. */
  maxLength?: number;
  now?: () => number;
}

export class OperationNameLabels {
  static readonly OTHER = "other";
  static readonly ANONYMOUS = "Anonymous";
  private readonly seeded = new Set<string>();
  private labelled = new Set<string>();
  private readonly counts: HeavyHitters | undefined;
  private readonly listeners: ((names: string[]) => void)[] = [];
  private readonly max: number;
  private readonly windowMs: number;
  private readonly maxLength: number;
  private readonly now: () => number;
  private windowEndsAt: number;

  constructor(options: OperationNameLabelsOptions) {
    this.max = options.max;
    this.windowMs = Math.max(1, options.windowMs);
    this.maxLength = options.maxLength ?? 64;
    this.now = options.now ?? Date.now;
    for (const name of options.seeds ?? []) if (this.plain(name)) this.seeded.add(name);
    this.counts = this.max > 0 ? new HeavyHitters(this.max * COUNTED_PER_LABEL) : undefined;
    this.windowEndsAt = this.nextWindowEnd();
  }

  /**
   * The label of an operation's name. `counted`: the operation ran, and counts towards its name's
   * label (an operation's errors are labelled without counting again).
   */
  label(name: string | undefined, counted = true): string {
    if (this.counts !== undefined && this.now() >= this.windowEndsAt) this.endWindow(this.counts);
    if (!name || name === OperationNameLabels.ANONYMOUS) return OperationNameLabels.ANONYMOUS;
    if (this.seeded.has(name)) return name;
    if (this.counts === undefined || !this.plain(name)) return OperationNameLabels.OTHER;
    if (counted) this.counts.add(name);
    if (this.labelled.has(name)) return name;
    if (this.labelled.size >= this.max) return OperationNameLabels.OTHER;
    this.labelled.add(name);
    return name;
  }

  /** `listener` hears the names that lost their label, before anything is labelled again. */
  onUnlabelled(listener: (names: string[]) => void): void {
    this.listeners.push(listener);
  }

  private endWindow(counts: HeavyHitters): void {
    const kept = new Set(counts.top(this.max));
    const dropped = [...this.labelled].filter((name) => !kept.has(name));
    this.labelled = kept;
    counts.clear();
    this.windowEndsAt = this.nextWindowEnd();
    if (dropped.length > 0) for (const listener of this.listeners) listener(dropped);
  }

  /** Windows end on multiples of their length, so that a cluster's workers choose at the same moments. */
  private nextWindowEnd(): number {
    return (Math.floor(this.now() / this.windowMs) + 1) * this.windowMs;
  }

  private plain(name: string): boolean {
    return name.length <= this.maxLength && GRAPHQL_NAME.test(name);
  }
}
