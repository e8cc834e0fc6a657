/**
 * Opens GraphiQL in headless Chromium (Debian's package, driven by playwright-core), runs example
 * operations against the gateway on the simulator, and checks the results on the page: the live
 * first tab (new C-Chain blocks, pushed as the simulator's clock moves) and the latest-blocks query.
 */
import { mkdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { createLogger } from "../../src/telemetry/logger.ts";
import { createGateway, type Gateway } from "../../src/gateway.ts";
import { startSimulator } from "../../simulator/server.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const ARTIFACTS = new URL("./artifacts/", import.meta.url);
const C_CHAIN = "43114";

let simulator: Awaited<ReturnType<typeof startSimulator>>;
let gateway: Gateway;
let server: Server;
let browser: Browser;
let url: string;

beforeAll(async () => {
  simulator = await startSimulator({ dataPort: 0, metricsPort: 0 });
  gateway = createGateway(
    // A short block poll, so that the live tab shows each block the clock adds within a moment.
    loadConfig({ LIVE_BLOCKS_POLL_MS: "200", LIVE_BLOCKS_MAX_POLL_MS: "200" }),
    { dataApiUrl: simulator.dataUrl, metricsApiUrl: simulator.metricsUrl },
    createLogger("silent"),
  );
  server = createServer(gateway.yoga);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/graphql`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
});

afterAll(async () => {
  await browser?.close();
  server?.close();
  await gateway?.close();
  await simulator?.close();
});

/** GraphiQL, loaded, with its tabs and execute button on the page; and the requests that failed. */
async function openGraphiQL(): Promise<{ page: Page; failedRequests: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const failedRequests: string[] = [];
  page.on("requestfailed", (request) => failedRequests.push(request.url()));
  await page.goto(url, { waitUntil: "load" });
  await page.waitForSelector(".graphiql-execute-button", { timeout: 60_000 });
  return { page, failedRequests };
}

async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: new URL(name, ARTIFACTS).pathname, fullPage: true });
}

function headOf(chainId: string): bigint {
  return BigInt(simulator.clock().heads.find((head) => head.chainId === chainId)!.blockNumber);
}

describe("GraphiQL", () => {
  it("opens on the live tab, and shows new C-Chain blocks as they arrive", async () => {
    const { page, failedRequests } = await openGraphiQL();
    try {
      await expect.poll(async () => (await page.locator(".graphiql-tab-active").textContent()) ?? "").toContain("NewBlocks");
      const before = headOf(C_CHAIN);
      await page.click(".graphiql-execute-button");
      const result = page.locator(".graphiql-response");
      const seen = new Set<string>();
      // The simulator's C-Chain gains a block about every 2 s of its clock; each push replaces the
      // one before in the result pane, so the pane is read after every move of the clock.
      for (let step = 0; step < 40 && seen.size < 3; step += 1) {
        simulator.advanceClock(4);
        await new Promise((resolve) => setTimeout(resolve, 500));
        const text = (await result.textContent()) ?? "";
        for (const match of text.matchAll(/"blockNumber":\s*"?(\d+)/g)) seen.add(match[1]!);
      }
      const numbers = [...seen].map(BigInt);
      expect(numbers.length).toBeGreaterThanOrEqual(2);
      expect(numbers.every((number) => number > before && number <= headOf(C_CHAIN))).toBe(true);
      const text = (await result.textContent()) ?? "";
      expect(text).toContain("newBlocks");
      expect(text).toContain("C-Chain");
      expect(text).not.toContain('"errors"');
      await screenshot(page, "graphiql-live.png");
      expect(failedRequests.filter((failed) => !failed.startsWith("data:"))).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it("runs the LatestBlocks tab and shows the latest blocks", async () => {
    const { page, failedRequests } = await openGraphiQL();
    try {
      // A click just after the page loads can land before the tabs take clicks: click until the tab is active.
      const tab = page.locator(".graphiql-tab-button").filter({ hasText: "LatestBlocks" });
      await expect
        .poll(async () => {
          await tab.click();
          return (await page.locator(".graphiql-tab-active").textContent()) ?? "";
        })
        .toContain("LatestBlocks");
      const result = page.locator(".graphiql-response");
      const answer = async () => (await result.textContent()) ?? "";
      // Just after the switch, GraphiQL can still hold the first tab's operation name: it then
      // answers "Cannot infer operation NewBlocks" and sends nothing. Run again until it sends.
      for (let attempt = 0; attempt < 10; attempt += 1) {
        const sent = page
          .waitForRequest((request) => request.method() === "POST" && (request.postData() ?? "").includes("LatestBlocks"), {
            timeout: 2_000,
          })
          .then(
            () => true,
            () => false,
          );
        await page.click(".graphiql-execute-button");
        if (await sent) break;
      }
      await expect.poll(answer, { timeout: 30_000 }).toContain("latestBlocks");
      const text = await answer();
      expect(text).toContain("chainName");
      expect(text).toContain("blockNumber");
      await screenshot(page, "graphiql.png");
      expect(failedRequests.filter((failed) => !failed.startsWith("data:"))).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
