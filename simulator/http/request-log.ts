/** One request as the simulator saw it, for tests that check what the gateway sent. */
export interface RecordedRequest {
  method: string;
  /** The counter key of the matched route, or null when no route matched. */
  route: string | null;
  path: string;
  /** Each parameter's last value; `rawQuery` has them all, as sent. */
  query: Record<string, string>;
  rawQuery: string;
  apiKey: string | null;
  requestId: string | null;
}

const CAPACITY = 200;

/** What is recorded per request: the query as sent, parsed only when the log is read. */
export type LoggedRequest = Omit<RecordedRequest, "query">;

/** Per-route request counts and a ring buffer of the latest requests. */
export class RequestLog {
  private counts = new Map<string, number>();
  private entries: LoggedRequest[] = [];
  private next = 0;

  record(request: LoggedRequest): void {
    if (request.route !== null) this.counts.set(request.route, (this.counts.get(request.route) ?? 0) + 1);
    if (this.entries.length < CAPACITY) this.entries.push(request);
    else this.entries[this.next] = request;
    this.next = (this.next + 1) % CAPACITY;
  }

  counters(): Record<string, number> {
    return Object.fromEntries(this.counts);
  }

  /** Oldest first. */
  requests(): RecordedRequest[] {
    const oldestFirst =
      this.entries.length < CAPACITY ? this.entries : [...this.entries.slice(this.next), ...this.entries.slice(0, this.next)];
    return oldestFirst.map((request) => ({ ...request, query: Object.fromEntries(new URLSearchParams(request.rawQuery)) }));
  }

  reset(): void {
    this.counts.clear();
    this.entries = [];
    this.next = 0;
  }
}
