import { describe, expect, it } from "vitest";
import type { components } from "../src/upstream/contract/data-api.ts";
import {
  L1ValidatorLookupDocument,
  L1ValidatorsPageDocument,
  PChainTransactionHashesDocument,
  PrimaryNetworkBlockchainDocument,
  PrimaryNetworkChainBlockDocument,
  PrimaryNetworkChainsDocument,
  PrimaryNetworkNodeDocument,
  XChainVertexDocument,
  XChainVerticesDocument,
} from "./generated/graphql.ts";
import { execute, simulatorGet, upstreamCalls, useHarness } from "./support/harness.ts";

type Schemas = components["schemas"];
type Block = Schemas["GetPrimaryNetworkBlockResponse"];
type Vertex = Schemas["XChainVertex"];
type L1Validator = Schemas["L1ValidatorDetailsFull"];

const IDS = {
  MAINNET: {
    p: "11111111111111111111111111111111LpoYY",
    x: "2oYMBNV4eNHyqk2fjjV5nVQLDbtmNJzq5s3qs3Lo6ftnC6FByM",
    c: "2q9e4r6Mu3U68nU1fYjgbR6JvwrRx36CohpAX5UQxse55x1Q5",
  },
  FUJI: {
    p: "11111111111111111111111111111111LpoYY",
    x: "2JVSBoinj9C2J33VntvzYtVJNZdN2NKiwwKjcumHUWEb5DbBrm",
    c: "yH8D7ThNJkxmtkuv2jgBa4P1Rn3Qpr4pPr7QYNfcdoS6k6HWp",
  },
} as const;
const BLOCK_ROUTE = "GET /v1/networks/{network}/blockchains/{blockchainId}/blocks/{blockId}";
const TX_ROUTE = "GET /v1/networks/{network}/blockchains/{blockchainId}/transactions/{txHash}";
const VERTEX_ROUTE = "GET /v1/networks/{network}/blockchains/{blockchainId}/vertices/{vertexHash}";
const VERTICES_ROUTE = "GET /v1/networks/{network}/blockchains/{blockchainId}/vertices:listByHeight";
const L1_ROUTE = "GET /v1/networks/{network}/l1Validators";

const harness = useHarness();

const globalId = (typename: string, key: string) => Buffer.from(`${typename}:${key}`).toString("base64");

function expectedBlock(block: Block, network: "mainnet" | "fuji", chain: "p" | "x" | "c") {
  const blockchainId = IDS[network === "mainnet" ? "MAINNET" : "FUJI"][chain];
  const details = block.proposerDetails;
  return {
    id: globalId("PrimaryNetworkBlock", `${network}:${blockchainId}:${block.blockHash}`),
    network: network.toUpperCase(),
    blockchainId,
    chainName: `${chain.toUpperCase()}_CHAIN`,
    blockNumber: block.blockNumber,
    blockHash: block.blockHash,
    parentHash: block.parentHash,
    blockTimestamp: block.blockTimestamp,
    blockTime: new Date(block.blockTimestamp * 1000).toISOString(),
    blockType: block.blockType,
    txCount: block.txCount,
    transactionHashes: block.transactions,
    blockSizeBytes: block.blockSizeBytes,
    l1ValidatorsAccruedFees: block.l1ValidatorsAccruedFees === undefined ? null : String(block.l1ValidatorsAccruedFees),
    activeL1Validators: block.activeL1Validators ?? null,
    currentSupply: block.currentSupply ?? null,
    proposerDetails: details
      ? {
          proposerId: details.proposerId ?? null,
          proposerParentId: details.proposerParentId ?? null,
          proposerNodeId: details.proposerNodeId ?? null,
          proposerPChainHeight: details.proposerPChainHeight === undefined ? null : String(details.proposerPChainHeight),
          proposerTimestamp: details.proposerTimestamp ?? null,
        }
      : null,
  };
}

