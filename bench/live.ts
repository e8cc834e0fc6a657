/**
 * `npm run bench:live`: many graphql-ws subscribers to the C-Chain's new blocks, and to the new
 * transactions of busy C-Chain addresses, on the live simulator, for a while. It measures what the
 * shared pollers promise:
 *
 * - upstream calls a minute, by route (the simulator's own counters): one poller, however many
 *   subscribers;
 * - delivery delay, from the moment a block is upstream (the bench watches the simulator's chain
 *   heads every WATCH_MS on its control route, which the counters leave out) to its event at a
 *   client, p50 and p99;
 * - the gateway's resident memory, sampled every second;
 * - lost, duplicated and out-of-order events: each subscriber's blocks must be consecutive, each
 *   once, with the simulator's own hashes, from its first block to the last block the simulator
 *   had one poll interval before the end; each address subscriber's transactions must be the
 *   simulator's own list of the address, oldest first, from its first event's block to then.
 *
 * Knobs: LIVE_BENCH_SECONDS (default 120), LIVE_BENCH_BLOCK_SUBSCRIBERS (default 1,000),
 * LIVE_BENCH_ADDRESS_SUBSCRIBERS (default 200) spread over LIVE_BENCH_ADDRESSES (default 20)
 * addresses, LIVE_BLOCKS_POLL_MS and LIVE_ADDRESS_POLL_MS (the gateway's poll intervals, defaults
 * 2,000 and 4,000). Results in bench/results/live.{json,md}.
 */
import { writeFile } from "node:fs/promises";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { buildGateway } from "./build.ts";
import { startGateway, startSimulator } from "./processes.ts";

const SECONDS = Number(process.env.LIVE_BENCH_SECONDS ?? 120);
const BLOCK_SUBSCRIBERS = Number(process.env.LIVE_BENCH_BLOCK_SUBSCRIBERS ?? 1_000);
const POLL_MS = Number(process.env.LIVE_BLOCKS_POLL_MS ?? 2_000);
const ADDRESS_SUBSCRIBERS = Number(process.env.LIVE_BENCH_ADDRESS_SUBSCRIBERS ?? 200);
const ADDRESSES = Number(process.env.LIVE_BENCH_ADDRESSES ?? 20);
const ADDRESS_POLL_MS = Number(process.env.LIVE_ADDRESS_POLL_MS ?? 4_000);
const C_CHAIN = "43114";
const WATCH_MS = 20;
const RSS_LIMIT_MB = 250;
const NEW_BLOCKS = `subscription NewCChainBlocks($chainId: ID!) { newBlocks(chainId: $chainId) { blockNumber blockHash } }`;
const NEW_ADDRESS_TRANSACTIONS = `subscription AddressActivity($chainId: ID!, $address: EvmAddress!) {
  newAddressTransactions(chainId: $chainId, address: $address) { transaction { txHash blockNumber } }
}`;

function log(message: string): void {
  process.stderr.write(`[bench:live] ${message}\n`);
}

interface Received {
  blockNumber: number;
  blockHash: string;
  atMs: number;
}

interface Head {
  chainId: string;
  blockNumber: number;
  blockHash: string;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** The wall time each C-Chain block was first seen upstream, and its hash, from the simulator's heads. */
class HeadWatch {
  readonly appeared = new Map<number, number>();
  private lastNumber = -1;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly dataUrl: string) {}

