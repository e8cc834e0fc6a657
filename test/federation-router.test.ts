/**
 * The gateway as a Federation v2 subgraph behind a real router: Hive Gateway's runtime serving the
 * committed supergraph (examples/federation/supergraph.graphql) over this gateway and the example
 * labels subgraph, every one of them on a loopback socket. Each crossing query is answered as the
 * same questions asked of the gateway and of the labels subgraph directly, for the same upstream
 * calls (counted exactly).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ADDRESS_BOOK } from "../examples/federation/labels-subgraph.ts";
import { upstreamCalls } from "./support/harness.ts";
import { post, startFederation, type Answer, type Federation } from "./support/federation.ts";

const federation = {} as Federation;
beforeAll(async () => {
  Object.assign(federation, await startFederation());
});
afterAll(async () => {
  await federation.close?.();
});
afterEach(() => {
  federation.harness.simulator.setKnobs({ apiKeys: null });
});

/**
 * `ask`'s answer from cold (the gateway's record cache emptied), with the upstream calls it made
 * and the subgraph of each fetch the router sent (none for a question asked of a subgraph directly).
 */
async function counted<T>(ask: () => Promise<Answer<T>>): Promise<{ data: T; calls: Record<string, number>; fetches: string[] }> {
  federation.harness.gateway.cache.clear();
  federation.harness.simulator.resetCounters();
  federation.subgraphFetches.length = 0;
  const answer = await ask();
  expect(answer.errors).toBeUndefined();
  return { data: answer.data!, calls: upstreamCalls(federation.harness), fetches: [...federation.subgraphFetches] };
}

interface AccountKey {
  address: string;
  chain: { chainId: string };
}

const ACCOUNT_TRANSACTIONS = `transactions(first: 2) {
  edges { node { transaction { txHash blockIndex block { blockNumber blockHash blockTimestamp gasUsed txCount } } } }
}`;

interface AccountTransactions {
  edges: { node: { transaction: { txHash: string; block: { blockHash: string } | null } } }[];
}

it("the labels subgraph's address book names addresses of the simulator's sample network", () => {
  const { network } = federation.harness.simulator;
  for (const { chainId, address } of ADDRESS_BOOK) {
    expect(network.transactions(network.chain(chainId)!).catalog.allAddresses()).toContain(address);
  }
});

describe("watchlist (labels) → its accounts' latest transactions and their blocks (gateway)", () => {
  it("answers what the labels subgraph and the gateway answer directly, for the gateway's own upstream calls", async () => {
    type Watched = AccountKey & { label: string | null; chain: { chainName: string }; transactions: AccountTransactions };
    const crossing = await counted(() =>
      post<{ watchlist: Watched[] }>(
        federation.routerUrl,
        `{ watchlist { address label chain { chainId chainName } ${ACCOUNT_TRANSACTIONS} } }`,
      ),
    );

    const labels = await post<{ watchlist: (AccountKey & { label: string | null })[] }>(
      federation.labelsUrl,
      "{ watchlist { address chain { chainId } label } }",
    );
    const watched = labels.data!.watchlist;
    expect(watched.map(({ address }) => address)).toEqual(
      ADDRESS_BOOK.filter((entry) => entry.watched).map(({ address }) => address),
    );
    type Direct = Record<
      string,
      { chainId: string; chainName: string; address: { address: string; transactions: AccountTransactions } }
    >;
    const direct = await counted(() =>
      post<Direct>(
        federation.gatewayUrl,
        `{ ${watched
          .map(
            ({ address, chain }, index) =>
              `a${index}: chain(id: "${chain.chainId}") { chainId chainName address(address: "${address}") { address ${ACCOUNT_TRANSACTIONS} } }`,
          )
          .join("\n")} }`,
      ),
    );

    expect(crossing.data.watchlist).toEqual(
      watched.map(({ address, label }, index) => {
        const { chainId, chainName, address: account } = direct.data[`a${index}`]!;
        return { address, label, chain: { chainId, chainName }, transactions: account.transactions };
      }),
    );
    for (const account of crossing.data.watchlist) {
      expect(account.label).toBeTruthy();
      expect(account.transactions.edges).toHaveLength(2);
      for (const { node } of account.transactions.edges) expect(node.transaction.block).not.toBeNull();
    }

    const blocks = new Set(
      crossing.data.watchlist.flatMap(({ chain, transactions }) =>
        transactions.edges.map(({ node }) => `${chain.chainId}:${node.transaction.block!.blockHash}`),
      ),
    );
    // The watchlist from the labels subgraph, then all its accounts in one `_entities` fetch.
    expect(crossing.fetches).toEqual(["labels", "avalanche"]);
    expect(crossing.calls).toEqual(direct.calls);
    expect(crossing.calls).toEqual({
      "GET /v1/chains": 1,
      "GET /v1/chains/{chainId}/addresses/{address}/transactions": watched.length,
      "GET /v1/chains/{chainId}/blocks/{blockId}": blocks.size,
    });
  });
});

