/**
 * `npx tsx bench/log-line.ts`: what one request's log line costs, in µs of this process's CPU,
 * written as the gateway writes it (pino, asynchronously, to /dev/null): the line as
 * `logRequest` writes it (bounded where it is made), the same fields through the bounding walk
 * (as every line was written before), and at `warn` (not written). BENCH_LINES sets how many.
 */
import { cpuUsage } from "node:process";
import { pino } from "pino";
import { logRequest } from "../src/plugins/request-log.ts";
import { createLogger, type Logger } from "../src/telemetry/logger.ts";

const LINES = Number(process.env.BENCH_LINES ?? 200_000);

function microsPerLine(logger: Logger, write: (logger: Logger, index: number) => void): number {
  for (let index = 0; index < 20_000; index += 1) write(logger, index);
  const start = cpuUsage();
  for (let index = 0; index < LINES; index += 1) write(logger, index);
  const used = cpuUsage(start);
  return (used.user + used.system) / LINES;
}

const fields = (index: number) => ({
  requestId: `3f1c2a9e-5b7d-4c1e-9a2b-${String(index).padStart(12, "0")}`,
  method: "POST",
  operation: "LatestBlocks",
  status: 200,
  startedAt: performance.now() - 1.5,
});

const destination = () => pino.destination({ dest: "/dev/null", sync: false });
const kinds: Record<string, [Logger, (logger: Logger, index: number) => void]> = {
  "info, logRequest (bounded where made)": [
    createLogger("info", {}, destination()),
    (logger, index) => logRequest(logger, fields(index)),
  ],
  "info, through the bounding walk": [
    createLogger("info", {}, destination()),
    (logger, index) => {
      const { startedAt, ...rest } = fields(index);
      logger.info({ ...rest, ms: Math.round((performance.now() - startedAt) * 10) / 10 }, "graphql request");
    },
  ],
  "warn (no line written)": [createLogger("warn", {}, destination()), (logger, index) => logRequest(logger, fields(index))],
};

for (const [name, [logger, write]] of Object.entries(kinds)) {
  process.stdout.write(`${name}: ${microsPerLine(logger, write).toFixed(2)} µs of CPU per request\n`);
}
