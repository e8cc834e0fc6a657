/**
 * `Query.primaryNetwork`, its chains by id or alias, and the C-Chain as an EVM chain; with the
 * checks of the arguments that name a chain or its addresses, which the primary network's other
 * resolvers share. Every argument is checked before any upstream call.
 */
import { builder } from "../schema/builder.ts";
import { EvmChainRef } from "../schema/chains.ts";
import { NetworkRef, upstreamNetwork } from "../schema/networks.ts";
import { CChainRef, PrimaryNetworkChainRef, PrimaryNetworkRef } from "../schema/primary-network.ts";
import { badUserInput } from "../src/errors.ts";
import { BECH32_ADDRESS, EVM_ADDRESS, addressCountArgument, bech32AddressProblem, quoted } from "../src/upstream/identifiers.ts";
import { CHAIN_LIST_LOOKUP, upstreamCalls } from "../src/limits/upstream-cost-declarations.ts";
import { findPrimaryChain, type PrimaryNetworkName, type PrimaryNetworkOrigin } from "../src/upstream/primary-network-api.ts";
import type { PrimaryNetworkChainInfo } from "../src/upstream/types.ts";

/**
 * Addresses of `network` for an upstream filter, comma-joined: bech32 with or without the chain
 * letter, or 0x where `evm`; at most `MAX_ADDRESSES`. `required`: the argument cannot be left
 * out, so an empty list is refused as such.
 */
export function addressesArgument(
  argument: string,
  addresses: readonly string[],
  network: PrimaryNetworkName,
  evm: boolean,
  required = false,
): string {
  if (addresses.length === 0) {
    throw required
      ? badUserInput(argument, `${argument} must hold at least one address: the route lists the UTXOs of the addresses given`, {
          min: 1,
        })
      : badUserInput(argument, `${argument} must not be empty; leave it out to list without an address filter`);
  }
  addressCountArgument(argument, addresses);
  for (const address of addresses) {
    if (!BECH32_ADDRESS.test(address) && !(evm && EVM_ADDRESS.test(address))) {
      const forms = evm
        ? "a bech32 address (avax1..., with or without a chain letter such as C-) or a 0x address"
        : "a bech32 address (avax1..., with or without a chain letter such as P-)";
      throw badUserInput(argument, `each of ${argument} must be ${forms}, got ${JSON.stringify(address)}`);
    }
    const problem = EVM_ADDRESS.test(address) ? undefined : bech32AddressProblem(address, network);
    if (problem !== undefined) throw badUserInput(argument, `${argument} holds ${quoted(address)}: ${problem}`);
  }
  return addresses.join(",");
}

/** One of a network's three chains, by its blockchain id or its alias (`p-chain`, `x-chain`, `c-chain`). */
export function primaryChainArgument(argument: string, network: PrimaryNetworkName, value: string): PrimaryNetworkOrigin {
  const origin = findPrimaryChain(network, value);
  if (!origin) {
    throw badUserInput(
      argument,
      `${argument} must be the blockchain id of the ${network} P-, X- or C-Chain, or p-chain, x-chain or c-chain; got ${JSON.stringify(value)}`,
    );
  }
  return origin;
}

/** A connection that read no page (`first: 0`) still tells its chain: the one it was asked of. */
export function withChainInfo<C extends { meta: PrimaryNetworkChainInfo | undefined }>(
  connection: C,
  origin: PrimaryNetworkOrigin,
): C {
  connection.meta ??= { chainName: origin.chain, network: origin.network };
  return connection;
}

builder.queryFields((t) => ({
  primaryNetwork: t.field({
    type: PrimaryNetworkRef,
    description: "The Avalanche primary network (P-, X- and C-Chain) of a network, and its L1 validators.",
    args: { network: t.arg({ type: NetworkRef, required: true, description: "The network; `TESTNET` is the same as `FUJI`." }) },
    resolve: (_root, args) => ({ network: upstreamNetwork(args.network) }),
  }),
}));

builder.objectFields(PrimaryNetworkRef, (t) => ({
  blockchain: t.field({
    type: PrimaryNetworkChainRef,
    nullable: true,
    description: "One chain of this primary network by its blockchain id, or by `p-chain`, `x-chain` or `c-chain`.",
    args: {
      id: t.arg.string({
        required: true,
        description: "A blockchain id (cb58) of one of this network's three chains, or an alias.",
      }),
    },
    resolve: (scope, args) => {
      return primaryChainArgument("id", scope.network, args.id);
    },
  }),
}));

builder.objectFields(CChainRef, (t) => ({
  evmChain: t.field({
    type: EvmChainRef,
    nullable: true,
    extensions: upstreamCalls(CHAIN_LIST_LOOKUP),
    description: "The C-Chain as an EVM chain, with its blocks and EVM transactions.",
    resolve: (chain, _args, context) => context.loaders.chain.load(chain.blockchainId),
  }),
}));
