/**
 * Warp signature aggregation over the simulated L1s: a subnet's validators, put in canonical
 * order (by uncompressed BLS public key; validators without balance cannot sign, but their
 * weight counts in the total), sign an unsigned message with BLS12-381 (min-pk, proof-of-
 * possession scheme), and the aggregator collects signatures until quorum plus buffer, as
 * avalanchego and its signature aggregator do. The P-Chain's L1 transactions imply Warp
 * messages (conversion, registration, weight) that the same machinery signs.
 */
import { bls12_381 } from "@noble/curves/bls12-381";
import { PRIMARY_NETWORK_SUBNET_ID, type NetworkName } from "../chains.ts";
import { decodeCb58, sha256 } from "../ids.ts";
import type { PrimaryNetwork } from "../primary-network/index.ts";
import type { PTransaction, SimL1Validator } from "../primary-network/model.ts";
import { addressedCall, encodeSignedMessage, encodeUnsignedMessage, Writer, type UnsignedMessage } from "./codec.ts";

export const NETWORK_IDS: Record<NetworkName, number> = { mainnet: 1, fuji: 5 };
const SIGNATURE_DST = "BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_";
const signatures = bls12_381.longSignatures;
const P_CHAIN_ID = Buffer.alloc(32);

/** Why an aggregation fails, in the words of the real signature aggregator (it answers 500). */
export const NOT_ENOUGH_CONNECTED_STAKE = "failed to connect to a threshold of stake";
export const NOT_ENOUGH_SIGNATURES = "failed to collect a threshold of signatures";
export const AGGREGATION_FAILED = "failed to aggregate signatures";

export class AggregationError extends Error {}

export interface Quorum {
  percentage: number;
  buffer: number;
}

interface CanonicalValidator {
  validators: SimL1Validator[];
  weight: bigint;
  sortKey: Buffer;
}

/** The Warp signers of one network's L1s. */
export class WarpAggregator {
  private subnetsByChain: Map<string, string> | undefined;

  constructor(private readonly primary: PrimaryNetwork) {}

  get networkId(): number {
    return NETWORK_IDS[this.primary.network];
  }

  /**
   * The signed message, hex-encoded: signed by validators of `signingSubnetId` (cb58), or by
   * default of the source chain's subnet, until their weight reaches quorum plus buffer.
   */
  aggregate(message: UnsignedMessage, signingSubnetId: string | undefined, quorum: Quorum): string {
    const subnetId = signingSubnetId ?? this.subnetOfChain(message.sourceChainId);
    if (subnetId === undefined) throw new AggregationError(AGGREGATION_FAILED);
    const { validators, totalWeight } = this.canonicalSet(subnetId);
    const connected = validators.reduce((sum, validator) => sum + validator.weight, 0n);
    const reaches = (weight: bigint, percentage: number) => weight * 100n >= BigInt(percentage) * totalWeight;
    if (totalWeight === 0n || !reaches(connected, quorum.percentage)) throw new AggregationError(NOT_ENOUGH_CONNECTED_STAKE);
    // Validators sign only messages of their own network.
    if (message.networkId !== this.networkId) throw new AggregationError(NOT_ENOUGH_SIGNATURES);

    // The heaviest answer first, ties in canonical order, until the target weight is in.
    const order = validators
      .map((validator, index) => ({ validator, index }))
      .sort((a, b) =>
        a.validator.weight === b.validator.weight ? a.index - b.index : a.validator.weight > b.validator.weight ? -1 : 1,
      );
    const signers: number[] = [];
    let signed = 0n;
    for (const { validator, index } of order) {
      if (reaches(signed, quorum.percentage + quorum.buffer)) break;
      signers.push(index);
      signed += validator.weight;
    }
    signers.sort((a, b) => a - b);

    const unsigned = encodeUnsignedMessage(message);
    const hashed = signatures.hash(unsigned, SIGNATURE_DST);
    // Nodes that share a key are one validator of the canonical set, and sign once.
    const parts = signers.map((index) => signatures.sign(hashed, validators[index]!.validators[0]!.bls.secretKey));
    const signature = signatures.Signature.toBytes(signatures.aggregateSignatures(parts));
    return encodeSignedMessage(unsigned, signers, signature).toString("hex");
  }

  /** The Warp message a P-Chain transaction implies, with its signing subnet; undefined for a transaction that implies none. */
  transactionMessage(tx: PTransaction): { message: UnsignedMessage; signingSubnetId: string } | undefined {
    const platformMessage = this.platformMessage(tx);
    if (platformMessage === undefined) return undefined;
    return {
      message: { networkId: this.networkId, sourceChainId: P_CHAIN_ID, payload: addressedCall(Buffer.alloc(0), platformMessage) },
      signingSubnetId: tx.l1Changes[0]!.validator.subnetId,
    };
  }

