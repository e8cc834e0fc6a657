/** Subnets (and L1s) of a network, by their id: what the graph serves about one subnet. */
import { builder } from "./builder.ts";
import { NetworkRef, type NetworkName } from "./networks.ts";

/** A subnet of a network: the parent of `Subnet`, not an upstream record. */
export interface SubnetScope {
  network: NetworkName;
  subnetId: string;
}

export const SubnetRef = builder.objectRef<SubnetScope>("Subnet").implement({
  description:
    "A subnet (or L1) of a network, by its id: its L1 validators and its staking metrics. Costs no upstream call by itself; the primary network is the subnet `11111111111111111111111111111111LpoYY`.",
  fields: (t) => ({
    network: t.expose("network", { type: NetworkRef, description: "The subnet's network (`MAINNET` or `FUJI`)." }),
    subnetId: t.exposeString("subnetId", { description: "The subnet's id (cb58)." }),
  }),
});
