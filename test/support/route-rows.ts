/**
 * A query for every route the gateway calls, reading records the simulator holds: the rows of
 * test/failures-stay-local.test.ts (one route failing at a time) and of
 * test/hostile/route-breakers.test.ts (every other route still answering while one route's
 * breaker is open).
 */
import { registerL1ValidatorTx, type Harness } from "./harness.ts";

export const C_CHAIN = "43114";
export const P_CHAIN = "11111111111111111111111111111111LpoYY";
/** A block of the simulated C-Chain that holds transactions. */
export const BUSY_BLOCK = 3210;

/** Values from the simulator's own data, so that every document reads records that exist. */
export interface Values {
  cChainTxHash: string;
  evmAccount: string;
  erc20Contract: string;
  pChainTxHash: string;
  pChainWallet: string;
  vertexHash: string;
  l1SubnetId: string;
  warpTxHash: string;
}

export interface QueryRow {
  /** The simulator's route key that fails. */
  route: string;
  /** What reads it. */
  via: string;
  /** The selection that needs the route (root fields of a query). */
  selection: (values: Values) => string;
  /** Where its error must sit. */
  path: readonly (string | number)[];
}

export const globalId = (text: string) => Buffer.from(text).toString("base64");

export const QUERY_ROWS: readonly QueryRow[] = [
  // ---- Data API: EVM chains ----
  { route: "GET /v1/chains", via: "chains", selection: () => "chains { chainId }", path: ["chains"] },
  {
    route: "GET /v1/chains/{chainId}",
    via: "chain(id:) of a chain the list leaves out",
    selection: () => `chain(id: "999999") { chainName }`,
    path: ["chain"],
  },
  {
    route: "GET /v1/blocks",
    via: "latestBlocks",
    selection: () => "latestBlocks(first: 2) { nodes { blockHash } }",
    path: ["latestBlocks"],
  },
  {
    route: "GET /v1/chains/{chainId}/blocks",
    via: "EvmChain.blocks",
    selection: () => `chain(id: "${C_CHAIN}") { chainId blocks(first: 2) { nodes { blockHash } } }`,
    path: ["chain", "blocks"],
  },
  {
    route: "GET /v1/chains/{chainId}/blocks/{blockId}",
    via: "EvmChain.block",
    selection: () => `chain(id: "${C_CHAIN}") { chainId block(id: "${BUSY_BLOCK}") { blockHash } }`,
    path: ["chain", "block"],
  },
  {
    route: "GET /v1/chains/{chainId}/blocks/{blockId}/transactions",
    via: "EvmBlock.transactions",
    selection: () =>
      `chain(id: "${C_CHAIN}") { chainId block(id: "${BUSY_BLOCK}") { blockHash transactions(first: 2) { nodes { txHash } } } }`,
    path: ["chain", "block", "transactions"],
  },
  {
    route: "GET /v1/chains/{chainId}/transactions/{txHash}",
    via: "EvmChain.transaction",
    selection: ({ cChainTxHash }) => `chain(id: "${C_CHAIN}") { chainId transaction(hash: "${cChainTxHash}") { txHash } }`,
    path: ["chain", "transaction"],
  },
  {
    route: "GET /v1/chains/{chainId}/addresses/{address}/transactions",
    via: "EvmAccount.transactions",
    selection: ({ evmAccount }) =>
      `chain(id: "${C_CHAIN}") { chainId address(address: "${evmAccount}") { address transactions(first: 2) { nodes { transaction { txHash } } } } }`,
    path: ["chain", "address", "transactions"],
  },
  // ---- Data API: primary network ----
  {
    route: "GET /v1/networks/{network}/blockchains/{blockchainId}/blocks/{blockId}",
    via: "PChain.block",
    selection: () => `primaryNetwork(network: MAINNET) { network pChain { blockchainId block(id: "5") { blockHash } } }`,
    path: ["primaryNetwork", "pChain", "block"],
  },
  {
    route: "GET /v1/networks/{network}/blockchains/{blockchainId}/transactions",
    via: "PChain.transactions",
    selection: () =>
      `primaryNetwork(network: MAINNET) { network pChain { blockchainId transactions(first: 2) { nodes { txHash } } } }`,
    path: ["primaryNetwork", "pChain", "transactions"],
  },
  {
    route: "GET /v1/networks/{network}/blockchains/{blockchainId}/transactions",
    via: "XChain.transactions",
    selection: () =>
      `primaryNetwork(network: MAINNET) { network xChain { blockchainId transactions(first: 2) { nodes { txHash } } } }`,
    path: ["primaryNetwork", "xChain", "transactions"],
  },
  {
    route: "GET /v1/networks/{network}/blockchains/{blockchainId}/transactions",
    via: "CChain.transactions",
    selection: () =>
      `primaryNetwork(network: MAINNET) { network cChain { blockchainId transactions(first: 2) { nodes { txHash } } } }`,
    path: ["primaryNetwork", "cChain", "transactions"],
  },
  {
    route: "GET /v1/networks/{network}/blockchains/{blockchainId}/transactions/{txHash}",
    via: "node(id:) of a P-Chain transaction",
    selection: ({ pChainTxHash }) => `node(id: "${globalId(`PChainTransaction:mainnet:${P_CHAIN}:${pChainTxHash}`)}") { id }`,
    path: ["node"],
  },
  {
    route: "POST /v1/networks/{network}/blockchains/{blockchainId}/utxos",
    via: "PChain.utxos",
    selection: ({ pChainWallet }) =>
      `primaryNetwork(network: MAINNET) { network pChain { blockchainId utxos(addresses: ["${pChainWallet}"], first: 2) { nodes { utxoId } } } }`,
    path: ["primaryNetwork", "pChain", "utxos"],
  },
  {
    route: "GET /v1/networks/{network}/blockchains/{blockchainId}/vertices/{vertexHash}",
    via: "XChain.vertex",
    selection: ({ vertexHash }) =>
      `primaryNetwork(network: MAINNET) { network xChain { blockchainId vertex(hash: "${vertexHash}") { vertexHash } } }`,
    path: ["primaryNetwork", "xChain", "vertex"],
  },
  {
    route: "GET /v1/networks/{network}/blockchains/{blockchainId}/vertices:listByHeight",
    via: "XChain.verticesAtHeight",
    selection: () =>
      `primaryNetwork(network: MAINNET) { network xChain { blockchainId verticesAtHeight(height: 3, first: 2) { nodes { vertexHash } } } }`,
    path: ["primaryNetwork", "xChain", "verticesAtHeight"],
  },
  {
    route: "GET /v1/networks/{network}/l1Validators",
    via: "PrimaryNetwork.l1Validators",
    selection: () => `primaryNetwork(network: MAINNET) { network l1Validators(first: 2) { nodes { validationId } } }`,
    path: ["primaryNetwork", "l1Validators"],
  },
  // ---- Data API: operations and Warp ----
  {
    route: "GET /v1/operations/{operationId}",
    via: "exportOperation",
    selection: () => `exportOperation(id: "no-such-operation") { operationId }`,
    path: ["exportOperation"],
  },
  {
    route: "GET /v1/signatureAggregator/{network}/aggregateSignatures/{txHash}",
    via: "warpSignature",
    selection: ({ warpTxHash }) => `warpSignature(network: FUJI, txHash: "${warpTxHash}") { signedMessage }`,
    path: ["warpSignature"],
  },
  // ---- Metrics API ----
  {
    route: "GET /v2/chains/{chainId}",
    via: "EvmChain.metricsInfo",
    selection: () => `chain(id: "${C_CHAIN}") { chainId metricsInfo { chainName } }`,
    path: ["chain", "metricsInfo"],
  },
  {
    route: "GET /v2/chains/{chainId}/metrics/{metric}",
    via: "EvmChain.metrics",
    selection: () => `chain(id: "${C_CHAIN}") { chainId metrics(metric: TX_COUNT, first: 2) { nodes { timestamp } } }`,
    path: ["chain", "metrics"],
  },
  {
    route: "GET /v2/chains/{chainId}/metrics/{metric}",
    via: "networkMetrics",
    selection: () => `networkMetrics(scope: MAINNET, metric: TX_COUNT, first: 2) { nodes { timestamp } }`,
    path: ["networkMetrics"],
  },
  {
    route: "GET /v1/avg_tps/{chainId}",
    via: "EvmChain.avgTps",
    selection: () => `chain(id: "${C_CHAIN}") { chainId avgTps(first: 2) { nodes { timestamp } } }`,
    path: ["chain", "avgTps"],
  },
  {
    route: "GET /v2/chains/{chainId}/contracts/{address}/balances",
    via: "EvmChain.tokenHolders",
    selection: ({ erc20Contract }) =>
      `chain(id: "${C_CHAIN}") { chainId tokenHolders(contract: "${erc20Contract}", threshold: "0", first: 2) { nodes { address } } }`,
    path: ["chain", "tokenHolders"],
  },
  {
    route: "GET /v2/networks/{network}/metrics/{metric}",
    via: "PrimaryNetwork.stakingMetrics",
    selection: () =>
      `primaryNetwork(network: MAINNET) { network stakingMetrics(metric: VALIDATOR_COUNT, first: 2) { nodes { timestamp } } }`,
    path: ["primaryNetwork", "stakingMetrics"],
  },
  {
    route: "GET /v2/subnet/{subnetId}/metrics/{metric}",
    via: "subnetMetrics",
    selection: ({ l1SubnetId }) =>
      `subnetMetrics(subnetId: "${l1SubnetId}", metric: PER_SUBNET_DAILY_FEES_PAID, first: 2) { nodes { timestamp } }`,
    path: ["subnetMetrics"],
  },
  {
    route: "GET /v2/validators/metrics/{metric}",
    via: "validatorFeeMetrics",
    selection: () => "validatorFeeMetrics(metric: TOTAL_VALIDATOR_FEES_DAILY, first: 2) { nodes { timestamp } }",
    path: ["validatorFeeMetrics"],
  },
  {
    route: "GET /v2/chains/43114/btcb/bridged:getAddresses",
    via: "btcbBridgedAddresses",
    selection: () => `btcbBridgedAddresses(threshold: "0", first: 2) { nodes { address } }`,
    path: ["btcbBridgedAddresses"],
  },
];

