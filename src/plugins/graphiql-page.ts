/**
 * The GraphiQL page (`GET /graphql` accepting `text/html`): some 9 MB with its assets inlined so
 * that it works offline, the same for every view of a process. It is rendered once, on the first
 * view, and each encoding of it (identity, brotli, gzip, as the browser accepts and COMPRESSION
 * allows) is made once, harder than answers are (src/plugins/compression.ts), and its bytes kept;
 * a view sends those bytes, with a strong `ETag` per encoding and `Cache-Control` that lets a
 * browser keep the page and ask again with `If-None-Match`, answered `304 Not Modified`.
 *
 * Sending is the page's work, and its caller pays for it: `sendingCost`, 1 per 64 KiB sent,
 * rounded up (the request paid 1 as it came, src/plugins/rate-limit.ts): a 304 costs 1,
 * the brotli page about 30, the uncompressed page about 140. A caller that cannot pay is refused
 * (429) before anything is sent.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { GraphiQLOptions, Plugin } from "graphql-yoga";
import { asBody, compress, type ContentEncoding } from "./compression.ts";
import { API_KEY_HEADER } from "../upstream/call-options.ts";
import { GRAPHIQL_EXAMPLES } from "./graphiql-examples.ts";
import { sendingCost } from "../limits/request-costs.ts";
import type { RateLimitPlugins } from "./rate-limit.ts";

/** A browser may keep the page an hour before it asks again (and is then answered 304 while it is the same). */
const CACHE_CONTROL = "public, max-age=3600";

/** GraphiQL with a tab per explorer screen, and the API-key header to fill in. */
const GRAPHIQL: GraphiQLOptions = {
  title: "Avalanche GraphQL gateway",
  defaultQuery: GRAPHIQL_EXAMPLES[0]?.query,
  defaultTabs: GRAPHIQL_EXAMPLES.map((example) => ({
    query: example.query,
    variables: example.variables ? JSON.stringify(example.variables, null, 2) : undefined,
  })),
  headers: JSON.stringify({ [API_KEY_HEADER]: "" }),
  // Every operation as a POST with a JSON body, subscriptions too (their events over SSE):
  // GraphiQL would send a subscription as a GET, which CSRF prevention refuses without its header.
  method: "POST",
};

export interface GraphiQLPageOptions {
  /** The GraphQL endpoint, where the page is served. */
  endpoint: string;
  /** The encoding a request is answered in (src/plugins/compression.ts), undefined for identity. */
  negotiate(request: Request): ContentEncoding | undefined;
  /** Charges the request `cost` in all; the answer that refuses it, or undefined when paid. Absent without a rate limit. */
  pay?: RateLimitPlugins["payInAll"] | undefined;
}

interface Encoded {
  bytes: Buffer;
  etag: string;
}

/** Whether an `If-None-Match` header names this ETag (or any, `*`), compared weakly as RFC 9110 asks. */
function matches(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === "*") return true;
  return ifNoneMatch.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag);
}

/** The page, rendered on the first view, and each of its encodings made on the first view that asks for it. */
class Page {
  private readonly encodings = new Map<ContentEncoding | "identity", Promise<Encoded>>();
  private rendered: Promise<{ html: Buffer; hash: string }> | undefined;

  constructor(private readonly options: GraphiQLOptions) {}

  encoded(encoding: ContentEncoding | "identity"): Promise<Encoded> {
    let encoded = this.encodings.get(encoding);
    if (!encoded) {
      encoded = this.encode(encoding);
      this.encodings.set(encoding, encoded);
      // A failure is not kept: the next view tries again.
      encoded.catch(() => this.encodings.delete(encoding));
    }
    return encoded;
  }

  private async encode(encoding: ContentEncoding | "identity"): Promise<Encoded> {
    const { html, hash } = await this.render();
    const bytes = encoding === "identity" ? html : await compress(html, encoding, "static");
    return { bytes, etag: `"${hash}-${encoding}"` };
  }

  private render(): Promise<{ html: Buffer; hash: string }> {
    this.rendered ??= import("@graphql-yoga/render-graphiql").then(
      ({ renderGraphiQL }) => {
        const html = Buffer.from(renderGraphiQL(this.options));
        return { html, hash: createHash("sha256").update(html).digest("base64url").slice(0, 22) };
      },
      (error: unknown) => {
        this.rendered = undefined;
        throw error;
      },
    );
    return this.rendered;
  }
}

function isPageRequest(request: Request, url: URL, endpoint: string): boolean {
  return request.method === "GET" && url.pathname === endpoint && (request.headers.get("accept") ?? "").includes("text/html");
}

/** Serves the GraphiQL page; place it after the rate limit's first plugin, which charges the 1 every request pays. */
export function useGraphiQLPage(options: GraphiQLPageOptions): Plugin {
  const page = new Page(GRAPHIQL);
  return {
    onRequest({ request, url, serverContext, fetchAPI, endResponse }) {
      if (!isPageRequest(request, url, options.endpoint)) return;
      const encoding = options.negotiate(request) ?? "identity";
      return page.encoded(encoding).then(async ({ bytes, etag }) => {
        const headers: Record<string, string> = { etag, "cache-control": CACHE_CONTROL, vary: "accept-encoding" };
        const ifNoneMatch = request.headers.get("if-none-match");
        if (ifNoneMatch !== null && matches(ifNoneMatch, etag)) {
          endResponse(new fetchAPI.Response(null, { status: 304, headers }));
          return;
        }
        const { req } = serverContext as { req?: IncomingMessage };
        const refused = await options.pay?.(request, req, sendingCost(bytes.byteLength), "the GraphiQL page", fetchAPI);
        if (refused) {
          endResponse(refused);
          return;
        }
        if (encoding !== "identity") headers["content-encoding"] = encoding;
        endResponse(
          new fetchAPI.Response(asBody(bytes), {
            status: 200,
            headers: { ...headers, "content-type": "text/html; charset=utf-8", "content-length": String(bytes.byteLength) },
          }),
        );
      });
    },
  };
}
