/**
 * `npx tsx bench/log-line.ts`: what one request's log line costs, in µs of this process's CPU,
 * written as the gateway writes it: `logRequest` to stdout's destination (lines gathered into few
 * asynchronous writes, src/telemetry/log-destination.ts; here to /dev/null), several lines per
 * turn of the event loop as a busy gateway answers them (BENCH_LINES_PER_TURN, default 8). Beside
 * it: each line its own write (how lines were written before they were gathered), the fields
 * through pino's bounding walk, and `warn` (no line written). BENCH_LINES sets how many.
 */
import { cpuUsage } from "node:process";
import { pino } from "pino";
import { logRequest } from "../src/plugins/request-log.ts";
import { BatchedLines } from "../src/telemetry/log-destination.ts";
import { createLogger, type Logger } from "../src/telemetry/logger.ts";

const LINES = Number(process.env.BENCH_LINES ?? 200_000);
const PER_TURN = Number(process.env.BENCH_LINES_PER_TURN ?? 8);

/** CPU per line, lines written PER_TURN at a time in turns of the event loop (the turns' own cost included). */
async function microsPerLine(logger: Logger, write: (logger: Logger, index: number) => void, lines: number): Promise<number> {
  const start = cpuUsage();
  let index = 0;
  await new Promise<void>((resolve) => {
    const turn = () => {
      for (let line = 0; line < PER_TURN; line += 1) write(logger, index++);
      if (index < lines) setImmediate(turn);
      else resolve();
    };
    turn();
  });
  const used = cpuUsage(start);
  return (used.user + used.system) / lines;
}

const fields = (index: number) => ({
  requestId: `3f1c2a9e-5b7d-4c1e-9a2b-${String(index).padStart(12, "0")}`,
  method: "POST",
  operation: "LatestBlocks",
  status: 200,
  startedAt: performance.now() - 1.5,
});

const devNull = () => pino.destination({ dest: "/dev/null", sync: false });
const kinds: Record<string, [Logger, (logger: Logger, index: number) => void]> = {
  "info, logRequest, lines gathered (as the gateway writes)": [
    createLogger("info", {}, new BatchedLines(devNull())),
    (logger, index) => logRequest(logger, fields(index)),
  ],
  "info, logRequest, each line its own write": [
    createLogger("info", {}, devNull()),
    (logger, index) => logRequest(logger, fields(index)),
  ],
  "info, through the bounding walk, lines gathered": [
    createLogger("info", {}, new BatchedLines(devNull())),
    (logger, index) => {
      const { startedAt, ...rest } = fields(index);
      logger.info({ ...rest, ms: Math.round((performance.now() - startedAt) * 10) / 10 }, "graphql request");
    },
  ],
  "warn (no line written)": [createLogger("warn", {}, devNull()), (logger, index) => logRequest(logger, fields(index))],
};

for (const [name, [logger, write]] of Object.entries(kinds)) {
  await microsPerLine(logger, write, 20_000);
  process.stdout.write(`${name}: ${(await microsPerLine(logger, write, LINES)).toFixed(2)} µs of CPU per request\n`);
}