  /** The subnet's validators that can sign, in canonical order, and the weight of all its validators. */
  canonicalSet(subnetId: string): { validators: CanonicalValidator[]; totalWeight: bigint } {
    const members = this.primary.l1Validators.filter((validator) => validator.subnetId === subnetId && validator.weight > 0);
    const totalWeight = members.reduce((sum, validator) => sum + BigInt(validator.weight), 0n);
    const byKey = new Map<string, CanonicalValidator>();
    for (const validator of members.filter((member) => member.remainingBalance > 0)) {
      const sortKey = Buffer.from(bls12_381.G1.Point.fromBytes(validator.bls.publicKey).toBytes(false));
      const found = byKey.get(sortKey.toString("hex"));
      if (found) {
        found.validators.push(validator);
        found.weight += BigInt(validator.weight);
      } else {
        byKey.set(sortKey.toString("hex"), { validators: [validator], weight: BigInt(validator.weight), sortKey });
      }
    }
    return { validators: [...byKey.values()].sort((a, b) => Buffer.compare(a.sortKey, b.sortKey)), totalWeight };
  }

  /** The subnet a blockchain belongs to: a chain created on the P-Chain, or a P-, X- or C-Chain. */
  private subnetOfChain(chainId: Buffer): string | undefined {
    if (this.subnetsByChain === undefined) {
      this.subnetsByChain = new Map(
        Object.values(this.primary.chainIds).map((id) => [decodeCb58(id)!.toString("hex"), PRIMARY_NETWORK_SUBNET_ID]),
      );
      const created = this.primary.transactions("P", {
        addresses: undefined,
        txTypes: new Set(["CreateChainTx"]),
        startTimestamp: undefined,
        endTimestamp: undefined,
        l1ValidationId: undefined,
        sortOrder: "asc",
      });
      for (const tx of created) {
        if (tx.chain === "P" && tx.fields.subnetId)
          this.subnetsByChain.set(decodeCb58(tx.txHash)!.toString("hex"), tx.fields.subnetId);
      }
    }
    return this.subnetsByChain.get(chainId.toString("hex"));
  }

  /** The P-Chain's message about an L1, as its payload codec writes it. */
  private platformMessage(tx: PTransaction): Buffer | undefined {
    const change = tx.l1Changes[0];
    if (change === undefined) return undefined;
    const validationId = Buffer.from(change.validator.validationIdHex.slice(2), "hex");
    switch (tx.txType) {
      case "ConvertSubnetToL1Tx":
        return Writer.document().uint32(0).raw(this.conversionId(tx)).done();
      case "RegisterL1ValidatorTx":
        return Writer.document().uint32(2).raw(validationId).boolean(true).done();
      case "SetL1ValidatorWeightTx":
        return Writer.document()
          .uint32(3)
          .raw(validationId)
          .uint64(BigInt(this.weightNonce(tx)))
          .uint64(BigInt(change.weight))
          .done();
      default:
        return undefined;
    }
  }

  /** The sha256 of the conversion's data: subnet, manager chain and address, and the first validators. */
  private conversionId(tx: PTransaction): Buffer {
    const manager = tx.fields.l1ValidatorManagerDetails!;
    const data = Writer.document()
      .raw(decodeCb58(String(tx.fields.subnetId))!)
      .raw(decodeCb58(manager.blockchainId)!)
      .bytes(Buffer.from(manager.contractAddress.slice(2), "hex"))
      .uint32(tx.l1Changes.length);
    for (const change of tx.l1Changes) {
      data
        .bytes(decodeCb58(change.validator.nodeId.replace(/^NodeID-/, ""))!)
        .raw(change.validator.bls.publicKey)
        .uint64(BigInt(change.weight));
    }
    return sha256(data.done());
  }

  /** How many weight changes the validator has had, up to and including this one. */
  private weightNonce(tx: PTransaction): number {
    const changes = this.primary.transactions("P", {
      addresses: undefined,
      txTypes: new Set(["SetL1ValidatorWeightTx"]),
      startTimestamp: undefined,
      endTimestamp: undefined,
      l1ValidationId: tx.l1Changes[0]!.validator.validationId,
      sortOrder: "asc",
    });
    return changes.findIndex((change) => change.txHash === tx.txHash) + 1;
  }
}
