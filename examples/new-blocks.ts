/**
 * A small typed live client: subscribes to a chain's new blocks over a WebSocket with graphql-ws
 * and prints each as it arrives, resuming after the last block it printed when the socket drops.
 *
 *   npx tsx examples/new-blocks.ts [ws://localhost:4000/graphql] [chainId]
 *
 * Set GLACIER_API_KEY to send your Data API key with the connection.
 */
import { print } from "graphql";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { NewBlocksDocument, type NewBlocksSubscription } from "./generated/graphql.ts";

export type NewBlock = NonNullable<NewBlocksSubscription["newBlocks"]>;

export interface BlockWatch {
  /** Stops the subscription and closes the socket. */
  stop(): Promise<void>;
}

/**
 * Calls `onBlock` with each new block of `chainId`; `after` resumes after a block number. The
 * client retries a dropped socket and resubscribes after the last block it saw, so none is
 * missed or repeated.
 */
export function watchNewBlocks(
  endpoint: string,
  chainId: string,
  onBlock: (block: NewBlock) => void,
  options: { after?: string; apiKey?: string; onError?: (error: unknown) => void } = {},
): BlockWatch {
  let last = options.after;
  const client: Client = createClient({
    url: endpoint,
    webSocketImpl: WebSocket,
    connectionParams: options.apiKey ? { "x-glacier-api-key": options.apiKey } : {},
    retryAttempts: 5,
  });
  let unsubscribe = () => {};
  const subscribe = () => {
    unsubscribe = client.subscribe<NewBlocksSubscription>(
      { query: print(NewBlocksDocument), variables: { chainId, after: last ?? null } },
      {
        next: ({ data, errors }) => {
          if (errors?.length) options.onError?.(errors);
          const block = data?.newBlocks;
          if (!block) return;
          last = block.blockNumber;
          onBlock(block);
        },
        error: (error) => options.onError?.(error),
        complete: () => {},
      },
    );
  };
  subscribe();
  return {
    async stop() {
      unsubscribe();
      await client.dispose();
    },
  };
}

export function formatBlock(block: NewBlock): string {
  return `${block.blockTime}  ${(block.chain?.chainName ?? "unknown chain").padEnd(24)} #${block.blockNumber.padEnd(10)} ${String(block.txCount).padStart(3)} txs  ${block.blockHash}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const endpoint = process.argv[2] ?? "ws://localhost:4000/graphql";
  const chainId = process.argv[3] ?? "43114";
  const watch = watchNewBlocks(endpoint, chainId, (block) => console.log(formatBlock(block)), {
    apiKey: process.env.GLACIER_API_KEY,
    onError: (error) => console.error(JSON.stringify(error)),
  });
  process.on("SIGINT", () => void watch.stop().then(() => process.exit(0)));
}
