import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { createLogger } from "../src/telemetry/logger.ts";
import { decodeCb58, encodeCb58 } from "../src/upstream/cb58.ts";
import { createGateway } from "../src/gateway.ts";
import { AggregateWarpSignaturesDocument, WarpSignatureAgainstDocument, WarpSignatureDocument } from "./generated/graphql.ts";
import { execute, upstreamCalls, useHarness } from "./support/harness.ts";
import { l1Transactions as sampleL1Transactions } from "./support/sample-network.ts";

const POST_ROUTE = "POST /v1/signatureAggregator/{network}/aggregateSignatures";
const GET_ROUTE = "GET /v1/signatureAggregator/{network}/aggregateSignatures/{txHash}";
const L1_ROUTE = "GET /v1/networks/{network}/l1Validators";
const TX_ROUTE = "GET /v1/networks/{network}/blockchains/{blockchainId}/transactions/{txHash}";
const P_CHAIN_ID = "11111111111111111111111111111111LpoYY";

const harness = useHarness();

beforeEach(() => {
  harness.simulator.setKnobs({ errorRate: 0, errorRoutes: [] });
});

const u32 = (value: number) => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value);
  return bytes;
};

/** An unsigned Warp message whose payload is a hash payload. */
function unsignedMessage(networkId: number, sourceChainId: Buffer, hash: Buffer): Buffer {
  const payload = Buffer.concat([Buffer.alloc(2), u32(0), hash]);
  return Buffer.concat([Buffer.alloc(2), u32(networkId), sourceChainId, u32(payload.length), payload]);
}

/** A well-formed unsigned Warp message (hex, no 0x) for the cases that test other input fields. */
const MESSAGE = unsignedMessage(5, Buffer.alloc(32), Buffer.alloc(32)).toString("hex");

const l1Transactions = (network: "mainnet" | "fuji", txType: string) => sampleL1Transactions(harness.simulator, network, txType);

/** The L1 of a network: its subnet, the chain of its validator manager, and its validators. */
function l1(network: "mainnet" | "fuji") {
  const conversion = l1Transactions(network, "ConvertSubnetToL1Tx")[0]!;
  const subnetId = conversion.fields.subnetId!;
  const validators = harness.simulator.network
    .primaryNetwork(network)
    .l1Validators.filter((validator) => validator.subnetId === subnetId);
  const chainId = conversion.fields.l1ValidatorManagerDetails!.blockchainId;
  const totalWeight = validators.reduce((sum, validator) => sum + validator.weight, 0);
  const active = validators.filter((validator) => validator.remainingBalance > 0);
  return { subnetId, chainId, validators, active, totalWeight };
}

/** The 32 bytes of a cb58 id. */
const idBytes = (id: string) => decodeCb58(id)!;

