/**
 * The attacks of issue 16's table (rows 1-16), one per row, and those of issue 25 (rows 17 on,
 * bench/hostile/transport-attacks.ts), as `npm run bench:hostile` runs them beside the
 * legitimate load. Each runs from its own loopback address (127.0.0.(100 + row)), only against
 * the gateway on loopback, and stops by itself at its deadline or after a bounded number of
 * requests. They run in a child process (attacker.ts), so that generating them does not slow
 * the legitimate load's own event loop.
 */
import { connect, type Socket } from "node:net";
import type { Pool } from "undici";
import { attackerAddress, failureOf, loops, outcomeOf, parseGraphQL, pool, send, sleep, Tally, type Answer } from "./client.ts";
import { letters, max, MAX_STEPS, postCounted, postInTurn, sseStreams } from "./requests.ts";
import { TRANSPORT_ATTACKS } from "./transport-attacks.ts";
import type { Attack, AttackContext, AttackPlan, AttackReport } from "./types.ts";

/** Rows that the bench does not run, and why. */
export const SKIPPED: Record<number, string> = {
  12: "about SIGTERM with open streams: a shutdown, not load; test/hostile covers it",
  14: "needs the simulator's latency past REQUEST_TIMEOUT_MS for every caller, the legitimate ones included, so their errors would be the scenario, not a harm done by an attacker; test/hostile covers it",
};

/** The key the gateway sends upstream for callers without one; in row 16, the only one the simulator accepts. */
export const GATEWAY_KEY = "bench-hostile-gateway-key";

const base64 = (text: string) => Buffer.from(text).toString("base64");

const aliases = (count: number, field: string) => Array.from({ length: count }, (_, index) => `a${index}: ${field}`).join(" ");

