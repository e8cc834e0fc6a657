/**
 * The attacks of issue 25 (rows 17 on), as `npm run bench:hostile` runs them beside the
 * legitimate load: WebSocket, idle connections, CPU that makes no upstream call, IPv6 addresses
 * and the live pollers. A row that needs one address runs from 127.0.0.(100 + row); one that
 * needs many, from 127.(row).1.1 on (client.ts). Every socket an attack opens is closed at its
 * deadline; a refusal or a close is counted, never thrown.
 */
import { getIntrospectionQuery } from "graphql";
import type { Pool } from "undici";
import { attackerAddresses, loops, sleep } from "./client.ts";
import { letters, MAX_STEPS, max, postCounted } from "./requests.ts";
import {
  AttackSocket,
  holdConnections,
  messageOutcome,
  RawConnection,
  subscribeFrame,
  wsUrl,
  type GraphQLWsMessage,
  type Held,
  type Holder,
} from "./sockets.ts";
import type { Attack, AttackContext } from "./types.ts";

const untilDeadline = (context: AttackContext) => sleep(Math.max(0, context.deadline - performance.now()));

/** Waits until `done()` or `ms` have passed. */
async function waitFor(done: () => boolean, ms: number): Promise<void> {
  const until = performance.now() + ms;
  while (!done() && performance.now() < until) await sleep(100);
}

const megabytes = (bytes: number) => Math.round(bytes / 1e5) / 10;

const range = (count: number) => Array.from({ length: count }, (_, index) => index);

/** A socket of the attack from `address`, its closes and refusals counted under `label`. */
function socketFrom(context: AttackContext, address: string, onMessage?: (message: GraphQLWsMessage) => void, label = "") {
  return new AttackSocket({ url: wsUrl(context), localAddress: address, tally: context.tally, label, onMessage });
}

/** The figures of connections held to the deadline: opened in all, most open at once, open at the end. */
function heldFigures(context: AttackContext, holder: Holder<Held>): void {
  const openAtEnd = holder.stop();
  context.tally.add("open at the end", openAtEnd);
  context.figures.connectionsOpened = holder.stats.opened;
  context.figures.attempts = holder.stats.attempts;
  context.figures.peakOpen = holder.stats.peakOpen;
  context.figures.openAtEnd = openAtEnd;
}

/**
 * Sockets from the attacker's address that send `subscribe { __typename }` frames, each with a
 * fresh id, as fast as the socket takes them (up to 64 kB buffered), whatever the answers say,
 * and reopen when the gateway closes them.
 */
async function frameFlood(context: AttackContext, sockets: number): Promise<void> {
  let frames = 0;
  let completes = 0;
  let bytes = 0;
  const holder = holdConnections({
    context,
    count: sockets,
    addressOf: () => context.address,
    connect: (address) =>
      socketFrom(context, address, (message) => {
        if (message.type === "complete") completes += 1;
        else if (message.type !== "connection_ack") context.tally.add(messageOutcome(message));
      }),
    async onOpen(socket) {
      if (!(await socket.init())) return;
      let id = 0;
      await new Promise<void>((resolve) => {
        const pump = () => {
          if (!socket.open || performance.now() >= context.deadline) return resolve();
          for (let sent = 0; sent < 64 && socket.ws.bufferedAmount < 65_536; sent += 1) {
            const frame = subscribeFrame(String((id += 1)), "{ __typename }");
            socket.send(frame);
            frames += 1;
            bytes += frame.length;
          }
          if (socket.ws.bufferedAmount < 65_536) setImmediate(pump);
          else setTimeout(pump, 1);
        };
        pump();
      });
    },
  });
  await untilDeadline(context);
  heldFigures(context, holder);
  context.figures.subscribeFramesSent = frames;
  context.figures.mbSent = megabytes(bytes);
  context.figures.completes = completes;
}

/** `GET path` with `headers`, its body counted but not kept: the status, content type and bytes. */
async function getCounted(client: Pool, path: string, headers: Record<string, string>) {
  const response = await client.request({ method: "GET", path, headers });
  let bytes = 0;
  for await (const chunk of response.body) bytes += (chunk as Buffer).length;
  const contentType = String(response.headers["content-type"] ?? "").split(";")[0] || "no content type";
  return { outcome: `${response.statusCode} ${contentType}`, bytes, encoding: response.headers["content-encoding"] };
}

