/** Structured JSON logs. API keys are redacted wherever they appear in a logged object. */
import { pino, type Logger } from "pino";

export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: "avalanche-graphql-gateway" },
    redact: {
      paths: ["apiKey", "*.apiKey", "headers['x-glacier-api-key']", "*.headers['x-glacier-api-key']"],
      censor: "[redacted]",
    },
  });
}

export type { Logger };
