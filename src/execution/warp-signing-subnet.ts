/**
 * Who signed a Warp message: the subnet whose validators sign it, the validators the Data API
 * lists for it, and the check of the aggregate signature against them. Resolvers validate the
 * caller's ids and call this; this reads through the request's loaders, never the clients, so it
 * sits in execution, above src/warp/ (the codec and the signature check it uses).
 */
import type { Loaders } from "./context.ts";
import { primaryChain, type PrimaryNetworkName } from "../upstream/primary-network-api.ts";
import { ROUTES } from "../upstream/routes.ts";
import type { WarpRequest } from "../upstream/warp-api.ts";
import { encodeCb58 } from "../upstream/cb58.ts";
import type { SignedWarpMessage } from "../warp/message.ts";
import { decodeWarpPayload } from "../warp/payload.ts";
import type { WarpVerifier } from "../warp/verifier.ts";
import type { CanonicalValidatorSet, ValidatorEntry, WarpVerification } from "../warp/verify.ts";

/** Avalanche's network ids. */
const NETWORK_IDS: Record<PrimaryNetworkName, number> = { mainnet: 1, fuji: 5 };
/** Subnets with more validators than this many pages are not verified. */
const MAX_VALIDATOR_PAGES = 20;
const BLS_PUBLIC_KEY = /^(?:0x)?([0-9a-fA-F]{96})$/;

type WarpLoaders = Pick<Loaders, "primaryNetworkTransaction" | "l1Validator" | "chain" | "primaryNetworkPages">;

/** The outcome of checking a message against its signing subnet's validators. */
export interface SubnetVerification {
  signingSubnetId: string;
  /** The P-Chain height the validator list is as of. */
  blockHeight: string;
  set: CanonicalValidatorSet;
  result: WarpVerification;
}

/**
 * The subnet whose validators signed: `named` (the caller's, in cb58), else the subnet of the
 * P-Chain transaction the message came by, else the L1 a P-Chain message is about, else the subnet
 * of the source chain. Null when none of these is known.
 */
export async function signingSubnetOf(
  message: SignedWarpMessage,
  request: WarpRequest,
  named: string | undefined,
  loaders: WarpLoaders,
): Promise<string | null> {
  if (named) return named;
  if (request.txHash) {
    const tx = await loaders.primaryNetworkTransaction.load({
      origin: primaryChain(request.network, "p-chain"),
      id: request.txHash,
    });
    if (tx && "subnetId" in tx && tx.subnetId) return tx.subnetId;
  }
  const content = decodeWarpPayload(message.payload);
  const platformMessage = content?.kind === "addressedCall" ? content.platformMessage : null;
  if (platformMessage?.kind === "registerL1Validator") return encodeCb58(platformMessage.subnetId);
  if (platformMessage?.kind === "l1ValidatorRegistration" || platformMessage?.kind === "l1ValidatorWeight") {
    const validator = await loaders.l1Validator.load({ network: request.network, id: encodeCb58(platformMessage.validationId) });
    if (validator) return validator.subnetId;
  }
  if (message.sourceChainId.some((byte) => byte !== 0)) {
    const chain = await loaders.chain.load(encodeCb58(message.sourceChainId));
    if (chain?.subnetId) return chain.subnetId;
  }
  return null;
}

/** Checks the message's aggregate signature against the subnet's validators; null when it has none that can sign. */
export async function verifyAgainstSubnet(
  message: SignedWarpMessage,
  network: PrimaryNetworkName,
  subnetId: string,
  loaders: WarpLoaders,
  verifier: WarpVerifier,
): Promise<SubnetVerification | null> {
  const validators = await subnetValidators(network, subnetId, loaders);
  if (validators === null) return null;
  // Off the event loop, and once per message, signature and validator list (src/warp/verifier.ts).
  const { set, result } = await verifier.verify(message, validators.entries, NETWORK_IDS[network]);
  if (set.validators.length === 0) return null;
  return { signingSubnetId: subnetId, blockHeight: validators.blockHeight, set, result };
}

/** Every validator of a subnet, inactive ones included (their weight counts in the total); null past MAX_VALIDATOR_PAGES. */
async function subnetValidators(network: PrimaryNetworkName, subnetId: string, loaders: WarpLoaders) {
  const entries: ValidatorEntry[] = [];
  let blockHeight = "";
  let pageToken: string | undefined;
  for (let page = 0; page < MAX_VALIDATOR_PAGES; page++) {
    const response = await loaders.primaryNetworkPages.l1Validators(
      network,
      { subnetId, includeInactiveL1Validators: true },
      { pageSize: ROUTES.l1Validators.page.max, pageToken },
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

/** The compressed BLS public key in an L1 validator's credentials, when it has a well-formed one. */
function credentialsPublicKey(credentials: Record<string, unknown> | undefined): Uint8Array | null {
  const text = credentials?.publicKey;
  const digits = typeof text === "string" ? BLS_PUBLIC_KEY.exec(text)?.[1] : undefined;
  return digits === undefined ? null : Buffer.from(digits, "hex");
}
