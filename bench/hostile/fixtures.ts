/** What the attacks of `npm run bench:hostile` need from the simulator's data, read once before the phases. */
import type { Operation } from "../measure.ts";
import type { PlainUpstream } from "../upstream.ts";
import type { Fixtures } from "./types.ts";

const P_CHAIN_ID = "11111111111111111111111111111111LpoYY";

interface Block {
  chainId: string;
  blockNumber: string;
  blockHash: string;
  parentHash: string;
  blockTimestamp: number;
}

async function registerL1ValidatorTx(upstream: PlainUpstream): Promise<string> {
  let pageToken: string | undefined;
  for (let page = 0; page < 100; page += 1) {
    const path = `/v1/networks/fuji/blockchains/${P_CHAIN_ID}/transactions?pageSize=100${pageToken ? `&pageToken=${pageToken}` : ""}`;
    const { transactions, nextPageToken } = await upstream.get<{
      transactions: { txHash: string; txType: string }[];
      nextPageToken?: string;
    }>("data", path);
    const found = transactions.find((tx) => tx.txType === "RegisterL1ValidatorTx");
    if (found) return found.txHash;
    if (!nextPageToken) break;
    pageToken = nextPageToken;
  }
  throw new Error("the simulator has no RegisterL1ValidatorTx on FUJI's P-Chain");
}

export async function readFixtures(upstream: PlainUpstream, costly: Operation): Promise<Fixtures> {
  const [head] = (await upstream.get<{ blocks: Block[] }>("data", "/v1/chains/43114/blocks?pageSize=1")).blocks;
  if (!head) throw new Error("the simulator's C-Chain has no block");
  const { transactions } = await upstream.get<{ transactions: { from: { address: string } }[] }>(
    "data",
    `/v1/chains/43114/blocks/${head.blockNumber}/transactions?pageSize=1`,
  );
  const evmAddress = transactions[0]?.from.address;
  if (!evmAddress) throw new Error(`the simulator's C-Chain block ${head.blockNumber} has no transaction`);
  // latest-blocks' page: its blocks and their parents are what the legitimate load loads.
  const { blocks } = await upstream.get<{ blocks: Block[] }>("data", "/v1/blocks?pageSize=20");
  const cachedBlocks = blocks.flatMap((block) => [
    { chainId: block.chainId, hash: block.blockHash },
    { chainId: block.chainId, hash: block.parentHash },
  ]);
  return {
    registerL1ValidatorTxHash: await registerL1ValidatorTx(upstream),
    evmAddress,
    exportDay: new Date(head.blockTimestamp * 1000).toISOString().slice(0, 10),
    cachedBlocks,
    costlyQuery: { query: costly.document, variables: costly.variables },
  };
}
