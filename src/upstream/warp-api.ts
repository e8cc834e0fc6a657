/**
 * Warp signature aggregation on the Data API. The signed message the service returns does not
 * say which network or request it answers, so every response this client returns is registered
 * with its request, which `warpRequestOf` gives back; the record stays as the upstream sent it.
 */
import { nullIfNotFound } from "../errors.ts";
import { ContractClient } from "./contract-client.ts";
import { ROUTES } from "./routes.ts";
import type { CallOptions } from "./call-options.ts";
import type { UpstreamService } from "./http.ts";
import type { PrimaryNetworkName } from "./primary-network-api.ts";
import type { DataPaths, SignatureAggregationRequest, SignatureAggregationResponse } from "./types.ts";

/** What a signed message was asked for with. */
export interface WarpRequest {
  network: PrimaryNetworkName;
  /** The signing subnet the caller named (cb58 or hex), if any. */
  signingSubnetId?: string | undefined;
  /** The P-Chain transaction whose Warp message was asked for, if the message came by transaction. */
  txHash?: string | undefined;
}

const requests = new WeakMap<object, WarpRequest>();

/** The request a response of this client answered. */
export function warpRequestOf(record: object): WarpRequest {
  const request = requests.get(record);
  if (request === undefined) throw new Error("a signed Warp message without its request");
  return request;
}

function register(record: SignatureAggregationResponse, request: WarpRequest): SignatureAggregationResponse {
  requests.set(record, request);
  return record;
}

export class WarpApi {
  readonly client: ContractClient<DataPaths>;

  constructor(service: UpstreamService) {
    this.client = new ContractClient<DataPaths>(service);
  }

  /** `POST /v1/signatureAggregator/{network}/aggregateSignatures`: collects signatures; sent once, never retried. */
  async aggregateSignatures(
    network: PrimaryNetworkName,
    body: SignatureAggregationRequest,
    options?: CallOptions,
  ): Promise<SignatureAggregationResponse> {
    const response = await this.client.post(ROUTES.aggregateSignatures.path, { params: { network }, body }, options);
    return register(response, { network, signingSubnetId: body.signingSubnetId });
  }

  /**
   * `GET /v1/signatureAggregator/{network}/aggregateSignatures/{txHash}`: the signed Warp message
   * a P-Chain L1 transaction implies; null when the service has none for it.
   */
  async getTransactionMessage(
    network: PrimaryNetworkName,
    txHash: string,
    options?: CallOptions,
  ): Promise<SignatureAggregationResponse | null> {
    const response = await nullIfNotFound(
      this.client.get(ROUTES.transactionWarpMessage.path, { params: { network, txHash } }, options),
    );
    return response === null ? null : register(response, { network, txHash });
  }
}
