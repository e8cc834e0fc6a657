/**
 * Checks Warp signatures for every request of the gateway, fairly. A check costs tens of
 * milliseconds of CPU (hundreds with many validators), so:
 *  - checks run on worker threads (`threads`), never on the event loop that serves the other
 *    callers; with 0 threads they run on it, one at a time, yielding to it before each;
 *  - an outcome is remembered (bounded LRU) under a digest of everything it depends on: the
 *    network, the unsigned message, the signers' bit set, the signature and the validator list;
 *    asking again costs nothing;
 *  - a check under way is shared by everyone who asks for the same one meanwhile.
 * The workers are started on the first check, and do not keep the process alive.
 */
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { setTimeout as yieldToEventLoop } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { LRUCache } from "lru-cache";
import { Counter, type Registry } from "prom-client";
import type { SignedWarpMessage } from "./message.ts";
import { checkSignature, type SignatureCheck, type SignatureCheckRequest } from "./signature-check.ts";
import type { CanonicalValidatorSet, ValidatorEntry, WarpVerification } from "./verify.ts";

/** Outcomes remembered, and the most validators among them. */
const REMEMBERED_OUTCOMES = 1_000;
const REMEMBERED_VALIDATORS = 20_000;

export interface Verified {
  set: CanonicalValidatorSet;
  result: WarpVerification;
}

type Outcome = "checked" | "remembered" | "joined";

