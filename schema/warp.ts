/**
 * Avalanche Warp messages signed by a subnet's validators: the hex as the Data API returns it
 * and the message decoded from it (network, source chain, payload, signers, aggregate signature).
 * resolvers/warp.ts decodes the hex and checks the signature against the signing subnet.
 */
import { encodeCb58 } from "../src/upstream/cb58.ts";
import { unsignedMessageId, type SignedWarpMessage } from "../src/warp/message.ts";
import { decodeWarpPayload, type PChainOwner, type PlatformMessage, type WarpPayload } from "../src/warp/payload.ts";
import type { SubnetVerification } from "../src/execution/warp-signing-subnet.ts";
import type { CanonicalValidator } from "../src/warp/verify.ts";
import type { SignatureAggregationResponse } from "../src/upstream/types.ts";
import { warpRequestOf, type WarpRequest } from "../src/upstream/warp-api.ts";
import { builder } from "./builder.ts";
import { NetworkRef } from "./networks.ts";

/** A decoded message with the request it came from, which verification needs. */
export interface WarpMessageView {
  message: SignedWarpMessage;
  request: WarpRequest;
}

/** The outcome of checking a message against its signing subnet's validators. */
export type WarpVerificationView = SubnetVerification;

interface WarpSignerView {
  validator: CanonicalValidator;
  index: number;
  totalWeight: bigint;
}

interface WarpPayloadView {
  bytes: Uint8Array;
  content: WarpPayload | null;
}

/**
 * The quorum when none is given, as the aggregator's; the resolvers apply it too, since compiled
 * execution (graphql-jit) does not fill in defaults of input object fields given through variables.
 */
export const DEFAULT_QUORUM_PERCENTAGE = 67;

const hex = (bytes: Uint8Array) => `0x${Buffer.from(bytes).toString("hex")}`;
const NODE_ID_BYTES = 20;

/** A node id as Avalanche writes it, when it has the usual 20 bytes; else its hex. */
function nodeIdText(bytes: Uint8Array): string {
  return bytes.length === NODE_ID_BYTES ? `NodeID-${encodeCb58(bytes)}` : hex(bytes);
}

/** `weight / total` as a number from 0 to 1. */
function share(weight: bigint, total: bigint): number {
  return total === 0n ? 0 : Number((weight * 1_000_000_000n) / total) / 1_000_000_000;
}

export const SignedWarpMessageRef = builder.objectRef<SignatureAggregationResponse>("SignedWarpMessage");
export const WarpMessageRef = builder.objectRef<WarpMessageView>("WarpMessage");
export const WarpSignatureVerificationRef = builder.objectRef<WarpVerificationView>("WarpSignatureVerification");
const WarpSignerRef = builder.objectRef<WarpSignerView>("WarpSigner");
const WarpPayloadRef = builder.objectRef<WarpPayloadView>("WarpPayload");
const WarpHashPayloadRef = builder.objectRef<Extract<WarpPayload, { kind: "hash" }>>("WarpHashPayload");
const WarpAddressedCallRef = builder.objectRef<Extract<WarpPayload, { kind: "addressedCall" }>>("WarpAddressedCall");
const WarpPChainOwnerRef = builder.objectRef<PChainOwner>("WarpPChainOwner");
const SubnetToL1ConversionMessageRef =
  builder.objectRef<Extract<PlatformMessage, { kind: "subnetToL1Conversion" }>>("SubnetToL1ConversionMessage");
const RegisterL1ValidatorMessageRef =
  builder.objectRef<Extract<PlatformMessage, { kind: "registerL1Validator" }>>("RegisterL1ValidatorMessage");
const L1ValidatorRegistrationMessageRef =
  builder.objectRef<Extract<PlatformMessage, { kind: "l1ValidatorRegistration" }>>("L1ValidatorRegistrationMessage");
const L1ValidatorWeightMessageRef =
  builder.objectRef<Extract<PlatformMessage, { kind: "l1ValidatorWeight" }>>("L1ValidatorWeightMessage");

