/**
 * The attacks of issue 25 (rows 17 on), as `npm run bench:hostile` runs them beside the
 * legitimate load: WebSocket, idle connections, CPU that makes no upstream call, IPv6 addresses
 * and the live pollers. A row that needs one address runs from 127.0.0.(100 + row); one that
 * needs many, from 127.(row).1.1 on (client.ts). Every socket an attack opens is closed at its
 * deadline; a refusal or a close is counted, never thrown.
 */
import { randomBytes } from "node:crypto";
import { getIntrospectionQuery } from "graphql";
import type { Pool } from "undici";
import { attackerAddresses, failureOf, freshCallerAddress, loops, outcomeOf, sleep } from "./client.ts";
import { letters, MAX_STEPS, max, postCounted, sseStreams } from "./requests.ts";
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
  context.figures.closedByTheGateway = Object.entries(context.tally.counts)
    .filter(([outcome]) => outcome.includes("closed by the gateway"))
    .reduce((sum, [, count]) => sum + count, 0);
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

/** An address in the /64 2001:db8:0:(row)::/64, its last 64 bits drawn at random. */
function addressInOne64(row: number): string {
  const groups = Array.from({ length: 4 }, () => randomBytes(2).toString("hex"));
  return `2001:db8:0:${row.toString(16)}:${groups.join(":")}`;
}

/** One address, in a /64 of its own: what one caller gets, beside the rotating ones. */
const oneAddress = (row: number) => `2001:db8:1:${row.toString(16)}::1`;

/**
 * Runs `attack` twice at once, its outcomes counted under each label: from a new address of one
 * /64 each time (`from()`), and from one address in a /64 of its own. What each returns is the
 * figure `name`ByRotatingAddresses and `name`ByOneAddress.
 */
async function rotatingBesideOne(
  context: AttackContext,
  name: string,
  attack: (label: string, from: () => string) => Promise<number>,
): Promise<void> {
  const [rotating, one] = await Promise.all([
    attack("new address in one /64: ", () => addressInOne64(context.row)),
    attack("one address: ", () => oneAddress(context.row)),
  ]);
  context.figures[`${name}ByRotatingAddresses`] = rotating;
  context.figures[`${name}ByOneAddress`] = one;
}

const randomEvmAddress = () => `0x${randomBytes(20).toString("hex")}`;

/** The gateway's `gateway_live_pollers` now (a scrape of /metrics from `address`), or what it answered instead. */
async function livePollers(context: AttackContext, address: string): Promise<number | string> {
  try {
    const response = await context.pool(1, address).request({ method: "GET", path: "/metrics" });
    const text = await response.body.text();
    if (response.statusCode !== 200) return `/metrics: ${response.statusCode}`;
    const values = [...text.matchAll(/^gateway_live_pollers(?:\{[^}]*\})? ([\d.e+]+)$/gm)].map((match) => Number(match[1]));
    return values.length ? values.reduce((sum, value) => sum + value, 0) : "no gateway_live_pollers";
  } catch (error) {
    return `/metrics ${failureOf(error)}`;
  }
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
  {
    row: 25,
    title:
      "IPv6 rotation: costly queries (101 units: 100 blocks, a transaction of each), each from a new address of one /64 in X-Forwarded-For, beside one address",
    gatewayEnv: { TRUST_PROXY: "true" },
    async run(context) {
      const client = context.pool(4);
      // 101 units each at the default limits (a block's transactions are a call per block), so
      // that one address's burst pays for 9; a new alias each time, so that no cache answers it.
      const costly = () => ({
        query: `{ b${letters(8)}: latestBlocks(first: 100) { nodes { blockNumber transactions(first: 1) { nodes { txHash } } } } }`,
      });
      await rotatingBesideOne(context, "served", async (label, from) => {
        let served = 0;
        await loops(
          2,
          context.deadline,
          MAX_STEPS,
          async () => {
            const answer = await postCounted(context, client, costly(), label, { "x-forwarded-for": from() });
            if (outcomeOf(answer) === "200 data") served += 1;
          },
          context.tally,
        );
        return served;
      });
    },
  },
  {
    row: 26,
    title:
      "IPv6 rotation: 25 newBlocks subscriptions, each from a new address of one /64 in X-Forwarded-For, where a caller may hold 10; and 25 from one address",
    gatewayEnv: { TRUST_PROXY: "true" },
    async run(context) {
      const client = context.pool(50);
      const body = { query: 'subscription { newBlocks(chainId: "43114") { blockNumber } }' };
      const streams = (from: () => string) => range(25).map(() => ({ body, headers: { "x-forwarded-for": from() } }));
      await rotatingBesideOne(
        context,
        "streamsHeld",
        async (label, from) => (await sseStreams(context, client, streams(from), label)).openAtEnd,
      );
    },
  },
  {
    row: 27,
    title:
      "poller pool: 200 addresses × 10 newAddressTransactions of random addresses over graphql-ws, then a newcomer's newBlocks(43114) (live simulator)",
    simulatorEnv: { SIM_LIVE: "true" },
    async prepare(context) {
      const addresses = attackerAddresses(context.row, 200);
      const query =
        "subscription($chainId: ID!, $address: EvmAddress!) { newAddressTransactions(chainId: $chainId, address: $address) { __typename } }";
      let subscribed = 0;
      const holder = holdConnections({
        context,
        count: 200,
        addressOf: (index) => addresses[index]!,
        connect: (address) =>
          socketFrom(context, address, (message) => {
            if (message.type !== "connection_ack") context.tally.add(`pool subscription: ${messageOutcome(message)}`);
          }),
        async onOpen(socket) {
          if (!(await socket.init())) return;
          for (let id = 1; id <= 10; id += 1) {
            if (socket.send(subscribeFrame(String(id), query, { chainId: "43114", address: randomEvmAddress() })))
              subscribed += 1;
          }
        },
      });
      // Every socket open with its 10 subscriptions sent (or 40 s), then their first reads.
      await waitFor(() => holder.current.filter((socket) => socket?.open).length >= 200 && subscribed >= 2_000, 40_000);
      await sleep(3_000);
      context.figures.poolSubscriptionsSent = subscribed;
      context.figures.livePollersBeforeTheWindow = await livePollers(context, `127.${context.row}.0.2`);
      return holder;
    },
    async run(context, prepared) {
      const holder = prepared as Holder<AttackSocket>;
      // The newcomer: a caller that has sent nothing, asking for the C-Chain's new blocks.
      const begun = performance.now();
      let verdict: string | undefined;
      const newcomer = socketFrom(
        context,
        freshCallerAddress(context.row),
        (message) => {
          if (message.type === "connection_ack" || verdict) return;
          verdict = messageOutcome(message);
          context.figures.newcomerSecondsToFirstMessage = Math.round((performance.now() - begun) / 100) / 10;
        },
        "newcomer: ",
      );
      if (await newcomer.init()) {
        newcomer.send(subscribeFrame("1", 'subscription { newBlocks(chainId: "43114") { blockNumber } }'));
        // A block comes every 2 s or so on the live C-Chain: 20 s without one is no stream.
        const waitUntil = performance.now() + 20_000;
        while (!verdict && newcomer.open && performance.now() < waitUntil) await sleep(100);
      }
      verdict ??= newcomer.open ? "no event in 20 s" : "socket closed before an event";
      newcomer.close();
      context.tally.add(`newcomer's newBlocks: ${verdict}`);
      context.figures.newcomerNewBlocks = verdict;
      if (verdict !== "next data") context.legitErrors.add(`a newcomer's newBlocks: ${verdict}`);
      await untilDeadline(context);
      heldFigures(context, holder);
    },
  },
];