/** Fuji's block 4999: its senders include the labelled faucet and load tester, its callees the labelled DEX router. */
const BLOCK = { chainId: "43113", blockNumber: "4999" };
const ACCOUNT = "address chain { chainId }";
function blockTransactions(accountFields: string): string {
  return `{ chain(id: "${BLOCK.chainId}") { block(id: "${BLOCK.blockNumber}") {
    blockHash transactions { edges { node { txHash fromAccount { ${accountFields} } toAccount { ${accountFields} } } } }
  } } }`;
}

interface BlockTransactions<A> {
  chain: { block: { blockHash: string; transactions: { edges: { node: { txHash: string; fromAccount: A; toAccount: A } }[] } } };
}

describe("a block (gateway) → its transactions → their accounts' labels (labels)", () => {
  it("answers what the gateway and the labels subgraph answer directly, for the gateway's own upstream calls", async () => {
    type Labelled = AccountKey & { label: string | null };
    const crossing = await counted(() =>
      post<BlockTransactions<Labelled>>(federation.routerUrl, blockTransactions(`${ACCOUNT} label`)),
    );
    const direct = await counted(() => post<BlockTransactions<AccountKey>>(federation.gatewayUrl, blockTransactions(ACCOUNT)));

    const edges = direct.data.chain.block.transactions.edges;
    const accounts = edges.flatMap(({ node }) => [node.fromAccount, node.toAccount]);
    const labels = await post<{ _entities: { label: string | null }[] }>(
      federation.labelsUrl,
      "query ($accounts: [_Any!]!) { _entities(representations: $accounts) { ... on EvmAccount { label } } }",
      { accounts: accounts.map((account) => ({ __typename: "EvmAccount", ...account })) },
    );
    const labelOf = (index: number) => labels.data!._entities[index]!.label;
    expect(crossing.data).toEqual({
      chain: {
        block: {
          blockHash: direct.data.chain.block.blockHash,
          transactions: {
            edges: edges.map(({ node }, index) => ({
              node: {
                txHash: node.txHash,
                fromAccount: { ...node.fromAccount, label: labelOf(2 * index) },
                toAccount: { ...node.toAccount, label: labelOf(2 * index + 1) },
              },
            })),
          },
        },
      },
    });
    const senders = crossing.data.chain.block.transactions.edges.map(({ node }) => node.fromAccount.label);
    expect(senders.filter((label) => label === "Fuji faucet")).toHaveLength(2);
    expect(senders).toContain("Fuji load tester");
    expect(crossing.data.chain.block.transactions.edges.map(({ node }) => node.toAccount.label)).toContain("Fuji DEX router");

    // The router's plan: the root fetch from the gateway, then the accounts' labels in one
    // `_entities` fetch; no look-up of the chain or the transactions again by their keys.
    expect(crossing.fetches).toEqual(["avalanche", "labels"]);
    expect(crossing.calls).toEqual(direct.calls);
    expect(direct.calls).toEqual({
      "GET /v1/chains": 1,
      "GET /v1/chains/{chainId}/blocks/{blockId}": 1,
      "GET /v1/chains/{chainId}/blocks/{blockId}/transactions": 1,
    });
  });
});

describe("the caller's Data API key through the router", () => {
  it("reaches the Data API as the caller sent it", async () => {
    federation.harness.simulator.setKnobs({ apiKeys: ["caller-key"] });
    const answer = await counted(() =>
      post(federation.routerUrl, blockTransactions(`${ACCOUNT} label`), {}, { "x-glacier-api-key": "caller-key" }),
    );
    expect(Object.keys(answer.calls)).not.toHaveLength(0);
    expect(new Set(federation.harness.simulator.requests().map((request) => request.apiKey))).toEqual(new Set(["caller-key"]));
  });

  it("a key the Data API refuses is refused through the router with the gateway's code, on a root field and on an entity", async () => {
    federation.harness.simulator.setKnobs({ apiKeys: ["caller-key"] });
    const headers = { "x-glacier-api-key": "wrong-key" };
    // The first answer is the Data API's 403 on the fields that needed it; the next, the gateway's
    // own refusal of a key refused lately (HTTP 403 before anything runs).
    for (const query of [blockTransactions(ACCOUNT), `{ watchlist { label ${ACCOUNT_TRANSACTIONS} } }`]) {
      const refused = await post(federation.routerUrl, query, {}, headers);
      expect(refused.errors?.map((error) => error.extensions?.code)).toContain("FORBIDDEN");
      expect(JSON.stringify(refused)).not.toContain("wrong-key");
    }
    federation.harness.gateway.cache.clear();
    const unauthenticated = await post(federation.routerUrl, blockTransactions(ACCOUNT));
    expect(unauthenticated.errors?.map((error) => error.extensions?.code)).toContain("UNAUTHENTICATED");
  });
});
