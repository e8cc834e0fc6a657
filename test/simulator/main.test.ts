import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const TSX = fileURLToPath(new URL("../../node_modules/.bin/tsx", import.meta.url));

let child: ChildProcess | undefined;

afterAll(() => {
  if (child !== undefined && child.exitCode === null) child.kill("SIGKILL");
});

describe("npm run simulator", () => {
  it("prints one listening line, serves both APIs and exits cleanly on SIGTERM", async () => {
    child = spawn(TSX, ["simulator/main.ts"], {
      cwd: ROOT,
      env: {
        ...process.env,
        SIM_DATA_PORT: "0",
        SIM_METRICS_PORT: "0",
        SIM_BLOCKS_PER_CHAIN: "300",
        SIM_ERROR_RATE: "1",
        SIM_ERROR_STATUS: "503",
        SIM_ERROR_ROUTES: "GET /v1/chains/{chainId}",
        SIM_EXPORT_JOB_MS: "250",
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const lines = createInterface({ input: child.stdout! });
    const [firstLine] = (await once(lines, "line")) as [string];
    const listening = JSON.parse(firstLine) as { event: string; dataUrl: string; metricsUrl: string };
    expect(listening).toEqual({
      event: "listening",
      dataUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      metricsUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
    });

    const head = await fetch(`${listening.dataUrl}/v1/chains/43114/blocks?pageSize=1`);
    expect(((await head.json()) as { blocks: { blockNumber: string }[] }).blocks[0]!.blockNumber).toBe("299");
    expect((await fetch(`${listening.dataUrl}/v1/chains/43114`)).status).toBe(503);
    expect((await fetch(`${listening.metricsUrl}/v2/chains/43114`)).status).toBe(200);
    const { knobs } = (await (await fetch(`${listening.dataUrl}/_simulator/knobs`)).json()) as { knobs: { exportJobMs: number } };
    expect(knobs.exportJobMs).toBe(250);

    const exited = once(child, "exit");
    child.kill("SIGTERM");
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
  });
});
