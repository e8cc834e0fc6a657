/**
 * The primary network's L1 validators: the list and one validator of a network, the validators of
 * the same L1 and the P-Chain transactions of one validation. Every argument is checked before any
 * upstream call.
 */
import { builder } from "../schema/builder.ts";
import { validationIdArguments } from "../schema/renamed-arguments.ts";
import { SortOrderRef } from "../schema/evm-transactions.ts";
import { PrimaryNetworkRef } from "../schema/primary-network.ts";
import { PChainTransactionType } from "../schema/primary-network-transaction-kinds.ts";
import { PChainTransactionConnectionRef } from "../schema/primary-network-transactions.ts";
import { L1ValidatorConnectionRef, L1ValidatorRef } from "../schema/primary-network-validators.ts";
import type { GatewayContext } from "../src/execution/context.ts";
import { badUserInput } from "../src/errors.ts";
import { cb58IdArgument, nodeIdArgument, validationIdFilter } from "../src/upstream/identifiers.ts";
import { chooseValidationOfNode } from "../src/execution/loaders/primary-network.ts";
import { toPageTokenConnection, type ConnectionArgs } from "../src/execution/pagination.ts";
import { callCost, connectionCost, upstreamCalls } from "../src/limits/upstream-cost-declarations.ts";
import { originOf, primaryChain, type L1ValidatorFilters, type PrimaryNetworkName } from "../src/upstream/primary-network-api.ts";
import { ROUTES } from "../src/upstream/routes.ts";
import type { L1Validator, PChainTransaction } from "../src/upstream/types.ts";
import { transactionConnection } from "./primary-network-transactions.ts";

const { primaryNetworkTransactions, l1Validators } = ROUTES;

builder.objectFields(PrimaryNetworkRef, (t) => ({
  l1Validators: t.field({
    type: L1ValidatorConnectionRef,
    nullable: true,
    extensions: upstreamCalls(connectionCost(l1Validators)),
    description: `The network's L1 validators, the active ones unless \`includeInactive\` (\`${l1Validators.label}\`). ${l1Validators.firstText}`,
    args: {
      ...t.arg.connectionArgs(),
      ...validationIdArguments(t.arg, "Only the validator of this validation id"),
      includeInactive: t.arg.boolean({ description: "Also list validators that were disabled or ran out of balance." }),
      nodeId: t.arg.string({ description: "Only validators of this node: `NodeID-` followed by its id in cb58." }),
      subnetId: t.arg.string({ description: "Only validators of this L1 (its subnet id, cb58)." }),
    },
    resolve: (scope, args, context) => {
      const filters: L1ValidatorFilters = {
        l1ValidationId: validationIdFilter(args),
        includeInactiveL1Validators: args.includeInactive ?? undefined,
        nodeId: args.nodeId != null ? nodeIdArgument("nodeId", args.nodeId) : undefined,
        subnetId: args.subnetId != null ? cb58IdArgument("subnetId", args.subnetId, "a subnet id") : undefined,
      };
      return l1ValidatorConnection(scope.network, filters, args, "PrimaryNetwork.l1Validators", context);
    },
  }),
  l1Validator: t.field({
    type: L1ValidatorRef,
    nullable: true,
    extensions: upstreamCalls(callCost(l1Validators)),
    description:
      "One L1 validator, active or not, by exactly one of `validationId` and `nodeId` (`GET /v1/networks/{network}/l1Validators` with `includeInactiveL1Validators`); null when there is none. A node may have validated more than once (or validate several L1s): by `nodeId`, the answer is its active validation, the latest created if it has several, else its latest validation; list them all with `l1Validators(nodeId:, includeInactive: true)`.",
    args: {
      validationId: t.arg.string({ description: "The validation's id, in cb58 or as 0x and 64 hex digits." }),
      nodeId: t.arg.string({ description: "The validator's node: `NodeID-` followed by its id in cb58." }),
    },
    resolve: (scope, args, context) => {
      const byValidation = args.validationId !== null && args.validationId !== undefined;
      const byNode = args.nodeId !== null && args.nodeId !== undefined;
      if (byValidation === byNode) {
        throw badUserInput(byValidation ? "nodeId" : "validationId", "give exactly one of validationId and nodeId");
      }
      if (byValidation) {
        const id = cb58IdArgument("validationId", args.validationId!, "a validation id", true);
        return context.loaders.l1Validator.load({ network: scope.network, id });
      }
      return l1ValidatorOfNode(scope.network, nodeIdArgument("nodeId", args.nodeId!), context);
    },
  }),
}));

