import { bls12_381 } from "@noble/curves/bls12-381";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { components } from "../../src/upstream/contract/data-api.ts";
import { decodeCb58, encodeCb58 } from "../../src/upstream/cb58.ts";
import { decodeSignedWarpMessage } from "../../src/warp/message.ts";
import { startSimulator, type RunningSimulator } from "../../simulator/server.ts";
import { l1Transactions as sampleL1Transactions } from "../support/sample-network.ts";
import { expectContract, getJson, postJson } from "./http.ts";

type Signed = components["schemas"]["SignatureAggregationResponse"];
type ErrorBody = components["schemas"]["BadRequest"];

const AGGREGATE = "POST /v1/signatureAggregator/{network}/aggregateSignatures";
const BY_TRANSACTION = "GET /v1/signatureAggregator/{network}/aggregateSignatures/{txHash}";
const DST = "BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_";
const signatures = bls12_381.longSignatures;

let simulator: RunningSimulator;
let data: string;

beforeAll(async () => {
  simulator = await startSimulator({ dataPort: 0, metricsPort: 0 });
  data = simulator.dataUrl;
});
afterAll(() => simulator.close());

const u32 = (value: number) => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value);
  return bytes;
};

function message(
  networkId: number,
  sourceChainId: string,
  payload = Buffer.concat([Buffer.alloc(2), u32(0), Buffer.alloc(32, 9)]),
): string {
  return Buffer.concat([Buffer.alloc(2), u32(networkId), decodeCb58(sourceChainId)!, u32(payload.length), payload]).toString(
    "hex",
  );
}

const l1Transactions = (network: "mainnet" | "fuji", txType: string) => sampleL1Transactions(simulator, network, txType);

/** The L1 of a network, and its validators in canonical order (by uncompressed public key). */
function l1(network: "mainnet" | "fuji") {
  const conversion = l1Transactions(network, "ConvertSubnetToL1Tx")[0]!;
  const subnetId = conversion.fields.subnetId!;
  const members = simulator.network
    .primaryNetwork(network)
    .l1Validators.filter((validator) => validator.subnetId === subnetId && validator.weight > 0);
  const canonical = members
    .filter((validator) => validator.remainingBalance > 0)
    .map((validator) => ({ validator, key: Buffer.from(bls12_381.G1.Point.fromBytes(validator.bls.publicKey).toBytes(false)) }))
    .sort((a, b) => Buffer.compare(a.key, b.key))
    .map(({ validator }) => validator);
  const totalWeight = members.reduce((sum, validator) => sum + validator.weight, 0);
  return { subnetId, chainId: conversion.fields.l1ValidatorManagerDetails!.blockchainId, canonical, totalWeight };
}

/** Checks a signed message with the validators' keys directly: the signers' aggregate key over the unsigned bytes. */
function verifies(signedHex: string, canonical: ReturnType<typeof l1>["canonical"]) {
  const decoded = decodeSignedWarpMessage(Buffer.from(signedHex, "hex"));
  const key = signatures.aggregatePublicKeys(decoded.signers.map((index) => canonical[index]!.bls.publicKey));
  const valid = signatures.verify(
    signatures.Signature.fromBytes(decoded.signature),
    signatures.hash(decoded.unsignedBytes, DST),
    key,
  );
  return { decoded, valid, signedWeight: decoded.signers.reduce((sum, index) => sum + canonical[index]!.weight, 0) };
}