/** Mutations: nullable too, so a failing one is null at its own path beside its siblings (test/mutation-results.test.ts). */
export const MUTATION_ROWS: readonly QueryRow[] = [
  {
    route: "POST /v1/operations/transactions:export",
    via: "exportTransactions",
    selection: ({ evmAccount }) =>
      `exportTransactions(input: { evm: { addresses: ["${evmAccount}"], includeChains: ["${C_CHAIN}"] } }) { operationId }`,
    path: ["exportTransactions"],
  },
  {
    route: "POST /v1/signatureAggregator/{network}/aggregateSignatures",
    via: "aggregateWarpSignatures",
    // A P-Chain transaction is the justification of the message it implies; the fault comes first.
    selection: ({ warpTxHash }) =>
      `aggregateWarpSignatures(input: { network: FUJI, justification: "0x${Buffer.from(warpTxHash).toString("hex")}" }) { signedMessage }`,
    path: ["aggregateWarpSignatures"],
  },
];

/** The rows' values, read from the simulator's network (and a Warp transaction registered with it). */
export function valuesOf(harness: Harness): Values {
  const { network } = harness.simulator;
  const cChain = network.transactions(network.chain(C_CHAIN)!);
  const mainnet = network.primaryNetwork("mainnet");
  return {
    cChainTxHash: cChain.blockTransactions(BUSY_BLOCK)!.at(0)!.txHash,
    evmAccount: cChain.catalog.accounts[0]!,
    erc20Contract: cChain.catalog.erc20[0]!.address,
    pChainTxHash: mainnet.transactions("P", {
      addresses: undefined,
      txTypes: undefined,
      startTimestamp: undefined,
      endTimestamp: undefined,
      l1ValidationId: undefined,
      sortOrder: "desc",
    })[0]!.txHash,
    pChainWallet: mainnet.wallets[0]!.address,
    vertexHash: mainnet.verticesAtHeight(3, "asc")[0]!.vertexHash,
    l1SubnetId: mainnet.l1Validators[0]!.subnetId,
    warpTxHash: registerL1ValidatorTx(harness),
  };
}
