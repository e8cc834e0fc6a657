/**
 * A DataLoader that list pages prime when one of its keys is next loaded, not when the page
 * arrives: priming a page record by record made a key and a resolved promise for each of its
 * records (a block's 100 transactions), and most pages' records are never asked for by key.
 *
 * It keeps DataLoader's rules for primed values: the first value given for a key wins, and none
 * replaces a key already loaded (or being loaded).
 */
import DataLoader from "dataloader";

/** Gives each record of a page as the key it answers and the value it answers it with. */
export type PageEntries<K, V> = (add: (key: K, value: V) => void) => void;

export class PagePrimedLoader<K, V, C = K> extends DataLoader<K, V, C> {
  private pages: PageEntries<K, V>[] = [];
  private readonly held = new Map<C, V>();

  constructor(
    batch: DataLoader.BatchLoadFn<K, V>,
    private readonly keyOf: (key: K) => C,
  ) {
    super(batch, { cacheKeyFn: keyOf });
  }

  /** Primes the loader with a page's records, taken once a key is loaded. */
  primePage(entries: PageEntries<K, V>): void {
    this.pages.push(entries);
  }

  override load(key: K): Promise<V> {
    if (this.pages.length > 0) this.takePages();
    if (this.held.size > 0) {
      const cacheKey = this.keyOf(key);
      const value = this.held.get(cacheKey);
      if (value !== undefined) {
        this.held.delete(cacheKey);
        // A no-op when the key was loaded since the page came, as an eager prime was then.
        this.prime(key, value);
      }
    }
    return super.load(key);
  }

  private takePages(): void {
    const pages = this.pages;
    this.pages = [];
    const add = (key: K, value: V) => {
      const cacheKey = this.keyOf(key);
      if (!this.held.has(cacheKey)) this.held.set(cacheKey, value);
    };
    for (const entries of pages) entries(add);
  }
}
