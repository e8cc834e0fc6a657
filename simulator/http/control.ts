import type { IncomingMessage, ServerResponse } from "node:http";
import { readAdvanceSeconds, type SimulatorClock } from "./clock.ts";
import { HttpError, badRequest, errorBody } from "./errors.ts";
import type { Knobs } from "./knobs.ts";
import type { RequestLog } from "./request-log.ts";
import { sendJson } from "./respond.ts";

export const CONTROL_PREFIX = "/_simulator/";
const MAX_BODY_BYTES = 64 * 1024;

export interface ControlTarget {
  log: RequestLog;
  knobs(): Knobs;
  /** @throws RangeError when the update is invalid. */
  setKnobs(update: unknown): void;
  clock: SimulatorClock;
  /** Called when the network's data changed, so that kept answers are dropped. */
  onChange(): void;
}

/**
 * The simulator's own routes, on both listeners: never counted, logged,
 * delayed or failed by the knobs.
 */
export async function handleControl(
  request: IncomingMessage,
  response: ServerResponse,
  pathname: string,
  target: ControlTarget,
): Promise<void> {
  const route = `${request.method} ${pathname.slice(CONTROL_PREFIX.length)}`;
  try {
    switch (route) {
      case "GET counters":
        return sendJson(response, 200, { counts: target.log.counters() });
      case "GET requests":
        return sendJson(response, 200, { requests: target.log.requests() });
      case "POST reset":
        target.log.reset();
        return sendJson(response, 200, { counts: target.log.counters() });
      case "GET knobs":
        return sendJson(response, 200, { knobs: target.knobs() });
      case "POST knobs":
        try {
          target.setKnobs(await readJsonBody(request));
        } catch (error) {
          if (error instanceof RangeError) throw badRequest(error.message);
          throw error;
        }
        return sendJson(response, 200, { knobs: target.knobs() });
      case "GET clock":
        if (target.clock.sync()) target.onChange();
        return sendJson(response, 200, target.clock.state());
      case "POST clock":
        try {
          target.clock.advance(readAdvanceSeconds(await readJsonBody(request)));
        } catch (error) {
          if (error instanceof RangeError) throw badRequest(error.message);
          throw error;
        }
        if (target.clock.sync()) target.onChange();
        return sendJson(response, 200, target.clock.state());
      default:
        return sendJson(response, 404, errorBody(404, `Cannot ${request.method} ${pathname}`));
    }
  } catch (error) {
    if (error instanceof HttpError) return sendJson(response, error.status, error.body);
    throw error;
  }
}

export async function readJsonBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw badRequest(`body must not be larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw badRequest("body must be valid JSON");
  }
}
