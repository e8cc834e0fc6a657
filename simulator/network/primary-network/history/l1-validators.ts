/**
 * L1s and their validators: a subnet converted to an L1 with its first validators, validators
 * registered, reweighted, topped up and disabled, each change kept within the network's share of
 * active weight.
 */
import type { NetworkName } from "../../chains.ts";
import { encodeCb58 } from "../../ids.ts";
import { BlsKey } from "../bls.ts";
import type { PTransaction, SimBlock, SimL1Validator, Wallet } from "../model.ts";
import { NANO_AVAX, TX_FEE } from "./parameters.ts";
import { newPTx } from "./transactions.ts";
import type { HistoryState, Plan, Subnet } from "./state.ts";
import { emit, fund, payer, spendable } from "./utxos.ts";

/**
 * How much of an L1's weight its active validators hold, so that the sample shows signature
 * aggregation both succeed and fail at the default quorum of 67 %: Fuji's L1s always keep at least
 * this share; mainnet's, once they start losing validators, lose the heaviest until they hold less.
 */
const L1_ACTIVE_SHARE: Record<NetworkName, number> = { fuji: 0.85, mainnet: 0.6 };

/** A change to an L1's validators: one added with its weight, one given a new weight, or one disabled. */
interface L1Change {
  added?: number;
  reweighted?: { validator: SimL1Validator; weight: number };
  disabled?: SimL1Validator;
}

export function planConvert(state: HistoryState): Plan<SimBlock> | undefined {
  const subnet = state.pick(
    state.subnets.filter((candidate) => !candidate.converted && !candidate.transformed && candidate.chains.length > 0),
  );
  if (!subnet) return undefined;
  const balances = [state.random.int(2, 6), state.random.int(2, 6)].map((avax) => avax * 1_000_000_000);
  const burned = BigInt(balances.reduce((sum, balance) => sum + balance, 0));
  if (spendable(state, subnet.owner, "P") < burned + TX_FEE * 10n) return undefined;
  return (block) => {
    const tx = newPTx(state, "ConvertSubnetToL1Tx", block);
    fundL1Balances(state, tx, subnet.owner, burned);
    tx.fields = {
      subnetId: subnet.subnetId,
      l1ValidatorManagerDetails: {
        blockchainId: subnet.chains[0]!,
        contractAddress: `0x${state.digest(`validator-manager:${subnet.subnetId}`).subarray(0, 20).toString("hex")}`,
      },
    };
    subnet.converted = true;
    for (const balance of balances) {
      const validator = newL1Validator(state, subnet, `${tx.txHash}:${tx.l1Changes.length}`, balance, state.random.int(20, 200));
      tx.l1Changes.push({ validator, weight: validator.weight, remainingBalance: balance, showCredentials: true });
    }
    return tx;
  };
}

export function planRegister(state: HistoryState): Plan<SimBlock> | undefined {
  const subnet = state.pick(state.subnets.filter((candidate) => candidate.converted));
  const funder = payer(state, "P", 20n * NANO_AVAX);
  if (!subnet || !funder) return undefined;
  const weight = state.random.int(20, 200);
  if (!keepsActiveShare(state, subnet.subnetId, { added: weight })) return undefined;
  return (block) => {
    const tx = newPTx(state, "RegisterL1ValidatorTx", block);
    const balance = state.random.int(1, 4) * 1_000_000_000;
    fundL1Balances(state, tx, funder, BigInt(balance));
    const validator = newL1Validator(state, subnet, `register:${tx.txHash}`, balance, weight);
    tx.l1Changes.push({
      validator,
      weight: validator.weight,
      remainingBalance: balance,
      balanceChange: balance,
      showCredentials: true,
    });
    tx.fields = { subnetId: subnet.subnetId };
    return tx;
  };
}

export function planSetWeight(state: HistoryState): Plan<SimBlock> | undefined {
  const validator = state.pick(state.l1Validators.filter((candidate) => candidate.remainingBalance > 0));
  const funder = payer(state, "P", TX_FEE * 10n);
  if (!validator || !funder) return undefined;
  const weight = state.random.int(10, 500);
  if (!keepsActiveShare(state, validator.subnetId, { reweighted: { validator, weight } })) return undefined;
  return (block) => {
    const tx = newPTx(state, "SetL1ValidatorWeightTx", block);
    fund(state, tx, funder, TX_FEE);
    tx.burned = TX_FEE;
    validator.weight = weight;
    tx.l1Changes.push({
      validator,
      weight: validator.weight,
      remainingBalance: validator.remainingBalance,
      showCredentials: false,
    });
    tx.fields = { subnetId: validator.subnetId };
    return tx;
  };
}

