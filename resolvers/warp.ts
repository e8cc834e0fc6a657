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
  type WarpVerificationView,
} from "../schema/warp.ts";
import { badUserInput, GatewayError } from "../src/errors.ts";
import { callCost, upstreamCalls } from "../src/limits/upstream-cost-declarations.ts";
import { WARP_VERIFICATION_COST } from "../src/limits/upstream-cost-rules.ts";
import { ROUTES } from "../src/upstream/routes.ts";
import type { UpstreamNetwork } from "../src/upstream/types.ts";
import { warpRequestOf } from "../src/upstream/warp-api.ts";
import { anyFormId32Argument, hexBytesArgument, isCheckedCb58Id } from "../src/upstream/identifiers.ts";
import { checkUnsignedWarpMessage, decodeSignedWarpMessage, type SignedWarpMessage } from "../src/warp/message.ts";
import { WarpDecodeError } from "../src/warp/reader.ts";
import { signingSubnetOf, verifyAgainstSubnet } from "../src/execution/warp-signing-subnet.ts";

export const MAX_PERCENTAGE = 100;

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
  pChainHeight?: string | null;
}

/** Hex that holds an unsigned Warp message, whole (the route cannot sign anything else). */
function unsignedMessageArgument(argument: string, hex: string): void {
  try {
    checkUnsignedWarpMessage(Buffer.from(hex.replace(/^0x/, ""), "hex"));
  } catch (error) {
    if (!(error instanceof WarpDecodeError)) throw error;
    throw badUserInput(argument, `${argument} is not an unsigned Warp message: ${error.message}`, { offset: error.offset });
  }
}

function aggregationRequest(input: AggregateInput) {
  const message = hexBytesArgument("input.message", input.message);
  if (message !== undefined) unsignedMessageArgument("input.message", message);
  const justification = hexBytesArgument("input.justification", input.justification);
  if (message === undefined && justification === undefined) {
    throw badUserInput("input.message", "input.message or input.justification is required");
  }
  if (input.signingSubnetId != null) anyFormId32Argument("input.signingSubnetId", input.signingSubnetId);
  const quorumPercentage = percentageArgument("input.quorumPercentage", input.quorumPercentage ?? DEFAULT_QUORUM_PERCENTAGE);
  const quorumPercentageBuffer = percentageArgument("input.quorumPercentageBuffer", input.quorumPercentageBuffer ?? 0);
  if (quorumPercentage + quorumPercentageBuffer > MAX_PERCENTAGE) {
    throw badUserInput(
      "input.quorumPercentageBuffer",
      `input.quorumPercentage plus input.quorumPercentageBuffer must not pass ${MAX_PERCENTAGE}, got ${quorumPercentage} + ${quorumPercentageBuffer}`,
    );
  }
  const pChainHeight = input.pChainHeight == null ? undefined : BigInt(input.pChainHeight);
  if (pChainHeight !== undefined && (pChainHeight < 0n || pChainHeight > BigInt(Number.MAX_SAFE_INTEGER))) {
    throw badUserInput(
      "input.pChainHeight",
      `input.pChainHeight must be a P-Chain height from 0 to ${Number.MAX_SAFE_INTEGER}, got ${input.pChainHeight}`,
      { min: 0, max: Number.MAX_SAFE_INTEGER },
    );
  }
  return {
    message,
    justification,
    signingSubnetId: input.signingSubnetId ?? undefined,
    quorumPercentage,
    quorumPercentageBuffer,
    pChainHeight: pChainHeight === undefined ? undefined : Number(pChainHeight),
  };
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
      const named =
        args.signingSubnetId != null
          ? anyFormId32Argument("signingSubnetId", args.signingSubnetId)
          : view.request.signingSubnetId
            ? anyFormId32Argument("input.signingSubnetId", view.request.signingSubnetId)
            : undefined;
      const subnetId = await signingSubnetOf(view.message, view.request, named, context.loaders);
      if (subnetId === null) return null;
      return verifyAgainstSubnet(view.message, view.request.network, subnetId, context.loaders, context.warpVerifier);
    },
  }),
}));

builder.mutationFields((t) => ({
  aggregateWarpSignatures: t.field({
    type: SignedWarpMessageRef,
    // Nullable like every field that calls upstream: its failure must not erase a sibling mutation's result.
    nullable: true,
    extensions: upstreamCalls(callCost(ROUTES.aggregateSignatures)),
    description:
      "Has the signing subnet's validators sign a Warp message and returns it with their aggregate signature (`POST /v1/signatureAggregator/{network}/aggregateSignatures`). Sent once, never retried. Null, with its error at this field's path, when the signatures could not be aggregated; other mutations of the document run and keep their results either way.",
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
      if (!isCheckedCb58Id(args.txHash)) {
        throw badUserInput("txHash", `txHash must be a transaction id in cb58, got ${JSON.stringify(args.txHash)}`);
      }
      return context.upstreams.warp.getTransactionMessage(upstreamNetwork(args.network), args.txHash, context.call);
    },
  }),
}));
