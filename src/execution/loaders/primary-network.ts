/** Per-request loaders for primary-network blocks, transactions, X-Chain vertices and L1 validators. */
import type { Upstreams } from "../../upstream/upstreams.ts";
import type { CallOptions } from "../../upstream/call-options.ts";
import type { PageRequest } from "../../upstream/request-target.ts";
import type {
  L1ValidatorFilters,
  PrimaryNetworkName,
  PrimaryNetworkOrigin,
  PrimaryNetworkPage,
  TransactionFilters,
} from "../../upstream/primary-network-api.ts";
import type {
  L1Validator,
  PrimaryNetworkBlock,
  PrimaryNetworkTransaction,
  SortOrder,
  XChainVertex,
} from "../../upstream/types.ts";
import { observed, type BatchObserver } from "./observed.ts";
import { PagePrimedLoader } from "./page-primed.ts";
import { settle } from "./settle.ts";

/** A record of one chain of a network, by the id its route takes. */
export interface ChainRecordKey {
  origin: PrimaryNetworkOrigin;
  /** A block height or hash, or a transaction hash. */
  id: string;
}

/** A record of a network, by its id. */
export interface NetworkRecordKey {
  network: PrimaryNetworkName;
  id: string;
}

export interface PrimaryNetworkLoaders {
  /** Blocks by chain and height or hash; null when unknown. */
  primaryNetworkBlock: PagePrimedLoader<ChainRecordKey, PrimaryNetworkBlock | null, string>;
  /** Transactions by chain and hash; null when the chain has none with that hash. */
  primaryNetworkTransaction: PagePrimedLoader<ChainRecordKey, PrimaryNetworkTransaction | null, string>;
  /** X-Chain vertices by network and hash; null when unknown. */
  xChainVertex: PagePrimedLoader<NetworkRecordKey, XChainVertex | null, string>;
  /** L1 validators, active or not, by network and validation id; null when unknown. */
  l1Validator: PagePrimedLoader<NetworkRecordKey, L1Validator | null, string>;
  /** List pages, each read once by the route it names; their records prime the loaders above. */
  primaryNetworkPages: PrimaryNetworkPages;
}

export type L1ValidatorPage = Awaited<ReturnType<Upstreams["primaryNetwork"]["listL1Validators"]>>;

export interface PrimaryNetworkPages {
  transactions(
    origin: PrimaryNetworkOrigin,
    filters: TransactionFilters,
    page: PageRequest,
  ): Promise<PrimaryNetworkPage<PrimaryNetworkTransaction>>;
  l1Validators(network: PrimaryNetworkName, filters: L1ValidatorFilters, page: PageRequest): Promise<L1ValidatorPage>;
  verticesAtHeight(
    network: PrimaryNetworkName,
    vertexHeight: number,
    sortOrder: SortOrder | undefined,
    page: PageRequest,
  ): Promise<PrimaryNetworkPage<XChainVertex>>;
}

/**
 * The one validation of a node's validations to answer for the node: an active one (with balance
 * left), the latest created if several; else the latest created.
 */
export function chooseValidationOfNode(validations: readonly L1Validator[]): L1Validator | null {
  let chosen: L1Validator | null = null;
  const rank = (validator: L1Validator) => [validator.remainingBalance > 0 ? 1 : 0, validator.creationTimestamp] as const;
  for (const validator of validations) {
    if (chosen === null) {
      chosen = validator;
      continue;
    }
    const [active, created] = rank(validator);
    const [chosenActive, chosenCreated] = rank(chosen);
    if (active > chosenActive || (active === chosenActive && created > chosenCreated)) chosen = validator;
  }
  return chosen;
}

function chainRecordKey({ origin, id }: ChainRecordKey): string {
  return `${origin.network}:${origin.blockchainId}:${id.startsWith("0x") ? id.toLowerCase() : id}`;
}

function networkRecordKey({ network, id }: NetworkRecordKey): string {
  return `${network}:${id}`;
}

