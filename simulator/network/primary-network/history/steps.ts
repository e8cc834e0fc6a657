/**
 * One step of the history: a transaction of a chain, of the first type of the chain's queue that
 * can be made now (the queues work through every type of the contract once, in an order that meets
 * their preconditions), else of one drawn by weight; and the genesis before the first step.
 */
import type { CTransaction, PTransaction, SimBlock, XTransaction } from "../model.ts";
import type { PChainTransactionType, XChainTransactionType } from "../../../../src/upstream/types.ts";
import { planExport, planImport } from "./atomic.ts";
import { isDeclining, planConvert, planDisable, planIncreaseBalance, planRegister, planSetWeight } from "./l1-validators.ts";
import { AVAX_ASSET_IDS, DAY, NANO_AVAX } from "./parameters.ts";
import { newPBlock, newVertex, newXBlock } from "./blocks.ts";
import { finishP, finishX, newPTx, newXTx } from "./transactions.ts";
import { planDelegator, planValidator } from "./staking.ts";
import type { HistoryState, Plan, XPlace } from "./state.ts";
import {
  planCreateChain,
  planCreateSubnet,
  planRemoveSubnetValidator,
  planSubnetValidator,
  planTransferOwnership,
  planTransformSubnet,
} from "./subnets.ts";
import { planTransfer } from "./transfers.ts";
import { emit } from "./utxos.ts";
import { planCreateAsset, planMint } from "./x-chain-assets.ts";

/** The P-Chain transaction types in an order that meets their preconditions; each is made once first. */
export const P_CHAIN_FIRST: readonly PChainTransactionType[] = [
  "CreateSubnetTx",
  "CreateSubnetTx",
  "CreateChainTx",
  "CreateChainTx",
  "AddValidatorTx",
  "AddPermissionlessValidatorTx",
  "ConvertSubnetToL1Tx",
  "AddSubnetValidatorTx",
  "RemoveSubnetValidatorTx",
  "TransformSubnetTx",
  "TransferSubnetOwnershipTx",
  "AddDelegatorTx",
  "AddPermissionlessDelegatorTx",
  "RegisterL1ValidatorTx",
  "RegisterL1ValidatorTx",
  "SetL1ValidatorWeightTx",
  "IncreaseL1ValidatorBalanceTx",
  "DisableL1ValidatorTx",
  "AdvanceTimeTx",
  "UNKNOWN",
  "ExportTx",
  "ImportTx",
  "BaseTx",
];
export const X_CHAIN_FIRST: readonly XChainTransactionType[] = [
  "CreateAssetTx",
  "CreateAssetTx",
  "OperationTx",
  "BaseTx",
  "ExportTx",
  "ImportTx",
];
export const C_CHAIN_FIRST: readonly CTransaction["txType"][] = ["ExportTx", "ImportTx"];

const P_CHAIN_WEIGHTS: Partial<Record<PChainTransactionType, number>> = {
  BaseTx: 6,
  ExportTx: 3,
  ImportTx: 4,
  AddPermissionlessValidatorTx: 1.5,
  AddPermissionlessDelegatorTx: 2,
  AddValidatorTx: 0.3,
  AddDelegatorTx: 0.3,
  IncreaseL1ValidatorBalanceTx: 1,
  RegisterL1ValidatorTx: 0.3,
  SetL1ValidatorWeightTx: 0.7,
  DisableL1ValidatorTx: 0.2,
  CreateSubnetTx: 0.3,
  CreateChainTx: 0.3,
  AddSubnetValidatorTx: 0.5,
  RemoveSubnetValidatorTx: 0.3,
  TransferSubnetOwnershipTx: 0.2,
  ConvertSubnetToL1Tx: 0.2,
  TransformSubnetTx: 0.1,
  AdvanceTimeTx: 0.2,
  UNKNOWN: 0.05,
};
const X_CHAIN_WEIGHTS: Partial<Record<XChainTransactionType, number>> = {
  BaseTx: 6,
  ExportTx: 2,
  ImportTx: 3,
  CreateAssetTx: 0.3,
  OperationTx: 1,
};
const C_CHAIN_WEIGHTS: Record<CTransaction["txType"], number> = { ExportTx: 1, ImportTx: 1 };

type Planner<Place> = () => Plan<Place> | undefined;

/** The P-Chain's block 0 and the X-Chain's first vertex hand out the network's first AVAX. */
export function genesis(state: HistoryState): void {
  const block = newPBlock(state, "BanffStandardBlock", false);
  const allocation = newPTx(state, "BaseTx", block);
  allocation.fields.memo = "genesis allocation";
  state.wallets.forEach((wallet, index) => {
    for (let part = 0; part < 2; part++) {
      const amount = BigInt(state.random.int(1_000, 50_000)) * NANO_AVAX;
      const utxo = emit(state, allocation, wallet, amount);
      if (index === 1 && part === 1) utxo.stakeableLocktime = state.input.headTime + 365 * DAY;
    }
  });
  finishP(state, allocation);

  const vertex = newVertex(state);
  const assetTx = newXTx(state, "CreateAssetTx", { vertex }, AVAX_ASSET_IDS[state.network]);
  assetTx.assetCreated = { ...state.avax, createdAtTimestamp: state.now, cap: "fixed" };
  for (const wallet of state.wallets) emit(state, assetTx, wallet, BigInt(state.random.int(100, 5_000)) * NANO_AVAX);
  finishX(state, assetTx, 0n);
}

