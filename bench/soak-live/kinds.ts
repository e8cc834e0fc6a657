/**
 * The live subscriptions the soak holds open, one of each kind the schema has (the export watch
 * ends by itself, so it is left out), each selecting links that cost upstream calls: what each
 * asks, and what an event tells about its item.
 */
import { C_CHAIN, POLL_MS } from "./settings.ts";

export type KindName =
  "chain-blocks" | "network-blocks" | "address-transactions" | "p-chain-transactions" | "x-chain-transactions" | "chain-metric";

/** What an event's item is, once per distinct answer (many subscribers get the same). */
export interface SeenItem {
  /** The sequence within the question: a block's chain id, else "". */
  stream: string;
  /** A block number or height; a metric point's time. */
  number: number;
  /** A block's hash, a transaction's hash, a metric point's exact value. */
  id: string;
  /** When it arrived upstream (its block's time, Unix seconds); none for a metric point, whose value changes. */
  time: number | undefined;
  /** The fields to compare with the simulator's own answers. */
  detail: Record<string, unknown>;
  /** Links the event left null. */
  nullLinks: string[];
}

export interface Kind {
  name: KindName;
  /** The root field of the subscription. */
  field: string;
  query: string;
  /** Whether a client can resume it with `after`. */
  resumable: boolean;
  /** The poll intervals of its question, for the take-over bound. */
  pollMs: { base: number; max: number };
  variables(address: string | undefined): Record<string, unknown>;
  /** The question's key for reports: "chain-blocks:43114", "address-transactions:0x…". */
  question(address: string | undefined): string;
  read(value: Record<string, unknown>): SeenItem;
}

type Fields = Record<string, unknown>;

const BLOCK_SELECTION = `chainId blockNumber blockHash parentHash txCount blockTimestamp
    transactions(first: 3) { nodes { txHash } }
    chain { chainId }`;

function readBlock(block: Fields, stream: string): SeenItem {
  const transactions = block.transactions as { nodes: { txHash: string }[] } | null;
  const chain = block.chain as { chainId: string } | null;
  const nullLinks: string[] = [];
  if (transactions === null) nullLinks.push("transactions");
  if (chain === null) nullLinks.push("chain");
  return {
    stream,
    number: Number(block.blockNumber),
    id: String(block.blockHash),
    time: Number(block.blockTimestamp),
    detail: {
      chainId: block.chainId,
      parentHash: block.parentHash,
      txCount: block.txCount,
      firstTxHashes: transactions?.nodes.map((node) => node.txHash) ?? null,
      linkedChainId: chain?.chainId ?? null,
    },
    nullLinks,
  };
}

const PRIMARY_NETWORK_SELECTION = `txHash blockNumber blockHash blockTimestamp txType
    block { blockHash blockNumber parentHash transactionHashes }`;

function primaryNetworkKind(name: KindName, blockchainId: "p-chain" | "x-chain"): Kind {
  return {
    name,
    field: "newPrimaryNetworkTransactions",
    query: `subscription SoakPrimaryNetworkTransactions($blockchainId: String!, $after: BigInt) {
  newPrimaryNetworkTransactions(network: MAINNET, blockchainId: $blockchainId, afterBlock: $after) {
    ${PRIMARY_NETWORK_SELECTION}
  }
}`,
    resumable: true,
    pollMs: POLL_MS.primaryNetwork,
    variables: () => ({ blockchainId }),
    question: () => `primary-network-transactions:mainnet:${blockchainId}`,
    read: (tx) => {
      const block = tx.block as Fields | null;
      return {
        stream: "",
        number: Number(tx.blockNumber),
        id: String(tx.txHash),
        time: Number(tx.blockTimestamp),
        detail: {
          blockHash: tx.blockHash,
          txType: tx.txType,
          linkedBlockHash: block?.blockHash ?? null,
          linkedBlockNumber: block === null ? null : Number(block.blockNumber),
          linkedParentHash: block?.parentHash ?? null,
          linkedHoldsTx: block === null ? null : (block.transactionHashes as string[]).includes(String(tx.txHash)),
        },
        nullLinks: block === null ? ["block"] : [],
      };
    },
  };
}

