/** A failed look-up fails only its own key, not the whole DataLoader batch. */
export function settle<T>(promise: Promise<T>): Promise<T | Error> {
  return promise.catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
}
