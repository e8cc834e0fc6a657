/**
 * One poller per question across every gateway on the same Redis (export jobs, live feeds). Per
 * question (an export operation and the hash of the API key that reads it; a live feed's route
 * and arguments), each gateway with subscribers listens on a channel; the gateway that holds a
 * lock reads the upstream and publishes each read on the channel, keeping the latest in a key so
 * that a gateway that joins or takes over has what it may not have heard. The leader keeps its
 * lock alive by a heartbeat, whatever its poller's interval; each follower tries the lock when
 * the leader's runs out, so that a gateway that died is replaced within the lock's time
 * (LIVE_TAKEOVER_MS, or three of the question's longest intervals when that is shorter), and its
 * successor reads at once. While Redis fails, every gateway polls for itself.
 */
import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { GatewayError, type ErrorCode } from "../errors.ts";
import type { PollerRelay, PollerTopic, TopicListener, Turn } from "../live/poller-relay.ts";
import type { RedisLink } from "./redis.ts";

/** Heartbeats per lock time: a leader's lock outlives a late beat or two. */
const BEATS_PER_LOCK = 3;
/** A question polled more often than a third of LIVE_TAKEOVER_MS has a lock of this many of its longest intervals. */
const LOCK_INTERVALS = 3;
/** After the holder's lock has run out by Redis's clock, a follower tries it this much later. */
const WATCH_MARGIN_MS = 5;

/**
 * Takes the lock, or keeps it when this gateway holds it (-1); else the time the holder has left
 * on it (ms), after which a follower may try again. One script: a gateway never takes a lock
 * another one holds, nor renews one another took since.
 */