export const KINDS: readonly Kind[] = [
  {
    name: "chain-blocks",
    field: "newBlocks",
    query: `subscription SoakChainBlocks($chainId: ID!, $after: BigInt) {
  newBlocks(chainId: $chainId, afterBlock: $after) {
    ${BLOCK_SELECTION}
  }
}`,
    resumable: true,
    pollMs: POLL_MS.blocks,
    variables: () => ({ chainId: C_CHAIN }),
    question: () => `chain-blocks:${C_CHAIN}`,
    read: (block) => readBlock(block, String(block.chainId)),
  },
  {
    name: "network-blocks",
    field: "newNetworkBlocks",
    query: `subscription SoakNetworkBlocks {
  newNetworkBlocks(network: MAINNET) {
    ${BLOCK_SELECTION}
  }
}`,
    resumable: false,
    pollMs: POLL_MS.blocks,
    variables: () => ({}),
    question: () => "network-blocks:mainnet",
    read: (block) => readBlock(block, String(block.chainId)),
  },
  {
    name: "address-transactions",
    field: "newAddressTransactions",
    query: `subscription SoakAddressTransactions($chainId: ID!, $address: EvmAddress!, $after: BigInt) {
  newAddressTransactions(chainId: $chainId, address: $address, afterBlock: $after) {
    transaction {
      txHash blockNumber blockHash blockTimestamp
      block { blockHash blockNumber parentHash }
      chain { chainId }
    }
  }
}`,
    resumable: true,
    pollMs: POLL_MS.address,
    variables: (address) => ({ chainId: C_CHAIN, address }),
    question: (address) => `address-transactions:${C_CHAIN}:${address}`,
    read: (value) => {
      const tx = value.transaction as Fields;
      const block = tx.block as Fields | null;
      const chain = tx.chain as { chainId: string } | null;
      const nullLinks: string[] = [];
      if (block === null) nullLinks.push("transaction.block");
      if (chain === null) nullLinks.push("transaction.chain");
      return {
        stream: "",
        number: Number(tx.blockNumber),
        id: String(tx.txHash),
        time: Number(tx.blockTimestamp),
        detail: {
          blockHash: tx.blockHash,
          linkedBlockHash: block?.blockHash ?? null,
          linkedBlockNumber: block === null ? null : Number(block.blockNumber),
          linkedParentHash: block?.parentHash ?? null,
          linkedChainId: chain?.chainId ?? null,
        },
        nullLinks,
      };
    },
  },
  primaryNetworkKind("p-chain-transactions", "p-chain"),
  primaryNetworkKind("x-chain-transactions", "x-chain"),
  {
    // A metric point has no links; its value is checked against the simulator's series.
    name: "chain-metric",
    field: "chainMetricUpdates",
    query: `subscription SoakChainMetric($chainId: ID) {
  chainMetricUpdates(chainId: $chainId, metric: TX_COUNT, interval: HOUR) { timestamp value valueExact }
}`,
    resumable: false,
    pollMs: POLL_MS.metrics,
    variables: () => ({ chainId: C_CHAIN }),
    question: () => `chain-metric:${C_CHAIN}:txCount:hour`,
    read: (point) => ({
      stream: "",
      number: Number(point.timestamp),
      id: String(point.valueExact),
      time: undefined,
      detail: { value: point.value },
      nullLinks: [],
    }),
  },
];

/**
 * What an error of an event says of its cause: for the upstream's codes, whether the upstream
 * failed (an answer with an error status, a connection that failed) or the gateway gave up
 * before it answered (the request's deadline passed, the breaker failing fast). Only the first
 * explains a null link: the simulator of the soak injects no faults.
 */
export function causeOf(error: { message: string; extensions?: Record<string, unknown> }): {
  cause: string;
  upstreamFailed: boolean;
} {
  const code = String(error.extensions?.code ?? "NONE");
  if (code !== "UPSTREAM_ERROR" && code !== "UPSTREAM_UNAVAILABLE") return { cause: code, upstreamFailed: false };
  const status = (error.extensions?.upstream as { status?: number | null } | undefined)?.status;
  if (typeof status === "number") return { cause: `${code}: upstream answered ${status}`, upstreamFailed: true };
  if (error.message.includes("deadline passed"))
    return { cause: `${code}: the request's deadline passed`, upstreamFailed: false };
  if (error.message.includes("circuit open")) return { cause: `${code}: circuit open`, upstreamFailed: false };
  return { cause: `${code}: ${error.message.replace(/^The .* could not be reached: /, "")}`, upstreamFailed: true };
}
