/** A plain undici client of the simulator for the benchmark: the baseline's calls and the reference counts. */
import { Pool } from "undici";

export class PlainUpstream {
  private readonly data: Pool;
  private readonly metrics: Pool;

  constructor(
    readonly dataUrl: string,
    readonly metricsUrl: string,
  ) {
    this.data = new Pool(dataUrl, { connections: 64 });
    this.metrics = new Pool(metricsUrl, { connections: 64 });
  }

  async get<T>(service: "data" | "metrics", path: string): Promise<T> {
    const pool = service === "data" ? this.data : this.metrics;
    const response = await pool.request({ method: "GET", path, headers: { accept: "application/json" } });
    const text = await response.body.text();
    if (response.statusCode !== 200) throw new Error(`${path}: HTTP ${response.statusCode}`);
    return JSON.parse(text) as T;
  }

  async post<T>(service: "data" | "metrics", path: string, body: unknown): Promise<T> {
    const pool = service === "data" ? this.data : this.metrics;
    const response = await pool.request({
      method: "POST",
      path,
      headers: { accept: "application/json", "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await response.body.text();
    if (response.statusCode < 200 || response.statusCode >= 300) throw new Error(`${path}: HTTP ${response.statusCode}`);
    return JSON.parse(text) as T;
  }

  async close(): Promise<void> {
    await Promise.all([this.data.close(), this.metrics.close()]);
  }
}