describe("aggregateWarpSignatures", () => {
  it("has the L1's validators sign up to quorum plus buffer, decodes the message and verifies the signature", async () => {
    const { subnetId, chainId, validators, active, totalWeight } = l1("fuji");
    const hash = Buffer.alloc(32, 0xab);
    const message = unsignedMessage(5, idBytes(chainId), hash);
    const result = await execute(harness, AggregateWarpSignaturesDocument, {
      input: {
        network: "FUJI",
        message: `0x${message.toString("hex")}`,
        signingSubnetId: subnetId,
        quorumPercentage: 60,
        quorumPercentageBuffer: 25,
      },
    });
    expect(result.body.errors).toBeUndefined();
    const signed = result.body.data!.aggregateWarpSignatures!;
    expect(signed.network).toBe("FUJI");
    expect(signed.signedMessage).toMatch(/^[0-9a-f]+$/);
    expect(signed.signedMessage.startsWith(message.toString("hex"))).toBe(true);
    const decoded = signed.decoded!;
    expect(decoded).toMatchObject({
      networkId: 5,
      sourceChainId: chainId,
      unsignedMessage: `0x${message.toString("hex")}`,
      payload: { content: { __typename: "WarpHashPayload", hash: `0x${hash.toString("hex")}` } },
    });
    expect(decoded.signature).toMatch(/^0x[0-9a-f]{192}$/);

    const verification = decoded.verification!;
    expect(verification).toMatchObject({
      signingSubnetId: subnetId,
      validatorCount: active.length,
      totalWeight: String(totalWeight),
      valid: true,
      problem: null,
      meetsQuorum: true,
      strictQuorum: false,
    });
    expect(Number(verification.signedWeight) * 100).toBeGreaterThanOrEqual(85 * totalWeight);
    expect(verification.signers.map((signer) => signer.index)).toEqual(decoded.signers);
    const byNode = new Map(validators.map((validator) => [validator.nodeId, validator]));
    for (const signer of verification.signers) {
      const validator = byNode.get(signer.nodeIds[0]!)!;
      expect(signer).toMatchObject({
        weight: String(validator.weight),
        publicKey: `0x${Buffer.from(validator.bls.publicKey).toString("hex")}`,
      });
      expect(signer.weightShare).toBeCloseTo(validator.weight / totalWeight, 6);
    }
    expect(upstreamCalls(harness)).toEqual({ [POST_ROUTE]: 1, [L1_ROUTE]: 1 });
  });

  it("signs for the source chain's subnet by default, and checks against a subnet named on the field", async () => {
    const { subnetId, chainId } = l1("fuji");
    const message = unsignedMessage(5, idBytes(chainId), Buffer.alloc(32, 1)).toString("hex");
    const result = await execute(
      harness,
      `mutation ($message: String!, $subnet: String) {
        aggregateWarpSignatures(input: { network: TESTNET, message: $message }) {
          network
          decoded { signers verification(signingSubnetId: $subnet) { signingSubnetId valid } }
        }
      }`,
      { message, subnet: `0x${idBytes(subnetId).toString("hex")}` },
    );
    expect(result.body.errors).toBeUndefined();
    expect(result.body.data).toMatchObject({
      aggregateWarpSignatures: { network: "FUJI", decoded: { verification: { signingSubnetId: subnetId, valid: true } } },
    });
    expect(harness.simulator.requests().find((request) => request.route === POST_ROUTE)?.path).toBe(
      "/v1/signatureAggregator/fuji/aggregateSignatures",
    );
  });

  it("fails like the aggregator when the quorum cannot be reached, and succeeds within the weight that can sign", async () => {
    // Half of the sample mainnet L1's weight is inactive: 67 % cannot be reached.
    const { subnetId, chainId, active, totalWeight } = l1("mainnet");
    const activeShare = Math.floor((100 * active.reduce((sum, validator) => sum + validator.weight, 0)) / totalWeight);
    expect(activeShare).toBeLessThan(67);
    const message = `0x${unsignedMessage(1, idBytes(chainId), Buffer.alloc(32, 2)).toString("hex")}`;
    const failed = await execute(harness, AggregateWarpSignaturesDocument, {
      input: { network: "MAINNET", message, signingSubnetId: subnetId },
    });
    expect(failed.body.data).toEqual({ aggregateWarpSignatures: null });
    expect(failed.body.errors?.[0]?.extensions).toMatchObject({
      code: "UPSTREAM_ERROR",
      upstream: { status: 500, message: "failed to connect to a threshold of stake" },
    });
    const reachable = await execute(harness, AggregateWarpSignaturesDocument, {
      input: { network: "MAINNET", message, signingSubnetId: subnetId, quorumPercentage: activeShare },
    });
    expect(reachable.body.errors).toBeUndefined();
    expect(reachable.body.data!.aggregateWarpSignatures!.decoded!.verification).toMatchObject({
      valid: true,
      meetsQuorum: false,
    });

    const otherNetwork = await execute(harness, AggregateWarpSignaturesDocument, {
      input: {
        network: "FUJI",
        message: `0x${unsignedMessage(1, idBytes(l1("fuji").chainId), Buffer.alloc(32)).toString("hex")}`,
      },
    });
    expect(otherNetwork.body.errors?.[0]?.extensions).toMatchObject({
      upstream: { status: 500, message: "failed to collect a threshold of signatures" },
    });
  });

  it.each([
    ["neither message nor justification", {}, "input.message"],
    ["a message that is not hex", { message: "0xzz" }, "input.message"],
    ["a message of an odd number of digits", { message: "0x123" }, "input.message"],
    ["an empty message", { message: "0x" }, "input.message"],
    ["hex that is no unsigned Warp message", { message: "00" }, "input.message"],
    ["a Warp message with bytes after its end", { message: `${MESSAGE}00` }, "input.message"],
    ["a justification that is not hex", { justification: "hello" }, "input.justification"],
    ["a quorum over 100", { message: MESSAGE, quorumPercentage: 101 }, "input.quorumPercentage"],
    ["a negative quorum", { message: MESSAGE, quorumPercentage: -1 }, "input.quorumPercentage"],
    ["a buffer over 100", { message: MESSAGE, quorumPercentage: 0, quorumPercentageBuffer: 101 }, "input.quorumPercentageBuffer"],
    ["a negative buffer", { message: MESSAGE, quorumPercentageBuffer: -5 }, "input.quorumPercentageBuffer"],
    ["quorum plus buffer over 100 (67 + 34)", { message: MESSAGE, quorumPercentageBuffer: 34 }, "input.quorumPercentageBuffer"],
    ["a malformed signing subnet", { message: MESSAGE, signingSubnetId: "subnet-1" }, "input.signingSubnetId"],
    [
      "a cb58 subnet with a bad checksum",
      { message: MESSAGE, signingSubnetId: "11111111111111111111111111111111LpoYZ" },
      "input.signingSubnetId",
    ],
    ["a negative P-Chain height", { message: MESSAGE, pChainHeight: "-1" }, "input.pChainHeight"],
  ])("refuses %s before any upstream call", async (_, fields, argument) => {
    const result = await execute(harness, AggregateWarpSignaturesDocument, { input: { network: "FUJI", ...fields } });
    expect(result.body.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument });
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("accepts the limits: quorum plus buffer of exactly 100, a justification alone, hex without 0x", async () => {
    harness.simulator.setKnobs({ errorRate: 1, errorStatus: 418, errorRoutes: [POST_ROUTE] });
    for (const fields of [
      { message: MESSAGE, quorumPercentage: 40, quorumPercentageBuffer: 60 },
      { justification: "0x0001abcd" },
      { message: MESSAGE.toUpperCase(), pChainHeight: "0" },
    ]) {
      const result = await execute(harness, AggregateWarpSignaturesDocument, { input: { network: "FUJI", ...fields } });
      expect(result.body.errors?.[0]?.extensions).toMatchObject({ upstream: { status: 418 } });
    }
    expect(upstreamCalls(harness)).toEqual({ [POST_ROUTE]: 3 });
  });

  it("sends the POST once on a 503: never retried", async () => {
    harness.simulator.setKnobs({ errorRate: 1, errorStatus: 503, errorRoutes: [POST_ROUTE] });
    const result = await execute(harness, AggregateWarpSignaturesDocument, { input: { network: "FUJI", message: MESSAGE } });
    expect(result.body.errors?.[0]?.extensions).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", upstream: { status: 503 } });
    expect(upstreamCalls(harness)).toEqual({ [POST_ROUTE]: 1 });
  });
});

describe("warpSignature", () => {
  it.each([
    ["ConvertSubnetToL1Tx", "SubnetToL1ConversionMessage"],
    ["RegisterL1ValidatorTx", "L1ValidatorRegistrationMessage"],
    ["SetL1ValidatorWeightTx", "L1ValidatorWeightMessage"],
  ])("signs the message a %s implies, finds its L1 from the transaction and verifies", async (txType, typename) => {
    const { subnetId } = l1("fuji");
    const tx = l1Transactions("fuji", txType)[0]!;
    const result = await execute(harness, WarpSignatureDocument, { network: "FUJI", txHash: tx.txHash });
    expect(result.body.errors).toBeUndefined();
    const decoded = result.body.data!.warpSignature!.decoded!;
    expect(decoded.sourceChainId).toBe(P_CHAIN_ID);
    const content = decoded.payload.content!;
    expect(content).toMatchObject({
      __typename: "WarpAddressedCall",
      sourceAddress: "0x",
      platformMessage: { __typename: typename },
    });
    const validator = tx.l1Changes[0]!.validator;
    if (typename === "L1ValidatorRegistrationMessage") {
      expect(content).toMatchObject({ platformMessage: { validationId: validator.validationId, registered: true } });
    }
    if (typename === "L1ValidatorWeightMessage") {
      expect(content).toMatchObject({
        platformMessage: { validationId: validator.validationId, nonce: "1", weight: String(tx.l1Changes[0]!.weight) },
      });
    }
    expect(decoded.verification).toMatchObject({ signingSubnetId: subnetId, valid: true, meetsQuorum: true });
    expect(upstreamCalls(harness)).toEqual({ [GET_ROUTE]: 1, [TX_ROUTE]: 1, [L1_ROUTE]: 1 });
  });

  it("has no verification against a subnet whose validators the Data API does not list", async () => {
    const tx = l1Transactions("fuji", "RegisterL1ValidatorTx")[0]!;
    const other = harness.simulator.network.primaryNetwork("mainnet").l1Validators[0]!.subnetId;
    const result = await execute(harness, WarpSignatureAgainstDocument, {
      network: "FUJI",
      txHash: tx.txHash,
      signingSubnetId: other,
    });
    // Mainnet's L1 is not a Fuji subnet: no validators, so nothing to check against.
    expect(result.body.data!.warpSignature!.decoded!.verification).toBeNull();
  });

  it("answers null for a transaction without a Warp message and for an unknown one, and refuses a malformed hash", async () => {
    const plain = l1Transactions("fuji", "BaseTx")[0]!;
    for (const txHash of [plain.txHash, encodeCb58(Buffer.alloc(32, 7))]) {
      const result = await execute(harness, WarpSignatureDocument, { network: "FUJI", txHash });
      expect(result.body.errors).toBeUndefined();
      expect(result.body.data!.warpSignature).toBeNull();
    }
    harness.simulator.resetCounters();
    for (const txHash of ["0x1234", "not/a/hash", "11111111111111111111111111111111LpoYZ"]) {
      const result = await execute(harness, WarpSignatureDocument, { network: "FUJI", txHash });
      expect(result.body.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argument: "txHash" });
    }
    expect(upstreamCalls(harness)).toEqual({});
  });

  it("fails on mainnet, whose L1 has too little active weight for the default quorum", async () => {
    const tx = l1Transactions("mainnet", "RegisterL1ValidatorTx")[0]!;
    const result = await execute(harness, WarpSignatureDocument, { network: "MAINNET", txHash: tx.txHash });
    expect(result.body.data!.warpSignature).toBeNull();
    expect(result.body.errors?.[0]).toMatchObject({
      path: ["warpSignature"],
      extensions: { code: "UPSTREAM_ERROR", upstream: { status: 500 } },
    });
  });
});

