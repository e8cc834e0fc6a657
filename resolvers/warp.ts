/**
 * Warp signature aggregation: `Mutation.aggregateWarpSignatures`, `Query.warpSignature`,
 * `SignedWarpMessage.decoded`, and `WarpMessage.verification`, which checks the aggregate
 * signature against the signing subnet's L1 validators as the Data API lists them. Input rules
 * are checked before any upstream call.
 */
import { builder } from "../schema/builder.ts";
import { NetworkRef, upstreamNetwork } from "../schema/networks.ts";
import {
  AggregateWarpSignaturesInputRef,
  DEFAULT_QUORUM_PERCENTAGE,
  SignedWarpMessageRef,
  WarpMessageRef,
  WarpSignatureVerificationRef,
  type WarpMessageView,
  type WarpVerificationView,
} from "../schema/warp.ts";
import type { GatewayContext } from "../src/execution/context.ts";
import { badUserInput, GatewayError } from "../src/execution/errors.ts";
import { WARP_VERIFICATION_COST, callCost, upstreamCalls } from "../src/limits/upstream-calls.ts";
import { primaryChain, type PrimaryNetworkName } from "../src/upstream/primary-network-api.ts";
import { ROUTES } from "../src/upstream/routes.ts";
import type { UpstreamNetwork } from "../src/upstream/types.ts";
import { warpRequestOf } from "../src/upstream/warp-api.ts";
import { decodeCb58, encodeCb58 } from "../src/warp/cb58.ts";
import { decodeSignedWarpMessage, type SignedWarpMessage } from "../src/warp/message.ts";
import { decodeWarpPayload } from "../src/warp/payload.ts";
import { WarpDecodeError } from "../src/warp/reader.ts";
import type { ValidatorEntry } from "../src/warp/verify.ts";

const HEX_BYTES = /^(?:0x)?((?:[0-9a-fA-F]{2})+)$/;
const HEX_ID = /^(?:0x)?([0-9a-fA-F]{64})$/;
const CB58 = /^[1-9A-HJ-NP-Za-km-z]+$/;
const MAX_PERCENTAGE = 100;
/** Avalanche's network ids. */
const NETWORK_IDS: Record<PrimaryNetworkName, number> = { mainnet: 1, fuji: 5 };
const VALIDATOR_PAGE_SIZE = 100;
/** Subnets with more validators than this many pages are not verified. */
const MAX_VALIDATOR_PAGES = 20;
const BLS_PUBLIC_KEY = /^(?:0x)?([0-9a-fA-F]{96})$/;

/** A 32-byte id in cb58 (with a valid checksum) or hex, returned in cb58. */
function idArgument(argument: string, value: string): string {
  const hex = HEX_ID.exec(value)?.[1];
  if (hex !== undefined) return encodeCb58(Buffer.from(hex, "hex"));
  if (CB58.test(value) && decodeCb58(value)?.length === 32) return value;
  throw badUserInput(
    argument,
    `${argument} must be a 32-byte id in cb58 or hex (64 digits, with or without 0x), got ${JSON.stringify(value)}`,
  );
}

function hexArgument(argument: string, value: string | null | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (HEX_BYTES.test(value)) return value;
  throw badUserInput(
    argument,
    `${argument} must be hex (pairs of hex digits, with or without 0x), got ${JSON.stringify(value.slice(0, 80))}`,
  );
}

function percentageArgument(argument: string, value: number): number {
  if (value >= 0 && value <= MAX_PERCENTAGE) return value;
  throw badUserInput(argument, `${argument} must be from 0 to ${MAX_PERCENTAGE}, got ${value}`);
}

interface AggregateInput {
  network: UpstreamNetwork;
  message?: string | null;
  justification?: string | null;
  signingSubnetId?: string | null;
  quorumPercentage?: number | null;
  quorumPercentageBuffer?: number | null;
  pChainHeight?: number | null;
}

function aggregationRequest(input: AggregateInput) {
  const message = hexArgument("input.message", input.message);
  const justification = hexArgument("input.justification", input.justification);
  if (message === undefined && justification === undefined) {
    throw badUserInput("input.message", "input.message or input.justification is required");
  }
  if (input.signingSubnetId != null) idArgument("input.signingSubnetId", input.signingSubnetId);
  const quorumPercentage = percentageArgument("input.quorumPercentage", input.quorumPercentage ?? DEFAULT_QUORUM_PERCENTAGE);
  const quorumPercentageBuffer = percentageArgument("input.quorumPercentageBuffer", input.quorumPercentageBuffer ?? 0);
  if (quorumPercentage + quorumPercentageBuffer > MAX_PERCENTAGE) {
    throw badUserInput(
      "input.quorumPercentageBuffer",
      `input.quorumPercentage plus input.quorumPercentageBuffer must not pass ${MAX_PERCENTAGE}, got ${quorumPercentage} + ${quorumPercentageBuffer}`,
    );
  }
  if (input.pChainHeight != null && input.pChainHeight < 0) {
    throw badUserInput("input.pChainHeight", `input.pChainHeight must not be negative, got ${input.pChainHeight}`);
  }
  return {
    message,
    justification,
    signingSubnetId: input.signingSubnetId ?? undefined,
    quorumPercentage,
    quorumPercentageBuffer,
    pChainHeight: input.pChainHeight ?? undefined,
  };
}

