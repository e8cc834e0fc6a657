/** Requests that several attacks of `npm run bench:hostile` send: GraphQL posts counted by outcome, and SSE streams held open. */
import { randomBytes } from "node:crypto";
import type { Pool } from "undici";
import { failureOf, loops, outcomeOf, parseGraphQL, send, type Answer } from "./client.ts";
import type { AttackContext } from "./types.ts";

export const letters = (length: number) =>
  Array.from(randomBytes(length), (byte) => String.fromCharCode(97 + (byte % 26))).join("");

/** Posts a GraphQL body and counts its outcome under `label`. */
export async function postCounted(
  context: AttackContext,
  client: Pool,
  body: unknown,
  label = "",
  headers: Record<string, string> = {},
): Promise<Answer> {
  const answer = await send(client, {
    method: "POST",
    path: context.path,
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  context.tally.add(`${label}${outcomeOf(answer)}`);
  return answer;
}

/** Keeps the largest `value` seen under `name`. */
export function max(figures: Record<string, number | string>, name: string, value: number): void {
  figures[name] = Math.max(Number(figures[name] ?? 0), value);
}

export const MAX_STEPS = 200_000;

interface LabelledBody {
  label: string;
  body: unknown;
}

/** `workers` loops that post `bodies` in turn until the deadline, counting each answer under its body's label. */
export function postInTurn(
  context: AttackContext,
  client: Pool,
  workers: number,
  bodies: LabelledBody[],
  onAnswer: (answer: Answer) => void = () => {},
): Promise<void> {
  return loops(
    workers,
    context.deadline,
    MAX_STEPS,
    async (index) => {
      const { label, body } = bodies[index % bodies.length]!;
      onAnswer(await postCounted(context, client, body, label));
    },
    context.tally,
  );
}

export interface SseStream {
  body: unknown;
  headers?: Record<string, string>;
}

export interface SseStreamsResult {
  /** Streams the gateway answered with `text/event-stream`. */
  opened: number;
  events: number;
  /** Streams still open at the deadline (then cut). */
  openAtEnd: number;
}

/**
 * Opens each of `streams` as an SSE subscription on `client`, all at once, and reads them until
 * the deadline. Counted under `label`: a refusal (an answer that is not a stream), each stream's
 * first event and every event that is not a plain `next`, streams the gateway cut, and those
 * still open or unanswered at the deadline.
 */
export async function sseStreams(
  context: AttackContext,
  client: Pool,
  streams: SseStream[],
  label = "",
): Promise<SseStreamsResult> {
  let events = 0;
  let waiting = 0;
  let open = 0;
  let opened = 0;
  await Promise.all(
    streams.map(async ({ body, headers }) => {
      waiting += 1;
      let streaming = false;
      try {
        const response = await client.request({
          method: "POST",
          path: context.path,
          headers: { "content-type": "application/json", accept: "text/event-stream", ...headers },
          body: JSON.stringify(body),
        });
        waiting -= 1;
        const contentType = String(response.headers["content-type"] ?? "");
        if (!contentType.startsWith("text/event-stream")) {
          const text = await response.body.text();
          context.tally.add(`${label}subscription refused: ${outcomeOf({ status: response.statusCode, contentType, text })}`);
          return;
        }
        streaming = true;
        open += 1;
        opened += 1;
        let buffer = "";
        let first = true;
        let completed = false;
        for await (const chunk of response.body) {
          buffer += (chunk as Buffer).toString("utf8");
          for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const event = /^event: ?(.*)$/m.exec(block)?.[1];
            if (!event) continue;
            events += 1;
            if (event === "complete") completed = true;
            const data = /^data: ?(.*)$/m.exec(block)?.[1] ?? "";
            const code = parseGraphQL(data)?.errors?.[0]?.extensions?.code;
            if (first || code !== undefined || event !== "next") {
              context.tally.add(
                `${label}subscription ${first ? "first " : ""}event: ${event}${code === undefined ? "" : ` ${String(code)}`}`,
              );
            }
            first = false;
          }
        }
        open -= 1;
        if (!completed && performance.now() < context.deadline)
          context.tally.add(`${label}subscription cut by the gateway without complete`);
      } catch (error) {
        if (performance.now() < context.deadline) {
          if (streaming) open -= 1;
          else waiting -= 1;
          context.tally.add(`${label}subscription ${failureOf(error)}`);
        }
      }
    }),
  );
  // Streams and requests still open when the attack's pools were cut at the deadline.
  context.tally.add(`${label}subscription open at the end`, open);
  context.tally.add(`${label}subscription without an answer at the end`, waiting);
  return { opened, events, openAtEnd: open };
}