describe("a failing warp route stays at its field", () => {
  const UNAFFECTED = `pn: primaryNetwork(network: FUJI) { network }`;

  it("a 500 on the signed-message route nulls warpSignature alone; signed with TESTNET, it says FUJI", async () => {
    const tx = l1Transactions("fuji", "RegisterL1ValidatorTx")[0]!;
    const query = `{ warpSignature(network: TESTNET, txHash: "${tx.txHash}") { network } ${UNAFFECTED} }`;
    const good = await execute(harness, query);
    expect(good.body.data).toEqual({ warpSignature: { network: "FUJI" }, pn: { network: "FUJI" } });

    harness.simulator.setKnobs({ errorRate: 1, errorStatus: 500, errorRoutes: [GET_ROUTE] });
    const result = await execute(harness, query);
    expect(result.body.data).toEqual({ warpSignature: null, pn: { network: "FUJI" } });
    expect(result.body.errors).toHaveLength(1);
    expect(result.body.errors![0]).toMatchObject({ path: ["warpSignature"], extensions: { code: "UPSTREAM_ERROR" } });
  });

  it("a 500 on the L1 validators route nulls the verification alone; the decoded message stays", async () => {
    const tx = l1Transactions("fuji", "RegisterL1ValidatorTx")[0]!;
    harness.simulator.setKnobs({ errorRate: 1, errorStatus: 500, errorRoutes: [L1_ROUTE] });
    const result = await execute(
      harness,
      `{ warpSignature(network: FUJI, txHash: "${tx.txHash}") { decoded { sourceChainId verification { valid } } } ${UNAFFECTED} }`,
    );
    expect(result.body.data).toEqual({
      warpSignature: { decoded: { sourceChainId: P_CHAIN_ID, verification: null } },
      pn: { network: "FUJI" },
    });
    expect(result.body.errors).toHaveLength(1);
    expect(result.body.errors![0]).toMatchObject({
      path: ["warpSignature", "decoded", "verification"],
      extensions: { code: "UPSTREAM_ERROR" },
    });
  });
});