  async start(): Promise<void> {
    await this.read();
    this.timer = setInterval(() => void this.read().catch(() => {}), WATCH_MS);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  get head(): number {
    return this.lastNumber;
  }

  private async read(): Promise<void> {
    const response = await fetch(`${this.dataUrl}/_simulator/clock`);
    const { heads } = (await response.json()) as { heads: Head[] };
    const head = heads.find((candidate) => candidate.chainId === C_CHAIN);
    if (!head) throw new Error("the simulator has no C-Chain head");
    const now = performance.now();
    // Blocks that arrived together appeared at the same moment.
    for (let number = this.lastNumber + 1; number <= head.blockNumber; number += 1) {
      if (this.lastNumber >= 0) this.appeared.set(number, now);
    }
    this.lastNumber = Math.max(this.lastNumber, head.blockNumber);
  }
}

/** The simulator's own hashes of blocks from..to of the C-Chain, read by number. */
async function upstreamHashes(dataUrl: string, from: number, to: number): Promise<Map<number, string>> {
  const hashes = new Map<number, string>();
  let pageToken: string | undefined;
  while (true) {
    const url = new URL(`${dataUrl}/v1/chains/${C_CHAIN}/blocks`);
    url.searchParams.set("pageSize", "100");
    if (pageToken) url.searchParams.set("pageToken", pageToken);
    const page = (await (await fetch(url)).json()) as {
      blocks: { blockNumber: string; blockHash: string }[];
      nextPageToken?: string;
    };
    for (const block of page.blocks) hashes.set(Number(block.blockNumber), block.blockHash);
    const oldest = Number(page.blocks.at(-1)?.blockNumber ?? 0);
    if (oldest <= from || !page.nextPageToken) break;
    pageToken = page.nextPageToken;
  }
  for (const number of hashes.keys()) if (number < from || number > to) hashes.delete(number);
  return hashes;
}

/** The C-Chain addresses in most of the latest blocks' transactions, busiest first. */
async function busyAddresses(dataUrl: string, count: number): Promise<string[]> {
  const latest = (await (await fetch(`${dataUrl}/v1/chains/${C_CHAIN}/blocks?pageSize=30`)).json()) as {
    blocks: { blockNumber: string }[];
  };
  const seen = new Map<string, number>();
  for (const block of latest.blocks) {
    const url = `${dataUrl}/v1/chains/${C_CHAIN}/blocks/${block.blockNumber}/transactions?pageSize=100`;
    const page = (await (await fetch(url)).json()) as { transactions: { from: { address: string }; to?: { address: string } }[] };
    for (const tx of page.transactions) {
      for (const address of [tx.from.address, tx.to?.address]) if (address) seen.set(address, (seen.get(address) ?? 0) + 1);
    }
  }
  return [...seen]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([address]) => address);
}

interface AddressEvent {
  txHash: string;
  blockNumber: number;
  atMs: number;
}

/** The address's transactions in blocks from..to, oldest first, as the simulator lists them. */
async function upstreamAddressTransactions(dataUrl: string, address: string, from: number, to: number): Promise<string[]> {
  const found: { txHash: string; blockNumber: number }[] = [];
  let pageToken: string | undefined;
  while (true) {
    const url = new URL(`${dataUrl}/v1/chains/${C_CHAIN}/addresses/${address}/transactions`);
    url.searchParams.set("pageSize", "100");
    if (pageToken) url.searchParams.set("pageToken", pageToken);
    const page = (await (await fetch(url)).json()) as {
      transactions: { nativeTransaction: { txHash: string; blockNumber: string } }[];
      nextPageToken?: string;
    };
    for (const { nativeTransaction: tx } of page.transactions)
      found.push({ txHash: tx.txHash, blockNumber: Number(tx.blockNumber) });
    const oldest = found.at(-1)?.blockNumber ?? 0;
    if (oldest < from || !page.nextPageToken) break;
    pageToken = page.nextPageToken;
  }
  return found
    .filter((tx) => tx.blockNumber >= from && tx.blockNumber <= to)
    .reverse()
    .map((tx) => tx.txHash);
}

