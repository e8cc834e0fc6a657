/**
 * Opens GraphiQL in headless Chromium (Debian's package, driven by playwright-core), runs an
 * example operation against the gateway on the simulator, and checks the result on the page.
 */
import { mkdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { createLogger } from "../../src/telemetry/logger.ts";
import { createGateway, type Gateway } from "../../src/gateway.ts";
import { startSimulator } from "../../simulator/server.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const ARTIFACTS = new URL("./artifacts/", import.meta.url);

let simulator: Awaited<ReturnType<typeof startSimulator>>;
let gateway: Gateway;
let server: Server;
let browser: Browser;
let url: string;

beforeAll(async () => {
  simulator = await startSimulator({ dataPort: 0, metricsPort: 0 });
  gateway = createGateway(
    loadConfig({}),
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

describe("GraphiQL", () => {
  it("runs the example operation and shows the latest blocks", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const failedRequests: string[] = [];
    page.on("requestfailed", (request) => failedRequests.push(request.url()));
    await page.goto(url, { waitUntil: "load" });
    await page.waitForSelector(".graphiql-execute-button", { timeout: 60_000 });
    await page.click(".graphiql-execute-button");
    const result = page.locator(".graphiql-response");
    await expect.poll(async () => (await result.textContent()) ?? "", { timeout: 30_000 }).toContain("latestBlocks");
    const text = (await result.textContent()) ?? "";
    expect(text).toContain("chainName");
    expect(text).toContain("blockNumber");
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: new URL("graphiql.png", ARTIFACTS).pathname, fullPage: true });
    expect(failedRequests.filter((failed) => !failed.startsWith("data:"))).toEqual([]);
  });
});
