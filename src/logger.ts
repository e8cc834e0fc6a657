/** Structured JSON logs. API keys are redacted wherever they appear in a logged object. */
import { pino, type Logger } from "pino";

/** `bindings` go on every line, e.g. the worker id of a cluster worker. */
export function createLogger(level: string, bindings: Record<string, unknown> = {}): Logger {
  return pino({
    level,
    base: { service: "avalanche-graphql-gateway", pid: process.pid, ...bindings },
    redact: {
      paths: ["apiKey", "*.apiKey", "headers['x-glacier-api-key']", "*.headers['x-glacier-api-key']"],
      censor: "[redacted]",
    },
  });
}

export type { Logger };