SignedWarpMessageRef.implement({
  description: "A Warp message with the aggregate signature of its signing subnet's validators.",
  fields: (t) => ({
    signedMessage: t.exposeString("signedMessage", {
      description: "The signed message in hex, exactly as the Data API returned it.",
    }),
    network: t.field({
      type: NetworkRef,
      description: "The network it was asked on (`MAINNET` or `FUJI`).",
      resolve: (record) => warpRequestOf(record).network,
    }),
  }),
});

WarpMessageRef.implement({
  description:
    "A signed Warp message, decoded: the unsigned message (network, source chain, payload), which validators sign, and the signature (the signers' bit set and their aggregate BLS signature).",
  fields: (t) => ({
    networkId: t.field({
      type: "SafeInt",
      description: "The id of the network the message belongs to (1 on mainnet, 5 on Fuji).",
      resolve: ({ message }) => message.networkId,
    }),
    sourceChainId: t.string({
      description:
        "The blockchain that sent the message (cb58); the P-Chain's id is all ones (`11111111111111111111111111111111LpoYY`).",
      resolve: ({ message }) => encodeCb58(message.sourceChainId),
    }),
    messageId: t.string({
      description: "The message's id (cb58): the sha256 of the unsigned message.",
      resolve: ({ message }) => encodeCb58(unsignedMessageId(message)),
    }),
    unsignedMessage: t.string({
      description: "The unsigned message in 0x hex: the bytes the validators signed.",
      resolve: ({ message }) => hex(message.unsignedBytes),
    }),
    payload: t.field({
      type: WarpPayloadRef,
      description: "What the message carries.",
      resolve: ({ message }) => ({ bytes: message.payload, content: decodeWarpPayload(message.payload) }),
    }),
    signers: t.intList({
      description:
        "The signers, as indices into the signing subnet's validators in canonical order (sorted by BLS public key); `verification` names them.",
      resolve: ({ message }) => message.signers,
    }),
    signature: t.string({
      description: "The aggregate BLS12-381 signature of the signers in 0x hex (96 bytes).",
      resolve: ({ message }) => hex(message.signature),
    }),
  }),
});

WarpPayloadRef.implement({
  description: "The payload of a Warp message.",
  fields: (t) => ({
    hex: t.string({ description: "The payload in 0x hex.", resolve: (payload) => hex(payload.bytes) }),
    content: t.expose("content", {
      type: builder.unionType("WarpPayloadContent", {
        description: "A payload of one of the types Avalanche defines.",
        types: [WarpHashPayloadRef, WarpAddressedCallRef],
        resolveType: (content) => (content.kind === "hash" ? WarpHashPayloadRef : WarpAddressedCallRef),
      }),
      nullable: true,
      description: "The payload decoded; null when it is not one of the types Avalanche defines.",
    }),
  }),
});

WarpHashPayloadRef.implement({
  description: "A payload that is only a 32-byte hash, which the source chain vouches for.",
  fields: (t) => ({
    hash: t.string({ description: "The hash in 0x hex.", resolve: (payload) => hex(payload.hash) }),
  }),
});

WarpAddressedCallRef.implement({
  description: "A payload from an address on the source chain (a contract, or nobody for the P-Chain) with a payload of its own.",
  fields: (t) => ({
    sourceAddress: t.string({
      description: "The sending address in 0x hex; `0x` (empty) for the P-Chain's own messages.",
      resolve: (call) => hex(call.sourceAddress),
    }),
    payload: t.string({ description: "The inner payload in 0x hex.", resolve: (call) => hex(call.payload) }),
    platformMessage: t.field({
      type: builder.unionType("PlatformWarpMessage", {
        description: "A message about an L1's validators, as the P-Chain and L1 validator managers exchange them.",
        types: [
          SubnetToL1ConversionMessageRef,
          RegisterL1ValidatorMessageRef,
          L1ValidatorRegistrationMessageRef,
          L1ValidatorWeightMessageRef,
        ],
        resolveType: (message) => {
          switch (message.kind) {
            case "subnetToL1Conversion":
              return SubnetToL1ConversionMessageRef;
            case "registerL1Validator":
              return RegisterL1ValidatorMessageRef;
            case "l1ValidatorRegistration":
              return L1ValidatorRegistrationMessageRef;
            case "l1ValidatorWeight":
              return L1ValidatorWeightMessageRef;
          }
        },
      }),
      nullable: true,
      description: "The inner payload decoded, when it is a message about an L1's validators; else null.",
      resolve: (call) => call.platformMessage,
    }),
  }),
});