function expectedVertex(vertex: Vertex) {
  return {
    id: globalId("XChainVertex", `mainnet:${vertex.vertexHash}`),
    network: "MAINNET",
    vertexHash: vertex.vertexHash,
    parentHashes: vertex.parentHashes,
    vertexHeight: String(vertex.vertexHeight),
    vertexIndex: vertex.vertexIndex,
    vertexTimestamp: vertex.vertexTimestamp,
    txCount: vertex.txCount,
    transactionHashes: vertex.transactions,
    vertexSizeBytes: vertex.vertexSizeBytes,
  };
}

function expectedValidator(validator: L1Validator) {
  return {
    id: globalId("L1Validator", `mainnet:${validator.validationId}`),
    network: "MAINNET",
    ...validator,
    weight: String(validator.weight),
    remainingBalance: String(validator.remainingBalance),
  };
}

describe("primaryNetwork", () => {
  it("has the three chains of each network under their real ids, TESTNET being FUJI", async () => {
    for (const network of ["MAINNET", "FUJI", "TESTNET"] as const) {
      const result = await execute(harness, PrimaryNetworkChainsDocument, { network });
      expect(result.body.errors).toBeUndefined();
      const ids = IDS[network === "MAINNET" ? "MAINNET" : "FUJI"];
      const named = network === "MAINNET" ? "MAINNET" : "FUJI";
      expect(result.body.data!.primaryNetwork).toEqual({
        network: named,
        pChain: { __typename: "PChain", network: named, blockchainId: ids.p, chainName: "P_CHAIN" },
        xChain: { __typename: "XChain", network: named, blockchainId: ids.x, chainName: "X_CHAIN" },
        cChain: {
          __typename: "CChain",
          network: named,
          blockchainId: ids.c,
          chainName: "C_CHAIN",
          evmChain: { chainId: named === "MAINNET" ? "43114" : "43113", blockchainId: ids.c },
        },
      });
    }
  });

  it("finds a chain by any of the five ids of the network, or by its alias", async () => {
    for (const network of ["MAINNET", "FUJI"] as const) {
      for (const [alias, chain] of [
        ["p-chain", "p"],
        ["x-chain", "x"],
        ["c-chain", "c"],
      ] as const) {
        for (const id of [alias, IDS[network][chain]]) {
          const result = await execute(harness, PrimaryNetworkBlockchainDocument, { network, id });
          expect(result.body.data!.primaryNetwork.blockchain).toEqual({
            __typename: `${chain.toUpperCase()}Chain`,
            network,
            blockchainId: IDS[network][chain],
            chainName: `${chain.toUpperCase()}_CHAIN`,
          });
        }
      }
    }
    expect(upstreamCalls(harness)).toEqual({});
  });

  it.each([
    ["the other network's X-Chain", IDS.FUJI.x],
    ["an EVM chain id", "43114"],
    ["an unknown alias", "d-chain"],
  ])("refuses %s as a blockchain id", async (_, id) => {
    const result = await execute(harness, PrimaryNetworkBlockchainDocument, { network: "MAINNET", id });
    expect(result.body.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "id" });
    expect(result.body.data!.primaryNetwork.blockchain).toBeNull();
  });

  it("answers FUJI's data for TESTNET", async () => {
    const fuji = await execute(harness, PChainTransactionHashesDocument, { network: "FUJI", first: 5 });
    const testnet = await execute(harness, PChainTransactionHashesDocument, { network: "TESTNET", first: 5 });
    expect(testnet.body.data).toEqual(fuji.body.data);
    const reference = await simulatorGet<{ transactions: { txHash: string }[] }>(
      harness,
      "data",
      "/v1/networks/fuji/blockchains/p-chain/transactions?pageSize=5",
    );
    expect(fuji.body.data!.primaryNetwork.pChain.transactions!.nodes.map((node) => node.txHash)).toEqual(
      reference.transactions.map((tx) => tx.txHash),
    );
    expect(
      harness.simulator
        .requests()
        .filter((request) => request.path.includes("/transactions"))
        .every((request) => request.path.startsWith("/v1/networks/fuji/")),
    ).toBe(true);
  });
});

