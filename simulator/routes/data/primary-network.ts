import type { paths } from "../../../src/upstream/contract/data-api.ts";
import { badRequest, notFound } from "../../http/errors.ts";
import { paginate, type Page, type PageRequest } from "../../http/pagination.ts";
import { routeDefiner, type RouteDefinition } from "../../http/router.ts";
import { decodeCb58 } from "../../network/ids.ts";
import { networkNamed, type SampleNetwork } from "../../network/index.ts";
import { decodeBech32, normalizeAddress, type PrimaryNetwork } from "../../network/primary-network/index.ts";
import type { ListPChainTransactionsResponse, ListUtxosResponse, UpstreamNetwork } from "../../../src/upstream/types.ts";

const dataRoute = routeDefiner<paths>();

/**
 * A page of transactions ends early once their UTXOs pass this many, with a token for the rest,
 * as the Data API does when a page's UTXOs reach its performance threshold.
 */
export const PAGE_UTXO_THRESHOLD = 200;

const CB58 = /^[1-9A-HJ-NP-Za-km-z]+$/;
const HEIGHT = /^\d+$/;
const EVM_HASH = /^0x[0-9a-fA-F]{64}$/;
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const NODE_ID = /^NodeID-([1-9A-HJ-NP-Za-km-z]+)$/;

export function primaryNetworkRoutes(network: SampleNetwork): RouteDefinition[] {
  const locate = (path: { network: UpstreamNetwork; blockchainId: string }) => {
    const primary = network.primaryNetwork(networkNamed(path.network)!);
    const chain = primary.chainKey(path.blockchainId);
    if (chain === undefined) {
      throw badRequest(`blockchainId ${path.blockchainId} is not a chain of the ${primary.network} primary network`);
    }
    return { primary, chain };
  };

  return [
    dataRoute("GET", "/v1/networks/{network}/blockchains/{blockchainId}/blocks/{blockId}", ({ path }) => {
      const { primary, chain } = locate(path);
      const { blockId } = path;
      const wellFormed = HEIGHT.test(blockId) || (chain === "C" ? EVM_HASH.test(blockId) : CB58.test(blockId));
      if (!wellFormed) throw badRequest("blockId must be a block height or a block hash");
      const block = primary.block(chain, blockId);
      if (block === undefined) throw notFound(`Block ${blockId} not found on ${primary.chainInfo(chain).chainName}`);
      return block;
    }),

    dataRoute("GET", "/v1/networks/{network}/blockchains/{blockchainId}/transactions", ({ path, query, pageScope }) => {
      const { primary, chain } = locate(path);
      const violations: string[] = [];
      const addresses =
        query.addresses === undefined ? undefined : parseAddresses(primary, query.addresses, chain === "C", violations);
      if (query.l1ValidationId !== undefined && chain !== "P") {
        violations.push("l1ValidationId is only supported on the P-Chain");
      }
      const byValidation = chain === "P" && query.l1ValidationId !== undefined;
      if (addresses === undefined && !byValidation) {
        for (const name of ["txTypes", "startTimestamp", "endTimestamp"] as const) {
          if (query[name] !== undefined) violations.push(`${name} can only be used together with addresses`);
        }
      }
      if (violations.length > 0) throw badRequest(violations.join("; "));
      const matches = primary.transactions(chain, {
        addresses,
        txTypes: query.txTypes === undefined ? undefined : new Set(query.txTypes),
        startTimestamp: query.startTimestamp,
        endTimestamp: query.endTimestamp,
        l1ValidationId: query.l1ValidationId,
        sortOrder: query.sortOrder ?? "desc",
      });
      const request = { pageToken: query.pageToken, pageSize: query.pageSize, scope: pageScope };
      const page = withinUtxoThreshold(matches, request, (tx) => tx.consumed.length + tx.emitted.length);
      const transactions = page.items.map((tx) => primary.renderTransaction(tx));
      const body = { nextPageToken: page.nextPageToken, transactions, chainInfo: primary.chainInfo(chain) };
      return body as ListPChainTransactionsResponse;
    }),

    dataRoute("GET", "/v1/networks/{network}/blockchains/{blockchainId}/transactions/{txHash}", ({ path }) => {
      const { primary, chain } = locate(path);
      if (!CB58.test(path.txHash)) throw badRequest("txHash must be a transaction id in cb58");
      const tx = primary.transaction(chain, path.txHash);
      if (tx === undefined) throw notFound(`Transaction ${path.txHash} not found on ${primary.chainInfo(chain).chainName}`);
      return primary.renderTransaction(tx);
    }),

    dataRoute("POST", "/v1/networks/{network}/blockchains/{blockchainId}/utxos", ({ path, query, pageScope, body }) => {
      const { primary, chain } = locate(path);
      const text = (body as { addresses?: unknown } | null | undefined)?.addresses;
      if (typeof text !== "string" || text.trim() === "") throw badRequest("addresses should not be empty");
      const violations: string[] = [];
      const addresses = parseAddresses(primary, text, false, violations);
      if (violations.length > 0) throw badRequest(violations.join("; "));
      const matches = primary.utxos(chain, {
        addresses,
        assetId: chain === "X" ? query.assetId : undefined,
        includeSpent: query.includeSpent ?? false,
        minAmount: query.minUtxoAmount,
        sortBy: query.sortBy ?? "timestamp",
        sortOrder: query.sortOrder ?? "desc",
      });
      // The addresses travel in the body: the page token must belong to them too.
      const scope = JSON.stringify([pageScope, [...addresses].sort()]);
      const page = paginate(matches, { pageToken: query.pageToken, pageSize: query.pageSize, scope });
      const utxos = page.items.map((utxo) => primary.renderUtxo(chain, utxo));
      return { nextPageToken: page.nextPageToken, utxos, chainInfo: primary.chainInfo(chain) } as ListUtxosResponse;
    }),

    dataRoute("GET", "/v1/networks/{network}/blockchains/{blockchainId}/vertices:listByHeight", ({ path, query, pageScope }) => {
      const { primary } = locate(path);
      const vertices = primary.verticesAtHeight(query.vertexHeight, query.sortOrder ?? "asc");
      const page = paginate(vertices, { pageToken: query.pageToken, pageSize: query.pageSize, scope: pageScope });
      return { nextPageToken: page.nextPageToken, vertices: page.items, chainInfo: primary.chainInfo("X") };
    }),

    dataRoute("GET", "/v1/networks/{network}/blockchains/{blockchainId}/vertices/{vertexHash}", ({ path }) => {
      const { primary } = locate(path);
      if (!CB58.test(path.vertexHash)) throw badRequest("vertexHash must be a vertex id in cb58");
      const vertex = primary.vertex(path.vertexHash);
      if (vertex === undefined) throw notFound(`Vertex ${path.vertexHash} not found`);
      return vertex;
    }),

    dataRoute("GET", "/v1/networks/{network}/l1Validators", ({ path, query, pageScope }) => {
      const primary = network.primaryNetwork(networkNamed(path.network)!);
      if (query.nodeId !== undefined) {
        const encoded = NODE_ID.exec(query.nodeId)?.[1];
        if (encoded === undefined || decodeCb58(encoded)?.length !== 20) {
          throw badRequest("nodeId must be NodeID- followed by a 20-byte node id in cb58");
        }
      }
      const subnetId = query.subnetId === undefined ? undefined : String(query.subnetId);
      const validators = primary.l1ValidatorList({
        l1ValidationId: query.l1ValidationId,
        includeInactive: query.includeInactiveL1Validators ?? false,
        nodeId: query.nodeId,
        subnetId,
      });
      const page = paginate(validators, { pageToken: query.pageToken, pageSize: query.pageSize, scope: pageScope });
      return { nextPageToken: page.nextPageToken, validators: page.items, blockHeight: String(primary.pChainHeight) };
    }),
  ];
}

