/** The links of an EVM account: to its chain, and from a transaction to its sender's and receiver's accounts. */
import { builder } from "../schema/builder.ts";
import { EvmChainRef } from "../schema/chains.ts";
import { EvmAccountRef, EvmTransactionRef } from "../schema/evm-transactions.ts";
import { GatewayError } from "../src/errors.ts";
import { CHAIN_FIELDS_KNOWN_FROM_ACCOUNT, selectsOnly } from "../src/execution/selection.ts";
import { CHAIN_LIST_LOOKUP, upstreamCalls } from "../src/limits/upstream-cost-declarations.ts";
import { quoted } from "../src/upstream/identifiers.ts";
import type { ChainInfo } from "../src/upstream/types.ts";

builder.objectFields(EvmAccountRef, (t) => ({
  chain: t.field({
    type: EvmChainRef,
    // The chain it was reached from, else the held chain list: a transaction's chain is in it.
    extensions: upstreamCalls({ ...CHAIN_LIST_LOOKUP, freeWhenSelectingOnly: CHAIN_FIELDS_KNOWN_FROM_ACCOUNT }),
    description: "The chain the address is looked at on.",
    resolve: async (account, _args, context, info) => {
      if (account.chain) return account.chain;
      // A federation router asks an account's key (`chain { chainId } address`): known without a call.
      if (selectsOnly(info, CHAIN_FIELDS_KNOWN_FROM_ACCOUNT)) return { chainId: account.chainId } as ChainInfo;
      const chain = await context.loaders.chain.load(account.chainId);
      if (!chain) throw new GatewayError(`The Data API does not index a chain ${quoted(account.chainId)}`, "NOT_FOUND");
      return chain;
    },
  }),
}));

builder.objectFields(EvmTransactionRef, (t) => ({
  fromAccount: t.field({
    type: EvmAccountRef,
    description:
      "The sender (`from`) as an account on the transaction's chain: its transactions, and what other subgraphs tell of it. Costs no upstream call by itself.",
    resolve: (tx) => ({ chainId: tx.chainId, address: tx.from.address }),
  }),
  toAccount: t.field({
    type: EvmAccountRef,
    description:
      "The receiver (`to`) as an account on the transaction's chain: its transactions, and what other subgraphs tell of it. Costs no upstream call by itself.",
    resolve: (tx) => ({ chainId: tx.chainId, address: tx.to.address }),
  }),
}));
