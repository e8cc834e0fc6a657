/**
 * Per-request context: the caller's upstream credentials and the request's DataLoaders.
 * Loaders dedupe and batch look-ups within one request; list pages prime them. Each domain
 * keeps its loaders in `src/execution/loaders/<domain>.ts`.
 */
import type { LiveFeed } from "../live/live-feed.ts";
import type { LiveQuestions } from "../live/live-questions.ts";
import { createExportJobLoaders, type ExportJobLoaders } from "./loaders/export-jobs.ts";
import { createEvmLoaders, type EvmLoaders } from "./loaders/evm.ts";
import { createPrimaryNetworkLoaders, type PrimaryNetworkLoaders } from "./loaders/primary-network.ts";
import type { GatewayError } from "../errors.ts";
import type { ExportWatch } from "../live/export-watch.ts";
import type { BatchObserver } from "./loaders/observed.ts";
import type { CallOptions, SentRequests } from "../upstream/call-options.ts";
import type { Upstreams } from "../upstream/upstreams.ts";
import type { WarpVerifier } from "../warp/verifier.ts";

export type Loaders = EvmLoaders & PrimaryNetworkLoaders & ExportJobLoaders;

export interface GatewayContext {
  upstreams: Upstreams;
  /**
   * Sent with every upstream call of this request: the caller's key and request id, and the
   * count of the requests sent upstream for it (`sentRequests`), which the rate limiter settles.
   */
  call: CallOptions & { sentRequests: SentRequests };
  loaders: Loaders;
  /** The gateway's one registry of export-operation pollers, shared by all subscriptions. */
  exportWatch: ExportWatch;
  /** Live subscriptions: the gateway's one registry of pollers, and the questions they ask. */
  live: LiveServices;
  /** Checks Warp signatures off the event loop and remembers what it checked. */
  warpVerifier: WarpVerifier;
  /** The most representations one `_entities` field may be asked for (MAX_ENTITY_REPRESENTATIONS). */
  maxEntityRepresentations: number;
  /**
   * Charges a subscription's caller for one read its poller makes: null when paid, else the
   * error that ends the stream. Set by the rate limiter on a subscription; absent without one.
   */
  chargeRead?: () => Promise<GatewayError | null>;
  /**
   * Who a subscription's live poller counts against (LIVE_MAX_POLLERS_PER_CALLER): its address's
   * bucket name (an IPv6 address's /64). Set by the rate limiter on a subscription; absent without one.
   */
  liveCaller?: string;
}

/**
 * The request's loaders. Each domain's are made when one of them is first used: an operation
 * mostly touches one domain, and a DataLoader costs its closures and maps to make.
 */
class RequestLoaders implements Loaders {
  #evm: EvmLoaders | undefined;
  #primaryNetwork: PrimaryNetworkLoaders | undefined;
  #exportJobs: ExportJobLoaders | undefined;

  constructor(
    private readonly upstreams: Upstreams,
    private readonly call: CallOptions,
    private readonly observeBatch: BatchObserver,
  ) {}

  /** Lets go of every loader made, and what it loaded: the next use makes a new one. */
  forget(): void {
    this.#evm = this.#primaryNetwork = this.#exportJobs = undefined;
  }

  private get evm(): EvmLoaders {
    return (this.#evm ??= createEvmLoaders(this.upstreams, this.call, this.observeBatch));
  }

  private get primaryNetwork(): PrimaryNetworkLoaders {
    return (this.#primaryNetwork ??= createPrimaryNetworkLoaders(this.upstreams, this.call, this.observeBatch));
  }

  private get exportJobs(): ExportJobLoaders {
    return (this.#exportJobs ??= createExportJobLoaders(this.upstreams, this.call, this.observeBatch));
  }

  get chainList() {
    return this.evm.chainList;
  }

  get chain() {
    return this.evm.chain;
  }

  get block() {
    return this.evm.block;
  }

  get metricsChain() {
    return this.evm.metricsChain;
  }

  get transaction() {
    return this.evm.transaction;
  }

  get completeTransaction() {
    return this.evm.completeTransaction;
  }

  get evmPages() {
    return this.evm.evmPages;
  }

  get primaryNetworkBlock() {
    return this.primaryNetwork.primaryNetworkBlock;
  }

  get primaryNetworkTransaction() {
    return this.primaryNetwork.primaryNetworkTransaction;
  }

  get xChainVertex() {
    return this.primaryNetwork.xChainVertex;
  }

  get l1Validator() {
    return this.primaryNetwork.l1Validator;
  }

  get primaryNetworkPages() {
    return this.primaryNetwork.primaryNetworkPages;
  }

  get exportOperation() {
    return this.exportJobs.exportOperation;
  }
}

export interface LiveServices {
  feed: LiveFeed;
  questions: LiveQuestions;
}

/** What every request's context shares: built once per gateway. */
export interface SharedServices {
  upstreams: Upstreams;
  exportWatch: ExportWatch;
  live: LiveServices;
  warpVerifier: WarpVerifier;
  observeBatch: BatchObserver;
  maxEntityRepresentations: number;
}

export function createContext(shared: SharedServices, call: CallOptions): GatewayContext {
  const counted = { ...call, sentRequests: call.sentRequests ?? { count: 0 } };
  return {
    upstreams: shared.upstreams,
    call: counted,
    exportWatch: shared.exportWatch,
    live: shared.live,
    warpVerifier: shared.warpVerifier,
    maxEntityRepresentations: shared.maxEntityRepresentations,
    loaders: new RequestLoaders(shared.upstreams, counted, shared.observeBatch),
  };
}

/**
 * A subscription's opening request once its source stream is made: its context lives as long as
 * the stream, and each event loads with its own loaders, so the records the opening loaded (and
 * the loaders themselves, with their maps and closures) are let go rather than held for hours.
 */
export function forgetOpeningLoads(context: GatewayContext): void {
  if (context.loaders instanceof RequestLoaders) context.loaders.forget();
}

/**
 * The context one event of a subscription executes with: its own deadline and loaders (records
 * an event loaded are not another's, and a deadline passed long ago would fail every call), the
 * opening request's everything else. Its count of requests sent is the opening request's own
 * object, which the rate limiter settles event by event.
 */
export function contextForEvent(shared: SharedServices, parent: GatewayContext, deadline: number): GatewayContext {
  const call = { ...parent.call, deadline };
  return { ...parent, call, loaders: new RequestLoaders(shared.upstreams, call, shared.observeBatch) };
}