describe("POST aggregateSignatures", () => {
  it("signs with the heaviest validators until quorum plus buffer, in canonical bit order, and the signature verifies", async () => {
    const { subnetId, chainId, canonical, totalWeight } = l1("fuji");
    const body = {
      message: `0x${message(5, chainId)}`,
      signingSubnetId: subnetId,
      quorumPercentage: 50,
      quorumPercentageBuffer: 20,
    };
    const response = await postJson(`${data}/v1/signatureAggregator/fuji/aggregateSignatures`, body);
    expectContract(response, "data", AGGREGATE, 201);
    const { signedMessage } = response.body as Signed;
    expect(signedMessage).toMatch(/^[0-9a-f]+$/);
    expect(signedMessage.startsWith(message(5, chainId))).toBe(true);
    const { decoded, valid, signedWeight } = verifies(signedMessage, canonical);
    expect(valid).toBe(true);
    expect(signedWeight * 100).toBeGreaterThanOrEqual(70 * totalWeight);
    // One fewer signer (the lightest of them) would not have been enough.
    const lightest = Math.min(...decoded.signers.map((index) => canonical[index]!.weight));
    expect((signedWeight - lightest) * 100).toBeLessThan(70 * totalWeight);

    const again = await postJson(`${data}/v1/signatureAggregator/testnet/aggregateSignatures`, body);
    expect(again.body).toEqual(response.body);
  });

  it("signs for the source chain's subnet by default, with 67 % when the quorum is 0 or absent", async () => {
    const { subnetId, chainId, canonical, totalWeight } = l1("fuji");
    const byDefault = await postJson(`${data}/v1/signatureAggregator/fuji/aggregateSignatures`, {
      message: message(5, chainId),
      quorumPercentage: 0,
    });
    expectContract(byDefault, "data", AGGREGATE, 201);
    const named = await postJson(`${data}/v1/signatureAggregator/fuji/aggregateSignatures`, {
      message: message(5, chainId),
      signingSubnetId: `0x${decodeCb58(subnetId)!.toString("hex")}`,
    });
    expect(named.body).toEqual(byDefault.body);
    const { valid, signedWeight } = verifies((byDefault.body as Signed).signedMessage, canonical);
    expect(valid).toBe(true);
    expect(signedWeight * 100).toBeGreaterThanOrEqual(67 * totalWeight);
  });

  it.each([
    ["a body that is not an object", [], "Could not decode request body"],
    ["neither message nor justification", {}, "Must provide either message or justification"],
    ["a message that is not hex", { message: "0xzz" }, "Could not decode message"],
    ["a justification alone", { justification: "0x0001abcdabcfff" }, "Error unpacking warp message"],
    ["a message that is not an unsigned Warp message", { message: "00010203" }, "Error unpacking warp message"],
    ["a quorum over 100", { message: "ff", quorumPercentage: 101 }, "quorumPercentage must be an integer from 0 to 100"],
    [
      "quorum plus buffer over 100",
      { message: "ff", quorumPercentage: 80, quorumPercentageBuffer: 30 },
      "quorumPercentage plus quorumPercentageBuffer must not be greater than 100",
    ],
    ["a malformed signing subnet", { message: "ff", signingSubnetId: "subnet" }, "Error parsing signing subnet ID"],
    [
      "a negative P-Chain height",
      { message: "ff", pChainHeight: -1 },
      "pChainHeight must be an integer from 0 to 9007199254740991",
    ],
  ])("answers 400 for %s", async (_, body, text) => {
    const response = await postJson(`${data}/v1/signatureAggregator/fuji/aggregateSignatures`, body);
    expectContract(response, "data", AGGREGATE, 400);
    expect((response.body as ErrorBody).message).toBe(text);
  });

  it("answers 500 with the aggregator's words when the weight cannot be reached or no validator will sign", async () => {
    const mainnet = l1("mainnet");
    const fuji = l1("fuji");
    const cases: [string, unknown, string][] = [
      ["mainnet", { message: message(1, mainnet.chainId) }, "failed to connect to a threshold of stake"],
      ["fuji", { message: message(5, fuji.chainId), quorumPercentage: 100 }, "failed to connect to a threshold of stake"],
      ["fuji", { message: message(1, fuji.chainId) }, "failed to collect a threshold of signatures"],
      ["fuji", { message: message(5, encodeCb58(Buffer.alloc(32, 3))) }, "failed to aggregate signatures"],
      [
        "fuji",
        { message: message(5, fuji.chainId), signingSubnetId: encodeCb58(Buffer.alloc(32, 4)) },
        "failed to connect to a threshold of stake",
      ],
    ];
    for (const [network, body, text] of cases) {
      const response = await postJson(`${data}/v1/signatureAggregator/${network}/aggregateSignatures`, body);
      expectContract(response, "data", AGGREGATE, 500);
      expect((response.body as ErrorBody).message).toBe(text);
    }
  });
});

