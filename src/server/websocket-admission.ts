/**
 * Who may open a WebSocket, checked on the upgrade request before the socket exists: a browser
 * page from an origin outside the allow-list may not (a page on another site would otherwise run
 * operations, mutations included, with its visitor's address and cookies); a caller whose budget
 * is spent may not; a caller, and the process, hold a bounded number of sockets (below the
 * connection caps, so that HTTP callers always have room); and opening one costs its caller 1, as
 * a request does.
 */
import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import type { GatewayConfig } from "../config.ts";
import type { BucketRef } from "../limits/token-buckets.ts";
import type { SocketBudget } from "../gateway.ts";
import { API_KEY_HEADER } from "../upstream/call-options.ts";
import { callerAddress } from "../limits/caller-address.ts";

/** A refusal as the HTTP answer to the upgrade: status, reason phrase, code, message, extensions. */
export interface UpgradeRefusal {
  status: number;
  reason: string;
  code: string;
  message: string;
  extensions?: Record<string, unknown>;
  /** For the refusal counter: why. */
  kind: "origin" | "rate_limited" | "sockets_per_address" | "sockets";
  /** For a refusal at the caller's own socket cap: who keeps being refused (an IPv6 address by its /64). */
  address?: string;
}

/** An admitted upgrade: who its caller is, and the socket slots it holds until `release`. */
export interface SocketCaller {
  /** The address its caps count against: IPv4, or an IPv6 /64; undefined without one (in process). */
  address: string | undefined;
  /** The socket's remote address as it was at the upgrade (a closed socket forgets it). */
  remoteAddress: string | undefined;
  /** The buckets the socket's frames are checked against before they are read, until connection_init names a key. */
  buckets: readonly BucketRef[];
  /** What its budget held once opening the socket was paid: how many operations it may send before the first is charged; undefined without a budget. */
  remaining: number | undefined;
  release(): void;
}

/** True when a browser page at `origin` may open a socket: same origin as `host`, or in the allow-list (`*`: any). */
export function originAllowed(origin: string | undefined, host: string | undefined, allowed: readonly string[]): boolean {
  if (origin === undefined) return true;
  if (allowed.includes("*")) return true;
  const normalized = origin.trim().replace(/\/+$/, "").toLowerCase();
  if (allowed.includes(normalized)) return true;
  try {
    return host !== undefined && new URL(normalized).host === host.trim().toLowerCase();
  } catch {
    return false;
  }
}

/** The address a caller is known by: the socket's, or behind a trusted proxy the last `X-Forwarded-For` hop; an IPv6 address by its /64. */
function upgradeAddress(upgrade: IncomingMessage, trustProxy: boolean): string | undefined {
  const forwardedHeader = upgrade.headers["x-forwarded-for"];
  const forwarded = trustProxy
    ? (Array.isArray(forwardedHeader) ? forwardedHeader.join(",") : forwardedHeader)?.split(",").at(-1)?.trim()
    : undefined;
  const address = forwarded && isIP(forwarded) ? forwarded : upgrade.socket.remoteAddress;
  return address === undefined ? undefined : callerAddress(address);
}

export class UpgradeAdmission {
  private readonly open = new Map<string, number>();
  private total = 0;

  constructor(
    private readonly config: GatewayConfig,
    private readonly budget: SocketBudget | undefined,
  ) {}

  /** Sockets open now. */
  get sockets(): number {
    return this.total;
  }

  /** The caller of an upgrade, with its slots held; or why it is refused. */
  async admit(upgrade: IncomingMessage): Promise<SocketCaller | UpgradeRefusal> {
    const server = this.config.server;
    const origin = upgrade.headers.origin;
    if (!originAllowed(origin, upgrade.headers.host, server.webSocketAllowedOrigins)) {
      return {
        status: 403,
        reason: "Forbidden",
        code: "FORBIDDEN",
        kind: "origin",
        message: "WebSocket connections from this origin are not allowed: the gateway's own origin and WS_ALLOWED_ORIGINS only",
      };
    }
    const remoteAddress = upgrade.socket.remoteAddress;
    const address = upgradeAddress(upgrade, this.config.rateLimit.trustProxy);
    const headerKey = upgrade.headers[API_KEY_HEADER];
    const buckets = this.budget?.bucketsOf(upgrade, typeof headerKey === "string" ? headerKey : undefined, remoteAddress) ?? [];
    if (this.budget) {
      const waitSeconds = this.budget.secondsUntilServed(buckets);
      if (waitSeconds > 0) return rateLimited(waitSeconds);
    }
    if (this.total >= server.webSocketMaxConnections) {
      return {
        status: 503,
        reason: "Service Unavailable",
        code: "RATE_LIMITED",
        kind: "sockets",
        message: `The gateway holds ${server.webSocketMaxConnections} WebSockets, the most WS_MAX_CONNECTIONS allows: use HTTP, or connect again later`,
        extensions: { limit: "webSockets", max: server.webSocketMaxConnections, retryAfter: 1 },
      };
    }
    if (address !== undefined && (this.open.get(address) ?? 0) >= server.webSocketMaxConnectionsPerAddress) {
      return {
        status: 429,
        reason: "Too Many Requests",
        code: "RATE_LIMITED",
        kind: "sockets_per_address",
        address,
        message: `Your address holds ${server.webSocketMaxConnectionsPerAddress} WebSockets, the most WS_MAX_CONNECTIONS_PER_ADDRESS allows: run more operations on one socket`,
        extensions: { limit: "webSocketsPerAddress", max: server.webSocketMaxConnectionsPerAddress },
      };
    }
    let remaining: number | undefined;
    if (this.budget) {
      const decision = await this.budget.take(buckets, 1);
      if (!decision.allowed) return rateLimited(decision.retryAfterSeconds);
      remaining = decision.remaining;
    }
    return { address, remoteAddress, buckets, remaining, release: this.hold(address) };
  }

  private hold(address: string | undefined): () => void {
    this.total += 1;
    if (address !== undefined) this.open.set(address, (this.open.get(address) ?? 0) + 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.total -= 1;
      if (address === undefined) return;
      const left = (this.open.get(address) ?? 1) - 1;
      if (left > 0) this.open.set(address, left);
      else this.open.delete(address);
    };
  }
}

function rateLimited(seconds: number): UpgradeRefusal {
  return {
    status: 429,
    reason: "Too Many Requests",
    code: "RATE_LIMITED",
    kind: "rate_limited",
    message: `Rate limit exceeded: opening a WebSocket costs 1 and your budget is spent; retry after ${seconds} s`,
    extensions: { retryAfter: seconds, retryAfterSeconds: seconds },
  };
}
