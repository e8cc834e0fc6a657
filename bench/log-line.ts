/**
 * `npx tsx bench/log-line.ts`: what one request's log line costs, in µs of this process's CPU,
 * written as the gateway writes it: `requestLineWriter` to stdout's destination (lines gathered into few
 * asynchronous writes, src/telemetry/log-destination.ts; here to /dev/null), several lines per
 * turn of the event loop as a busy gateway answers them (BENCH_LINES_PER_TURN, default 8). Beside
 * it: each line its own write (how lines were written before they were gathered), the fields
 * through pino's bounding walk, and `warn` (no line written). BENCH_LINES sets how many.
 */
import { cpuUsage } from "node:process";
import { pino } from "pino";
import { requestLineWriter, type RequestId } from "../src/plugins/request-log.ts";
import { BatchedLines, byteDestination } from "../src/telemetry/log-destination.ts";
import { createLogger, type Logger } from "../src/telemetry/logger.ts";

const LINES = Number(process.env.BENCH_LINES ?? 200_000);
const PER_TURN = Number(process.env.BENCH_LINES_PER_TURN ?? 8);

/** CPU per line, lines written PER_TURN at a time in turns of the event loop (the turns' own cost included). */
async function microsPerLine(write: (index: number) => void, lines: number): Promise<number> {
  const start = cpuUsage();
  let index = 0;
  await new Promise<void>((resolve) => {
    const turn = () => {
      for (let line = 0; line < PER_TURN; line += 1) write(index++);
      if (index < lines) setImmediate(turn);
      else resolve();
    };
    turn();
  });
  const used = cpuUsage(start);
  return (used.user + used.system) / lines;
}

const fields = (index: number) => ({
  // A UUID, as requestIdFrom keeps it.
  requestId: `3f1c2a9e-5b7d-4c1e-9a2b-${String(index).padStart(12, "0")}` as RequestId,
  method: "POST",
  operation: "LatestBlocks",
  status: 200,
  startedAt: performance.now() - 1.5,
});

const devNull = () => pino.destination({ dest: "/dev/null", sync: false });
const asRequestsAre = (logger: Logger) => {
  const logRequest = requestLineWriter(logger);
  return (index: number) => logRequest(fields(index));
};
const kinds: Record<string, (index: number) => void> = {
  "info, lines gathered (as the gateway writes)": asRequestsAre(
    createLogger("info", {}, new BatchedLines(byteDestination("/dev/null"))),
  ),
  "info, each line its own write": asRequestsAre(createLogger("info", {}, devNull())),
  "info, through the bounding walk, lines gathered": (() => {
    const logger = createLogger("info", {}, new BatchedLines(byteDestination("/dev/null")));
    return (index: number) => {
      const { startedAt, ...rest } = fields(index);
      logger.info({ ...rest, ms: Math.round((performance.now() - startedAt) * 10) / 10 }, "graphql request");
    };
  })(),
  "warn (no line written)": asRequestsAre(createLogger("warn", {}, devNull())),
};

for (const [name, write] of Object.entries(kinds)) {
  await microsPerLine(write, 20_000);
  process.stdout.write(`${name}: ${(await microsPerLine(write, LINES)).toFixed(2)} µs of CPU per request\n`);
}