/** A Data API in front of the simulator that changes the signed messages it returns. */
async function startTamperingUpstream(
  target: string,
  tamper: (signedMessage: string) => string,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      void (async () => {
        const upstream = await fetch(target + request.url, {
          method: request.method,
          headers: { "content-type": "application/json" },
          body: request.method === "POST" ? Buffer.concat(chunks) : undefined,
        });
        let text = await upstream.text();
        if (request.url?.startsWith("/v1/signatureAggregator/") && upstream.ok) {
          const body = JSON.parse(text) as { signedMessage: string };
          text = JSON.stringify({ signedMessage: tamper(body.signedMessage) });
        }
        response.writeHead(upstream.status, { "content-type": "application/json" });
        response.end(text);
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe("tampered signed messages", () => {
  const flipBit = (hex: string, byteOffset: number) => {
    const bytes = Buffer.from(hex, "hex");
    bytes[byteOffset]! ^= 0x01;
    return bytes.toString("hex");
  };
  /** The offset of the bit set's last byte: after the unsigned message, the type id and the length. */
  const lastSignerByte = (hex: string) => {
    const bytes = Buffer.from(hex, "hex");
    const payloadLength = bytes.readUInt32BE(38);
    const bitsAt = 42 + payloadLength + 8;
    return bitsAt + bytes.readUInt32BE(bitsAt - 4) - 1;
  };

  async function throughTamperer(tamper: (signedMessage: string) => string) {
    const upstream = await startTamperingUpstream(harness.simulator.dataUrl, tamper);
    const config = loadConfig({ LOG_LEVEL: "silent", RESPONSE_CACHE_TTL_MS: "0" });
    const gateway = createGateway(
      config,
      { dataApiUrl: upstream.url, metricsApiUrl: harness.simulator.metricsUrl },
      createLogger("silent"),
    );
    const tx = l1Transactions("fuji", "RegisterL1ValidatorTx")[0]!;
    try {
      return await execute({ ...harness, gateway }, WarpSignatureDocument, { network: "FUJI", txHash: tx.txHash });
    } finally {
      await gateway.close();
      await upstream.close();
    }
  }

  it("reports a flipped signer bit as a signature that does not verify, as a value", async () => {
    const result = await throughTamperer((hex) => flipBit(hex, lastSignerByte(hex)));
    expect(result.body.errors).toBeUndefined();
    expect(result.body.data!.warpSignature!.decoded!.verification).toMatchObject({
      valid: false,
      problem: "the aggregate signature does not verify for these signers and this message",
    });
  });

  it("reports a flipped bit of the payload as a signature that does not verify", async () => {
    const result = await throughTamperer((hex) => flipBit(hex, 60));
    expect(result.body.errors).toBeUndefined();
    expect(result.body.data!.warpSignature!.decoded!.verification).toMatchObject({ valid: false });
  });

  it("fails only the decoded field when the hex is not a Warp message, keeping the hex", async () => {
    // Cut inside the payload: its length (at byte 38) promises more than follows.
    const result = await throughTamperer((hex) => hex.slice(0, 100));
    const signed = result.body.data!.warpSignature!;
    expect(signed.signedMessage).toHaveLength(100);
    expect(signed.decoded).toBeNull();
    expect(result.body.errors).toHaveLength(1);
    expect(result.body.errors![0]).toMatchObject({
      path: ["warpSignature", "decoded"],
      extensions: { code: "UPSTREAM_ERROR", decodeError: { offset: 38 } },
    });
  });
});
