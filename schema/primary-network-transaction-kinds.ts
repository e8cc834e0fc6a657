/**
 * The kinds of primary-network transaction (`txType`): each chain's own enum, which its
 * `transactions(txTypes:)` filter takes, and the one enum of all three chains' kinds together.
 */
import {
  cChainExportTransactionTxTypeValues,
  cChainImportTransactionTxTypeValues,
  pChainTransactionTypeValues,
  primaryNetworkTxTypeValues,
  xChainTransactionTypeValues,
} from "../src/upstream/contract/data-api.ts";
import { upstreamEnum } from "./enums.ts";

export const PChainTransactionType = upstreamEnum(
  "PChainTransactionType",
  pChainTransactionTypeValues,
  "The kinds of P-Chain transaction that `PChain.transactions(txTypes:)` filters by (a transaction's own `txType` is a `PrimaryNetworkTransactionType`, which holds these values too).",
  {
    AddValidatorTx: "Adds a primary network validator (before the Banff upgrade).",
    AddSubnetValidatorTx: "Adds a validator to a subnet.",
    AddDelegatorTx: "Delegates stake to a primary network validator (before the Banff upgrade).",
    CreateChainTx: "Creates a blockchain on a subnet.",
    CreateSubnetTx: "Creates a subnet; its id is the transaction's hash.",
    ImportTx: "Takes AVAX that another chain exported to the P-Chain out of shared memory.",
    ExportTx: "Sends AVAX to another chain's shared memory.",
    AdvanceTimeTx: "Moves the P-Chain's clock forward (before the Banff upgrade).",
    RewardValidatorTx: "Ends a staking period: returns the stake and pays the rewards.",
    RemoveSubnetValidatorTx: "Removes a validator from a subnet.",
    TransformSubnetTx: "Turns a subnet into an elastic (permissionless) subnet.",
    AddPermissionlessValidatorTx: "Adds a validator, with its BLS key.",
    AddPermissionlessDelegatorTx: "Delegates stake to a validator.",
    BaseTx: "Transfers AVAX on the P-Chain.",
    TransferSubnetOwnershipTx: "Hands a subnet to new owners.",
    ConvertSubnetToL1Tx: "Converts a subnet into an L1 with its first validators and a validator manager.",
    RegisterL1ValidatorTx: "Adds a validator to an L1.",
    SetL1ValidatorWeightTx: "Changes an L1 validator's weight.",
    DisableL1ValidatorTx: "Disables an L1 validator and returns its remaining balance.",
    IncreaseL1ValidatorBalanceTx: "Adds to the balance an L1 validator pays its fees from.",
    UNKNOWN: "A transaction the Data API does not classify, or a kind added after this gateway was built.",
  },
);

export const XChainTransactionType = upstreamEnum(
  "XChainTransactionType",
  xChainTransactionTypeValues,
  "The kinds of X-Chain transaction that `XChain.transactions(txTypes:)` filters by (a transaction's own `txType` is a `PrimaryNetworkTransactionType`, which holds these values too).",
  {
    BaseTx: "Transfers assets on the X-Chain.",
    CreateAssetTx: "Creates an asset; its id is the transaction's hash.",
    OperationTx: "Mints or transfers non-fungible tokens.",
    ImportTx: "Takes assets that another chain exported to the X-Chain out of shared memory.",
    ExportTx: "Sends assets to another chain's shared memory.",
    UNKNOWN: "A transaction the Data API does not classify, or a kind added after this gateway was built.",
  },
);

export const CChainAtomicTransactionType = upstreamEnum(
  "CChainAtomicTransactionType",
  [...cChainImportTransactionTxTypeValues, ...cChainExportTransactionTxTypeValues],
  "The kinds of C-Chain atomic transaction that `CChain.transactions(txTypes:)` filters by (a transaction's own `txType` is a `PrimaryNetworkTransactionType`, which holds these values too).",
  {
    ImportTx: "Takes AVAX from shared memory into C-Chain accounts.",
    ExportTx: "Sends AVAX from C-Chain accounts to another chain's shared memory.",
  },
);

/**
 * The kind of any primary-network transaction: the value set of every chain together, as the
 * Data API's `PrimaryNetworkTxType` holds it. GraphQL requires one type for `txType` on the
 * interface and on each chain's type, so the field has this enum everywhere; each chain's
 * `txTypes` filter keeps the chain's own enum, which offers only the kinds that chain has.
 */
export const PrimaryNetworkTransactionType = upstreamEnum(
  "PrimaryNetworkTransactionType",
  primaryNetworkTxTypeValues,
  "The kind of a transaction of the primary network, of any of its three chains (the values of `PChainTransactionType`, `XChainTransactionType` and `CChainAtomicTransactionType` together). One enum serves `txType` on every chain so that one fragment on `PrimaryNetworkTransaction` can read it; the `txTypes` filter of each chain's `transactions` takes the chain's own enum, which lists only the kinds that chain has.",
  {
    AddValidatorTx: "P-Chain: adds a primary network validator (before the Banff upgrade).",
    AddSubnetValidatorTx: "P-Chain: adds a validator to a subnet.",
    AddDelegatorTx: "P-Chain: delegates stake to a primary network validator (before the Banff upgrade).",
    CreateChainTx: "P-Chain: creates a blockchain on a subnet.",
    CreateSubnetTx: "P-Chain: creates a subnet; its id is the transaction's hash.",
    ImportTx:
      "Any chain: takes assets that another chain exported to this one out of shared memory (on the C-Chain, into accounts).",
    ExportTx: "Any chain: sends assets to another chain's shared memory (on the C-Chain, from accounts).",
    AdvanceTimeTx: "P-Chain: moves the P-Chain's clock forward (before the Banff upgrade).",
    RewardValidatorTx: "P-Chain: ends a staking period, returning the stake and paying the rewards.",
    RemoveSubnetValidatorTx: "P-Chain: removes a validator from a subnet.",
    TransformSubnetTx: "P-Chain: turns a subnet into an elastic (permissionless) subnet.",
    AddPermissionlessValidatorTx: "P-Chain: adds a validator, with its BLS key.",
    AddPermissionlessDelegatorTx: "P-Chain: delegates stake to a validator.",
    BaseTx: "P- or X-Chain: transfers assets on the chain.",
    TransferSubnetOwnershipTx: "P-Chain: hands a subnet to new owners.",
    ConvertSubnetToL1Tx: "P-Chain: converts a subnet into an L1 with its first validators and a validator manager.",
    RegisterL1ValidatorTx: "P-Chain: adds a validator to an L1.",
    SetL1ValidatorWeightTx: "P-Chain: changes an L1 validator's weight.",
    DisableL1ValidatorTx: "P-Chain: disables an L1 validator and returns its remaining balance.",
    IncreaseL1ValidatorBalanceTx: "P-Chain: adds to the balance an L1 validator pays its fees from.",
    CreateAssetTx: "X-Chain: creates an asset; its id is the transaction's hash.",
    OperationTx: "X-Chain: mints or transfers non-fungible tokens.",
    UNKNOWN: "A transaction the Data API does not classify, or a kind added after this gateway was built.",
  },
);
