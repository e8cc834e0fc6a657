/**
 * The optional link to Redis (REDIS_URL) that several gateways share: the second cache tier,
 * the rate-limit buckets and the export-job poller lock; and a second one (REDIS_CACHE_URL) when
 * the cache tiers have a Redis of their own. Redis is an aid, never a dependency of a request: a
 * command that fails or takes longer than REDIS_TIMEOUT_MS yields `undefined`, the caller falls
 * back to what the process holds, and the fallback is counted and logged once per outage.
 * Commands are never queued while Redis is away, so none waits for it to return.
 */
import { Redis } from "ioredis";
import type { RedisConfig, RedisRole } from "../config.ts";
import type { Logger } from "../telemetry/logger.ts";
import type { GatewayMetrics } from "../telemetry/metrics.ts";

const SHARES: Record<RedisRole, string> = {
  shared: "sharing cache, rate limits and pollers",
  cache: "sharing the record and response caches",
};

export class RedisLink {
  readonly client: Redis;
  private subscriberClient: Redis | undefined;
  private healthy = false;
  private closed = false;

  constructor(
    private readonly config: RedisConfig,
    private readonly logger: Logger,
    private readonly metrics: GatewayMetrics,
    private readonly role: RedisRole = "shared",
  ) {
    this.client = this.connect();
    this.client.on("ready", () => this.markUp());
    this.client.on("error", (error: Error) => this.markDown("connection", error));
    this.client.on("close", () => this.markDown("connection", new Error("connection closed")));
    metrics.redisUp(false, role);
  }

  private connect(subscriber = false): Redis {
    return new Redis(this.config.url, {
      // ioredis sends these itself on reconnecting, and nobody catches their promises: with
      // commandTimeout, one that times out is an unhandled rejection that ends the process (a
      // Redis restart killed a gateway in soak:live). The relay subscribes again itself.
      autoResubscribe: !subscriber,
      autoResendUnfulfilledCommands: false,
      commandTimeout: this.config.timeoutMs,
      connectTimeout: Math.max(this.config.timeoutMs, 1_000),
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      // Reconnect for ever, at most every 2 s; requests go on without Redis meanwhile.
      retryStrategy: (attempt) => Math.min(100 * attempt, 2_000),
      lazyConnect: false,
    });
  }

  /** Whether the last command (or connection event) succeeded. */
  get up(): boolean {
    return this.healthy;
  }

  /** Whether the link is ready now or becomes so within `withinMs`. */
  whenReady(withinMs: number): Promise<boolean> {
    if (this.client.status === "ready") return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), withinMs);
      this.client.once("ready", () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  /** Its URL without the password, for logs. */
  get redactedUrl(): string {
    return redactedUrl(this.config.url);
  }

  key(...parts: string[]): string {
    return this.config.keyPrefix + parts.join(":");
  }

  /**
   * Runs a command; `undefined` when Redis is away, fails or is slower than the timeout, in which
   * case `operation` is counted as a fallback. Never throws.
   */
  async attempt<T>(operation: string, command: (client: Redis) => Promise<T>): Promise<T | undefined> {
    if (this.closed || this.client.status !== "ready") {
      this.metrics.redisFallback(operation);
      return undefined;
    }
    try {
      const result = await command(this.client);
      this.markUp();
      return result;
    } catch (error) {
      this.metrics.redisFallback(operation);
      this.markDown(operation, error as Error);
      return undefined;
    }
  }

  /**
   * A second connection for SUBSCRIBE (a subscribed connection runs no other command). It does
   * not subscribe again by itself after a reconnection: its user does, on its `ready` event.
   */
  subscriber(): Redis {
    if (this.subscriberClient === undefined) {
      this.subscriberClient = this.connect(true);
      // Its failures are the main connection's too, which reports them; unheard, ioredis prints them.
      this.subscriberClient.on("error", () => {});
    }
    return this.subscriberClient;
  }

  private markUp(): void {
    if (this.healthy || this.closed) return;
    this.healthy = true;
    this.metrics.redisUp(true, this.role);
    this.logger.info({ redis: redactedUrl(this.config.url), role: this.role }, `redis is available: ${SHARES[this.role]}`);
  }

  private markDown(operation: string, error: Error): void {
    if (!this.healthy || this.closed) return;
    this.healthy = false;
    this.metrics.redisUp(false, this.role);
    this.logger.warn(
      { redis: redactedUrl(this.config.url), role: this.role, operation, error: error.message },
      this.role === "cache"
        ? "the cache redis is unavailable: serving from the local caches until it returns"
        : "redis is unavailable: serving from the local cache and local rate-limit buckets until it returns",
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    this.subscriberClient?.disconnect();
    this.client.disconnect();
  }
}

/** The URL without its password, for logs. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "redis";
  }
}