describe("blocks", () => {
  it("reads a block of each chain by height and by id, with every field, its parent and transactions", async () => {
    for (const network of ["mainnet", "fuji"] as const) {
      for (const [alias, chain] of [
        ["p-chain", "p"],
        ["x-chain", "x"],
        ["c-chain", "c"],
      ] as const) {
        const height = chain === "c" ? "4990" : "30";
        const reference = await simulatorGet<Block>(
          harness,
          "data",
          `/v1/networks/${network}/blockchains/${alias}/blocks/${height}`,
        );
        const parent = await simulatorGet<Block>(
          harness,
          "data",
          `/v1/networks/${network}/blockchains/${alias}/blocks/${Number(height) - 1}`,
        );
        harness.simulator.resetCounters();
        harness.gateway.cache.clear();
        const graphNetwork = network === "mainnet" ? "MAINNET" : "FUJI";
        const byHeight = await execute(harness, PrimaryNetworkChainBlockDocument, {
          network: graphNetwork,
          chain: alias,
          blockId: height,
        });
        expect(byHeight.body.errors).toBeUndefined();
        const { parent: parentLink, transactions, ...fields } = byHeight.body.data!.primaryNetwork.blockchain!.block!;
        expect(fields).toEqual(expectedBlock(reference, network, chain));
        expect(parentLink).toEqual({ blockNumber: parent.blockNumber, blockHash: reference.parentHash });
        expect(transactions!.map((tx) => tx.txHash)).toEqual(reference.transactions);
        expect(upstreamCalls(harness)).toEqual({
          [BLOCK_ROUTE]: 2,
          ...(reference.transactions.length > 0 ? { [TX_ROUTE]: reference.transactions.length } : {}),
        });

        const byId = await execute(harness, PrimaryNetworkChainBlockDocument, {
          network: graphNetwork,
          chain: IDS[graphNetwork][chain],
          blockId: reference.blockHash,
        });
        expect(byId.body.data!.primaryNetwork.blockchain!.block!.blockNumber).toBe(height);
      }
    }
  });

  it("fills the P-Chain's own block fields and refetches a block by its node id, from cache", async () => {
    const reference = await simulatorGet<Block>(harness, "data", "/v1/networks/mainnet/blockchains/p-chain/blocks/100");
    expect(reference.proposerDetails?.proposerNodeId).toMatch(/^NodeID-/);
    harness.simulator.resetCounters();
    const result = await execute(harness, PrimaryNetworkChainBlockDocument, {
      network: "MAINNET",
      chain: "p-chain",
      blockId: "100",
    });
    const block = result.body.data!.primaryNetwork.blockchain!.block!;
    expect(block.currentSupply).toBe(reference.currentSupply);
    expect(block.proposerDetails!.proposerPChainHeight).toBe(String(reference.proposerDetails!.proposerPChainHeight));
    harness.simulator.resetCounters();
    const node = await execute(harness, PrimaryNetworkNodeDocument, { id: block.id });
    expect(node.body.data!.node).toEqual({
      __typename: "PrimaryNetworkBlock",
      id: block.id,
      blockNumber: "100",
      blockHash: reference.blockHash,
      blockchainId: IDS.MAINNET.p,
    });
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("answers null for a block that does not exist, and refuses a malformed id before any call", async () => {
    const missing = await execute(harness, PrimaryNetworkChainBlockDocument, {
      network: "MAINNET",
      chain: "p-chain",
      blockId: "99999999",
    });
    expect(missing.body.errors).toBeUndefined();
    expect(missing.body.data!.primaryNetwork.blockchain!.block).toBeNull();
    harness.simulator.resetCounters();
    for (const [chain, blockId] of [
      ["p-chain", `0x${"ab".repeat(32)}`],
      ["c-chain", "2wx1bZz5oNAzRprQi3bxMVv2PaajoqTWE4s3uibNb9yFH5xW4v"],
      ["x-chain", "../../v1/chains"],
    ]) {
      const result = await execute(harness, PrimaryNetworkChainBlockDocument, {
        network: "MAINNET",
        chain: chain!,
        blockId: blockId!,
      });
      expect(result.body.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "id" });
    }
    expect(upstreamCalls(harness)).toEqual({});
  });
});

describe("X-Chain vertices", () => {
  it("lists the vertices at a height with every field, and loads their parents once each", async () => {
    const height = 6;
    const reference = await simulatorGet<Schemas["ListXChainVerticesResponse"]>(
      harness,
      "data",
      `/v1/networks/mainnet/blockchains/x-chain/vertices:listByHeight?vertexHeight=${height}`,
    );
    const parents = new Set(reference.vertices.flatMap((vertex) => vertex.parentHashes));
    const transactions = new Set(reference.vertices.flatMap((vertex) => vertex.transactions));
    harness.simulator.resetCounters();
    const result = await execute(harness, XChainVerticesDocument, { network: "MAINNET", height: String(height) });
    expect(result.body.errors).toBeUndefined();
    const connection = result.body.data!.primaryNetwork.xChain.verticesAtHeight!;
    expect(connection.chainInfo).toEqual({ chainName: "X_CHAIN", network: "MAINNET" });
    expect(connection.nodes.map(({ parents: _, transactions: __, ...fields }) => fields)).toEqual(
      reference.vertices.map(expectedVertex),
    );
    for (const node of connection.nodes) {
      expect(node.parents!.map((parent) => parent.vertexHash)).toEqual(node.parentHashes);
      expect(node.parents!.every((parent) => parent.vertexHeight === String(height - 1))).toBe(true);
      for (const tx of node.transactions!) {
        expect(tx).toMatchObject({ __typename: "XChainTransaction", chainFormat: "NON_LINEAR" });
        expect(tx.__typename === "XChainTransaction" && tx.vertices![0]!.vertex!.vertexHash).toBe(node.vertexHash);
      }
    }
    // The page primes the vertex loader: a transaction's vertex costs nothing, each parent one call.
    expect(upstreamCalls(harness)).toEqual({ [VERTICES_ROUTE]: 1, [VERTEX_ROUTE]: parents.size, [TX_ROUTE]: transactions.size });
  });

  it("reads one vertex by hash, then from cache, and refetches it by node id", async () => {
    const { vertices } = await simulatorGet<Schemas["ListXChainVerticesResponse"]>(
      harness,
      "data",
      "/v1/networks/mainnet/blockchains/x-chain/vertices:listByHeight?vertexHeight=3",
    );
    const vertex = vertices[0]!;
    harness.simulator.resetCounters();
    const result = await execute(harness, XChainVertexDocument, { network: "MAINNET", hash: vertex.vertexHash });
    const { parents, ...fields } = result.body.data!.primaryNetwork.xChain.vertex!;
    expect(fields).toEqual(expectedVertex(vertex));
    expect(parents!.map((parent) => parent.vertexHash)).toEqual(vertex.parentHashes);
    expect(upstreamCalls(harness)).toEqual({ [VERTEX_ROUTE]: 1 + vertex.parentHashes.length });
    harness.simulator.resetCounters();
    const node = await execute(harness, PrimaryNetworkNodeDocument, { id: fields.id });
    expect(node.body.data!.node).toEqual({
      __typename: "XChainVertex",
      id: fields.id,
      vertexHash: vertex.vertexHash,
      vertexHeight: "3",
    });
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("answers null for an unknown vertex and refuses a negative height or a malformed hash before any call", async () => {
    const missing = await execute(harness, XChainVertexDocument, {
      network: "MAINNET",
      hash: "2wx1bZz5oNAzRprQi3bxMVv2PaajoqTWE4s3uibNb9yFH5xW4v",
    });
    expect(missing.body.errors).toBeUndefined();
    expect(missing.body.data!.primaryNetwork.xChain.vertex).toBeNull();
    harness.simulator.resetCounters();
    const negative = await execute(harness, XChainVerticesDocument, { network: "MAINNET", height: "-1" });
    expect(negative.body.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "height" });
    const tooMany = await execute(
      harness,
      "{ primaryNetwork(network: MAINNET) { xChain { verticesAtHeight(height: 1, first: 101) { nodes { vertexHash } } } } }",
    );
    expect(tooMany.body.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "first", max: 100 });
    const malformed = await execute(harness, XChainVertexDocument, { network: "MAINNET", hash: "0x12" });
    expect(malformed.body.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "hash" });
    expect(upstreamCalls(harness)).toEqual({});
  });
});

