/**
 * The attacks of issue 25 (rows 17 on), as `npm run bench:hostile` runs them beside the
 * legitimate load: WebSocket, idle connections, CPU that makes no upstream call, IPv6 addresses
 * and the live pollers. A row that needs one address runs from 127.0.0.(100 + row); one that
 * needs many, from 127.(row).1.1 on (client.ts). Every socket an attack opens is closed at its
 * deadline; a refusal or a close is counted, never thrown.
 */
import { sleep } from "./client.ts";
import { AttackSocket, holdConnections, wsUrl, type GraphQLWsMessage, type Held, type Holder } from "./sockets.ts";
import type { Attack, AttackContext } from "./types.ts";

const untilDeadline = (context: AttackContext) => sleep(Math.max(0, context.deadline - performance.now()));

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
];
