/** Tells the gateway's metrics how many keys each DataLoader batch carried. */
export type BatchObserver = (loader: string, keys: number) => void;

export function observed<K, R>(
  loader: string,
  observe: BatchObserver,
  batch: (keys: readonly K[]) => Promise<readonly (R | Error)[]>,
): (keys: readonly K[]) => Promise<readonly (R | Error)[]> {
  return (keys) => {
    observe(loader, keys.length);
    return batch(keys);
  };
}
