/**
 * "labels": a second Federation v2 subgraph beside the gateway, written the ordinary way (SDL first,
 * `@apollo/subgraph`'s `buildSubgraphSchema`, served by graphql-yoga). It names a few addresses of
 * the simulator's sample network and keeps a watchlist of them: it extends the gateway's
 * `EvmAccount` by its key (`chain { chainId } address`) with a `label`, and its `watchlist` returns
 * account references that the router completes from the gateway (their transactions, blocks, ...).
 *
 *   npx tsx examples/federation/labels-subgraph.ts          # http://localhost:4001/graphql
 *   LABELS_PORT=4101 npx tsx examples/federation/labels-subgraph.ts
 *
 * `npm run supergraph` composes its SDL (`LABELS_SDL`) with the gateway's; see this folder's README.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";
import { buildSubgraphSchema } from "@apollo/subgraph";
import { parse } from "graphql";
import { createYoga, type YogaServerInstance } from "graphql-yoga";

export const LABELS_SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@key"])

  # The gateway's types and scalar, without descriptions: the composed schema keeps the gateway's.
  scalar EvmAddress

  # Referred to by its key only: this subgraph adds nothing to a chain.
  type EvmChain @key(fields: "chainId", resolvable: false) {
    chainId: String!
  }

  type EvmAccount @key(fields: "chain { chainId } address") {
    chain: EvmChain!
    address: EvmAddress!
    "The name this address book gives the address on its chain; null for an address it does not know."
    label: String
  }

  type Query {
    "The addresses this address book watches, in its own order."
    watchlist: [EvmAccount!]!
  }
`;

export interface AddressLabel {
  chainId: string;
  /** Lowercase. */
  address: string;
  label: string;
  watched: boolean;
}

/**
 * Accounts and contracts of the simulator's sample network (seed `avalanche-simulator`): the
 * busiest accounts of the Avalanche C-Chain, Quarry L1 and Fuji C-Chain (the first of each chain's
 * catalog), two senders of Fuji's block 4999 and the Fuji DEX router most of its transactions call.
 */
export const ADDRESS_BOOK: readonly AddressLabel[] = [
  { chainId: "43114", address: "0x4924caec05c722d713ab4dab3b9c2a92912ff271", label: "Treasury hot wallet", watched: true },
  { chainId: "43114", address: "0x2eec9a74b284fa4844a6f3f16af951bdc5d2b1bc", label: "Market maker", watched: true },
  { chainId: "51288", address: "0x09c7217aa64ce791d6c02535e729dc076f1a4d07", label: "Quarry validator rewards", watched: true },
  { chainId: "43113", address: "0x3ceb624e16235b19dcb4669b7e891c97004e99e4", label: "Fuji faucet", watched: true },
  { chainId: "43113", address: "0x51f6b8d4f172518be410f0ad39302f183536a2ce", label: "Fuji load tester", watched: false },
  { chainId: "43113", address: "0xa4b98b28fb3ddac5924b49a741ec048779f07be3", label: "Fuji DEX router", watched: false },
];

interface AccountReference {
  chain: { chainId: string };
  address: string;
}

const byKey = new Map(ADDRESS_BOOK.map((entry) => [`${entry.chainId}:${entry.address}`, entry]));

function labelOf(account: AccountReference): string | null {
  return byKey.get(`${account.chain.chainId}:${account.address.toLowerCase()}`)?.label ?? null;
}

export const labelsSchema = buildSubgraphSchema({
  typeDefs: parse(LABELS_SDL),
  resolvers: {
    Query: {
      watchlist: (): AccountReference[] =>
        ADDRESS_BOOK.filter((entry) => entry.watched).map(({ chainId, address }) => ({ chain: { chainId }, address })),
    },
    EvmAccount: {
      // The router sends the key it holds; the label is all this subgraph adds to it.
      __resolveReference: (reference: AccountReference): AccountReference => reference,
      label: labelOf,
    },
  },
});

export function createLabelsYoga(): YogaServerInstance<Record<string, never>, Record<string, never>> {
  return createYoga({ schema: labelsSchema, graphqlEndpoint: "/graphql", landingPage: false, logging: false });
}

export interface RunningLabelsSubgraph {
  server: Server;
  url: string;
  close(): Promise<void>;
}

/** Serves the subgraph on `port` (0: a free one) of `host`. */
export async function startLabelsSubgraph(port: number, host = "127.0.0.1"): Promise<RunningLabelsSubgraph> {
  const server = createServer(createLabelsYoga());
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    server,
    url: `http://${host}:${bound}/graphql`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const running = await startLabelsSubgraph(Number(process.env.LABELS_PORT ?? 4001), process.env.LABELS_HOST ?? "localhost");
  console.log(`labels subgraph on ${running.url}`);
  const stop = () => void running.close().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