/** The compressed BLS public key in an L1 validator's credentials, when it has a well-formed one. */
function credentialsPublicKey(credentials: Record<string, unknown> | undefined): Uint8Array | null {
  const text = credentials?.publicKey;
  const digits = typeof text === "string" ? BLS_PUBLIC_KEY.exec(text)?.[1] : undefined;
  return digits === undefined ? null : Buffer.from(digits, "hex");
}

/**
 * The subnet whose validators signed: the one the caller named, else the subnet of the P-Chain
 * transaction the message came by, else the L1 a P-Chain message is about, else the subnet of
 * the source chain. Null when none of these is known.
 */
async function signingSubnet(view: WarpMessageView, context: GatewayContext): Promise<string | null> {
  const { request, message } = view;
  if (request.signingSubnetId) return idArgument("input.signingSubnetId", request.signingSubnetId);
  if (request.txHash) {
    const tx = await context.loaders.primaryNetworkTransaction.load({
      origin: primaryChain(request.network, "p-chain"),
      id: request.txHash,
    });
    if (tx && "subnetId" in tx && tx.subnetId) return tx.subnetId;
  }
  const content = decodeWarpPayload(message.payload);
  const platformMessage = content?.kind === "addressedCall" ? content.platformMessage : null;
  if (platformMessage?.kind === "registerL1Validator") return encodeCb58(platformMessage.subnetId);
  if (platformMessage?.kind === "l1ValidatorRegistration" || platformMessage?.kind === "l1ValidatorWeight") {
    const validator = await context.loaders.l1Validator.load({
      network: request.network,
      id: encodeCb58(platformMessage.validationId),
    });
    if (validator) return validator.subnetId;
  }
  if (message.sourceChainId.some((byte) => byte !== 0)) {
    const chain = await context.loaders.chain.load(encodeCb58(message.sourceChainId));
    if (chain?.subnetId) return chain.subnetId;
  }
  return null;
}

/** Every validator of a subnet, inactive ones included (their weight counts in the total). */
async function subnetValidators(network: PrimaryNetworkName, subnetId: string, context: GatewayContext) {
  const entries: ValidatorEntry[] = [];
  let blockHeight = "";
  let pageToken: string | undefined;
  for (let page = 0; page < MAX_VALIDATOR_PAGES; page++) {
    const response = await context.upstreams.primaryNetwork.listL1Validators(
      network,
      { subnetId, includeInactiveL1Validators: true },
      { pageSize: VALIDATOR_PAGE_SIZE, pageToken },
      context.call,
    );
    if (page === 0) blockHeight = response.blockHeight;
    for (const validator of response.items) {
      if (validator.weight <= 0) continue;
      entries.push({
        nodeId: validator.nodeId,
        weight: BigInt(validator.weight),
        publicKey: validator.remainingBalance > 0 ? credentialsPublicKey(validator.blsCredentials) : null,
      });
    }
    pageToken = response.nextPageToken;
    if (pageToken === undefined) return { entries, blockHeight };
  }
  return null;
}

/** The signed message the Data API sent, decoded; a typed error when it is not one. */
function decodeSigned(text: string): SignedWarpMessage {
  const digits = text.startsWith("0x") ? text.slice(2) : text;
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(digits)) {
    throw new GatewayError("The Data API's signed message is not hex", "UPSTREAM_ERROR", { decodeError: { offset: 0 } });
  }
  try {
    return decodeSignedWarpMessage(Buffer.from(digits, "hex"));
  } catch (error) {
    if (!(error instanceof WarpDecodeError)) throw error;
    throw new GatewayError(`The Data API's signed message is not a Warp message: ${error.message}`, "UPSTREAM_ERROR", {
      decodeError: { offset: error.offset },
    });
  }
}

builder.objectFields(SignedWarpMessageRef, (t) => ({
  decoded: t.field({
    type: WarpMessageRef,
    nullable: true,
    description:
      "The message decoded. When the hex is not a signed Warp message, this field alone fails, with an UPSTREAM_ERROR whose `decodeError.offset` is the byte where decoding stopped.",
    resolve: (record) => ({ message: decodeSigned(record.signedMessage), request: warpRequestOf(record) }),
  }),
}));

