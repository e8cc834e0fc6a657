/**
 * Serialized answers of reads, by URL. The sample network changes only when its clock moves on
 * (and the cache is cleared then), so a read answered once is answered the same way again until
 * then; keeping its JSON spares the
 * simulator the work, so that it stays much faster than the gateway it serves in benchmarks.
 * The answers are kept encoded, so that a hit is written as it is. Bounded; the least recently
 * used answer goes first.
 */
export class AnswerCache {
  private readonly answers = new Map<string, Buffer>();

  constructor(private readonly maxEntries: number) {}

  get(url: string): Buffer | undefined {
    const answer = this.answers.get(url);
    if (answer !== undefined) {
      this.answers.delete(url);
      this.answers.set(url, answer);
    }
    return answer;
  }

  clear(): void {
    this.answers.clear();
  }

  set(url: string, answer: string): void {
    this.answers.set(url, Buffer.from(answer));
    if (this.answers.size > this.maxEntries) this.answers.delete(this.answers.keys().next().value as string);
  }
}

/** Reads whose answers change over time, or which are cheap anyway. */
export const CHANGING_ROUTES = new Set([
  "GET /v1/operations/{operationId}",
  "GET /v1/health-check",
  "GET /v1/live-check",
  "GET /v2/health-check",
  "GET /v2/live-check",
]);
