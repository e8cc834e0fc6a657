/**
 * The entities of this subgraph: for each, its `@key`s (field sets of its own fields), how a
 * representation's key is checked (like the matching argument or global id), how it is found
 * (through the loaders of the matching look-up field) and what that costs (the field's declaration).
 */
import { CHAIN_LIST_LOOKUP, callCost, lookupCost } from "../src/limits/upstream-cost-declarations.ts";
import { BLOCK_NUMBER, CB58_ID, EVM_ADDRESS, EVM_CHAIN_ID, HEX_32 } from "../src/upstream/identifiers.ts";
import { primaryChain, type PrimaryNetworkOrigin } from "../src/upstream/primary-network-api.ts";
import { ROUTES } from "../src/upstream/routes.ts";
import type { PrimaryNetworkTransaction } from "../src/upstream/types.ts";
import { EvmBlockRef } from "./blocks.ts";
import { EvmChainRef } from "./chains.ts";
import { EvmAccountRef, EvmTransactionRef } from "./evm-transactions.ts";
import { entity, type EntityLookup, type Representation } from "./federation.ts";
import { CChainAtomicTransactionRef, PChainTransactionRef, XChainTransactionRef } from "./primary-network-transactions.ts";
import { L1ValidatorRef } from "./primary-network-validators.ts";
import { SubnetRef } from "./subnets.ts";

const NO_CALL = { calls: 0 };

const chainIdOf = (representation: Representation) =>
  representation.string("chainId", "an EVM chain id in decimal (such as 43114)", (value) => EVM_CHAIN_ID.test(value));

entity(EvmChainRef, ["chainId"], {
  key: chainIdOf,
  load: (chainId, context) => context.loaders.chain.load(chainId),
  cost: CHAIN_LIST_LOOKUP,
});

entity(EvmBlockRef, ["chainId blockNumber", "chainId blockHash"], {
  key: (representation) => ({
    chainId: chainIdOf(representation),
    // By hash when the representation gives one (the key the record cache holds), else by number.
    blockId:
      representation.has("blockHash") || !representation.has("blockNumber")
        ? representation.string("blockHash", "a block hash (0x and 64 hex digits)", (value) => HEX_32.test(value)).toLowerCase()
        : representation.string("blockNumber", "a block number in decimal", (value) => BLOCK_NUMBER.test(value)),
  }),
  load: (key, context) => context.loaders.block.load(key),
  cost: lookupCost(ROUTES.block),
});

entity(EvmTransactionRef, ["chainId txHash"], {
  key: (representation) => ({
    chainId: chainIdOf(representation),
    txHash: representation.string("txHash", "a transaction hash (0x and 64 hex digits)", (value) => HEX_32.test(value)),
  }),
  load: (key, context) => context.loaders.transaction.load(key),
  // As `EvmChain.transaction`: the complete view, which the transaction's other fields then share.
  cost: { ...lookupCost(ROUTES.transaction), holds: "complete transaction" },
});

// Two keys, the nested one and the flat one, as EvmBlock has two: Hive Gateway 2.12 splits a
// subgraph whose types have up to n keys into n copies, the i-th with the entity types that have an
// i-th key, and asks the root fields of the last copy; below an object of that copy, a field of
// another subgraph on a type that copy cannot merge (a type with fewer keys) makes the router
// fetch the object's parents again from the first copy, by their keys, to reach it.
entity(EvmAccountRef, ["chain { chainId } address", "chainId address"], {
  key: (representation) => ({
    // By `chainId` when the representation gives it (the flat key), else by `chain { chainId }`.
    chainId: representation.has("chainId") ? chainIdOf(representation) : chainIdOf(representation.object("chain")),
    address: representation.string("address", "an EVM address (0x and 40 hex digits)", (value) => EVM_ADDRESS.test(value)),
  }),
  load: (key) => key,
  cost: NO_CALL,
});

/** A transaction of one chain of the primary network, by the key its type's `network blockchainId txHash` gives. */
function primaryNetworkTransaction<T extends PrimaryNetworkTransaction>(
  chain: PrimaryNetworkOrigin["chain"],
  letter: "P" | "X" | "C",
): EntityLookup<{ origin: PrimaryNetworkOrigin; id: string }, T> {
  return {
    key: (representation) => {
      const origin = primaryChain(representation.network(), chain);
      representation.string(
        "blockchainId",
        `the blockchain id of the ${letter}-Chain of that network (${origin.blockchainId})`,
        (value) => value === origin.blockchainId,
      );
      const id = representation.string("txHash", "a transaction id in cb58", (value) => CB58_ID.test(value));
      return { origin, id };
    },
    load: (key, context) => context.loaders.primaryNetworkTransaction.load(key) as Promise<T | null>,
    cost: lookupCost(ROUTES.primaryNetworkTransaction),
  };
}

const PRIMARY_NETWORK_TRANSACTION_KEY = ["network blockchainId txHash"];
entity(PChainTransactionRef, PRIMARY_NETWORK_TRANSACTION_KEY, primaryNetworkTransaction("p-chain", "P"));
entity(XChainTransactionRef, PRIMARY_NETWORK_TRANSACTION_KEY, primaryNetworkTransaction("x-chain", "X"));
entity(CChainAtomicTransactionRef, PRIMARY_NETWORK_TRANSACTION_KEY, primaryNetworkTransaction("c-chain", "C"));

entity(L1ValidatorRef, ["network validationId"], {
  key: (representation) => ({
    network: representation.network(),
    id: representation.string(
      "validationId",
      "a validation id in cb58 or as 0x and 64 hex digits",
      (value) => CB58_ID.test(value) || HEX_32.test(value),
    ),
  }),
  load: (key, context) => context.loaders.l1Validator.load(key),
  // As `PrimaryNetwork.l1Validator(validationId:)`.
  cost: callCost(ROUTES.l1Validators),
});

entity(SubnetRef, ["network subnetId"], {
  key: (representation) => ({
    network: representation.network(),
    subnetId: representation.string("subnetId", "a subnet id in cb58", (value) => CB58_ID.test(value)),
  }),
  load: (key) => key,
  cost: NO_CALL,
});