describe("L1 validators", () => {
  it("lists every field, with the P-Chain height the list is as of, active ones unless asked", async () => {
    const active = await simulatorGet<Schemas["ListL1ValidatorsResponse"]>(
      harness,
      "data",
      "/v1/networks/mainnet/l1Validators?pageSize=100",
    );
    const all = await simulatorGet<Schemas["ListL1ValidatorsResponse"]>(
      harness,
      "data",
      "/v1/networks/mainnet/l1Validators?pageSize=100&includeInactiveL1Validators=true",
    );
    harness.simulator.resetCounters();
    const result = await execute(harness, L1ValidatorsPageDocument, { network: "MAINNET", first: 100 });
    expect(result.body.errors).toBeUndefined();
    const connection = result.body.data!.primaryNetwork.l1Validators!;
    expect(connection.blockHeight).toBe(active.blockHeight);
    expect(connection.edges.map((edge) => edge.node)).toEqual(active.validators.map(expectedValidator));
    const everyOne = await execute(harness, L1ValidatorsPageDocument, { network: "MAINNET", first: 100, includeInactive: true });
    expect(everyOne.body.data!.primaryNetwork.l1Validators!.edges.map((edge) => edge.node)).toEqual(
      all.validators.map(expectedValidator),
    );
    expect(all.validators.length).toBeGreaterThan(active.validators.length);
    expect(upstreamCalls(harness)).toEqual({ [L1_ROUTE]: 2 });
  });

  it("filters by node, L1 and validation id, pages forward, and refetches a validator by node id", async () => {
    const { validators } = await simulatorGet<Schemas["ListL1ValidatorsResponse"]>(
      harness,
      "data",
      "/v1/networks/mainnet/l1Validators?pageSize=100&includeInactiveL1Validators=true",
    );
    const one = validators.find((validator) => validator.remainingBalance === 0)!;
    const byNode = await execute(harness, L1ValidatorsPageDocument, {
      network: "MAINNET",
      nodeId: one.nodeId,
      includeInactive: true,
    });
    expect(byNode.body.data!.primaryNetwork.l1Validators!.edges.map((edge) => edge.node.validationId)).toEqual([
      one.validationId,
    ]);
    const bySubnet = await execute(harness, L1ValidatorsPageDocument, {
      network: "MAINNET",
      subnetId: one.subnetId,
      includeInactive: true,
      first: 100,
    });
    expect(bySubnet.body.data!.primaryNetwork.l1Validators!.edges.map((edge) => edge.node.validationId)).toEqual(
      validators.filter((validator) => validator.subnetId === one.subnetId).map((validator) => validator.validationId),
    );
    const first = await execute(harness, L1ValidatorsPageDocument, { network: "MAINNET", first: 2, includeInactive: true });
    const rest = await execute(harness, L1ValidatorsPageDocument, {
      network: "MAINNET",
      first: 3,
      includeInactive: true,
      after: first.body.data!.primaryNetwork.l1Validators!.pageInfo.endCursor,
    });
    expect(rest.body.data!.primaryNetwork.l1Validators!.edges.map((edge) => edge.node.validationId)).toEqual(
      validators.slice(2, 5).map((validator) => validator.validationId),
    );

    harness.simulator.resetCounters();
    const id = globalId("L1Validator", `mainnet:${one.validationId}`);
    const node = await execute(harness, PrimaryNetworkNodeDocument, { id });
    expect(node.body.data!.node).toEqual({ __typename: "L1Validator", id, validationId: one.validationId, nodeId: one.nodeId });
    expect(harness.simulator.requests().at(-1)?.query).toMatchObject({
      l1ValidationId: one.validationId,
      includeInactiveL1Validators: "true",
    });
    expect(upstreamCalls(harness)).toEqual({ [L1_ROUTE]: 1 });
  });

  it.each([
    ["a node id without its prefix", { nodeId: "HCEdvhkVysPjg5JzEjovS7y2S9mxGy4LM" }, "nodeId"],
    ["a node id in hex", { nodeId: "NodeID-0x1234" }, "nodeId"],
    ["a malformed subnet id", { subnetId: "subnet" }, "subnetId"],
    ["a page over 100", { first: 101 }, "first"],
  ])("refuses %s before any upstream call", async (_, variables, argument) => {
    const result = await execute(harness, L1ValidatorsPageDocument, { network: "MAINNET", ...variables });
    expect(result.body.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument });
    expect(result.body.data!.primaryNetwork.l1Validators).toBeNull();
    expect(upstreamCalls(harness)).toEqual({});
  });
});

