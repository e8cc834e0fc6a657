import type { paths } from "../../../src/upstream/contract/data-api.ts";
import { BLOCK_HASH_PATTERN } from "../../network/blocks.ts";
import { networkNamed, type SampleNetwork } from "../../network/index.ts";
import { badRequest, notFound } from "../../http/errors.ts";
import { paginate } from "../../http/pagination.ts";
import { routeDefiner, type RouteDefinition } from "../../http/router.ts";
import { requireChain } from "./chains.ts";

const dataRoute = routeDefiner<paths>();

const BLOCK_NUMBER_PATTERN = /^\d+$/;

export function blockRoutes(network: SampleNetwork): RouteDefinition[] {
  return [
    dataRoute("GET", "/v1/blocks", ({ query, pageScope }) => {
      const page = paginate(network.latestBlocks(networkNamed(query.network)), {
        pageToken: query.pageToken,
        pageSize: query.pageSize,
        scope: pageScope,
      });
      return { nextPageToken: page.nextPageToken, blocks: page.items };
    }),

    dataRoute("GET", "/v1/chains/{chainId}/blocks", ({ path, query, pageScope }) => {
      const chain = requireChain(network, path.chainId);
      const page = paginate(chain.blocks.latestFirst, {
        pageToken: query.pageToken,
        pageSize: query.pageSize,
        scope: pageScope,
      });
      return { nextPageToken: page.nextPageToken, blocks: page.items };
    }),

    dataRoute("GET", "/v1/chains/{chainId}/blocks/{blockId}", ({ path }) => {
      const { blocks } = requireChain(network, path.chainId);
      const { blockId } = path;
      let number: number | undefined;
      if (BLOCK_NUMBER_PATTERN.test(blockId)) number = Number(blockId);
      else if (BLOCK_HASH_PATTERN.test(blockId)) number = blocks.numberOfHash(blockId);
      else throw badRequest("blockId must be a block number or a 0x-prefixed 32-byte block hash");
      const block = number === undefined ? undefined : blocks.block(number);
      if (block === undefined) throw notFound(`Block ${blockId} not found on chain ${blocks.chainId}`);
      return block;
    }),
  ];
}
