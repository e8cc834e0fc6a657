/** Readers of single environment values for loadConfig: each checks its bound and names the variable when it refuses. */
import { availableParallelism } from "node:os";
import type { PollInterval } from "./config-shape.ts";

export type Env = Record<string, string | undefined>;

export function integer(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    const bound = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw new Error(`${name} must be an integer ${bound}, got "${raw}"`);
  }
  return value;
}

/** `<prefix>_POLL_MS` and `<prefix>_MAX_POLL_MS`; the longest is never shorter than the base. */
export function pollInterval(env: Env, prefix: string, baseMs: number, maxMs: number): PollInterval {
  const base = integer(env, `${prefix}_POLL_MS`, baseMs, 100);
  return { baseMs: base, maxMs: Math.max(base, integer(env, `${prefix}_MAX_POLL_MS`, maxMs, 100)) };
}

export function ratio(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || value > 1) throw new Error(`${name} must be a number from 0 to 1, got "${raw}"`);
  return value;
}

export function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === "") return fallback;
  if (["1", "true", "yes", "on"].includes(raw)) return true;
  if (["0", "false", "no", "off"].includes(raw)) return false;
  throw new Error(`${name} must be true or false, got "${env[name]}"`);
}

/** `raw` as a URL, or an Error of `refusal` (which says what the value must be, never more of it than the caller chose). */
function parsedUrl(raw: string, refusal: string): URL {
  try {
    return new URL(raw);
  } catch {
    throw new Error(refusal);
  }
}

export function url(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  // Credentials come before an "@": a value that has one is not echoed, whichever refusal it meets.
  const got = raw.includes("@") ? "" : `, got "${raw}"`;
  const parsed = parsedUrl(raw, `${name} must be an absolute http(s) URL${got}`);
  if (parsed.username || parsed.password) throw new Error(`${name} must not carry credentials`);
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error(`${name} must be an http(s) URL${got}`);
  return parsed.toString().replace(/\/+$/, "");
}

export function redisUrl(env: Env, name: "REDIS_URL" | "REDIS_CACHE_URL"): string | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  // The URL may carry a password: never echo it.
  const refusal = `${name} must be a redis:// or rediss:// URL`;
  const parsed = parsedUrl(raw, refusal);
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") throw new Error(refusal);
  return raw;
}

export function workers(env: Env): number {
  const raw = env.WORKERS?.trim().toLowerCase();
  if (raw === undefined || raw === "") return 1;
  if (raw === "auto") return availableParallelism();
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < 1) {
    throw new Error(
      `WORKERS must be a whole number of gateway processes (1 or more) or "auto" (one per core), got "${env.WORKERS}"`,
    );
  }
  return value;
}

export function positiveNumber(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
}

export function tracingMode(env: Env): boolean {
  const raw = env.TRACING?.trim().toLowerCase();
  if (!raw || raw === "off" || raw === "none") return false;
  if (raw === "otlp") return true;
  throw new Error(`TRACING must be otlp or off, got "${env.TRACING}"`);
}
