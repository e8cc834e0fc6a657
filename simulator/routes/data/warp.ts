import type { paths } from "../../../src/upstream/contract/data-api.ts";
import { badRequest, HttpError, notFound } from "../../http/errors.ts";
import { routeDefiner, type RouteDefinition } from "../../http/router.ts";
import { decodeCb58, encodeCb58 } from "../../network/ids.ts";
import { networkNamed, type NetworkName, type SampleNetwork } from "../../network/index.ts";
import { decodeUnsignedMessage } from "../../network/warp/codec.ts";
import { AggregationError, WarpAggregator, type Quorum } from "../../network/warp/index.ts";
import type { SignatureAggregationRequest, UpstreamNetwork } from "../../../src/upstream/types.ts";

const dataRoute = routeDefiner<paths>();

const HEX = /^(?:0x)?((?:[0-9a-fA-F]{2})*)$/;
const HEX_ID = /^(?:0x)?([0-9a-fA-F]{64})$/;
const DEFAULT_QUORUM = 67;

export function warpRoutes(network: SampleNetwork): RouteDefinition[] {
  const aggregators = new Map<NetworkName, WarpAggregator>();
  const aggregatorOf = (name: UpstreamNetwork) => {
    const named = networkNamed(name)!;
    let found = aggregators.get(named);
    if (found === undefined) {
      found = new WarpAggregator(network.primaryNetwork(named));
      aggregators.set(named, found);
    }
    return found;
  };
  const sign = (aggregator: WarpAggregator, ...args: Parameters<WarpAggregator["aggregate"]>) => {
    try {
      return { signedMessage: aggregator.aggregate(...args) };
    } catch (error) {
      if (error instanceof AggregationError) throw new HttpError(500, error.message);
      throw error;
    }
  };

  return [
    dataRoute("POST", "/v1/signatureAggregator/{network}/aggregateSignatures", ({ path, body }) => {
      const request = aggregationRequest(body);
      const aggregator = aggregatorOf(path.network);
      // The validators rebuild an L1 message from a justification only beside the message itself.
      const message = decodeUnsignedMessage(request.message);
      if (message === undefined) throw badRequest("Error unpacking warp message");
      return sign(aggregator, message, request.signingSubnetId, request.quorum);
    }),

    dataRoute("GET", "/v1/signatureAggregator/{network}/aggregateSignatures/{txHash}", ({ path }) => {
      if (decodeCb58(path.txHash)?.length !== 32) throw badRequest("txHash must be a transaction id in cb58");
      const aggregator = aggregatorOf(path.network);
      const primary = network.primaryNetwork(networkNamed(path.network)!);
      const tx = primary.transaction("P", path.txHash) ?? primary.transaction("X", path.txHash);
      if (tx === undefined) throw notFound(`Transaction ${path.txHash} not found`);
      const implied = tx.chain === "P" ? aggregator.transactionMessage(tx) : undefined;
      if (implied === undefined) throw notFound(`Transaction ${path.txHash} has no P-Chain L1 Warp message`);
      return sign(aggregator, implied.message, implied.signingSubnetId, { percentage: DEFAULT_QUORUM, buffer: 0 });
    }),
  ];
}

/** The body's fields checked and decoded, with the aggregator's defaults. */
function aggregationRequest(body: unknown): { message: Buffer; signingSubnetId: string | undefined; quorum: Quorum } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw badRequest("Could not decode request body");
  const request = body as SignatureAggregationRequest;
  const text = (name: "message" | "justification" | "signingSubnetId") => {
    const value = request[name];
    if (value !== undefined && typeof value !== "string") throw badRequest(`${name} must be a string`);
    return value;
  };
  const message = HEX.exec(text("message") ?? "")?.[1];
  if (message === undefined) throw badRequest("Could not decode message");
  const justification = HEX.exec(text("justification") ?? "")?.[1];
  if (justification === undefined) throw badRequest("Could not decode justification");
  if (/^0*$/.test(message) && /^0*$/.test(justification)) throw badRequest("Must provide either message or justification");

  const integer = (name: "quorumPercentage" | "quorumPercentageBuffer" | "pChainHeight", max: number) => {
    const value = request[name] ?? 0;
    if (!Number.isInteger(value) || value < 0 || value > max) throw badRequest(`${name} must be an integer from 0 to ${max}`);
    return value;
  };
  const quorumPercentage = integer("quorumPercentage", 100) || DEFAULT_QUORUM;
  const buffer = integer("quorumPercentageBuffer", 100);
  if (quorumPercentage + buffer > 100)
    throw badRequest("quorumPercentage plus quorumPercentageBuffer must not be greater than 100");
  integer("pChainHeight", Number.MAX_SAFE_INTEGER);

  const subnet = text("signingSubnetId");
  let signingSubnetId: string | undefined;
  if (subnet !== undefined && subnet !== "") {
    const hex = HEX_ID.exec(subnet)?.[1];
    signingSubnetId =
      hex !== undefined ? encodeCb58(Buffer.from(hex, "hex")) : decodeCb58(subnet)?.length === 32 ? subnet : undefined;
    if (signingSubnetId === undefined) throw badRequest("Error parsing signing subnet ID");
  }
  return { message: Buffer.from(message, "hex"), signingSubnetId, quorum: { percentage: quorumPercentage, buffer } };
}
