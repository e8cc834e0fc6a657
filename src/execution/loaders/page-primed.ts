/**
 * A DataLoader that list pages prime when one of its keys is next loaded, not when the page
 * arrives: priming a page record by record made a key and a resolved promise for each of its
 * records (a block's 100 transactions), and most pages are never asked for a record by key.
 *
 * It keeps DataLoader's rules for primed values: the first value given for a key wins, and none
 * replaces a key already loaded (or being loaded).
 */
import DataLoader from "dataloader";

/** Gives each record of a page as the key it answers and the value it answers it with. */
export type PageEntries<K, V> = (add: (key: K, value: V) => void) => void;

export class PagePrimedLoader<K, V, C = K> extends DataLoader<K, V, C> {
  private pages: PageEntries<K, V>[] = [];
  private readonly primeNow = (key: K, value: V) => void this.prime(key, value);

  constructor(batch: DataLoader.BatchLoadFn<K, V>, keyOf: (key: K) => C) {
    super(batch, { cacheKeyFn: keyOf });
  }

  /** Primes the loader with a page's records, when a key is next loaded. */
  primePage(entries: PageEntries<K, V>): void {
    this.pages.push(entries);
  }

  override load(key: K): Promise<V> {
    if (this.pages.length > 0) {
      // In the order the pages came: as DataLoader's own prime, the first value for a key wins,
      // and none replaces a key loaded or being loaded.
      const pages = this.pages;
      this.pages = [];
      for (const entries of pages) entries(this.primeNow);
    }
    return super.load(key);
  }
}