describe("GET aggregateSignatures/{txHash}", () => {
  /** The P-Chain message in a signed message: addressed call from no one, then the message's type id and fields. */
  function platformMessage(signedHex: string) {
    const { payload, sourceChainId } = decodeSignedWarpMessage(Buffer.from(signedHex, "hex"));
    expect(encodeCb58(sourceChainId)).toBe("11111111111111111111111111111111LpoYY");
    const call = Buffer.from(payload);
    expect(call.readUInt16BE(0)).toBe(0);
    expect(call.readUInt32BE(2)).toBe(1);
    expect(call.readUInt32BE(6)).toBe(0);
    const inner = call.subarray(14, 14 + call.readUInt32BE(10));
    expect(14 + inner.length).toBe(call.length);
    return { type: inner.readUInt32BE(2), fields: inner.subarray(6) };
  }

  it("signs, with the L1's validators, the message each kind of L1 transaction implies", async () => {
    const { canonical } = l1("fuji");
    const conversion = l1Transactions("fuji", "ConvertSubnetToL1Tx")[0]!;
    const response = await getJson(`${data}/v1/signatureAggregator/fuji/aggregateSignatures/${conversion.txHash}`);
    expectContract(response, "data", BY_TRANSACTION, 201);
    const signed = (response.body as Signed).signedMessage;
    expect(verifies(signed, canonical).valid).toBe(true);
    expect(platformMessage(signed)).toMatchObject({ type: 0 });
    expect(platformMessage(signed).fields).toHaveLength(32);

    const registration = l1Transactions("fuji", "RegisterL1ValidatorTx")[0]!;
    const registered = platformMessage(
      ((await getJson(`${data}/v1/signatureAggregator/fuji/aggregateSignatures/${registration.txHash}`)).body as Signed)
        .signedMessage,
    );
    expect(registered.type).toBe(2);
    expect(registered.fields.toString("hex")).toBe(`${registration.l1Changes[0]!.validator.validationIdHex.slice(2)}01`);

    // Weight changes of one validator count up their nonce.
    const changes = l1Transactions("fuji", "SetL1ValidatorWeightTx");
    const validator = changes[0]!.l1Changes[0]!.validator;
    const ofValidator = changes.filter((tx) => tx.l1Changes[0]!.validator === validator);
    for (const [index, tx] of ofValidator.entries()) {
      const weight = platformMessage(
        ((await getJson(`${data}/v1/signatureAggregator/fuji/aggregateSignatures/${tx.txHash}`)).body as Signed).signedMessage,
      );
      expect(weight.type).toBe(3);
      expect(weight.fields.subarray(0, 32).toString("hex")).toBe(validator.validationIdHex.slice(2));
      expect(weight.fields.readBigUInt64BE(32)).toBe(BigInt(index + 1));
      expect(weight.fields.readBigUInt64BE(40)).toBe(BigInt(tx.l1Changes[0]!.weight));
    }
  });

  it("answers 404 for a transaction without an L1 message or unknown, and 400 for a malformed hash", async () => {
    const plain = l1Transactions("fuji", "CreateSubnetTx")[0]!;
    for (const txHash of [plain.txHash, encodeCb58(Buffer.alloc(32, 5))]) {
      const response = await getJson(`${data}/v1/signatureAggregator/fuji/aggregateSignatures/${txHash}`);
      expectContract(response, "data", BY_TRANSACTION, 404);
    }
    const malformed = await getJson(`${data}/v1/signatureAggregator/fuji/aggregateSignatures/0x1234`);
    expectContract(malformed, "data", BY_TRANSACTION, 400);
  });
});