/** The rows of issue 16's table. */
const HTTP_ATTACKS: Attack[] = [
  {
    row: 1,
    title: "unique huge operation names, then /metrics scrapes",
    async run(context) {
      const client = context.pool(4);
      const names = (length: number) => ({ query: `query Q${letters(8)}${"x".repeat(length)} { __typename }` });
      await Promise.all([
        loops(
          1,
          context.deadline,
          2_000,
          () => postCounted(context, client, names(95_000), "95 kB name: ").then(() => undefined),
          context.tally,
        ),
        loops(
          2,
          context.deadline,
          MAX_STEPS,
          () =>
            postCounted(context, client, { query: `query Q${letters(41)} { __typename }` }, "42-char name: ").then(
              () => undefined,
            ),
          context.tally,
        ),
        loops(
          1,
          context.deadline,
          context.seconds + 5,
          async () => {
            const begun = performance.now();
            const answer = await send(client, { method: "GET", path: "/metrics" });
            context.tally.add(`/metrics: ${answer.status}`);
            max(context.figures, "metricsMaxBytes", Buffer.byteLength(answer.text));
            max(context.figures, "scrapeMaxMs", Math.round(performance.now() - begun));
            await sleep(1_000);
          },
          context.tally,
        ),
      ]);
    },
  },
  {
    row: 2,
    title: "17 kB node ids and 20 kB page tokens that the upstream refuses (431)",
    async prepare(context) {
      // A cursor of this gateway, with its page token swapped for 20 kB.
      const answer = await postCounted(
        context,
        context.pool(1),
        { query: "{ latestBlocks(first: 2) { pageInfo { endCursor } } }" },
        "cursor fetch: ",
      );
      const cursor = (parseGraphQL(answer.text)?.data as { latestBlocks?: { pageInfo?: { endCursor?: string } } } | undefined)
        ?.latestBlocks?.pageInfo?.endCursor;
      if (!cursor) return undefined;
      const fields = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown[];
      fields[1] = "A".repeat(20_000);
      return Buffer.from(JSON.stringify(fields)).toString("base64url");
    },
    async run(context, forgedCursor) {
      const client = context.pool(2);
      const bodies = [
        {
          label: "17 kB node id: ",
          body: {
            query: "query($id: ID!) { node(id: $id) { id } }",
            variables: { id: base64(`EvmChain:${"A".repeat(17_000)}`) },
          },
        },
        ...(typeof forgedCursor === "string"
          ? [
              {
                label: "20 kB page token: ",
                body: {
                  query: "query($after: String!) { latestBlocks(first: 2, after: $after) { edges { cursor } } }",
                  variables: { after: forgedCursor },
                },
              },
            ]
          : []),
      ];
      await postInTurn(context, client, 2, bodies);
    },
  },
  {
    row: 3,
    title: "49 aliases of warpSignature with BLS verification",
    async run(context) {
      const client = context.pool(2);
      const field = `warpSignature(network: FUJI, txHash: "${context.fixtures.registerL1ValidatorTxHash}") { decoded { verification { valid } } }`;
      const body = { query: `{ ${aliases(49, field)} }` };
      await loops(2, context.deadline, MAX_STEPS, () => postCounted(context, client, body).then(() => undefined), context.tally);
    },
  },
  {
    row: 4,
    title: "a costly query with an invented API key on every request",
    async run(context) {
      const client = context.pool(4);
      const body = JSON.stringify(context.fixtures.costlyQuery);
      await loops(
        4,
        context.deadline,
        MAX_STEPS,
        () => postCounted(context, client, body, "", { "x-glacier-api-key": `rot-${letters(12)}` }).then(() => undefined),
        context.tally,
      );
    },
  },
  {
    row: 5,
    title: "dot segments and 10-17 kB values in global ids and operation ids",
    async run(context) {
      const client = context.pool(2);
      const node = (id: string) => ({ query: "query($id: ID!) { node(id: $id) { id } }", variables: { id: base64(id) } });
      const exportOperation = (id: string) => ({
        query: "query($id: ID!) { exportOperation(id: $id) { operationId } }",
        variables: { id },
      });
      const bodies = [
        { label: "EvmBlock ..:..: ", body: node("EvmBlock:..:..") },
        { label: "EvmChain ..: ", body: node("EvmChain:..") },
        { label: "EvmBlock 17 kB: ", body: node(`EvmBlock:43114:${"a".repeat(17_000)}`) },
        { label: "exportOperation ..: ", body: exportOperation("..") },
        { label: "exportOperation 10 kB: ", body: exportOperation("a".repeat(10_000)) },
      ];
      await postInTurn(context, client, 2, bodies);
    },
  },
  {
    row: 6,
    title: "a GET /ready flood",
    async run(context) {
      const client = context.pool(8);
      await loops(
        8,
        context.deadline,
        MAX_STEPS,
        async () => {
          const answer = await send(client, { method: "GET", path: "/ready" });
          context.tally.add(`/ready: ${answer.status}`);
        },
        context.tally,
      );
    },
  },
  {
    row: 7,
    title: "variables nested 5,000 deep",
    async run(context) {
      const client = context.pool(2);
      const body = `{"query":"{ __typename }","variables":{"x":${"[".repeat(5_000)}${"]".repeat(5_000)}}}`;
      await loops(2, context.deadline, MAX_STEPS, () => postCounted(context, client, body).then(() => undefined), context.tally);
    },
  },
  {
    row: 8,
    title: "unique 4,985-field documents on 8 connections, and a 1,000-operation document",
    async run(context) {
      const fields = "__typename ".repeat(4_985);
      const manyOperations = Array.from({ length: 1_000 }, (_, index) => `query O${index} { __typename }`).join("\n");
      const wide = context.pool(8);
      const many = context.pool(1);
      await Promise.all([
        loops(
          8,
          context.deadline,
          MAX_STEPS,
          () => postCounted(context, wide, { query: `# ${letters(16)}\n{ ${fields}}` }, "4,985 fields: ").then(() => undefined),
          context.tally,
        ),
        loops(
          1,
          context.deadline,
          MAX_STEPS,
          () =>
            postCounted(context, many, { query: manyOperations, operationName: "O0" }, "1,000 operations: ").then(
              () => undefined,
            ),
          context.tally,
        ),
      ]);
    },
  },
  {
    row: 9,
    title: "2,000 connections that declare 99 kB and send 90 kB slowly",
    async run(context) {
      await slowBodies(context, 2_000, 99_000, 90_000);
    },
  },
  {
    row: 10,
    title: "200 exportOperation subscriptions",
    // The jobs outlive the phase, so that their subscriptions poll throughout.
    knobs: (seconds) => ({ exportJobMs: (seconds + 60) * 1000 }),
    async prepare(context) {
      const client = context.pool(4);
      const ids: string[] = [];
      const { evmAddress, exportDay } = context.fixtures;
      const body = {
        query: "mutation($input: ExportTransactionsInput!) { exportTransactions(input: $input) { operationId } }",
        variables: {
          input: { evm: { addresses: [evmAddress], includeChains: ["43114"] }, firstDate: exportDay, lastDate: exportDay },
        },
      };
      await loops(
        4,
        Number.POSITIVE_INFINITY,
        200,
        async () => {
          const answer = await postCounted(context, client, body, "export start: ");
          const id = (parseGraphQL(answer.text)?.data as { exportTransactions?: { operationId?: string } } | undefined)
            ?.exportTransactions?.operationId;
          if (id) ids.push(id);
        },
        context.tally,
      );
      context.figures.exportsStarted = ids.length;
      return ids;
    },
    async run(context, prepared) {
      const ids = prepared as string[];
      if (ids.length === 0) return;
      const query = "subscription($id: ID!) { exportOperation(id: $id) { operationId operationStatus } }";
      const streams = Array.from({ length: 200 }, (_, index) => ({
        body: { query, variables: { id: ids[index % ids.length] } },
      }));
      const { opened, events } = await sseStreams(context, context.pool(streams.length), streams);
      context.figures.subscriptionsOpened = opened;
      context.figures.subscriptionEvents = events;
    },
  },
  {
    row: 11,
    title: "misspelt enum values, input fields and fields with introspection off",
    gatewayEnv: { INTROSPECTION: "false" },
    async run(context) {
      const client = context.pool(2);
      const bodies = [
        {
          label: "enum value: ",
          body: { query: "{ networkMetrics(metric: TX_CONT, scope: MAINNET) { edges { node { value } } } }" },
        },
        {
          label: "input field: ",
          body: {
            query: `mutation { exportTransactions(input: { evmm: { addresses: ["${context.fixtures.evmAddress}"], includeChains: ["43114"] } }) { operationId } }`,
          },
        },
        { label: "field: ", body: { query: "{ chainz { chainId } }" } },
      ];
      let suggesting = 0;
      await postInTurn(context, client, 2, bodies, (answer) => {
        if (/did you mean/i.test(answer.text)) suggesting += 1;
      });
      context.figures.answersSuggestingNames = suggesting;
    },
  },
  {
    row: 13,
    title: "95 kB unknown operationName",
    async run(context) {
      const client = context.pool(2);
      const body = JSON.stringify({ query: "{ __typename }", operationName: "x".repeat(95_000) });
      await loops(2, context.deadline, MAX_STEPS, () => postCounted(context, client, body).then(() => undefined), context.tally);
    },
  },
  {
    row: 15,
    title: "51 aliases, CSRF-refused GET, variables that do not coerce, 4,990 fields",
    async run(context) {
      const client = context.pool(2);
      const kinds: { label: string; send(): Promise<Answer> }[] = [
        {
          label: "51 aliases: ",
          send: () =>
            send(client, {
              method: "POST",
              path: context.path,
              body: JSON.stringify({ query: `{ ${aliases(51, "__typename")} }` }),
            }),
        },
        {
          label: "CSRF-refused GET: ",
          send: () => send(client, { method: "GET", path: `${context.path}?query=${encodeURIComponent("{ __typename }")}` }),
        },
        {
          label: "uncoercible variable: ",
          send: () =>
            send(client, {
              method: "POST",
              path: context.path,
              body: JSON.stringify({
                query: "query($n: Int!) { latestBlocks(first: $n) { edges { cursor } } }",
                variables: { n: "abc" },
              }),
            }),
        },
        {
          label: "4,990 fields: ",
          send: () =>
            send(client, {
              method: "POST",
              path: context.path,
              body: JSON.stringify({ query: `{ ${"__typename ".repeat(4_990)}}` }),
            }),
        },
      ];
      await loops(
        2,
        context.deadline,
        MAX_STEPS,
        async (index) => {
          const kind = kinds[index % kinds.length]!;
          context.tally.add(`${kind.label}${outcomeOf(await kind.send())}`);
        },
        context.tally,
      );
    },
  },
  {
    row: 16,
    title: "a key the upstream refuses (403) asks for blocks other callers loaded",
    gatewayEnv: { GLACIER_API_KEY: GATEWAY_KEY },
    knobs: () => ({ apiKeys: [GATEWAY_KEY] }),
    async run(context) {
      const client = context.pool(2);
      const { cachedBlocks } = context.fixtures;
      let served = 0;
      await loops(
        2,
        context.deadline,
        MAX_STEPS,
        async (index) => {
          const block = cachedBlocks[index % cachedBlocks.length]!;
          const body = {
            query: "query($chainId: ID!, $blockId: String!) { chain(id: $chainId) { block(id: $blockId) { blockHash } } }",
            variables: { chainId: block.chainId, blockId: block.hash },
          };
          const answer = await postCounted(context, client, body, "", { "x-glacier-api-key": "bench-hostile-refused-key" });
          const data = parseGraphQL(answer.text)?.data as
            { chain?: { block?: { blockHash?: string } | null } | null } | undefined;
          if (data?.chain?.block?.blockHash) served += 1;
        },
        context.tally,
      );
      context.figures.blocksServedToTheRefusedKey = served;
    },
  },
];