WarpPChainOwnerRef.implement({
  description: "Keys on the P-Chain that may act for a validator.",
  fields: (t) => ({
    threshold: t.expose("threshold", {
      type: "SafeInt",
      description:
        "How many of `addresses` must sign: a signature threshold (a `threshold` argument is a balance); a 32-bit number in the message, so SafeInt.",
    }),
    addresses: t.stringList({
      description: "The owners' 20-byte address ids in 0x hex.",
      resolve: (owner) => owner.addresses.map(hex),
    }),
  }),
});

SubnetToL1ConversionMessageRef.implement({
  description: "The P-Chain's word that a subnet became an L1, with its first validators and validator manager.",
  fields: (t) => ({
    conversionId: t.string({
      description:
        "The conversion's id (cb58): the sha256 of the conversion's data (subnet, manager chain and address, validators).",
      resolve: (message) => encodeCb58(message.conversionId),
    }),
  }),
});

RegisterL1ValidatorMessageRef.implement({
  description: "An L1 validator manager's request to add a validator to its L1.",
  fields: (t) => ({
    subnetId: t.string({ description: "The L1 (its subnet id, cb58).", resolve: (message) => encodeCb58(message.subnetId) }),
    nodeId: t.string({ description: "The validator's node (`NodeID-...`).", resolve: (message) => nodeIdText(message.nodeId) }),
    blsPublicKey: t.string({
      description: "The validator's BLS public key in 0x hex (48 bytes).",
      resolve: (message) => hex(message.blsPublicKey),
    }),
    expiry: t.expose("expiry", {
      type: "BigInt",
      description: "The Unix time (seconds) after which the request can no longer be used.",
    }),
    remainingBalanceOwner: t.expose("remainingBalanceOwner", {
      type: WarpPChainOwnerRef,
      description: "Who receives the validator's remaining balance when it leaves.",
    }),
    disableOwner: t.expose("disableOwner", { type: WarpPChainOwnerRef, description: "Who may disable the validator." }),
    weight: t.expose("weight", { type: "BigInt", description: "The validator's weight." }),
  }),
});

L1ValidatorRegistrationMessageRef.implement({
  description: "The P-Chain's word on whether an L1 validation is registered (or, if not, never will be or has ended).",
  fields: (t) => ({
    validationId: t.string({
      description: "The validation's id (cb58).",
      resolve: (message) => encodeCb58(message.validationId),
    }),
    registered: t.boolean({ description: "True when the validator is registered.", resolve: (message) => message.registered }),
  }),
});

L1ValidatorWeightMessageRef.implement({
  description: "A validator's new weight on an L1: the manager's request, or the P-Chain's acknowledgement of it.",
  fields: (t) => ({
    validationId: t.string({
      description: "The validation's id (cb58).",
      resolve: (message) => encodeCb58(message.validationId),
    }),
    nonce: t.expose("nonce", { type: "BigInt", description: "The change's sequence number for this validation." }),
    weight: t.expose("weight", { type: "BigInt", description: "The weight." }),
  }),
});