builder.objectFields(WarpSignatureVerificationRef, (t) => ({
  meetsQuorum: t.boolean({
    description:
      "True when the signers hold at least this percentage of the total weight (on top of `valid`, what a receiving chain requires).",
    args: {
      quorumPercentage: t.arg.int({
        defaultValue: DEFAULT_QUORUM_PERCENTAGE,
        description: "The percentage of the weight required, 0 to 100.",
      }),
    },
    resolve: (view, args) => {
      const percentage = percentageArgument("quorumPercentage", args.quorumPercentage ?? DEFAULT_QUORUM_PERCENTAGE);
      return view.result.signedWeight * 100n >= BigInt(percentage) * view.set.totalWeight;
    },
  }),
}));

builder.objectFields(WarpMessageRef, (t) => ({
  verification: t.field({
    type: WarpSignatureVerificationRef,
    nullable: true,
    // One page of up to 100 validators, and, unless the signing subnet is given (to the field, or
    // to the aggregation the message comes from), the look-ups that find it: one is expected (the
    // P-Chain transaction the message came by, or the L1 validator or the chain its payload
    // names; a registration's payload names the subnet itself), up to three, settled after.
    extensions: upstreamCalls({
      calls: (args, outer) =>
        args.signingSubnetId != null || (outer.input as { signingSubnetId?: unknown } | undefined)?.signingSubnetId != null
          ? 1
          : 2,
      cpu: WARP_VERIFICATION_COST,
    }),
    description:
      "Checks the signature against the signing subnet's L1 validators (`GET /v1/networks/{network}/l1Validators`): who signed, their weight, and whether the aggregate BLS signature verifies. The subnet is `signingSubnetId` if given, else the one asked for at aggregation, else the one the message implies. Null when the subnet or its validators' BLS keys are unknown (for example the primary network's).",
    args: {
      signingSubnetId: t.arg.string({ description: "Check against this subnet's validators (cb58 or 32 bytes of hex)." }),
    },
    resolve: async (view, args, context): Promise<WarpVerificationView | null> => {
      const subnetId =
        args.signingSubnetId != null ? idArgument("signingSubnetId", args.signingSubnetId) : await signingSubnet(view, context);
      if (subnetId === null) return null;
      const validators = await subnetValidators(view.request.network, subnetId, context);
      if (validators === null) return null;
      // Off the event loop, and once per message, signature and validator list (src/warp/verifier.ts).
      const { set, result } = await context.warpVerifier.verify(
        view.message,
        validators.entries,
        NETWORK_IDS[view.request.network],
      );
      if (set.validators.length === 0) return null;
      return { signingSubnetId: subnetId, blockHeight: validators.blockHeight, set, result };
    },
  }),
}));

builder.mutationFields((t) => ({
  aggregateWarpSignatures: t.field({
    type: SignedWarpMessageRef,
    extensions: upstreamCalls(callCost(ROUTES.aggregateSignatures)),
    description:
      "Has the signing subnet's validators sign a Warp message and returns it with their aggregate signature (`POST /v1/signatureAggregator/{network}/aggregateSignatures`). Sent once, never retried.",
    args: {
      input: t.arg({
        type: AggregateWarpSignaturesInputRef,
        required: true,
        description: "The message and how much weight must sign.",
      }),
    },
    resolve: (_root, args, context) => {
      const body = aggregationRequest(args.input);
      return context.upstreams.warp.aggregateSignatures(upstreamNetwork(args.input.network), body, context.call);
    },
  }),
}));

builder.queryFields((t) => ({
  warpSignature: t.field({
    type: SignedWarpMessageRef,
    nullable: true,
    extensions: upstreamCalls(callCost(ROUTES.transactionWarpMessage)),
    description:
      "The signed Warp message a P-Chain L1 transaction implies, such as a conversion to an L1 or a validator's registration or weight change (`GET /v1/signatureAggregator/{network}/aggregateSignatures/{txHash}`); null when there is none.",
    args: {
      network: t.arg({ type: NetworkRef, required: true, description: "The network; `TESTNET` is the same as `FUJI`." }),
      txHash: t.arg.string({ required: true, description: "The P-Chain transaction's id (cb58)." }),
    },
    resolve: (_root, args, context) => {
      if (!CB58.test(args.txHash) || decodeCb58(args.txHash)?.length !== 32) {
        throw badUserInput("txHash", `txHash must be a transaction id in cb58, got ${JSON.stringify(args.txHash)}`);
      }
      return context.upstreams.warp.getTransactionMessage(upstreamNetwork(args.network), args.txHash, context.call);
    },
  }),
}));