export function createPrimaryNetworkLoaders(
  { primaryNetwork }: Upstreams,
  call: CallOptions,
  observe: BatchObserver,
): PrimaryNetworkLoaders {
  const primaryNetworkBlock: PrimaryNetworkLoaders["primaryNetworkBlock"] = new PagePrimedLoader(
    observed("primaryNetworkBlock", observe, (keys) =>
      Promise.all(
        keys.map(async (key) => {
          const block = await settle(primaryNetwork.getBlock(key.origin, key.id, call));
          // Found by one of its ids, a block is known by the other too.
          if (block && !(block instanceof Error)) primeBlocks({ primaryNetworkBlock }, key.origin, [block]);
          return block;
        }),
      ),
    ),
    chainRecordKey,
  );

  const primaryNetworkTransaction: PrimaryNetworkLoaders["primaryNetworkTransaction"] = new PagePrimedLoader(
    observed("primaryNetworkTransaction", observe, (keys) =>
      Promise.all(keys.map((key) => settle(primaryNetwork.getTransaction(key.origin, key.id, call)))),
    ),
    chainRecordKey,
  );

  const xChainVertex: PrimaryNetworkLoaders["xChainVertex"] = new PagePrimedLoader(
    observed("xChainVertex", observe, (keys) =>
      Promise.all(keys.map((key) => settle(primaryNetwork.getVertex(key.network, key.id, call)))),
    ),
    networkRecordKey,
  );

  // The list route finds one validator by its validation id, whether it is active or not.
  const l1Validator: PrimaryNetworkLoaders["l1Validator"] = new PagePrimedLoader(
    observed("l1Validator", observe, (keys) =>
      Promise.all(
        keys.map(async (key) => {
          const page = await settle(
            primaryNetwork.listL1Validators(
              key.network,
              { l1ValidationId: key.id, includeInactiveL1Validators: true },
              { pageSize: 1, pageToken: undefined },
              call,
            ),
          );
          return page instanceof Error ? page : (page.items[0] ?? null);
        }),
      ),
    ),
    networkRecordKey,
  );

  const loaders = { primaryNetworkTransaction, xChainVertex, l1Validator };
  const primaryNetworkPages: PrimaryNetworkPages = {
    async transactions(origin, filters, page) {
      const response = await primaryNetwork.listTransactions(origin, filters, page, call);
      primeTransactions(loaders, origin, response.items);
      return response;
    },
    async l1Validators(network, filters, page) {
      const response = await primaryNetwork.listL1Validators(network, filters, page, call);
      primeL1Validators(loaders, network, response.items);
      return response;
    },
    async verticesAtHeight(network, vertexHeight, sortOrder, page) {
      const response = await primaryNetwork.listVerticesAtHeight(network, vertexHeight, sortOrder, page, call);
      primeVertices(loaders, network, response.items);
      return response;
    },
  };

  return { primaryNetworkBlock, primaryNetworkTransaction, xChainVertex, l1Validator, primaryNetworkPages };
}

/** Puts blocks into the block loader under their height and hash. */
export function primeBlocks(
  loaders: Pick<PrimaryNetworkLoaders, "primaryNetworkBlock">,
  origin: PrimaryNetworkOrigin,
  blocks: readonly PrimaryNetworkBlock[],
): void {
  loaders.primaryNetworkBlock.primePage((add) => {
    for (const block of blocks) {
      add({ origin, id: block.blockNumber }, block);
      add({ origin, id: block.blockHash }, block);
    }
  });
}

/** Puts a page's transactions into the transaction loader. */
function primeTransactions(
  loaders: Pick<PrimaryNetworkLoaders, "primaryNetworkTransaction">,
  origin: PrimaryNetworkOrigin,
  transactions: readonly PrimaryNetworkTransaction[],
): void {
  loaders.primaryNetworkTransaction.primePage((add) => {
    for (const tx of transactions) add({ origin, id: tx.txHash }, tx);
  });
}

function primeVertices(
  loaders: Pick<PrimaryNetworkLoaders, "xChainVertex">,
  network: PrimaryNetworkName,
  vertices: readonly XChainVertex[],
): void {
  loaders.xChainVertex.primePage((add) => {
    for (const vertex of vertices) add({ network, id: vertex.vertexHash }, vertex);
  });
}

function primeL1Validators(
  loaders: Pick<PrimaryNetworkLoaders, "l1Validator">,
  network: PrimaryNetworkName,
  validators: readonly L1Validator[],
): void {
  loaders.l1Validator.primePage((add) => {
    for (const validator of validators) add({ network, id: validator.validationId }, validator);
  });
}