WarpSignatureVerificationRef.implement({
  description:
    "The message checked against its signing subnet's validators as the Data API lists them now (which may differ from the set the message was signed at).",
  fields: (t) => ({
    signingSubnetId: t.exposeString("signingSubnetId", {
      description: "The subnet whose validators the signature was checked against (cb58).",
    }),
    validatorSetHeight: t.field({
      type: "BigInt",
      description: "The P-Chain height the validator list is as of.",
      resolve: (view) => view.blockHeight,
    }),
    validatorCount: t.int({
      description: "Validators that can sign: distinct BLS public keys of active validators.",
      resolve: (view) => view.set.validators.length,
    }),
    totalWeight: t.field({
      type: "BigInt",
      description: "The weight of the whole subnet, inactive validators included.",
      resolve: (view) => view.set.totalWeight,
    }),
    signedWeight: t.field({
      type: "BigInt",
      description: "The weight of the signers.",
      resolve: (view) => view.result.signedWeight,
    }),
    signedWeightShare: t.float({
      description: "The signers' share of the total weight, from 0 to 1.",
      resolve: (view) => share(view.result.signedWeight, view.set.totalWeight),
    }),
    signers: t.field({
      type: [WarpSignerRef],
      description: "The validators the bit set names, in canonical order.",
      resolve: (view) =>
        view.result.signers.map((validator) => ({
          validator,
          index: view.set.validators.indexOf(validator),
          totalWeight: view.set.totalWeight,
        })),
    }),
    valid: t.boolean({
      description:
        "True when the aggregate signature verifies: the message is for this network, the bit set is well-formed and names only known validators, and the signature checks against their aggregate public key over the unsigned message.",
      resolve: (view) => view.result.valid,
    }),
    problem: t.string({
      nullable: true,
      description: "Why the signature does not verify; null when it does.",
      resolve: (view) => view.result.problem,
    }),
  }),
});

WarpSignerRef.implement({
  description: "A validator that signed a Warp message.",
  fields: (t) => ({
    index: t.int({
      description: "Its index in the canonical validator order (its bit in the bit set).",
      resolve: (signer) => signer.index,
    }),
    publicKey: t.string({
      description: "Its BLS public key in 0x hex (48 bytes, compressed).",
      resolve: (signer) => hex(signer.validator.publicKey),
    }),
    nodeIds: t.stringList({
      description: "The nodes that hold this key (`NodeID-...`); usually one.",
      resolve: (signer) => signer.validator.nodeIds,
    }),
    weight: t.field({
      type: "BigInt",
      description: "Its weight (summed over its nodes).",
      resolve: (signer) => signer.validator.weight,
    }),
    weightShare: t.float({
      description: "Its share of the subnet's total weight, from 0 to 1.",
      resolve: (signer) => share(signer.validator.weight, signer.totalWeight),
    }),
  }),
});

export const AggregateWarpSignaturesInputRef = builder.inputType("AggregateWarpSignaturesInput", {
  description:
    "A Warp message to have signed by its signing subnet's validators: the unsigned message, or a justification the validators can rebuild it from, or both.",
  fields: (t) => ({
    network: t.field({
      type: NetworkRef,
      required: true,
      description: "The network of the message; `TESTNET` is the same as `FUJI`.",
    }),
    message: t.string({
      description: "The unsigned Warp message in hex, with or without 0x. Required unless `justification` is given.",
    }),
    justification: t.string({
      description:
        "Why validators should sign (for example the data an L1 message is derived from), in hex with or without 0x. Required unless `message` is given.",
    }),
    signingSubnetId: t.string({
      description:
        "The subnet whose validators sign, in cb58 or as 32 bytes of hex; by default the subnet of the message's source chain.",
    }),
    quorumPercentage: t.int({
      defaultValue: DEFAULT_QUORUM_PERCENTAGE,
      description: "The share of the signing subnet's weight, in percent (0 to 100), that must sign.",
    }),
    quorumPercentageBuffer: t.int({
      defaultValue: 0,
      description:
        "Extra weight, in percent (0 to 100), to try to collect beyond the quorum, so that the signature outlasts small changes of the validator set; quorum plus buffer must not pass 100.",
    }),
    pChainHeight: t.field({
      type: "BigInt",
      description: "The P-Chain height whose validator set signs; 0 or absent: the set at the height the P-Chain proposes now.",
    }),
  }),
});
