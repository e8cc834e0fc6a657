/**
 * What the graph serves about one subnet, through the fields that already serve it: its L1
 * validators (the network's list, filtered by the subnet) and its staking metrics; and the link
 * from an L1 validator to its subnet.
 */
import { builder } from "../schema/builder.ts";
import { MetricConnectionRef, StakingMetricRef } from "../schema/metrics.ts";
import { L1ValidatorConnectionRef, L1ValidatorRef } from "../schema/primary-network-validators.ts";
import { SubnetRef } from "../schema/subnets.ts";
import { connectionCost, upstreamCalls } from "../src/limits/upstream-cost-declarations.ts";
import { originOf } from "../src/upstream/primary-network-api.ts";
import { ROUTES } from "../src/upstream/routes.ts";
import { stakingMetricConnection } from "./metrics.ts";
import { l1ValidatorConnection } from "./primary-network-validators.ts";

const { l1Validators, stakingMetrics } = ROUTES;

builder.objectFields(SubnetRef, (t) => ({
  l1Validators: t.field({
    type: L1ValidatorConnectionRef,
    nullable: true,
    extensions: upstreamCalls(connectionCost(l1Validators)),
    description: `The subnet's L1 validators, the active ones unless \`includeInactive\` (\`${l1Validators.label}\` with its \`subnetId\`). ${l1Validators.firstText}`,
    args: {
      ...t.arg.connectionArgs(),
      includeInactive: t.arg.boolean({ description: "Also list validators that were disabled or ran out of balance." }),
    },
    resolve: (subnet, args, context) =>
      l1ValidatorConnection(
        subnet.network,
        { subnetId: subnet.subnetId, includeInactiveL1Validators: args.includeInactive ?? undefined },
        args,
        "Subnet.l1Validators",
        context,
      ),
  }),
  stakingMetrics: t.field({
    type: MetricConnectionRef,
    nullable: true,
    extensions: upstreamCalls(connectionCost(stakingMetrics)),
    description: `A daily staking metric of the subnet (\`${stakingMetrics.label}\` with its \`subnetId\`), as \`PrimaryNetwork.stakingMetrics(subnetId:)\` gives it. Points newest first; \`from\` and \`to\` (Unix seconds, both inclusive) keep the points between them. ${stakingMetrics.firstText}`,
    args: {
      ...t.arg.connectionArgs(),
      metric: t.arg({ type: StakingMetricRef, required: true, description: "The metric." }),
      from: t.arg({ type: "SafeInt", description: "The earliest point's timestamp, in Unix seconds." }),
      to: t.arg({ type: "SafeInt", description: "The latest point's timestamp, in Unix seconds." }),
    },
    resolve: (subnet, args, context) =>
      stakingMetricConnection(subnet.network, subnet.subnetId, args, "Subnet.stakingMetrics", context),
  }),
}));

builder.objectFields(L1ValidatorRef, (t) => ({
  subnet: t.field({
    type: SubnetRef,
    description: "The subnet (L1) the validator validates. Costs no upstream call by itself.",
    resolve: (validator) => ({ network: originOf(validator).network, subnetId: validator.subnetId }),
  }),
}));
