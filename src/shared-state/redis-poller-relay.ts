/**
 * One poller per question across every gateway on the same Redis (export jobs, live feeds). Per
 * question (an export operation and the hash of the API key that reads it; a live feed's route
 * and arguments), each gateway with subscribers listens on a channel; the gateway that
 * holds a lock (`SET NX PX`, a few poll intervals, renewed at each turn) reads the upstream and
 * publishes each read on the channel, keeping the latest in a key so that gateways that join
 * later start from it. The others try to take the lock at each interval, so that the poller of
 * a gateway that died is replaced within a few intervals. While Redis fails, every gateway
 * polls for itself.
 */
import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { GatewayError, type ErrorCode } from "../execution/errors.ts";
import type { PollerRelay, PollerTopic, Turn } from "../live/poller-relay.ts";
import type { RedisLink } from "./redis.ts";

/** Intervals a lock outlives its last renewal: how soon a dead poller is replaced. */
const LOCK_INTERVALS = 3;

/** Compare-and-renew, compare-and-delete: a gateway never touches a lock another one took since. */
const RENEW_LOCK = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE_LOCK = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`;

type Message<T> =
  { from: string; value: T } | { from: string; error: { message: string; code: ErrorCode; extensions: Record<string, unknown> } };

function encode<T>(from: string, event: T | GatewayError): string {
  const message: Message<T> =
    event instanceof GatewayError
      ? { from, error: { message: event.message, code: event.code, extensions: { ...event.extensions } } }
      : { from, value: event };
  return JSON.stringify(message);
}

function decode<T>(text: string): Message<T> | undefined {
  try {
    const message = JSON.parse(text) as Message<T>;
    return typeof message.from === "string" && ("value" in message || "error" in message) ? message : undefined;
  } catch {
    return undefined;
  }
}

function eventOf<T>(message: Message<T>): T | GatewayError {
  return "value" in message
    ? message.value
    : new GatewayError(message.error.message, message.error.code, message.error.extensions);
}

export class RedisPollerRelay<T> implements PollerRelay<T> {
  /** This gateway, in lock values and messages. */
  readonly self = randomUUID();
  readonly subscriber: Redis;
  /** The topics of this gateway by channel; one at a time, but one may still be leaving. */
  private readonly topics = new Map<string, Set<RedisTopic<T>>>();

  /** `namespace` keeps the questions of one kind apart. */
  constructor(
    readonly link: RedisLink,
    readonly namespace: string,
  ) {
    // Connected now, so that it is ready when the first subscriber comes.
    this.subscriber = link.subscriber();
    this.subscriber.on("message", (channel: string, text: string) => {
      for (const topic of this.topics.get(channel) ?? []) topic.hear(text);
    });
  }

  join(topic: string, deliver: (event: T | GatewayError) => void, longestIntervalMs: number): PollerTopic<T> {
    const channel = this.link.key(this.namespace, topic);
    const joined = new RedisTopic(this, channel, deliver, LOCK_INTERVALS * longestIntervalMs);
    const topics = this.topics.get(channel) ?? new Set();
    topics.add(joined);
    this.topics.set(channel, topics);
    return joined;
  }

  /** Forgets a topic; whether no other topic of this gateway listens on its channel. */
  detach(topic: RedisTopic<T>): boolean {
    const topics = this.topics.get(topic.channel);
    topics?.delete(topic);
    if (topics?.size) return false;
    this.topics.delete(topic.channel);
    return true;
  }
}

class RedisTopic<T> implements PollerTopic<T> {
  private subscribed = false;
  private leading = false;
  private left = false;
  /** Whether anything was heard on the channel, which is newer than the latest read kept. */
  private heard = false;
  private readonly lockKey: string;
  private readonly latestKey: string;

  constructor(
    private readonly relay: RedisPollerRelay<T>,
    readonly channel: string,
    private readonly deliver: (event: T | GatewayError) => void,
    private readonly lockTtlMs: number,
  ) {
    this.lockKey = `${channel}:lock`;
    this.latestKey = `${channel}:latest`;
  }

  /** A message on the channel; this gateway's own are not news to it. */
  hear(text: string): void {
    const message = decode<T>(text);
    if (message === undefined || message.from === this.relay.self || this.left) return;
    this.heard = true;
    this.deliver(eventOf(message));
  }

  async turn(): Promise<Turn> {
    const { link, subscriber, self } = this.relay;
    const { lockTtlMs } = this;
    if (!this.subscribed) {
      if ((await link.attempt(`${this.relay.namespace}-subscribe`, () => subscriber.subscribe(this.channel))) === undefined)
        return "alone";
      this.subscribed = true;
      if (this.left) return this.giveUp();
      if (!(await this.catchUp(false))) return "alone";
    }
    if (this.leading) {
      const renewed = await link.attempt(`${this.relay.namespace}-lock`, (client) =>
        client.eval(RENEW_LOCK, 1, this.lockKey, self, lockTtlMs),
      );
      if (renewed === undefined) return "alone";
      if (renewed === 1) return this.left ? this.giveUp() : "lead";
      this.leading = false;
    }
    const taken = await link.attempt(`${this.relay.namespace}-lock`, (client) =>
      client.set(this.lockKey, self, "PX", lockTtlMs, "NX"),
    );
    if (taken === undefined) return "alone";
    if (taken !== "OK") return "follow";
    this.leading = true;
    if (this.left) return this.giveUp();
    // The poller this one replaces may have published a last read that was not heard here.
    await this.catchUp(true);
    return "lead";
  }

  /** Delivers the latest read kept, if any; false when Redis did not answer. */
  private async catchUp(takingOver: boolean): Promise<boolean> {
    const latest = await this.relay.link.attempt(`${this.relay.namespace}-latest`, (client) => client.get(this.latestKey));
    if (latest === undefined) return false;
    const message = latest === null ? undefined : decode<T>(latest);
    if (message !== undefined && !this.left && (takingOver || !this.heard)) this.deliver(eventOf(message));
    return true;
  }

  publish(event: T | GatewayError): void {
    const { link, self } = this.relay;
    const { lockTtlMs } = this;
    const text = encode(self, event);
    void link.attempt(`${this.relay.namespace}-publish`, (client) => {
      const transaction = client.multi();
      // Only reads are kept: a gateway that comes after an error reads the operation itself.
      if (!(event instanceof GatewayError)) transaction.set(this.latestKey, text, "PX", lockTtlMs);
      return transaction.publish(this.channel, text).exec();
    });
  }

  async leave(): Promise<void> {
    if (this.left) return;
    this.left = true;
    await this.giveUp();
  }

  /** Stops listening and releases the lock, as far as this topic holds them. */
  private async giveUp(): Promise<"follow"> {
    const { link, subscriber, self } = this.relay;
    const pending: Promise<unknown>[] = [];
    const lastOnChannel = this.relay.detach(this);
    if (this.subscribed && lastOnChannel) {
      pending.push(link.attempt(`${this.relay.namespace}-unsubscribe`, () => subscriber.unsubscribe(this.channel)));
    }
    this.subscribed = false;
    if (this.leading)
      pending.push(link.attempt(`${this.relay.namespace}-unlock`, (client) => client.eval(RELEASE_LOCK, 1, this.lockKey, self)));
    this.leading = false;
    await Promise.all(pending);
    return "follow";
  }
}