async function main(): Promise<void> {
  buildGateway(log);
  const simulator = await startSimulator({ SIM_LIVE: "true" });
  const gateway = await startGateway(simulator, {
    LIVE_BLOCKS_POLL_MS: String(POLL_MS),
    LIVE_ADDRESS_POLL_MS: String(ADDRESS_POLL_MS),
    // Every subscriber is the same caller (127.0.0.1) here; in production each is its own.
    MAX_SUBSCRIPTIONS_PER_CALLER: String((BLOCK_SUBSCRIBERS + ADDRESS_SUBSCRIBERS) * 2),
    MAX_CONNECTIONS: String(BLOCK_SUBSCRIBERS + ADDRESS_SUBSCRIBERS + 256),
    MAX_CONNECTIONS_PER_ADDRESS: "0",
  });
  const wsUrl = gateway.url.replace(/^http/, "ws");
  const watch = new HeadWatch(simulator.dataUrl);
  await watch.start();

  log(`${BLOCK_SUBSCRIBERS} subscribers to new C-Chain blocks, ${SECONDS} s, poll every ${POLL_MS} ms`);
  const clients: Client[] = [];
  const received: Received[][] = [];
  const errors: unknown[] = [];
  for (let index = 0; index < BLOCK_SUBSCRIBERS; index += 1) {
    const client = createClient({ url: wsUrl, webSocketImpl: WebSocket, retryAttempts: 0, lazy: false });
    const events: Received[] = [];
    clients.push(client);
    received.push(events);
    client.subscribe<{ newBlocks: { blockNumber: string; blockHash: string } | null }>(
      { query: NEW_BLOCKS, variables: { chainId: C_CHAIN } },
      {
        next: ({ data, errors: eventErrors }) => {
          if (eventErrors?.length) errors.push(eventErrors);
          const block = data?.newBlocks;
          if (block) events.push({ blockNumber: Number(block.blockNumber), blockHash: block.blockHash, atMs: performance.now() });
        },
        error: (error) => errors.push(error),
        complete: () => {},
      },
    );
  }

  const addresses = await busyAddresses(simulator.dataUrl, ADDRESSES);
  log(
    `${ADDRESS_SUBSCRIBERS} subscribers to the new transactions of ${addresses.length} C-Chain addresses, poll every ${ADDRESS_POLL_MS} ms`,
  );
  const addressReceived: { address: string; events: AddressEvent[] }[] = [];
  for (let index = 0; index < ADDRESS_SUBSCRIBERS; index += 1) {
    const address = addresses[index % addresses.length]!;
    const client = createClient({ url: wsUrl, webSocketImpl: WebSocket, retryAttempts: 0, lazy: false });
    const events: AddressEvent[] = [];
    clients.push(client);
    addressReceived.push({ address, events });
    client.subscribe<{ newAddressTransactions: { transaction: { txHash: string; blockNumber: string } } | null }>(
      { query: NEW_ADDRESS_TRANSACTIONS, variables: { chainId: C_CHAIN, address } },
      {
        next: ({ data, errors: eventErrors }) => {
          if (eventErrors?.length) errors.push(eventErrors);
          const tx = data?.newAddressTransactions?.transaction;
          if (tx) events.push({ txHash: tx.txHash, blockNumber: Number(tx.blockNumber), atMs: performance.now() });
        },
        error: (error) => errors.push(error),
        complete: () => {},
      },
    );
  }

  await simulator.reset();
  const countersBefore = await simulator.counters();
  const startedAt = performance.now();
  let peakRssMb = 0;
  const rssTimer = setInterval(() => {
    peakRssMb = Math.max(peakRssMb, gateway.rssBytes() / 2 ** 20);
  }, 1_000);
  await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
  clearInterval(rssTimer);
  const minutes = (performance.now() - startedAt) / 60_000;
  const countersAfter = await simulator.counters();
  const rssMb = gateway.rssBytes() / 2 ** 20;
  // What a subscriber must have had by now: every block up to the head one poll interval ago.
  const headThen = [...watch.appeared]
    .filter(([, at]) => at <= performance.now() - POLL_MS - 500)
    .reduce((a, [n]) => Math.max(a, n), 0);
  const addressHeadThen = [...watch.appeared]
    .filter(([, at]) => at <= performance.now() - ADDRESS_POLL_MS - 500)
    .reduce((a, [n]) => Math.max(a, n), 0);
  watch.stop();
  await Promise.all(clients.map((client) => client.dispose()));

  const firstSeen = Math.min(...received.flatMap((events) => (events[0] ? [events[0].blockNumber] : [])));
  const hashes = await upstreamHashes(simulator.dataUrl, firstSeen, watch.head);
  let lost = 0;
  let duplicated = 0;
  let outOfOrder = 0;
  let wrongHash = 0;
  let silent = 0;
  const delays: number[] = [];
  for (const events of received) {
    if (events.length === 0) {
      silent += 1;
      continue;
    }
    const seen = new Set<number>();
    let previous = events[0]!.blockNumber - 1;
    for (const event of events) {
      if (seen.has(event.blockNumber)) duplicated += 1;
      else if (event.blockNumber < previous) outOfOrder += 1;
      else lost += event.blockNumber - previous - 1;
      seen.add(event.blockNumber);
      previous = Math.max(previous, event.blockNumber);
      if (hashes.get(event.blockNumber) !== event.blockHash) wrongHash += 1;
      const appeared = watch.appeared.get(event.blockNumber);
      if (appeared !== undefined) delays.push(event.atMs - appeared);
    }
    if (previous < headThen) lost += headThen - previous;
  }
  delays.sort((a, b) => a - b);

  // Address activity: each subscriber's transactions against the simulator's list of its address.
  const addressCheck = { events: 0, lost: 0, duplicated: 0, outOfOrder: 0, quietSubscribers: 0 };
  const addressDelays: number[] = [];
  const expectedByAddress = new Map<string, Promise<string[]>>();
  for (const { address, events } of addressReceived) {
    addressCheck.events += events.length;
    if (events.length === 0) {
      addressCheck.quietSubscribers += 1;
      continue;
    }
    const from = events[0]!.blockNumber;
    const key = `${address}:${from}`;
    if (!expectedByAddress.has(key))
      expectedByAddress.set(key, upstreamAddressTransactions(simulator.dataUrl, address, from, addressHeadThen));
    const expected = await expectedByAddress.get(key)!;
    const got = events.filter((event) => event.blockNumber <= addressHeadThen).map((event) => event.txHash);
    addressCheck.duplicated += got.length - new Set(got).size;
    const gotSet = new Set(got);
    addressCheck.lost += expected.filter((hash) => !gotSet.has(hash)).length;
    const inExpected = got.filter((hash) => expected.includes(hash));
    const expectedSeen = expected.filter((hash) => gotSet.has(hash));
    if (inExpected.join() !== expectedSeen.join()) addressCheck.outOfOrder += 1;
    for (const event of events) {
      const appeared = watch.appeared.get(event.blockNumber);
      if (appeared !== undefined) addressDelays.push(event.atMs - appeared);
    }
  }
  addressDelays.sort((a, b) => a - b);

  const callsPerMinute: Record<string, number> = {};
  for (const [route, count] of Object.entries(countersAfter)) {
    const made = count - (countersBefore[route] ?? 0);
    if (made > 0) callsPerMinute[route] = Math.round((made / minutes) * 10) / 10;
  }
  const events = received.reduce((sum, list) => sum + list.length, 0);
  const results = {
    date: new Date().toISOString(),
    seconds: SECONDS,
    pollMs: POLL_MS,
    blockSubscribers: BLOCK_SUBSCRIBERS,
    blocksUpstream: hashes.size,
    events,
    upstreamCallsPerMinute: callsPerMinute,
    pollsPerMinuteAtInterval: Math.round((60_000 / POLL_MS) * 10) / 10,
    delayMs: {
      p50: Math.round(percentile(delays, 50)),
      p99: Math.round(percentile(delays, 99)),
      target: `p99 <= ${POLL_MS + 100}`,
    },
    rssMb: { end: Math.round(rssMb), peak: Math.round(peakRssMb), limit: RSS_LIMIT_MB },
    lost,
    duplicated,
    outOfOrder,
    wrongHash,
    silentSubscribers: silent,
    addressSubscribers: ADDRESS_SUBSCRIBERS,
    addresses: addresses.length,
    addressPollMs: ADDRESS_POLL_MS,
    addressEvents: addressCheck.events,
    addressDelayMs: {
      p50: Math.round(percentile(addressDelays, 50)),
      p99: Math.round(percentile(addressDelays, 99)),
      target: `p99 <= ${ADDRESS_POLL_MS + 100}`,
    },
    addressLost: addressCheck.lost,
    addressDuplicated: addressCheck.duplicated,
    addressOutOfOrder: addressCheck.outOfOrder,
    quietAddressSubscribers: addressCheck.quietSubscribers,
    errors: errors.length,
  };
  log(JSON.stringify(results));
  await writeFile(new URL("./results/live.json", import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
  await writeFile(new URL("./results/live.md", import.meta.url), markdown(results));
  await gateway.stop();
  await simulator.stop();
}

function markdown(results: Record<string, unknown> & { upstreamCallsPerMinute: Record<string, number> }): string {
  const rows = Object.entries(results)
    .filter(([key]) => key !== "upstreamCallsPerMinute")
    .map(([key, value]) => `| ${key} | ${typeof value === "object" ? JSON.stringify(value) : String(value)} |`);
  const routes = Object.entries(results.upstreamCallsPerMinute).map(([route, perMinute]) => `| ${route} | ${perMinute} |`);
  return [
    "# Live benchmark",
    "",
    "Written by `npm run bench:live`: graphql-ws subscribers to the C-Chain's new blocks and to busy C-Chain addresses' new transactions on the live simulator.",
    "",
    "| figure | value |",
    "|---|---|",
    ...rows,
    "",
    "## Upstream calls a minute, by route",
    "",
    "| route | calls a minute |",
    "|---|---|",
    ...routes,
    "",
  ].join("\n");
}

await main();
