import type { paths } from "../../../src/upstream/contract/data-api.ts";
import { BLOCK_HASH_PATTERN } from "../../network/blocks.ts";
import { ADDRESS_PATTERN, TX_HASH_PATTERN } from "../../network/evm-transactions/index.ts";
import type { SampleNetwork } from "../../network/index.ts";
import { badRequest, notFound } from "../../http/errors.ts";
import { paginate } from "../../http/pagination.ts";
import { routeDefiner, type RouteDefinition } from "../../http/router.ts";
import { requireChain } from "./chains.ts";

const dataRoute = routeDefiner<paths>();

const BLOCK_NUMBER_PATTERN = /^\d+$/;

/** A block number parameter: the contract types it as a number, the chain counts in whole blocks. */
function blockNumber(name: string, value: number | undefined, violations: string[]): number | undefined {
  if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) {
    violations.push(`${name} must be a non-negative integer`);
  }
  return value;
}

export function transactionRoutes(network: SampleNetwork): RouteDefinition[] {
  return [
    dataRoute("GET", "/v1/chains/{chainId}/addresses/{address}/transactions", ({ path, query, pageScope }) => {
      const violations: string[] = [];
      if (!ADDRESS_PATTERN.test(path.address)) violations.push("address must be an EVM address: 0x followed by 40 hex digits");
      const startBlock = blockNumber("startBlock", query.startBlock, violations);
      const endBlock = blockNumber("endBlock", query.endBlock, violations);
      if (violations.length === 0 && startBlock !== undefined && endBlock !== undefined && startBlock >= endBlock) {
        violations.push("startBlock must be less than endBlock");
      }
      if (violations.length > 0) throw badRequest(violations.join("; "));
      const chain = requireChain(network, path.chainId);
      const transactions = network
        .transactions(chain)
        .addressTransactions(path.address, { startBlock, endBlock, sortOrder: query.sortOrder ?? "desc" });
      const page = paginate(transactions, { pageToken: query.pageToken, pageSize: query.pageSize, scope: pageScope });
      return { nextPageToken: page.nextPageToken, transactions: page.items };
    }),

    dataRoute("GET", "/v1/chains/{chainId}/blocks/{blockId}/transactions", ({ path, query, pageScope }) => {
      const chain = requireChain(network, path.chainId);
      const { blockId } = path;
      let number: number | undefined;
      if (BLOCK_NUMBER_PATTERN.test(blockId)) number = Number(blockId);
      else if (BLOCK_HASH_PATTERN.test(blockId)) number = chain.blocks.numberOfHash(blockId);
      else throw badRequest("blockId must be a block number or a 0x-prefixed 32-byte block hash");
      const transactions = number === undefined ? undefined : network.transactions(chain).blockTransactions(number);
      if (transactions === undefined) throw notFound(`Block ${blockId} not found on chain ${chain.evmChainId}`);
      const page = paginate(transactions, { pageToken: query.pageToken, pageSize: query.pageSize, scope: pageScope });
      return { nextPageToken: page.nextPageToken, transactions: page.items };
    }),

    dataRoute("GET", "/v1/chains/{chainId}/transactions/{txHash}", ({ path }) => {
      if (!TX_HASH_PATTERN.test(path.txHash)) throw badRequest("txHash must be a 0x-prefixed 32-byte transaction hash");
      const chain = requireChain(network, path.chainId);
      const transaction = network.transactions(chain).transaction(path.txHash);
      if (transaction === undefined) throw notFound(`Transaction ${path.txHash} not found on chain ${chain.evmChainId}`);
      return transaction;
    }),
  ];
}
