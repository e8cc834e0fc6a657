/** The validators of L1s, as the P-Chain records them. */
import { originOf } from "../src/upstream/primary-network-api.ts";
import { parsedOrRefused, validKey } from "../src/execution/global-ids.ts";
import { CB58_ID, HEX_32 } from "../src/upstream/identifiers.ts";
import type { BalanceOwner, L1Validator } from "../src/upstream/types.ts";
import { builder } from "./builder.ts";
import { dateTimeOf } from "./date-times.ts";
import { NetworkRef } from "./networks.ts";
import { networkRecordId, parseNetworkRecordId } from "./primary-network.ts";

export const BalanceOwnerRef = builder.objectRef<BalanceOwner>("BalanceOwner").implement({
  description: "Keys that may act for an L1 validator.",
  fields: (t) => ({
    addresses: t.exposeStringList("addresses", { description: "The owners' P-Chain addresses." }),
    threshold: t.exposeInt("threshold", {
      description: "How many of `addresses` must sign: a signature threshold (a `threshold` argument is a balance).",
    }),
  }),
});

export const L1ValidatorRef = builder.objectRef<L1Validator>("L1Validator");

builder.node(L1ValidatorRef, {
  description:
    "A validator of an L1, with the balance it pays the P-Chain's continuous fee from; inactive once its balance is gone or it was disabled (`GET /v1/networks/{network}/l1Validators`).",
  id: {
    resolve: (validator) => networkRecordId(validator, validator.validationId),
    // Checked like the `l1Validators(l1ValidationId:)` argument.
    parse: (id) =>
      parsedOrRefused(() =>
        parseNetworkRecordId("L1Validator", id, {
          shape: "a validation id in cb58 or as 0x and 64 hex digits",
          valid: (validationId) => CB58_ID.test(validationId) || HEX_32.test(validationId),
        }),
      ),
  },
  loadOne: (key, context) => context.loaders.l1Validator.load(validKey(key)),
  fields: (t) => ({
    network: t.field({
      type: NetworkRef,
      description: "The validator's network.",
      resolve: (validator) => originOf(validator).network,
    }),
    validationId: t.exposeString("validationId", { description: "The validation's id (cb58): this validator's term on the L1." }),
    validationIdHex: t.exposeString("validationIdHex", { description: "The same id as 0x hex." }),
    nodeId: t.exposeString("nodeId", { description: "The validator's node (`NodeID-...`)." }),
    subnetId: t.exposeString("subnetId", { description: "The L1 it validates (its subnet id, cb58)." }),
    weight: t.expose("weight", { type: "BigInt", description: "Its weight in the L1's validator set." }),
    remainingBalance: t.expose("remainingBalance", {
      type: "BigInt",
      description: "What is left of the balance it pays fees from, in nAVAX; 0 once inactive.",
    }),
    creationTimestamp: t.expose("creationTimestamp", {
      type: "SafeInt",
      description: "When it was added to the L1, in Unix seconds.",
    }),
    creationTime: t.field({
      type: "DateTime",
      description: "`creationTimestamp` as a date.",
      resolve: (parent) => dateTimeOf(parent.creationTimestamp),
    }),
    blsCredentials: t.expose("blsCredentials", {
      type: "JSONObject",
      description: "Its BLS key (public key, proof of possession), as the Data API sends it.",
    }),
    remainingBalanceOwner: t.expose("remainingBalanceOwner", {
      type: BalanceOwnerRef,
      description: "Who receives the remaining balance when the validator leaves.",
    }),
    deactivationOwner: t.expose("deactivationOwner", { type: BalanceOwnerRef, description: "Who may disable the validator." }),
  }),
});

export const L1ValidatorConnectionRef = builder.connectionObject(
  {
    type: L1ValidatorRef,
    name: "L1ValidatorConnection",
    description: "A page of L1 validators.",
    fields: (t) => ({
      blockHeight: t.field({
        type: "BigInt",
        nullable: true,
        description: "The P-Chain height the list is as of; null when no page was read (`first: 0`).",
        resolve: (connection) => (connection as unknown as { meta: string | undefined }).meta ?? null,
      }),
    }),
  },
  { name: "L1ValidatorEdge", description: "An L1 validator and the cursor that continues after it." },
);