export function planIncreaseBalance(state: HistoryState): Plan<SimBlock> | undefined {
  const validator = state.pick(state.l1Validators.filter((candidate) => candidate.remainingBalance > 0));
  const funder = payer(state, "P", 10n * NANO_AVAX);
  if (!validator || !funder) return undefined;
  return (block) => {
    const tx = newPTx(state, "IncreaseL1ValidatorBalanceTx", block);
    const increase = state.random.int(1, 3) * 500_000_000;
    fundL1Balances(state, tx, funder, BigInt(increase));
    validator.remainingBalance += increase;
    tx.l1Changes.push({
      validator,
      weight: validator.weight,
      remainingBalance: validator.remainingBalance,
      balanceChange: increase,
      showCredentials: false,
    });
    tx.fields = { subnetId: validator.subnetId };
    return tx;
  };
}

/**
 * Disables a validator of an L1 that keeps at least one other; its balance goes back to its owner.
 * On mainnet, the heaviest validator of an L1 that still holds its share of active weight.
 */
export function planDisable(state: HistoryState): Plan<SimBlock> | undefined {
  const active = state.l1Validators.filter((candidate) => candidate.remainingBalance > 0);
  const allowed = active.filter(
    (candidate) =>
      active.some((other) => other !== candidate && other.subnetId === candidate.subnetId) &&
      keepsActiveShare(state, candidate.subnetId, { disabled: candidate }),
  );
  const declining = allowed.filter((candidate) => isDeclining(state, candidate.subnetId));
  const validator =
    declining.length > 0
      ? declining.reduce((heaviest, candidate) => (candidate.weight > heaviest.weight ? candidate : heaviest))
      : state.pick(allowed);
  const funder = payer(state, "P", TX_FEE * 10n);
  if (!validator || !funder) return undefined;
  return (block) => {
    const tx = newPTx(state, "DisableL1ValidatorTx", block);
    fund(state, tx, funder, TX_FEE);
    tx.burned = TX_FEE;
    const refund = validator.remainingBalance;
    const owner = state.wallet(validator.remainingBalanceOwner.addresses[0]!);
    emit(state, tx, owner, BigInt(refund));
    state.supply += BigInt(refund);
    validator.remainingBalance = 0;
    tx.l1Changes.push({
      validator,
      weight: validator.weight,
      remainingBalance: 0,
      balanceChange: -refund,
      showCredentials: false,
    });
    tx.fields = { subnetId: validator.subnetId };
    return tx;
  };
}

/** Pays the fee and an amount into L1 validator balances, which leaves the supply. */
function fundL1Balances(state: HistoryState, tx: PTransaction, wallet: Wallet, amount: bigint): void {
  fund(state, tx, wallet, amount + TX_FEE);
  tx.burned = TX_FEE;
  tx.l1BalanceBurned = amount;
  state.supply -= amount;
}

/** Whether a mainnet L1 that has started losing validators still holds its share of active weight, so goes on losing them. */
export function isDeclining(state: HistoryState, subnetId: string): boolean {
  return state.network === "mainnet" && activeShare(state, subnetId) >= L1_ACTIVE_SHARE.mainnet;
}

/**
 * Whether an L1 keeps to its network's share of active weight (L1_ACTIVE_SHARE) after a change: on
 * Fuji it never falls below the share; on mainnet, once below, it never climbs back.
 */
function keepsActiveShare(state: HistoryState, subnetId: string, change: L1Change): boolean {
  const share = L1_ACTIVE_SHARE[state.network];
  const after = activeShare(state, subnetId, change);
  return state.network === "fuji" ? after >= share : after < share || activeShare(state, subnetId) >= share;
}

/** The share of an L1's weight its active validators hold, after a change if one is given. */
function activeShare(state: HistoryState, subnetId: string, change: L1Change = {}): number {
  let active = change.added ?? 0;
  let total = change.added ?? 0;
  for (const validator of state.l1Validators) {
    if (validator.subnetId !== subnetId) continue;
    const weight = validator === change.reweighted?.validator ? change.reweighted.weight : validator.weight;
    total += weight;
    if (validator.remainingBalance > 0 && validator !== change.disabled) active += weight;
  }
  return total === 0 ? 1 : active / total;
}

function newL1Validator(state: HistoryState, subnet: Subnet, label: string, balance: number, weight: number): SimL1Validator {
  const validationBytes = state.digest(`validation:${label}`);
  const nodeId = state.nodeId(`l1:${label}`);
  const owner = state.pick(state.wallets)!;
  const deactivator = state.pick(state.wallets.filter((wallet) => wallet !== owner))!;
  const validator: SimL1Validator = {
    validationId: encodeCb58(validationBytes),
    validationIdHex: `0x${validationBytes.toString("hex")}`,
    nodeId,
    subnetId: subnet.subnetId,
    weight,
    remainingBalance: balance,
    creationTimestamp: state.now,
    bls: new BlsKey(state.input.seed, `${state.network}:l1:${label}`),
    remainingBalanceOwner: { addresses: [owner.address], threshold: 1 },
    deactivationOwner: {
      addresses: [deactivator.address, subnet.owner.address].filter((a, i, all) => all.indexOf(a) === i),
      threshold: 1,
    },
  };
  state.l1Validators.push(validator);
  return validator;
}