export function stepP(state: HistoryState, queue: PChainTransactionType[]): boolean {
  const chosen = choose(state, queue, P_CHAIN_WEIGHTS, (candidate) => planP(state, candidate));
  if (!chosen) return false;
  const [kind, plan] = chosen;
  const proposal = kind === "AdvanceTimeTx";
  const block = newPBlock(state, proposal ? "BanffProposalBlock" : "BanffStandardBlock", true);
  const tx = plan(block) as PTransaction;
  finishP(state, tx);
  if (proposal) newPBlock(state, "BanffCommitBlock", true);
  // A mainnet L1 that starts losing validators goes on losing them until it is short of its share.
  if (kind === "DisableL1ValidatorTx" && isDeclining(state, tx.fields.subnetId!)) queue.unshift(kind);
  return true;
}

export function stepX(state: HistoryState, queue: XChainTransactionType[]): boolean {
  const chosen = choose(state, queue, X_CHAIN_WEIGHTS, (candidate) => planX(state, candidate));
  if (!chosen) return false;
  const place = state.now >= state.xLinearFrom ? { block: newXBlock(state) } : { vertex: newVertex(state) };
  finishX(state, chosen[1](place) as XTransaction);
  return true;
}

export function stepC(state: HistoryState, queue: CTransaction["txType"][]): boolean {
  const { cBlocks } = state.input;
  // The first C-Chain block at or after now, so that time never runs backwards; within the
  // generated history, so that the primary network's history does not depend on when it is made.
  const count = cBlocks.historyCount;
  let low = 0;
  let high = count;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (cBlocks.blockTimestamp(middle) < state.now) low = middle + 1;
    else high = middle;
  }
  if (low >= count) return false;
  const chosen = choose(state, queue, C_CHAIN_WEIGHTS, (candidate) =>
    candidate === "ImportTx" ? planImport<number>(state, "C") : planExport<number>(state, "C"),
  );
  if (!chosen) return false;
  state.now = cBlocks.blockTimestamp(low);
  const tx = chosen[1](low) as CTransaction;
  state.transactions.C.push(tx);
  return true;
}

/** The first type of the queue that can be made now, else one drawn by weight. */
function choose<Kind extends string, Place>(
  state: HistoryState,
  queue: Kind[],
  weights: Partial<Record<Kind, number>>,
  planner: (kind: Kind) => Plan<Place> | undefined,
): [Kind, Plan<Place>] | undefined {
  for (let index = 0; index < queue.length; index++) {
    const kind = queue[index]!;
    const plan = planner(kind);
    if (plan) {
      queue.splice(index, 1);
      return [kind, plan];
    }
  }
  const candidates = Object.entries(weights) as [Kind, number][];
  for (let attempt = 0; attempt < 4; attempt++) {
    const total = candidates.reduce((sum, [, weight]) => sum + weight, 0);
    let draw = state.random.next() * total;
    const kind = candidates.find(([, weight]) => (draw -= weight) < 0)?.[0] ?? candidates[0]![0];
    const plan = planner(kind);
    if (plan) return [kind, plan];
  }
  return undefined;
}

function planP(state: HistoryState, kind: PChainTransactionType): Plan<SimBlock> | undefined {
  const planners: Record<PChainTransactionType, Planner<SimBlock>> = {
    BaseTx: () => planTransfer(state, "P", "BaseTx"),
    UNKNOWN: () => planTransfer(state, "P", "UNKNOWN"),
    ImportTx: () => planImport(state, "P"),
    ExportTx: () => planExport(state, "P"),
    AddValidatorTx: () => planValidator(state, "AddValidatorTx"),
    AddPermissionlessValidatorTx: () => planValidator(state, "AddPermissionlessValidatorTx"),
    AddDelegatorTx: () => planDelegator(state, "AddDelegatorTx"),
    AddPermissionlessDelegatorTx: () => planDelegator(state, "AddPermissionlessDelegatorTx"),
    RewardValidatorTx: () => undefined,
    AdvanceTimeTx: () => (block) => newPTx(state, "AdvanceTimeTx", block),
    CreateSubnetTx: () => planCreateSubnet(state),
    CreateChainTx: () => planCreateChain(state),
    AddSubnetValidatorTx: () => planSubnetValidator(state),
    RemoveSubnetValidatorTx: () => planRemoveSubnetValidator(state),
    TransformSubnetTx: () => planTransformSubnet(state),
    TransferSubnetOwnershipTx: () => planTransferOwnership(state),
    ConvertSubnetToL1Tx: () => planConvert(state),
    RegisterL1ValidatorTx: () => planRegister(state),
    SetL1ValidatorWeightTx: () => planSetWeight(state),
    IncreaseL1ValidatorBalanceTx: () => planIncreaseBalance(state),
    DisableL1ValidatorTx: () => planDisable(state),
  };
  return planners[kind]();
}

function planX(state: HistoryState, kind: XChainTransactionType): Plan<XPlace> | undefined {
  const linear = state.now >= state.xLinearFrom;
  switch (kind) {
    case "BaseTx":
      return planTransfer(state, "X", "BaseTx");
    case "ImportTx":
      return linear ? planImport(state, "X") : undefined;
    case "ExportTx":
      return linear ? planExport(state, "X") : undefined;
    case "CreateAssetTx":
      return planCreateAsset(state);
    case "OperationTx":
      return planMint(state);
    case "UNKNOWN":
      return undefined;
  }
}