/**
 * Opens up to `count` connections from the attacker's address, each declaring a body of
 * `declared` bytes and sending `sent` of them over 90 % of the phase, never the rest.
 */
async function slowBodies(context: AttackContext, count: number, declared: number, sent: number): Promise<void> {
  const url = new URL(context.origin);
  const head = [
    `POST ${context.path} HTTP/1.1`,
    `Host: ${url.host}`,
    "Content-Type: application/json",
    "Accept: application/json",
    `Content-Length: ${declared}`,
    "",
    "",
  ].join("\r\n");
  const chunks = 30;
  const chunk = `{"query":"{ __typename }","variables":{"pad":"${"x".repeat(sent)}`.slice(0, Math.ceil(sent / chunks));
  const interval = Math.max(10, (context.seconds * 900) / chunks);
  const sockets: Socket[] = [];
  const timers: NodeJS.Timeout[] = [];
  const closedAfterSeconds: number[] = [];
  let opened = 0;
  const started = performance.now();
  for (let index = 0; index < count && performance.now() < context.deadline; index += 1) {
    const socket = connect({ host: url.hostname, port: Number(url.port), localAddress: context.address });
    sockets.push(socket);
    let answered = "";
    let connected = false;
    let ended = false;
    socket.on("connect", () => {
      connected = true;
      opened += 1;
      socket.write(head);
      let written = 0;
      const timer = setInterval(() => {
        if (written >= chunks || socket.destroyed) return clearInterval(timer);
        socket.write(chunk);
        written += 1;
      }, interval);
      timers.push(timer);
    });
    socket.on("data", (data: Buffer) => {
      if (!answered) answered = /^HTTP\/1\.1 (\d+)/.exec(data.toString("latin1"))?.[1] ?? "?";
    });
    socket.on("error", (error) => {
      if (!connected && !ended) {
        ended = true;
        context.tally.add(failureOf(error));
      }
    });
    socket.on("close", () => {
      if (ended) return;
      ended = true;
      if (!connected) return context.tally.add("failed before connecting");
      if (performance.now() >= context.deadline) return;
      closedAfterSeconds.push((performance.now() - started) / 1000);
      context.tally.add(answered ? `closed by the gateway after HTTP ${answered}` : "closed by the gateway without an answer");
    });
    // Opened in batches, so that the listen backlog is not what refuses them.
    if (index % 50 === 49) await sleep(20);
  }
  await sleep(Math.max(0, context.deadline - performance.now()));
  let openAtEnd = 0;
  for (const socket of sockets) {
    if (!socket.destroyed && socket.readyState === "open") openAtEnd += 1;
    socket.destroy();
  }
  for (const timer of timers) clearInterval(timer);
  context.tally.add("still open at the end", openAtEnd);
  closedAfterSeconds.sort((a, b) => a - b);
  context.figures.connectionsOpened = opened;
  context.figures.openAtEnd = openAtEnd;
  context.figures.medianSecondsUntilClosed = closedAfterSeconds.length
    ? Math.round(closedAfterSeconds[Math.floor(closedAfterSeconds.length / 2)]! * 10) / 10
    : "none closed";
}