export const TRANSPORT_ATTACKS: Attack[] = [
  {
    row: 17,
    title:
      "WebSocket init bomb: 64 sockets from one address, each a 96 kB connection_init of 32,000 empty objects, reopened when closed",
    async run(context) {
      const init = `{"type":"connection_init","payload":{"x":[${range(32_000)
        .map(() => "{}")
        .join(",")}]}}`;
      let inits = 0;
      let acks = 0;
      const holder = holdConnections({
        context,
        count: 64,
        addressOf: () => context.address,
        connect: (address) => socketFrom(context, address),
        async onOpen(socket) {
          inits += 1;
          if (await socket.init(init)) {
            acks += 1;
            context.tally.add("connection_ack");
          }
        },
      });
      await untilDeadline(context);
      heldFigures(context, holder);
      context.figures.initBytes = init.length;
      context.figures.connectionInitsSent = inits;
      context.figures.acknowledged = acks;
      context.figures.mbSent = megabytes(inits * init.length);
    },
  },
  {
    row: 18,
    title: "idle WebSockets: 16 addresses × 64 sockets that send connection_init and hold, opened before the window",
    async prepare(context) {
      const addresses = attackerAddresses(context.row, 16);
      let acks = 0;
      const holder = holdConnections({
        context,
        count: 16 * 64,
        addressOf: (index) => addresses[Math.floor(index / 64)]!,
        connect: (address) => socketFrom(context, address),
        async onOpen(socket) {
          if (await socket.init()) acks += 1;
        },
      });
      // Every socket acknowledged and open at once, unless the gateway will not have it.
      await waitFor(() => holder.stats.open >= 16 * 64 && acks >= 16 * 64, 40_000);
      context.figures.openBeforeTheWindow = holder.stats.open;
      context.figures.acknowledgedBeforeTheWindow = acks;
      return holder;
    },
    async run(context, prepared) {
      await untilDeadline(context);
      heldFigures(context, prepared as Holder<AttackSocket>);
    },
  },
  {
    row: 19,
    title:
      "slow headers: 16 addresses × 64 connections that send a header line a second and never end them, opened before the window",
    async prepare(context) {
      const url = new URL(context.origin);
      const addresses = attackerAddresses(context.row, 16);
      const lived: number[] = [];
      const holder = holdConnections({
        context,
        count: 16 * 64,
        addressOf: (index) => addresses[Math.floor(index / 64)]!,
        connect: (address) => new RawConnection(url.hostname, Number(url.port), address, context.tally),
        async onOpen(connection) {
          const began = performance.now();
          connection.write(`GET ${context.path} HTTP/1.1\r\nHost: ${url.host}\r\n`);
          let line = 0;
          const timer = setInterval(() => connection.write(`X-Slow-${(line += 1)}: ${letters(8)}\r\n`), 1_000);
          void connection.closed.then(() => {
            clearInterval(timer);
            if (performance.now() < context.deadline) lived.push((performance.now() - began) / 1000);
          });
        },
      });
      await Promise.race([holder.settled, sleep(40_000)]);
      context.figures.openBeforeTheWindow = holder.stats.open;
      return { holder, lived };
    },
    async run(context, prepared) {
      const { holder, lived } = prepared as { holder: Holder<RawConnection>; lived: number[] };
      await untilDeadline(context);
      heldFigures(context, holder);
      lived.sort((a, b) => a - b);
      context.figures.medianSecondsUntilClosed = lived.length
        ? Math.round(lived[Math.floor(lived.length / 2)]! * 10) / 10
        : "none closed";
    },
  },
  {
    row: 20,
    title: "frame flood: one socket subscribing { __typename } as fast as it can, a fresh id each, past its budget",
    run: (context) => frameFlood(context, 1),
  },
  {
    row: 21,
    title:
      "frame flood: 4 sockets from one address subscribing { __typename } as fast as they can, a fresh id each, past their budget",
    run: (context) => frameFlood(context, 4),
  },
  {
    row: 22,
    title: "unread results: 16 sockets × 20 full introspections on sockets that never read",
    async run(context) {
      const query = getIntrospectionQuery();
      let asked = 0;
      let bytes = 0;
      const sockets = range(16).map(() =>
        socketFrom(context, context.address, (message) => {
          if (message.type !== "connection_ack" && message.type !== "complete")
            context.tally.add(`read after the window: ${messageOutcome(message)}`);
        }),
      );
      await Promise.all(
        sockets.map(async (socket) => {
          if (!(await socket.init())) return;
          socket.pauseReading();
          for (let id = 1; id <= 20; id += 1) {
            const frame = subscribeFrame(String(id), query);
            if (socket.send(frame)) {
              asked += 1;
              bytes += frame.length;
            }
          }
        }),
      );
      context.figures.introspectionsAsked = asked;
      context.figures.mbSent = megabytes(bytes);
      await untilDeadline(context);
      // Read again: what the gateway kept for these sockets, and whether it closed them.
      for (const socket of sockets) socket.resumeReading();
      await Promise.race([Promise.all(sockets.map((socket) => socket.closed)), sleep(3_000)]);
      const open = sockets.filter((socket) => socket.open).length;
      context.tally.add("open at the end", open);
      context.figures.mbReadAfterTheWindow = megabytes(sockets.reduce((sum, socket) => sum + socket.bytesReceived, 0));
      context.figures.openAtEnd = open;
      for (const socket of sockets) socket.close();
    },
  },
  {
    row: 23,
    title: "GraphiQL flood: GET /graphql with accept: text/html and no accept-encoding, on 4 connections from one address",
    gatewayEnv: { GRAPHIQL: "true" },
    async run(context) {
      const client = context.pool(4);
      let bytes = 0;
      let compressed = 0;
      await loops(
        4,
        context.deadline,
        MAX_STEPS,
        async () => {
          const answer = await getCounted(client, context.path, { accept: "text/html" });
          context.tally.add(answer.outcome);
          bytes += answer.bytes;
          if (answer.encoding) compressed += 1;
          max(context.figures, "largestAnswerBytes", answer.bytes);
        },
        context.tally,
      );
      context.figures.mbReceived = megabytes(bytes);
      context.figures.compressedAnswers = compressed;
    },
  },
  {
    row: 24,
    title: "introspection flood: full introspection over HTTP from two addresses, each as fast as its budget allows",
    async run(context) {
      const body = JSON.stringify({ query: getIntrospectionQuery() });
      let waits = 0;
      await Promise.all(
        attackerAddresses(context.row, 2).map((address) => {
          const client = context.pool(2, address);
          return loops(
            2,
            context.deadline,
            MAX_STEPS,
            async () => {
              const answer = await postCounted(context, client, body);
              // Within the budget: a refusal waits as long as it says.
              if (answer.status === 429) {
                waits += 1;
                await sleep(Math.min(Math.max(0, context.deadline - performance.now()), (answer.retryAfterSeconds ?? 1) * 1000));
              }
            },
            context.tally,
          );
        }),
      );
      context.figures.waitsForRetryAfter = waits;
    },
  },
];