const TAKE_LOCK = `local holder = redis.call("get", KEYS[1])
if holder and holder ~= ARGV[1] then return math.max(redis.call("pttl", KEYS[1]), 0) end
redis.call("set", KEYS[1], ARGV[1], "PX", ARGV[2])
return -1`;
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

  /**
   * `namespace` keeps the questions of one kind apart; `lockMs` is the longest a leader that
   * stopped beating keeps the lead (LIVE_TAKEOVER_MS).
   */
  constructor(
    readonly link: RedisLink,
    readonly namespace: string,
    readonly lockMs: number,
  ) {
    // Connected now, so that it is ready when the first subscriber comes.
    this.subscriber = link.subscriber();
    this.subscriber.on("message", (channel: string, text: string) => {
      for (const topic of this.topics.get(channel) ?? []) topic.hear(text);
    });
    // A dropped connection (a Redis restart, a slow reader cut off) loses the subscriptions: each
    // topic subscribes again at its next turn, and takes in the latest read kept. After a
    // reconnection the channels are subscribed at once too, on the subscriber connection itself
    // (the main one may not be ready yet); what was published meanwhile, the next read heard says.
    this.subscriber.on("close", () => {
      for (const topics of this.topics.values()) for (const topic of topics) topic.unsubscribed();
    });
    this.subscriber.on("ready", () => {
      const channels = [...this.topics.keys()];
      if (channels.length > 0) this.subscriber.subscribe(...channels).catch(() => undefined);
    });
  }

  join(topic: string, listener: TopicListener<T>, longestIntervalMs: number): PollerTopic<T> {
    const channel = this.link.key(this.namespace, topic);
    // A question polled often keeps the shorter lock it had when each turn renewed it.
    const lockMs = Math.min(this.lockMs, LOCK_INTERVALS * longestIntervalMs);
    // Kept while it may be newer than what a gateway that joins (its first read came an interval before its first turn) or takes over has read.
    const joined = new RedisTopic(this, channel, listener, lockMs, longestIntervalMs + lockMs);
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
  /** While leading: renews the lock, whatever the poller's interval. */
  private heartbeat: NodeJS.Timeout | undefined;
  /** While following: tries the lock when the leader's runs out. */
  private watch: NodeJS.Timeout | undefined;
  private readonly lockKey: string;
  private readonly latestKey: string;

  constructor(
    private readonly relay: RedisPollerRelay<T>,
    readonly channel: string,
    private readonly listener: TopicListener<T>,
    private readonly lockMs: number,
    private readonly latestTtlMs: number,
  ) {
    this.lockKey = `${channel}:lock`;
    this.latestKey = `${channel}:latest`;
  }

  /** The subscriber connection dropped: the next turn subscribes again. */
  unsubscribed(): void {
    this.subscribed = false;
  }

  /** A message on the channel; this gateway's own are not news to it. */
  hear(text: string): void {
    const message = decode<T>(text);
    if (message === undefined || message.from === this.relay.self || this.left) return;
    this.heard = true;
    this.listener.deliver(eventOf(message));
  }

  async turn(): Promise<Turn> {
    const { link, subscriber } = this.relay;
    if (!this.subscribed) {
      if ((await link.attempt(`${this.relay.namespace}-subscribe`, () => subscriber.subscribe(this.channel))) === undefined)
        return "alone";
      this.subscribed = true;
      if (this.left) return this.giveUp();
      if (!(await this.catchUp(false))) return "alone";
    }
    return (await this.take()) ?? "alone";
  }

  /**
   * Takes or keeps the lock: "lead" while this gateway holds it, "follow" (watching the holder's
   * lock) while another does; undefined when Redis did not answer.
   */
  private async take(): Promise<"lead" | "follow" | undefined> {
    const { link, self } = this.relay;
    const { lockMs } = this;
    const held = await link.attempt(`${this.relay.namespace}-lock`, (client) =>
      client.eval(TAKE_LOCK, 1, this.lockKey, self, lockMs),
    );
    if (held === undefined) return undefined;
    if (held !== -1) {
      this.follow(Number(held));
      return this.left ? this.giveUp() : "follow";
    }
    const taking = !this.leading;
    this.lead();
    if (this.left) return this.giveUp();
    // The poller this one replaces may have published a last read that was not heard here.
    if (taking) await this.catchUp(true);
    return "lead";
  }

  private lead(): void {
    this.leading = true;
    clearTimeout(this.watch);
    this.watch = undefined;
    if (this.heartbeat !== undefined) return;
    this.heartbeat = setInterval(() => void this.beat(), Math.max(1, Math.floor(this.lockMs / BEATS_PER_LOCK)));
    this.heartbeat.unref();
  }

  private async beat(): Promise<void> {
    if (this.left || !this.leading) return;
    // A beat Redis did not answer is tried again at the next; a lock another gateway took since is lost.
    await this.take();
  }

  /** Another gateway holds the lock for `remainingMs`: it is tried again then. */
  private follow(remainingMs: number): void {
    this.leading = false;
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    this.watchFor(remainingMs + WATCH_MARGIN_MS);
  }

  private watchFor(delayMs: number): void {
    clearTimeout(this.watch);
    if (this.left) return;
    this.watch = setTimeout(() => void this.takeOver(), delayMs);
    this.watch.unref();
  }

  /** The leader's lock ran out: this gateway takes it, if no other did first, and reads at once. */
  private async takeOver(): Promise<void> {
    this.watch = undefined;
    if (this.left || this.leading) return;
    const turn = await this.take();
    // Redis did not answer in time: tried again as often as a leader beats.
    if (turn === undefined) this.watchFor(this.lockMs / BEATS_PER_LOCK);
    else if (turn === "lead" && !this.left) this.listener.lead();
  }

  /** Delivers the latest read kept, if any; false when Redis did not answer. */
  private async catchUp(takingOver: boolean): Promise<boolean> {
    const latest = await this.relay.link.attempt(`${this.relay.namespace}-latest`, (client) => client.get(this.latestKey));
    if (latest === undefined) return false;
    const message = latest === null ? undefined : decode<T>(latest);
    if (message !== undefined && !this.left && (takingOver || !this.heard)) this.listener.deliver(eventOf(message));
    return true;
  }

  publish(event: T | GatewayError): void {
    const { link, self } = this.relay;
    const text = encode(self, event);
    void link.attempt(`${this.relay.namespace}-publish`, (client) => {
      const transaction = client.multi();
      // Only reads are kept: a gateway that comes after an error reads the operation itself.
      if (!(event instanceof GatewayError)) transaction.set(this.latestKey, text, "PX", this.latestTtlMs);
      return transaction.publish(this.channel, text).exec();
    });
  }

  async leave(): Promise<void> {
    if (this.left) return;
    this.left = true;
    await this.giveUp();
  }

  /** Stops listening, beating and watching, and releases the lock, as far as this topic holds them. */
  private async giveUp(): Promise<"follow"> {
    const { link, subscriber, self } = this.relay;
    clearInterval(this.heartbeat);
    clearTimeout(this.watch);
    this.heartbeat = undefined;
    this.watch = undefined;
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