/** A node's validations, active or not, in the route's largest page; the one `chooseValidationOfNode` picks. */
async function l1ValidatorOfNode(
  network: PrimaryNetworkName,
  nodeId: string,
  context: GatewayContext,
): Promise<L1Validator | null> {
  const filters: L1ValidatorFilters = { nodeId, includeInactiveL1Validators: true };
  const page = await context.loaders.primaryNetworkPages.l1Validators(network, filters, {
    pageSize: l1Validators.page.max,
    pageToken: undefined,
  });
  return chooseValidationOfNode(page.items);
}

/** A page of a network's L1 validators, through the list route's filters. */
export async function l1ValidatorConnection(
  network: PrimaryNetworkName,
  filters: L1ValidatorFilters,
  args: ConnectionArgs,
  field: string,
  context: GatewayContext,
) {
  const connection = await toPageTokenConnection<L1Validator, string>(args, {
    bounds: l1Validators.page,
    filters: { field, network, ...filters },
    nodeKey: (validator) => validator.validationId,
    fetchPage: async (page) => {
      const response = await context.loaders.primaryNetworkPages.l1Validators(network, filters, page);
      return { items: response.items, nextPageToken: response.nextPageToken, meta: response.blockHeight };
    },
  });
  return connection;
}

builder.objectFields(L1ValidatorRef, (t) => ({
  subnetValidators: t.field({
    type: L1ValidatorConnectionRef,
    nullable: true,
    extensions: upstreamCalls(connectionCost(l1Validators)),
    description: `The validators of the same L1, this one among them: the active ones unless \`includeInactive\` (\`${l1Validators.label}\` with its \`subnetId\`). ${l1Validators.firstText}`,
    args: {
      ...t.arg.connectionArgs(),
      includeInactive: t.arg.boolean({ description: "Also list validators that were disabled or ran out of balance." }),
    },
    resolve: (validator, args, context) => {
      const filters: L1ValidatorFilters = {
        subnetId: validator.subnetId,
        includeInactiveL1Validators: args.includeInactive ?? undefined,
      };
      return l1ValidatorConnection(originOf(validator).network, filters, args, "L1Validator.subnetValidators", context);
    },
  }),
  transactions: t.field({
    type: PChainTransactionConnectionRef,
    nullable: true,
    extensions: upstreamCalls(connectionCost(primaryNetworkTransactions)),
    description: `The P-Chain transactions of this validation, newest first unless \`sortOrder\` says otherwise: its registration (or the conversion that created it), weight changes, balance top-ups and its disabling (\`${primaryNetworkTransactions.label}\` with its \`l1ValidationId\`, this validation's \`validationId\`). ${primaryNetworkTransactions.firstText}`,
    args: {
      ...t.arg.connectionArgs(),
      txTypes: t.arg({ type: [PChainTransactionType.ref], description: "Only transactions of these kinds." }),
      from: t.arg({ type: "SafeInt", description: "Only transactions accepted at or after this Unix time (seconds, >= 0)." }),
      to: t.arg({ type: "SafeInt", description: "Only transactions accepted at or before this Unix time (seconds, >= 0)." }),
      sortOrder: t.arg({ type: SortOrderRef, description: "ASC: oldest first; DESC (the default): newest first." }),
    },
    resolve: (validator, args, context) =>
      transactionConnection<PChainTransaction>(
        primaryChain(originOf(validator).network, "p-chain"),
        { ...args, validationId: validator.validationId },
        "L1Validator.transactions",
        context,
      ),
  }),
}));