/** The worker's entry: the TypeScript source under tsx and vitest, the compiled file in dist. */
function workerSource(): string {
  const typescript = import.meta.url.endsWith(".ts");
  const entry = new URL(typescript ? "./verify-worker.ts" : "./verify-worker.js", import.meta.url).href;
  if (!typescript) return `import(${JSON.stringify(entry)});`;
  // A worker does not inherit tsx's loader: it registers it before loading the entry.
  return `import(${JSON.stringify(tsxApi())}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
}

/** The URL of tsx's ESM API, as its package.json exports it (its CommonJS build cannot register from a worker). */
function tsxApi(): string {
  const require = createRequire(import.meta.url);
  const manifestPath = require.resolve("tsx/package.json");
  const manifest = require(manifestPath) as { exports: Record<string, { import: { default: string } }> };
  return pathToFileURL(join(dirname(manifestPath), manifest.exports["./esm/api"]!.import.default)).href;
}

interface Pending {
  resolve: (check: SignatureCheck) => void;
  reject: (error: Error) => void;
}

class CheckThread {
  private readonly worker: Worker;
  readonly pending = new Map<number, Pending>();
  private nextId = 0;
  dead = false;

  constructor(source: string) {
    this.worker = new Worker(source, { eval: true, name: "warp-verify" });
    this.worker.unref();
    this.worker.on("message", ({ id, check, error }: { id: number; check?: SignatureCheck; error?: string }) => {
      const pending = this.pending.get(id);
      this.pending.delete(id);
      if (check) pending?.resolve(check);
      else pending?.reject(new Error(`the Warp signature check failed: ${error}`));
    });
    const fail = (error: Error) => {
      this.dead = true;
      for (const pending of this.pending.values()) pending.reject(error);
      this.pending.clear();
    };
    this.worker.on("error", fail);
    this.worker.on("exit", (code) => fail(new Error(`the Warp signature thread exited (${code})`)));
  }

  check(request: SignatureCheckRequest): Promise<SignatureCheck> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, request });
    });
  }

  terminate(): Promise<number> {
    this.dead = true;
    return this.worker.terminate();
  }
}

export class WarpVerifier {
  private readonly outcomes = new LRUCache<string, Verified>({
    max: REMEMBERED_OUTCOMES,
    maxSize: REMEMBERED_VALIDATORS,
    sizeCalculation: (verified) => Math.max(1, verified.set.validators.length),
  });
  private readonly underWay = new Map<string, Promise<Verified>>();
  private readonly threads: CheckThread[] = [];
  private source: string | undefined;
  /** With no threads: the last check queued on the event loop. */
  private onEventLoop: Promise<void> = Promise.resolve();
  private readonly counter: Counter<"outcome"> | undefined;
  /** Checks made, that is not answered from memory or from a check under way. */
  checks = 0;

  constructor(
    private readonly threadCount: number,
    registry?: Registry,
  ) {
    const name = "gateway_warp_verifications_total";
    this.counter =
      registry &&
      ((registry.getSingleMetric(name) as Counter<"outcome"> | undefined) ??
        new Counter({
          name,
          help: "Warp signature verifications asked for, by outcome: checked (the CPU work done), remembered (answered from memory), joined (shared a check under way).",
          labelNames: ["outcome"],
          registers: [registry],
        }));
  }

  /** Checks `message` against the validator list `entries` for network `networkId`. */
  verify(message: SignedWarpMessage, entries: readonly ValidatorEntry[], networkId: number): Promise<Verified> {
    const setDigest = digestOfEntries(entries);
    const key = createHash("sha256")
      .update(`${networkId}\u0000${setDigest}\u0000${message.signerBits.length}\u0000`)
      .update(message.signerBits)
      .update(message.signature)
      .update(message.unsignedBytes)
      .digest("base64url");
    const remembered = this.outcomes.get(key);
    if (remembered) return this.count("remembered", Promise.resolve(remembered));
    const shared = this.underWay.get(key);
    if (shared) return this.count("joined", shared);
    const checking = this.check({ message, entries, networkId, setDigest })
      .then((check) => {
        const verified = viewOf(check);
        this.outcomes.set(key, verified);
        return verified;
      })
      .finally(() => this.underWay.delete(key));
    this.underWay.set(key, checking);
    this.checks += 1;
    return this.count("checked", checking);
  }

  async close(): Promise<void> {
    await Promise.all(this.threads.splice(0).map((thread) => thread.terminate()));
  }

  private count(outcome: Outcome, verified: Promise<Verified>): Promise<Verified> {
    this.counter?.inc({ outcome });
    return verified;
  }

  private async check(request: SignatureCheckRequest): Promise<SignatureCheck> {
    if (this.threadCount === 0) {
      // One at a time, each after a turn of the event loop (its timers and I/O), not all in one turn.
      const turn = this.onEventLoop.then(() => yieldToEventLoop()).then(() => checkSignature(request));
      this.onEventLoop = turn.then(
        () => undefined,
        () => undefined,
      );
      return turn;
    }
    return this.thread().check(request);
  }

  /** The least busy live thread, started when fewer than `threadCount` live. */
  private thread(): CheckThread {
    for (let index = this.threads.length - 1; index >= 0; index--) if (this.threads[index]!.dead) this.threads.splice(index, 1);
    const idle = this.threads.find((thread) => thread.pending.size === 0);
    if (idle) return idle;
    if (this.threads.length < this.threadCount) {
      const thread = new CheckThread((this.source ??= workerSource()));
      this.threads.push(thread);
      return thread;
    }
    return this.threads.reduce((least, thread) => (thread.pending.size < least.pending.size ? thread : least));
  }
}

function digestOfEntries(entries: readonly ValidatorEntry[]): string {
  const hash = createHash("sha256");
  for (const { nodeId, weight, publicKey } of entries) {
    hash.update(`${nodeId}\u0000${weight}\u0000${publicKey ? Buffer.from(publicKey).toString("hex") : "-"}\u0001`);
  }
  return hash.digest("base64url");
}

/** The check as the schema shows it: the signers are the set's own validator objects. */
function viewOf(check: SignatureCheck): Verified {
  const { set } = check;
  return {
    set,
    result: {
      signers: check.signers.map((index) => set.validators[index]!),
      signedWeight: check.signedWeight,
      totalWeight: set.totalWeight,
      valid: check.valid,
      problem: check.problem,
    },
  };
}
