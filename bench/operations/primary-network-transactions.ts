/**
 * A wallet's P-Chain history: the 25 latest transactions of a busy mainnet address, with the
 * UTXOs each consumed and emitted. The page carries the UTXOs and the hashes of the transactions
 * that created and spent them, so the operation costs that one page.
 */
import type { components } from "../../src/upstream/contract/data-api.ts";
import type { PlainUpstream } from "../upstream.ts";
import { operationDocument, type ReferenceOperation } from "./types.ts";

type Schemas = components["schemas"];
type PChainUtxo = Schemas["PChainUtxo"];
type PChainTransactionsPage = Schemas["ListPChainTransactionsResponse"];

const P_CHAIN_ID = "11111111111111111111111111111111LpoYY";
const FIRST = 25;
const transactionsPath = `/v1/networks/mainnet/blockchains/${P_CHAIN_ID}/transactions`;

/** The address that owns UTXOs of the most of the chain's latest transactions. */
async function busiestAddress(upstream: PlainUpstream): Promise<string> {
  const latest = await upstream.get<PChainTransactionsPage>("data", `${transactionsPath}?pageSize=100`);
  const transactionsByOwner = new Map<string, number>();
  for (const tx of latest.transactions) {
    const owners = new Set([...tx.consumedUtxos, ...tx.emittedUtxos].flatMap((utxo) => utxo.addresses));
    for (const owner of owners) transactionsByOwner.set(owner, (transactionsByOwner.get(owner) ?? 0) + 1);
  }
  return [...transactionsByOwner].reduce((most, owner) => (owner[1] > most[1] ? owner : most))[0];
}

function utxo(item: PChainUtxo) {
  return {
    utxoId: item.utxoId,
    addresses: item.addresses,
    asset: { assetId: item.asset.assetId, symbol: item.asset.symbol, amount: item.asset.amount },
    outputIndex: item.outputIndex,
    staked: item.staked ?? null,
    createdOnChainId: item.createdOnChainId,
    consumedOnChainId: item.consumedOnChainId,
    txHash: item.txHash,
    consumingTxHash: item.consumingTxHash ?? null,
  };
}

export const primaryNetworkTransactions: ReferenceOperation = {
  name: "primary-network-transactions",
  document: operationDocument("primary-network-transactions"),
  // one page
  dependentCalls: 1,
  async prepare(upstream) {
    const address = await busiestAddress(upstream);
    const pagePath = `${transactionsPath}?addresses=${address}&pageSize=${FIRST}`;
    const reference = await upstream.get<PChainTransactionsPage>("data", pagePath);
    if (!reference.nextPageToken)
      throw new Error(`primary-network-transactions: ${address} has no more than one page of transactions`);
    return {
      variables: { network: "MAINNET", addresses: [address], first: FIRST },
      // Every field asked is in the page: no linked record is fetched.
      fewestCalls: 1,
      upstreamPaths: [{ service: "data", path: pagePath }],
      async baseline() {
        const page = await upstream.get<PChainTransactionsPage>("data", pagePath);
        return {
          primaryNetwork: {
            blockchain: {
              transactions: {
                edges: page.transactions.map((tx) => ({
                  node: {
                    txHash: tx.txHash,
                    // as the upstream spells it: the baseline maps no enums
                    txType: tx.txType,
                    blockNumber: tx.blockNumber,
                    blockTimestamp: tx.blockTimestamp,
                    consumedUtxos: tx.consumedUtxos.map(utxo),
                    emittedUtxos: tx.emittedUtxos.map(utxo),
                  },
                })),
                pageInfo: { hasNextPage: Boolean(page.nextPageToken), endCursor: page.nextPageToken ?? null },
              },
            },
          },
        };
      },
    };
  },
};