export const ATTACKS: Attack[] = [...HTTP_ATTACKS, ...TRANSPORT_ATTACKS];

/** Runs one attack to its end; `ready` is called between its preparation and its measured window. */
export async function runAttack(plan: AttackPlan, ready: () => Promise<void>): Promise<AttackReport> {
  const attack = ATTACKS.find((candidate) => candidate.row === plan.row);
  if (!attack) throw new Error(`no attack for row ${plan.row}`);
  const url = new URL(plan.gatewayUrl);
  const pools: Pool[] = [];
  const cleanups: (() => void)[] = [];
  const tally = new Tally();
  const legitErrors = new Tally();
  const figures: Record<string, number | string> = {};
  const context: AttackContext = {
    row: plan.row,
    origin: url.origin,
    path: url.pathname,
    address: attackerAddress(plan.row),
    seconds: plan.seconds,
    deadline: Number.POSITIVE_INFINITY,
    fixtures: plan.fixtures,
    tally,
    figures,
    pool(connections, address = attackerAddress(plan.row)) {
      const created = pool(url.origin, address, connections);
      pools.push(created);
      return created;
    },
    legitErrors,
    onEnd(cleanup) {
      cleanups.push(cleanup);
    },
  };
  // Pools, sockets and timers the attack still holds: closed at the deadline, and again when it ends.
  const end = () => {
    for (const cleanup of cleanups.splice(0)) {
      try {
        cleanup();
      } catch {
        // already closed
      }
    }
    return Promise.all(pools.map((each) => each.destroy().catch(() => undefined)));
  };
  try {
    const prepared = await attack.prepare?.(context);
    await ready();
    context.deadline = performance.now() + plan.seconds * 1000;
    // Every loop stops at the deadline; a stream or socket still open then is cut.
    const cut = setTimeout(() => void end(), plan.seconds * 1000 + 100);
    try {
      await attack.run(context, prepared);
    } finally {
      clearTimeout(cut);
    }
  } finally {
    await end();
  }
  return {
    row: plan.row,
    outcomes: tally.counts,
    figures,
    ...(legitErrors.total > 0 ? { legitErrors: legitErrors.counts } : {}),
  };
}
