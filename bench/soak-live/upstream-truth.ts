/**
 * The simulator's own answers, read straight from it after the run (after the last count of
 * upstream calls, so that these reads are not counted): what each question's items were, in
 * order, and what their links hold. Blocks and transactions never change once made, so reading
 * them at the end tells what they were when they were pushed.
 */

/** One item of a question's sequence, as the simulator lists it. */
export interface TruthItem {
  stream: string;
  number: number;
  id: string;
  /** Unix seconds, simulator time. */
  time: number;
  detail: Record<string, unknown>;
}

async function getJson<T>(url: string): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    const response = await fetch(url);
    if (response.ok) return (await response.json()) as T;
    if (attempt >= 3) throw new Error(`simulator ${url}: HTTP ${response.status}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Pages a newest-first list back until an item is older than `from`; the items from `from` on, oldest first. */
async function pageBack<Raw>(
  first: URL,
  itemsOf: (page: Record<string, unknown>) => Raw[],
  numberOf: (item: Raw) => number,
  from: number,
): Promise<Raw[]> {
  const found: Raw[] = [];
  let pageToken: string | undefined;
  for (;;) {
    const url = new URL(first);
    if (pageToken) url.searchParams.set("pageToken", pageToken);
    const page = await getJson<Record<string, unknown>>(url.href);
    const items = itemsOf(page);
    found.push(...items);
    const oldest = items.at(-1);
    if (oldest === undefined || numberOf(oldest) < from || typeof page.nextPageToken !== "string") break;
    pageToken = page.nextPageToken;
  }
  return found.filter((item) => numberOf(item) >= from).reverse();
}

interface RawBlock {
  chainId: string;
  blockNumber: string;
  blockHash: string;
  parentHash: string;
  txCount: number;
  blockTimestamp: number;
}

/** A chain's blocks from `from` to its head, oldest first. */
export async function chainBlocks(dataUrl: string, chainId: string, from: number): Promise<TruthItem[]> {
  const url = new URL(`${dataUrl}/v1/chains/${chainId}/blocks`);
  url.searchParams.set("pageSize", "100");
  const blocks = await pageBack(
    url,
    (page) => page.blocks as RawBlock[],
    (block) => Number(block.blockNumber),
    from,
  );
  return blocks.map((block) => ({
    stream: chainId,
    number: Number(block.blockNumber),
    id: block.blockHash,
    time: block.blockTimestamp,
    detail: { parentHash: block.parentHash, txCount: block.txCount },
  }));
}

/** The hashes of a block's first transactions, in block order. */
export async function firstTransactionHashes(
  dataUrl: string,
  chainId: string,
  blockNumber: number,
  count: number,
): Promise<string[]> {
  const page = await getJson<{ transactions: { txHash: string }[] }>(
    `${dataUrl}/v1/chains/${chainId}/blocks/${blockNumber}/transactions?pageSize=${count}`,
  );
  return page.transactions.map((tx) => tx.txHash);
}

/** An EVM address's transactions in blocks from `from` on, oldest first (the reverse of its newest-first list). */
export async function addressTransactions(dataUrl: string, chainId: string, address: string, from: number): Promise<TruthItem[]> {
  const url = new URL(`${dataUrl}/v1/chains/${chainId}/addresses/${address}/transactions`);
  url.searchParams.set("pageSize", "100");
  type Raw = { nativeTransaction: { txHash: string; blockNumber: string; blockHash: string; blockTimestamp: number } };
  const transactions = await pageBack(
    url,
    (page) => page.transactions as Raw[],
    (tx) => Number(tx.nativeTransaction.blockNumber),
    from,
  );
  return transactions.map(({ nativeTransaction: tx }) => ({
    stream: "",
    number: Number(tx.blockNumber),
    id: tx.txHash,
    time: tx.blockTimestamp,
    detail: { blockHash: tx.blockHash },
  }));
}

/** A P- or X-Chain's transactions in blocks from `from` on, oldest first. */
export async function primaryNetworkTransactions(dataUrl: string, blockchainId: string, from: number): Promise<TruthItem[]> {
  const url = new URL(`${dataUrl}/v1/networks/mainnet/blockchains/${blockchainId}/transactions`);
  url.searchParams.set("pageSize", "100");
  url.searchParams.set("sortOrder", "desc");
  type Raw = {
    txHash: string;
    txType: string;
    blockNumber?: string;
    blockHeight?: number;
    blockHash?: string;
    blockTimestamp?: number;
    timestamp?: number;
  };
  const height = (tx: Raw) => Number(tx.blockNumber ?? tx.blockHeight ?? -1);
  const transactions = await pageBack(url, (page) => page.transactions as Raw[], height, from);
  return transactions.map((tx) => ({
    stream: "",
    number: height(tx),
    id: tx.txHash,
    time: tx.blockTimestamp ?? tx.timestamp ?? 0,
    detail: { blockHash: tx.blockHash, txType: tx.txType },
  }));
}

/** A primary-network block's parent and transactions, by hash. */
export async function primaryNetworkBlock(
  dataUrl: string,
  blockchainId: string,
  blockHash: string,
): Promise<{ blockNumber: number; parentHash: string; transactions: string[] }> {
  const block = await getJson<{ blockNumber: string; parentHash: string; transactions: string[] }>(
    `${dataUrl}/v1/networks/mainnet/blockchains/${blockchainId}/blocks/${blockHash}`,
  );
  return { blockNumber: Number(block.blockNumber), parentHash: block.parentHash, transactions: block.transactions };
}

/** A chain metric's points now, by timestamp (the newest `count`). */
export async function metricPoints(
  metricsUrl: string,
  chainId: string,
  metric: string,
  interval: string,
  count: number,
): Promise<Map<number, number>> {
  const page = await getJson<{ results: { timestamp: number; value: number | string }[] }>(
    `${metricsUrl}/v2/chains/${chainId}/metrics/${metric}?timeInterval=${interval}&pageSize=${count}`,
  );
  return new Map(page.results.map((point) => [point.timestamp, Number(point.value)]));
}

/** Runs `work` over `items`, `width` at a time. */
export async function inBatches<T, R>(items: readonly T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!);
      }
    }),
  );
  return results;
}

/** The C-Chain addresses in most of the latest blocks' transactions, busiest first: subscribers of these get events. */
export async function busyAddresses(dataUrl: string, chainId: string, count: number): Promise<string[]> {
  const latest = await getJson<{ blocks: { blockNumber: string }[] }>(`${dataUrl}/v1/chains/${chainId}/blocks?pageSize=30`);
  const seen = new Map<string, number>();
  for (const block of latest.blocks) {
    const page = await getJson<{ transactions: { from: { address: string }; to?: { address: string } }[] }>(
      `${dataUrl}/v1/chains/${chainId}/blocks/${block.blockNumber}/transactions?pageSize=100`,
    );
    for (const tx of page.transactions) {
      for (const address of [tx.from.address, tx.to?.address]) if (address) seen.set(address, (seen.get(address) ?? 0) + 1);
    }
  }
  return [...seen]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([address]) => address);
}