/**
 * Comma-separated addresses of the network, each with or without its chain letter (`P-avax1...`),
 * or, where allowed, 0x EVM addresses; collects a violation for each that is not.
 */
function parseAddresses(primary: PrimaryNetwork, text: string, allowEvm: boolean, violations: string[]): Set<string> {
  const addresses = new Set<string>();
  for (const item of text.split(",").map((part) => part.trim())) {
    const address = normalizeAddress(item);
    const decoded = decodeBech32(address);
    if ((allowEvm && EVM_ADDRESS.test(item)) || (decoded?.hrp === primary.hrp && decoded.payload.length === 20)) {
      addresses.add(address);
    } else {
      violations.push(
        `each value in addresses must be a ${primary.hrp} address${allowEvm ? " or a 0x address" : ""}, got "${item}"`,
      );
    }
  }
  return addresses;
}

/** A page that stops before the UTXOs of its transactions pass the threshold (never empty). */
function withinUtxoThreshold<T>(items: readonly T[], request: PageRequest, utxoCount: (item: T) => number): Page<T> {
  const page = paginate(items, request);
  let utxos = 0;
  const fits = page.items.findIndex((item) => (utxos += utxoCount(item)) > PAGE_UTXO_THRESHOLD);
  if (fits <= 0) return page;
  // The same token with a smaller page size ends the page there, with a token for the rest.
  return paginate(items, { ...request, pageSize: fits });
}