describe("ids in cb58", () => {
  it("accepts the primary network's own subnet id, whose cb58 is mostly leading ones", async () => {
    const result = await execute(harness, L1ValidatorsPageDocument, {
      network: "MAINNET",
      subnetId: "11111111111111111111111111111111LpoYY",
    });
    expect(result.body.errors).toBeUndefined();
    expect(upstreamCalls(harness)).toEqual({ [L1_ROUTE]: 1 });
  });
});

describe("one L1 validator, and its links", () => {
  async function everyValidator(): Promise<L1Validator[]> {
    return (
      await simulatorGet<Schemas["ListL1ValidatorsResponse"]>(
        harness,
        "data",
        "/v1/networks/mainnet/l1Validators?pageSize=100&includeInactiveL1Validators=true",
      )
    ).validators;
  }

  it("finds a validator by validation id (cb58 or hex), active or not, in one call, with its L1's validators and its transactions", async () => {
    const validators = await everyValidator();
    const inactive = validators.find((validator) => validator.remainingBalance === 0)!;
    const peers = validators.filter((validator) => validator.subnetId === inactive.subnetId);
    const transactions = await simulatorGet<{ transactions: { txHash: string }[] }>(
      harness,
      "data",
      `/v1/networks/mainnet/blockchains/p-chain/transactions?l1ValidationId=${inactive.validationId}&pageSize=100`,
    );
    expect(transactions.transactions.length).toBeGreaterThan(1);
    harness.simulator.resetCounters();

    const result = await execute(harness, L1ValidatorLookupDocument, {
      network: "MAINNET",
      validationId: inactive.validationId,
      first: 100,
      includeInactive: true,
    });
    expect(result.body.errors).toBeUndefined();
    const { subnetValidators, transactions: links, ...fields } = result.body.data!.primaryNetwork.l1Validator!;
    expect(fields).toEqual(expectedValidator(inactive));
    expect(subnetValidators!.nodes.map((node) => node.validationId)).toEqual(peers.map((peer) => peer.validationId));
    expect(subnetValidators!.nodes.every((node) => node.subnetId === inactive.subnetId)).toBe(true);
    expect(links!.nodes.map((node) => node.txHash)).toEqual(transactions.transactions.map((tx) => tx.txHash));
    expect(
      links!.nodes.every((node) => node.l1ValidatorDetails!.some((details) => details.validationId === inactive.validationId)),
    ).toBe(true);
    expect(upstreamCalls(harness)).toEqual({
      [L1_ROUTE]: 2,
      "GET /v1/networks/{network}/blockchains/{blockchainId}/transactions": 1,
    });
    const queries = harness.simulator.requests().map((request) => request.query);
    expect(queries).toContainEqual(
      expect.objectContaining({ l1ValidationId: inactive.validationId, includeInactiveL1Validators: "true" }),
    );
    expect(queries).toContainEqual(expect.objectContaining({ subnetId: inactive.subnetId, includeInactiveL1Validators: "true" }));
    expect(queries).toContainEqual(expect.objectContaining({ l1ValidationId: inactive.validationId }));

    const byHex = await execute(harness, L1ValidatorLookupDocument, {
      network: "MAINNET",
      validationId: inactive.validationIdHex,
      first: 0 + 1,
    });
    expect(byHex.body.data!.primaryNetwork.l1Validator!.validationId).toBe(inactive.validationId);
  });

  it("finds a node's validation by node id: its active one, the latest created, else its latest", async () => {
    const validators = await everyValidator();
    const byNode = new Map<string, L1Validator[]>();
    for (const validator of validators) byNode.set(validator.nodeId, [...(byNode.get(validator.nodeId) ?? []), validator]);
    const latest = (list: L1Validator[]) =>
      list.reduce((best, one) => (one.creationTimestamp > best.creationTimestamp ? one : best));
    const expected = (list: L1Validator[]) => {
      const active = list.filter((validator) => validator.remainingBalance > 0);
      return latest(active.length > 0 ? active : list);
    };
    const nodes = [...byNode.values()];
    const onlyInactive = nodes.find((list) => list.every((validator) => validator.remainingBalance === 0))!;
    const withActive = nodes.find((list) => list.some((validator) => validator.remainingBalance > 0))!;
    for (const list of [onlyInactive, withActive]) {
      harness.simulator.resetCounters();
      const result = await execute(harness, L1ValidatorLookupDocument, { network: "MAINNET", nodeId: list[0]!.nodeId, first: 1 });
      expect(result.body.errors).toBeUndefined();
      expect(result.body.data!.primaryNetwork.l1Validator!.validationId).toBe(expected(list).validationId);
      expect(harness.simulator.requests()[0]!.query).toMatchObject({
        nodeId: list[0]!.nodeId,
        includeInactiveL1Validators: "true",
        pageSize: "100",
      });
    }
    const unknown = await execute(harness, L1ValidatorLookupDocument, {
      network: "MAINNET",
      nodeId: "NodeID-111111111111111111116DBWJs",
    });
    expect(unknown.body.errors).toBeUndefined();
    expect(unknown.body.data!.primaryNetwork.l1Validator).toBeNull();
  });

  it.each([
    [
      "both ids",
      { validationId: "11111111111111111111111111111111LpoYY", nodeId: "NodeID-111111111111111111116DBWJs" },
      "nodeId",
    ],
    ["neither id", {}, "validationId"],
    ["a malformed validation id", { validationId: "0x12" }, "validationId"],
    ["a malformed node id", { nodeId: "NodeID-0x12" }, "nodeId"],
  ])("refuses %s before any upstream call, on that field alone", async (_, variables, argument) => {
    const result = await execute(
      harness,
      `query ($validationId: String, $nodeId: String) { primaryNetwork(network: MAINNET) { network l1Validator(validationId: $validationId, nodeId: $nodeId) { nodeId } } }`,
      variables,
    );
    expect(result.body.errors?.[0]).toMatchObject({
      path: ["primaryNetwork", "l1Validator"],
      extensions: { code: "BAD_USER_INPUT", argument },
    });
    expect(result.body.data).toEqual({ primaryNetwork: { network: "MAINNET", l1Validator: null } });
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("refuses a malformed L1Validator node id as BAD_USER_INPUT before any call", async () => {
    for (const key of ["mainnet:not-an-id", "devnet:11111111111111111111111111111111LpoYY", "mainnet"]) {
      const result = await execute(harness, PrimaryNetworkNodeDocument, { id: globalId("L1Validator", key) });
      expect(result.body.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT" });
      expect(result.body.data!.node).toBeNull();
    }
    expect(upstreamCalls(harness)).toEqual({});
  });
});

describe("vertex heights", () => {
  it("are BigInt, and the height argument is refused outside 0 to 2^53-1 before any call", async () => {
    for (const height of ["-1", "9007199254740992", "123456789012345678901234567890"]) {
      const result = await execute(harness, XChainVerticesDocument, { network: "MAINNET", height });
      expect(result.body.errors?.[0]?.extensions).toMatchObject({
        code: "BAD_USER_INPUT",
        argument: "height",
        min: 0,
        max: Number.MAX_SAFE_INTEGER,
      });
    }
    expect(upstreamCalls(harness)).toEqual({});
    const inline = await execute(
      harness,
      `{ primaryNetwork(network: MAINNET) { xChain { verticesAtHeight(height: 3, first: 1) { nodes { vertexHeight } } } } }`,
    );
    expect(inline.body.data).toEqual({ primaryNetwork: { xChain: { verticesAtHeight: { nodes: [{ vertexHeight: "3" }] } } } });
  });
});
