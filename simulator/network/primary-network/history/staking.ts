/**
 * Staking on the primary network: validators and delegators lock AVAX for a period, and each period
 * is rewarded (about 8 % a year) when it ends, a delegation paying its validator a fee.
 */
import { PRIMARY_NETWORK_SUBNET_ID } from "../../chains.ts";
import { BlsKey } from "../bls.ts";
import type { PTransaction, SimBlock, Wallet } from "../model.ts";
import { DAY, NANO_AVAX, TX_FEE } from "./parameters.ts";
import { newPBlock } from "./blocks.ts";
import { finishP, newPTx } from "./transactions.ts";
import type { HistoryState, Plan, Staker } from "./state.ts";
import { emit, fund, payer, spend, spendable, stakeOutputs } from "./utxos.ts";

export function planValidator(
  state: HistoryState,
  kind: "AddValidatorTx" | "AddPermissionlessValidatorTx",
): Plan<SimBlock> | undefined {
  const owner = payer(state, "P", 4_000n * NANO_AVAX);
  if (!owner) return undefined;
  return (block) => {
    const tx = newPTx(state, kind, block);
    const nodeId = state.nodeId(`staker:${tx.txHash}`);
    const { start, end } = stakingPeriod(state);
    const amount = spendable(state, owner, "P") / 2n;
    lockStake(state, tx, owner, amount, start, end);
    tx.fields = {
      nodeId,
      subnetId: PRIMARY_NETWORK_SUBNET_ID,
      startTimestamp: start,
      endTimestamp: end,
      delegationFeePercent: kind === "AddValidatorTx" ? "2.0000" : `${state.random.int(2, 10)}.0000`,
      estimatedReward: reward(amount, end - start).toString(),
      rewardAddresses: [owner.address],
    };
    if (kind === "AddPermissionlessValidatorTx") {
      tx.bls = new BlsKey(state.input.seed, `${state.network}:staker:${nodeId}`);
    }
    state.stakers.push({
      tx,
      nodeId,
      owner,
      start,
      end,
      stake: tx.emitted.filter((utxo) => utxo.stake),
      amount,
      rewarded: false,
    });
    return tx;
  };
}

export function planDelegator(
  state: HistoryState,
  kind: "AddDelegatorTx" | "AddPermissionlessDelegatorTx",
): Plan<SimBlock> | undefined {
  const validator = state.pick(state.stakers.filter((staker) => !staker.validator && staker.end > state.now + 2 * DAY));
  const owner = payer(state, "P", 100n * NANO_AVAX);
  if (!validator || !owner) return undefined;
  return (block) => {
    const tx = newPTx(state, kind, block);
    const start = state.now + 60;
    const end = Math.min(validator.end, start + state.random.int(DAY, 10 * DAY));
    const amount = spendable(state, owner, "P") / 4n;
    lockStake(state, tx, owner, amount, start, end);
    tx.fields = {
      nodeId: validator.nodeId,
      subnetId: PRIMARY_NETWORK_SUBNET_ID,
      startTimestamp: start,
      endTimestamp: end,
      estimatedReward: reward(amount, end - start).toString(),
      rewardAddresses: [owner.address],
    };
    const stake = tx.emitted.filter((utxo) => utxo.stake);
    state.stakers.push({ tx, nodeId: validator.nodeId, owner, start, end, stake, amount, validator, rewarded: false });
    return tx;
  };
}

/** Locks a stake for its period and pays the fee. */
function lockStake(state: HistoryState, tx: PTransaction, owner: Wallet, amount: bigint, start: number, end: number): void {
  stakeOutputs(state, tx, owner, amount, start, end);
  fund(state, tx, owner, amount + TX_FEE);
  tx.burned = TX_FEE;
  tx.staked = amount;
}

/** Rewards each staking period that ends by `until`, at its end (or as soon after as the P-Chain's time allows). */
export function rewardStakers(state: HistoryState, until: number): void {
  const due = state.stakers.filter((staker) => !staker.rewarded && staker.end <= until).sort((a, b) => a.end - b.end);
  for (const staker of due) {
    const at = Math.max(state.now + 1, staker.end);
    if (at > until) return;
    state.now = at;
    const block = newPBlock(state, "BanffProposalBlock", true);
    finishP(state, rewardValidator(state, block, staker));
    newPBlock(state, "BanffCommitBlock", true);
  }
}

/** Returns the stake and pays the reward; a delegation also pays the validator its fee. */
function rewardValidator(state: HistoryState, block: SimBlock, staker: Staker): PTransaction {
  const tx = newPTx(state, "RewardValidatorTx", block);
  staker.rewarded = true;
  for (const utxo of staker.stake) spend(state, tx, utxo);
  emit(state, tx, staker.owner, staker.amount);
  const earned = reward(staker.amount, staker.end - staker.start);
  if (staker.validator) {
    const fee = earned / 10n;
    emit(state, tx, staker.owner, earned - fee, { rewardType: "DELEGATOR" });
    emit(state, tx, staker.validator.owner, fee, { rewardType: "VALIDATOR_FEE" });
  } else {
    emit(state, tx, staker.owner, earned, { rewardType: "VALIDATOR" });
  }
  state.supply += earned;
  tx.fields = { nodeId: staker.nodeId, stakingTxHash: staker.tx.txHash, rewardAddresses: [staker.owner.address] };
  staker.tx.fields.rewardTxHash = tx.txHash;
  return tx;
}

function stakingPeriod(state: HistoryState): { start: number; end: number } {
  const start = state.now + 60;
  const days = state.network === "mainnet" ? state.random.int(14, 21) : state.random.int(2, 6);
  return { start, end: start + days * DAY + state.random.int(0, DAY) };
}

/** About 8 % a year. */
function reward(amount: bigint, seconds: number): bigint {
  return (amount * 8n * BigInt(seconds)) / (100n * 365n * BigInt(DAY));
}
