/**
 * Generates the history of one network's primary network, step by step in time: each step is
 * one transaction on the P-, X- or C-Chain that spends UTXOs and emits new ones, so that every
 * UTXO has a creating transaction, and a consuming one once spent. Cross-chain exports leave
 * UTXOs in shared memory that a later import on the destination consumes.
 *
 * The steps are spread over the 40 days up to the head time. The first transactions of each chain
 * work through a list of every transaction type of the contract (in an order that meets their
 * preconditions; a test checks that the default network gets through it); the rest are drawn at
 * random. A staking period is rewarded when it ends. The X-Chain starts as a DAG of vertices and
 * later moves to linear blocks; C-Chain atomic transactions sit in blocks of the simulated C-Chain,
 * so they happen in its time window.
 */
import type { ChainBlocks } from "../blocks.ts";
import { PRIMARY_NETWORK_SUBNET_ID, type NetworkName } from "../chains.ts";
import { encodeCb58, sha256 } from "../ids.ts";
import { createRandom, type Random } from "../random.ts";
import { encodeBech32 } from "./bech32.ts";
import { BlsKey } from "./bls.ts";
import type {
  Asset,
  ChainKey,
  CTransaction,
  L1ValidatorChange,
  PChainTransactionType,
  PTransaction,
  RewardType,
  SimBlock,
  SimL1Validator,
  SimTransaction,
  SimUtxo,
  SimVertex,
  Wallet,
  XChainTransactionType,
  XTransaction,
} from "./model.ts";

const DAY = 86_400;
const NANO_AVAX = 1_000_000_000n;
const TX_FEE = 1_000_000n;
const ATOMIC_FEE = 280_000n;
const INITIAL_SUPPLY = 720_000_000n * NANO_AVAX;
const L1_FEE_PER_SECOND = 512;
const ZERO_ID = "11111111111111111111111111111111LpoYY";
const SUBNET_EVM_VM_ID = "srEXiWaHuhNyGwPUi444Tu47ZEDwxTWrbQiuD7FmgSAQ6X7Dy";
const WALLETS = 12;
/** How far back the history starts. */
const HISTORY_DAYS = 40;
/** About this share of the steps are C-Chain atomic transactions, all in the C-Chain's time window. */
const C_CHAIN_SHARE = 0.09;
/** The least share of the steps that falls in the C-Chain's time window, however short it is. */
const MIN_C_WINDOW_SHARE = 0.3;
/**
 * After the head time, the time between two steps of the live network, in seconds (drawn
 * uniformly); each is a P- or an X-Chain transaction, as C-Chain atomic transactions need a block
 * of the C-Chain's history.
 */
const LIVE_STEP_SECONDS = { min: 5, max: 15 };
/** How far into the history the X-Chain moves from DAG vertices to linear blocks. */
const X_LINEAR_FROM = 0.35;
/**
 * How much of an L1's weight its active validators hold, so that the sample shows signature
 * aggregation both succeed and fail at the default quorum of 67 %: Fuji's L1s always keep at least
 * this share; mainnet's, once they start losing validators, lose the heaviest until they hold less.
 */
const L1_ACTIVE_SHARE: Record<NetworkName, number> = { fuji: 0.85, mainnet: 0.6 };

export const AVAX_ASSET_IDS: Record<NetworkName, string> = {
  mainnet: "FvwEAhmxKfeiG8SnEvq42hc6whRyY3EFYAvebMqDNDGCgxN5Z",
  fuji: "U8iRqJoiJm8xZHAacmvYyZVwqQx6uDNtQQP3CQ6fcgQk3JqnK",
};
export const ADDRESS_HRP: Record<NetworkName, string> = { mainnet: "avax", fuji: "fuji" };

/** The P-Chain transaction types in an order that meets their preconditions; each is made once first. */
const P_CHAIN_FIRST: readonly PChainTransactionType[] = [
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
const X_CHAIN_FIRST: readonly XChainTransactionType[] = [
  "CreateAssetTx",
  "CreateAssetTx",
  "OperationTx",
  "BaseTx",
  "ExportTx",
  "ImportTx",
];
const C_CHAIN_FIRST: readonly CTransaction["txType"][] = ["ExportTx", "ImportTx"];

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

export interface GenerationInput {
  seed: string;
  network: NetworkName;
  headTime: number;
  chainIds: Record<ChainKey, string>;
  /** The simulated C-Chain, whose blocks hold the atomic transactions. */
  cBlocks: ChainBlocks;
}

export interface PrimaryNetworkHistory {
  wallets: Wallet[];
  avax: Asset;
  /** Per chain, oldest first. */
  transactions: Record<ChainKey, SimTransaction[]>;
  /** P-Chain and linear X-Chain blocks by height. */
  blocks: Record<"P" | "X", SimBlock[]>;
  vertices: SimVertex[];
  utxos: SimUtxo[];
  l1Validators: SimL1Validator[];
  /**
   * Adds the steps due by a time (Unix seconds) after the head time, to the lists above; the same
   * steps whenever and in however many calls it gets there. Returns whether any were added.
   */
  extendTo(time: number): boolean;
}

interface Staker {
  tx: PTransaction;
  nodeId: string;
  owner: Wallet;
  start: number;
  end: number;
  stake: SimUtxo[];
  amount: bigint;
  /** The validator a delegation is made to. */
  validator?: Staker;
  rewarded: boolean;
}

interface Subnet {
  subnetId: string;
  owner: Wallet;
  chains: string[];
  converted: boolean;
  transformed: boolean;
  validators: { nodeId: string; end: number; removed: boolean }[];
}

/** A change to an L1's validators: one added with its weight, one given a new weight, or one disabled. */
interface L1Change {
  added?: number;
  reweighted?: { validator: SimL1Validator; weight: number };
  disabled?: SimL1Validator;
}

/** A step's transaction, ready to be made once the step has its block or vertex. */
type Plan<Place> = (place: Place) => SimTransaction;
type Planner<Place> = () => Plan<Place> | undefined;

export function generatePrimaryNetwork(input: GenerationInput): PrimaryNetworkHistory {
  return new HistoryBuilder(input).build();
}

class HistoryBuilder {
  private readonly random: Random;
  private readonly wallets: Wallet[];
  private readonly avax: Asset;
  private readonly assets: Asset[] = [];
  private readonly transactions: Record<ChainKey, SimTransaction[]> = { P: [], X: [], C: [] };
  private readonly blocks: Record<"P" | "X", SimBlock[]> = { P: [], X: [] };
  private readonly vertices: SimVertex[] = [];
  private readonly utxos: SimUtxo[] = [];
  /** Unspent UTXOs by the chain they can be spent on, then by owner. */
  private readonly unspent: Record<ChainKey, Map<string, Set<SimUtxo>>> = { P: new Map(), X: new Map(), C: new Map() };
  private readonly stakers: Staker[] = [];
  private readonly subnets: Subnet[] = [];
  private readonly l1Validators: SimL1Validator[] = [];
  private readonly genesisNodeIds: string[];
  private now: number;
  private sequence = 0;
  private supply = INITIAL_SUPPLY;
  private accruedL1Fees = 0;
  private xLinearFrom = 0;
  /** The time of the next step after the head time, once drawn. */
  private nextLiveStep: number | undefined;

  constructor(private readonly input: GenerationInput) {
    const { seed, network } = input;
    this.random = createRandom(seed, `primary-network:${network}`);
    this.now = input.headTime - HISTORY_DAYS * DAY;
    this.avax = { assetId: AVAX_ASSET_IDS[network], name: "Avalanche", symbol: "AVAX", denomination: 9, type: "secp256k1" };
    this.assets.push(this.avax);
    this.wallets = Array.from({ length: WALLETS }, (_, index) => {
      const key = this.digest(`wallet:${index}`);
      return {
        address: encodeBech32(ADDRESS_HRP[network], key.subarray(0, 20)),
        evmAddress: `0x${this.digest(`wallet-evm:${index}`).subarray(0, 20).toString("hex")}`,
        publicKey: `0x02${key.toString("hex")}`,
      };
    });
    this.genesisNodeIds = Array.from({ length: 5 }, (_, index) => this.nodeId(`genesis:${index}`));
  }

  build(): PrimaryNetworkHistory {
    const { headTime, cBlocks } = this.input;
    const start = this.now;
    // After the genesis.
    const steps = this.input.network === "mainnet" ? 359 : 259;
    // C-Chain atomic transactions need a C-Chain block at or after their time, so the steps that
    // can make them fall from the C-Chain's first block (or the history's start) to the head time:
    // spread over the history as evenly as the window allows, yet never fewer than a share of all.
    const windowStart = Math.min(Math.max(start, cBlocks.blockTimestamp(0)), headTime);
    const windowShare = Math.max(MIN_C_WINDOW_SHARE, (headTime - windowStart) / (headTime - start));
    const windowSteps = Math.round(steps * windowShare);
    const earlySteps = steps - windowSteps;
    const cChance = (C_CHAIN_SHARE * steps) / windowSteps;
    this.xLinearFrom = start + Math.floor((headTime - start) * X_LINEAR_FROM);

    this.genesis();
    const queues = { P: [...P_CHAIN_FIRST], X: [...X_CHAIN_FIRST], C: [...C_CHAIN_FIRST] };
    for (let step = 0; step < steps; step++) {
      const inWindow = step >= earlySteps;
      // Each step at a random time within its own slot of its part of the history.
      const [from, to, slot, slots] = inWindow
        ? [windowStart, headTime, step - earlySteps, windowSteps]
        : [start, windowStart, step, earlySteps];
      const planned = from + Math.floor(((to - from) * (slot + this.random.next())) / slots);
      this.rewardStakers(planned);
      this.now = Math.max(this.now + 1, Math.min(planned, headTime));
      const chain: ChainKey = inWindow && this.random.chance(cChance) ? "C" : this.random.chance(0.6) ? "P" : "X";
      const made = chain === "C" ? this.stepC(queues.C) : chain === "X" ? this.stepX(queues.X) : false;
      if (!made) this.stepP(queues.P);
    }
    this.rewardStakers(headTime);
    return {
      wallets: this.wallets,
      avax: this.avax,
      transactions: this.transactions,
      blocks: this.blocks,
      vertices: this.vertices,
      utxos: this.utxos,
      l1Validators: this.l1Validators,
      extendTo: (time) => this.extendTo(time),
    };
  }

  private extendTo(time: number): boolean {
    let added = false;
    for (;;) {
      this.nextLiveStep ??=
        Math.max(this.now, this.input.headTime) + this.random.int(LIVE_STEP_SECONDS.min, LIVE_STEP_SECONDS.max);
      const at = this.nextLiveStep;
      if (at > time) return added;
      this.nextLiveStep = undefined;
      this.rewardStakers(at);
      this.now = Math.max(this.now + 1, at);
      const made = this.random.chance(0.4) && this.stepX([]);
      if (!made) this.stepP([]);
      added = true;
    }
  }

  // ---- steps ----------------------------------------------------------------------------------

  /** The P-Chain's block 0 and the X-Chain's first vertex hand out the network's first AVAX. */
  private genesis(): void {
    const block = this.newPBlock("BanffStandardBlock", false);
    const allocation = this.newPTx("BaseTx", block);
    allocation.fields.memo = "genesis allocation";
    this.wallets.forEach((wallet, index) => {
      for (let part = 0; part < 2; part++) {
        const amount = BigInt(this.random.int(1_000, 50_000)) * NANO_AVAX;
        const utxo = this.emit(allocation, wallet, amount);
        if (index === 1 && part === 1) utxo.stakeableLocktime = this.input.headTime + 365 * DAY;
      }
    });
    this.finishP(allocation);

    const vertex = this.newVertex();
    const assetTx = this.newXTx("CreateAssetTx", { vertex }, AVAX_ASSET_IDS[this.input.network]);
    assetTx.assetCreated = { ...this.avax, createdAtTimestamp: this.now, cap: "fixed" };
    for (const wallet of this.wallets) this.emit(assetTx, wallet, BigInt(this.random.int(100, 5_000)) * NANO_AVAX);
    this.finishX(assetTx, 0n);
  }

  private stepP(queue: PChainTransactionType[]): boolean {
    const chosen = this.choose(queue, P_CHAIN_WEIGHTS, (candidate) => this.planP(candidate));
    if (!chosen) return false;
    const [kind, plan] = chosen;
    const proposal = kind === "AdvanceTimeTx";
    const block = this.newPBlock(proposal ? "BanffProposalBlock" : "BanffStandardBlock", true);
    const tx = plan(block) as PTransaction;
    this.finishP(tx);
    if (proposal) this.newPBlock("BanffCommitBlock", true);
    // A mainnet L1 that starts losing validators goes on losing them until it is short of its share.
    if (
      kind === "DisableL1ValidatorTx" &&
      this.input.network === "mainnet" &&
      this.activeShare(tx.fields.subnetId!) >= L1_ACTIVE_SHARE.mainnet
    ) {
      queue.unshift(kind);
    }
    return true;
  }

  /** Rewards each staking period that ends by `until`, at its end (or as soon after as the P-Chain's time allows). */
  private rewardStakers(until: number): void {
    const due = this.stakers.filter((staker) => !staker.rewarded && staker.end <= until).sort((a, b) => a.end - b.end);
    for (const staker of due) {
      const at = Math.max(this.now + 1, staker.end);
      if (at > until) return;
      this.now = at;
      const block = this.newPBlock("BanffProposalBlock", true);
      this.finishP(this.rewardValidator(block, staker));
      this.newPBlock("BanffCommitBlock", true);
    }
  }

  private stepX(queue: XChainTransactionType[]): boolean {
    const chosen = this.choose(queue, X_CHAIN_WEIGHTS, (candidate) => this.planX(candidate));
    if (!chosen) return false;
    const place = this.now >= this.xLinearFrom ? { block: this.newXBlock() } : { vertex: this.newVertex() };
    this.finishX(chosen[1](place) as XTransaction);
    return true;
  }

  private stepC(queue: CTransaction["txType"][]): boolean {
    const { cBlocks } = this.input;
    // The first C-Chain block at or after now, so that time never runs backwards; within the
    // generated history, so that the primary network's history does not depend on when it is made.
    const count = cBlocks.historyCount;
    let low = 0;
    let high = count;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (cBlocks.blockTimestamp(middle) < this.now) low = middle + 1;
      else high = middle;
    }
    if (low >= count) return false;
    const chosen = this.choose(queue, C_CHAIN_WEIGHTS, (candidate) => this.planC(candidate));
    if (!chosen) return false;
    this.now = cBlocks.blockTimestamp(low);
    const tx = chosen[1](low) as CTransaction;
    this.transactions.C.push(tx);
    return true;
  }

  /** The first type of the queue that can be made now, else one drawn by weight. */
  private choose<Kind extends string, Place>(
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
      let draw = this.random.next() * total;
      const kind = candidates.find(([, weight]) => (draw -= weight) < 0)?.[0] ?? candidates[0]![0];
      const plan = planner(kind);
      if (plan) return [kind, plan];
    }
    return undefined;
  }

  // ---- P-Chain --------------------------------------------------------------------------------

  private planP(kind: PChainTransactionType): Plan<SimBlock> | undefined {
    const planners: Record<PChainTransactionType, Planner<SimBlock>> = {
      BaseTx: () => this.planTransfer("P", "BaseTx"),
      UNKNOWN: () => this.planTransfer("P", "UNKNOWN"),
      ImportTx: () => this.planImport("P"),
      ExportTx: () => this.planExport("P"),
      AddValidatorTx: () => this.planValidator("AddValidatorTx"),
      AddPermissionlessValidatorTx: () => this.planValidator("AddPermissionlessValidatorTx"),
      AddDelegatorTx: () => this.planDelegator("AddDelegatorTx"),
      AddPermissionlessDelegatorTx: () => this.planDelegator("AddPermissionlessDelegatorTx"),
      RewardValidatorTx: () => undefined,
      AdvanceTimeTx: () => (block) => this.newPTx("AdvanceTimeTx", block),
      CreateSubnetTx: () => this.planCreateSubnet(),
      CreateChainTx: () => this.planCreateChain(),
      AddSubnetValidatorTx: () => this.planSubnetValidator(),
      RemoveSubnetValidatorTx: () => this.planRemoveSubnetValidator(),
      TransformSubnetTx: () => this.planTransformSubnet(),
      TransferSubnetOwnershipTx: () => this.planTransferOwnership(),
      ConvertSubnetToL1Tx: () => this.planConvert(),
      RegisterL1ValidatorTx: () => this.planRegister(),
      SetL1ValidatorWeightTx: () => this.planSetWeight(),
      IncreaseL1ValidatorBalanceTx: () => this.planIncreaseBalance(),
      DisableL1ValidatorTx: () => this.planDisable(),
    };
    return planners[kind]();
  }

  private planValidator(kind: "AddValidatorTx" | "AddPermissionlessValidatorTx"): Plan<SimBlock> | undefined {
    const owner = this.payer("P", 4_000n * NANO_AVAX);
    if (!owner) return undefined;
    return (block) => {
      const tx = this.newPTx(kind, block);
      const nodeId = this.nodeId(`staker:${tx.txHash}`);
      const { start, end } = this.stakingPeriod();
      const amount = this.spendable(owner, "P") / 2n;
      this.stakeOutputs(tx, owner, amount, start, end);
      this.fund(tx, owner, amount + TX_FEE);
      tx.burned = TX_FEE;
      tx.staked = amount;
      tx.fields = {
        nodeId,
        subnetId: PRIMARY_NETWORK_SUBNET_ID,
        startTimestamp: start,
        endTimestamp: end,
        delegationFeePercent: kind === "AddValidatorTx" ? "2.0000" : `${this.random.int(2, 10)}.0000`,
        estimatedReward: this.reward(amount, end - start).toString(),
        rewardAddresses: [owner.address],
      };
      if (kind === "AddPermissionlessValidatorTx") {
        tx.bls = new BlsKey(this.input.seed, `${this.input.network}:staker:${nodeId}`);
      }
      this.stakers.push({
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

  private planDelegator(kind: "AddDelegatorTx" | "AddPermissionlessDelegatorTx"): Plan<SimBlock> | undefined {
    const validator = this.pick(this.stakers.filter((staker) => !staker.validator && staker.end > this.now + 2 * DAY));
    const owner = this.payer("P", 100n * NANO_AVAX);
    if (!validator || !owner) return undefined;
    return (block) => {
      const tx = this.newPTx(kind, block);
      const start = this.now + 60;
      const end = Math.min(validator.end, start + this.random.int(DAY, 10 * DAY));
      const amount = this.spendable(owner, "P") / 4n;
      this.stakeOutputs(tx, owner, amount, start, end);
      this.fund(tx, owner, amount + TX_FEE);
      tx.burned = TX_FEE;
      tx.staked = amount;
      tx.fields = {
        nodeId: validator.nodeId,
        subnetId: PRIMARY_NETWORK_SUBNET_ID,
        startTimestamp: start,
        endTimestamp: end,
        estimatedReward: this.reward(amount, end - start).toString(),
        rewardAddresses: [owner.address],
      };
      const stake = tx.emitted.filter((utxo) => utxo.stake);
      this.stakers.push({ tx, nodeId: validator.nodeId, owner, start, end, stake, amount, validator, rewarded: false });
      return tx;
    };
  }

  /** Returns the stake and pays the reward; a delegation also pays the validator its fee. */
  private rewardValidator(block: SimBlock, staker: Staker): PTransaction {
    const tx = this.newPTx("RewardValidatorTx", block);
    staker.rewarded = true;
    for (const utxo of staker.stake) this.spend(tx, utxo);
    this.emit(tx, staker.owner, staker.amount);
    const reward = this.reward(staker.amount, staker.end - staker.start);
    if (staker.validator) {
      const fee = reward / 10n;
      this.emit(tx, staker.owner, reward - fee, { rewardType: "DELEGATOR" });
      this.emit(tx, staker.validator.owner, fee, { rewardType: "VALIDATOR_FEE" });
    } else {
      this.emit(tx, staker.owner, reward, { rewardType: "VALIDATOR" });
    }
    this.supply += reward;
    tx.fields = { nodeId: staker.nodeId, stakingTxHash: staker.tx.txHash, rewardAddresses: [staker.owner.address] };
    staker.tx.fields.rewardTxHash = tx.txHash;
    return tx;
  }

  private planCreateSubnet(): Plan<SimBlock> | undefined {
    const owner = this.payer("P", TX_FEE * 10n);
    if (!owner) return undefined;
    return (block) => {
      const tx = this.newPTx("CreateSubnetTx", block);
      this.fund(tx, owner, TX_FEE);
      tx.burned = TX_FEE;
      tx.fields = { subnetOwnershipInfo: { locktime: 0, threshold: 1, addresses: [owner.address] } };
      tx.addresses.add(owner.address);
      this.subnets.push({ subnetId: tx.txHash, owner, chains: [], converted: false, transformed: false, validators: [] });
      return tx;
    };
  }

  private planCreateChain(): Plan<SimBlock> | undefined {
    const subnet =
      this.pick(this.subnets.filter((candidate) => candidate.chains.length === 0 && !candidate.converted)) ??
      this.pick(this.subnets.filter((candidate) => !candidate.converted));
    if (!subnet || this.spendable(subnet.owner, "P") < TX_FEE * 10n) return undefined;
    return (block) => {
      const tx = this.newPTx("CreateChainTx", block);
      this.fund(tx, subnet.owner, TX_FEE);
      tx.burned = TX_FEE;
      const evm = subnet.chains.length === 0 && this.subnets.indexOf(subnet) % 2 === 0;
      const chainName = `sim-${this.input.network}-${this.subnets.indexOf(subnet)}-${subnet.chains.length}`;
      tx.fields = {
        subnetId: subnet.subnetId,
        blockchainInfo: evm
          ? { chainName, vmId: SUBNET_EVM_VM_ID, genesisData: this.evmGenesis(subnet) }
          : {
              chainName,
              vmId: this.id(`vm:${chainName}`),
              genesisData: `0x${this.digest(`genesis:${chainName}`).toString("hex")}`,
            },
      };
      subnet.chains.push(tx.txHash);
      return tx;
    };
  }

  private planSubnetValidator(): Plan<SimBlock> | undefined {
    const subnet = this.pick(this.subnets.filter((candidate) => !candidate.converted));
    const validator = this.pick(this.stakers.filter((staker) => !staker.validator && staker.end > this.now + DAY));
    if (!subnet || !validator || this.spendable(subnet.owner, "P") < TX_FEE * 10n) return undefined;
    return (block) => {
      const tx = this.newPTx("AddSubnetValidatorTx", block);
      this.fund(tx, subnet.owner, TX_FEE);
      tx.burned = TX_FEE;
      const start = this.now + 60;
      const end = Math.min(validator.end, start + this.random.int(DAY, 7 * DAY));
      tx.fields = { nodeId: validator.nodeId, subnetId: subnet.subnetId, startTimestamp: start, endTimestamp: end };
      subnet.validators.push({ nodeId: validator.nodeId, end, removed: false });
      return tx;
    };
  }

  private planRemoveSubnetValidator(): Plan<SimBlock> | undefined {
    const subnet = this.pick(
      this.subnets.filter((candidate) => candidate.validators.some((v) => !v.removed && v.end > this.now)),
    );
    if (!subnet || this.spendable(subnet.owner, "P") < TX_FEE * 10n) return undefined;
    const validator = subnet.validators.find((candidate) => !candidate.removed && candidate.end > this.now)!;
    return (block) => {
      const tx = this.newPTx("RemoveSubnetValidatorTx", block);
      this.fund(tx, subnet.owner, TX_FEE);
      tx.burned = TX_FEE;
      tx.fields = { nodeId: validator.nodeId, subnetId: subnet.subnetId };
      validator.removed = true;
      return tx;
    };
  }

  private planTransformSubnet(): Plan<SimBlock> | undefined {
    const subnet = this.pick(this.subnets.filter((candidate) => !candidate.converted && !candidate.transformed));
    if (!subnet || this.spendable(subnet.owner, "P") < TX_FEE * 20n) return undefined;
    return (block) => {
      const tx = this.newPTx("TransformSubnetTx", block);
      this.fund(tx, subnet.owner, TX_FEE * 10n);
      tx.burned = TX_FEE * 10n;
      tx.fields = { subnetId: subnet.subnetId };
      subnet.transformed = true;
      return tx;
    };
  }

  private planTransferOwnership(): Plan<SimBlock> | undefined {
    const subnet = this.pick(this.subnets.filter((candidate) => !candidate.converted));
    if (!subnet || this.spendable(subnet.owner, "P") < TX_FEE * 10n) return undefined;
    return (block) => {
      const tx = this.newPTx("TransferSubnetOwnershipTx", block);
      this.fund(tx, subnet.owner, TX_FEE);
      tx.burned = TX_FEE;
      const next = this.pick(this.wallets.filter((wallet) => wallet !== subnet.owner))!;
      tx.fields = {
        subnetId: subnet.subnetId,
        subnetOwnershipInfo: { locktime: 0, threshold: 1, addresses: [next.address] },
      };
      tx.addresses.add(next.address);
      subnet.owner = next;
      return tx;
    };
  }

  private planConvert(): Plan<SimBlock> | undefined {
    const subnet = this.pick(
      this.subnets.filter((candidate) => !candidate.converted && !candidate.transformed && candidate.chains.length > 0),
    );
    if (!subnet) return undefined;
    const balances = [this.random.int(2, 6), this.random.int(2, 6)].map((avax) => avax * 1_000_000_000);
    const burned = BigInt(balances.reduce((sum, balance) => sum + balance, 0));
    if (this.spendable(subnet.owner, "P") < burned + TX_FEE * 10n) return undefined;
    return (block) => {
      const tx = this.newPTx("ConvertSubnetToL1Tx", block);
      this.fund(tx, subnet.owner, burned + TX_FEE);
      tx.burned = TX_FEE;
      tx.l1BalanceBurned = burned;
      this.supply -= burned;
      tx.fields = {
        subnetId: subnet.subnetId,
        l1ValidatorManagerDetails: {
          blockchainId: subnet.chains[0]!,
          contractAddress: `0x${this.digest(`validator-manager:${subnet.subnetId}`).subarray(0, 20).toString("hex")}`,
        },
      };
      subnet.converted = true;
      for (const balance of balances) {
        const validator = this.newL1Validator(subnet, `${tx.txHash}:${tx.l1Changes.length}`, balance, this.random.int(20, 200));
        tx.l1Changes.push({ validator, weight: validator.weight, remainingBalance: balance, showCredentials: true });
      }
      return tx;
    };
  }

  private planRegister(): Plan<SimBlock> | undefined {
    const subnet = this.pick(this.subnets.filter((candidate) => candidate.converted));
    const payer = this.payer("P", 20n * NANO_AVAX);
    if (!subnet || !payer) return undefined;
    const weight = this.random.int(20, 200);
    if (!this.keepsActiveShare(subnet.subnetId, { added: weight })) return undefined;
    return (block) => {
      const tx = this.newPTx("RegisterL1ValidatorTx", block);
      const balance = this.random.int(1, 4) * 1_000_000_000;
      this.fund(tx, payer, BigInt(balance) + TX_FEE);
      tx.burned = TX_FEE;
      tx.l1BalanceBurned = BigInt(balance);
      this.supply -= BigInt(balance);
      const validator = this.newL1Validator(subnet, `register:${tx.txHash}`, balance, weight);
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

  private planSetWeight(): Plan<SimBlock> | undefined {
    const validator = this.pick(this.l1Validators.filter((candidate) => candidate.remainingBalance > 0));
    const payer = this.payer("P", TX_FEE * 10n);
    if (!validator || !payer) return undefined;
    const weight = this.random.int(10, 500);
    if (!this.keepsActiveShare(validator.subnetId, { reweighted: { validator, weight } })) return undefined;
    return (block) => {
      const tx = this.newPTx("SetL1ValidatorWeightTx", block);
      this.fund(tx, payer, TX_FEE);
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

  private planIncreaseBalance(): Plan<SimBlock> | undefined {
    const validator = this.pick(this.l1Validators.filter((candidate) => candidate.remainingBalance > 0));
    const payer = this.payer("P", 10n * NANO_AVAX);
    if (!validator || !payer) return undefined;
    return (block) => {
      const tx = this.newPTx("IncreaseL1ValidatorBalanceTx", block);
      const increase = this.random.int(1, 3) * 500_000_000;
      this.fund(tx, payer, BigInt(increase) + TX_FEE);
      tx.burned = TX_FEE;
      tx.l1BalanceBurned = BigInt(increase);
      this.supply -= BigInt(increase);
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
  private planDisable(): Plan<SimBlock> | undefined {
    const active = this.l1Validators.filter((candidate) => candidate.remainingBalance > 0);
    const allowed = active.filter(
      (candidate) =>
        active.some((other) => other !== candidate && other.subnetId === candidate.subnetId) &&
        this.keepsActiveShare(candidate.subnetId, { disabled: candidate }),
    );
    const declining =
      this.input.network === "mainnet"
        ? allowed.filter((candidate) => this.activeShare(candidate.subnetId) >= L1_ACTIVE_SHARE.mainnet)
        : [];
    const validator =
      declining.length > 0
        ? declining.reduce((heaviest, candidate) => (candidate.weight > heaviest.weight ? candidate : heaviest))
        : this.pick(allowed);
    const payer = this.payer("P", TX_FEE * 10n);
    if (!validator || !payer) return undefined;
    return (block) => {
      const tx = this.newPTx("DisableL1ValidatorTx", block);
      this.fund(tx, payer, TX_FEE);
      tx.burned = TX_FEE;
      const refund = validator.remainingBalance;
      const owner = this.wallets.find((wallet) => wallet.address === validator.remainingBalanceOwner.addresses[0])!;
      this.emit(tx, owner, BigInt(refund));
      this.supply += BigInt(refund);
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

  /**
   * Whether an L1 keeps to its network's share of active weight (L1_ACTIVE_SHARE) after a change: on
   * Fuji it never falls below the share; on mainnet, once below, it never climbs back.
   */
  private keepsActiveShare(subnetId: string, change: L1Change): boolean {
    const share = L1_ACTIVE_SHARE[this.input.network];
    const after = this.activeShare(subnetId, change);
    return this.input.network === "fuji" ? after >= share : after < share || this.activeShare(subnetId) >= share;
  }

  /** The share of an L1's weight its active validators hold, after a change if one is given. */
  private activeShare(subnetId: string, change: L1Change = {}): number {
    let active = change.added ?? 0;
    let total = change.added ?? 0;
    for (const validator of this.l1Validators) {
      if (validator.subnetId !== subnetId) continue;
      const weight = validator === change.reweighted?.validator ? change.reweighted.weight : validator.weight;
      total += weight;
      if (validator.remainingBalance > 0 && validator !== change.disabled) active += weight;
    }
    return total === 0 ? 1 : active / total;
  }

  private newL1Validator(subnet: Subnet, label: string, balance: number, weight: number): SimL1Validator {
    const validationBytes = this.digest(`validation:${label}`);
    const nodeId = this.nodeId(`l1:${label}`);
    const owner = this.pick(this.wallets)!;
    const deactivator = this.pick(this.wallets.filter((wallet) => wallet !== owner))!;
    const validator: SimL1Validator = {
      validationId: encodeCb58(validationBytes),
      validationIdHex: `0x${validationBytes.toString("hex")}`,
      nodeId,
      subnetId: subnet.subnetId,
      weight,
      remainingBalance: balance,
      creationTimestamp: this.now,
      bls: new BlsKey(this.input.seed, `${this.input.network}:l1:${label}`),
      remainingBalanceOwner: { addresses: [owner.address], threshold: 1 },
      deactivationOwner: {
        addresses: [deactivator.address, subnet.owner.address].filter((a, i, all) => all.indexOf(a) === i),
        threshold: 1,
      },
    };
    this.l1Validators.push(validator);
    return validator;
  }

  // ---- X-Chain --------------------------------------------------------------------------------

  private planX(kind: XChainTransactionType): Plan<{ block?: SimBlock; vertex?: SimVertex }> | undefined {
    const linear = this.now >= this.xLinearFrom;
    switch (kind) {
      case "BaseTx":
        return this.planTransfer("X", "BaseTx");
      case "ImportTx":
        return linear ? this.planImport("X") : undefined;
      case "ExportTx":
        return linear ? this.planExport("X") : undefined;
      case "CreateAssetTx":
        return this.planCreateAsset();
      case "OperationTx":
        return this.planMint();
      case "UNKNOWN":
        return undefined;
    }
  }

  private planCreateAsset(): Plan<{ block?: SimBlock; vertex?: SimVertex }> | undefined {
    const creator = this.payer("X", TX_FEE * 10n);
    if (!creator) return undefined;
    return (place) => {
      const tx = this.newXTx("CreateAssetTx", place);
      const nft = this.assets.length % 2 === 0;
      const number = this.assets.length;
      const asset: Asset = nft
        ? { assetId: tx.txHash, name: `Simulated Collectibles ${number}`, symbol: `SNFT${number}`, denomination: 0, type: "nft" }
        : { assetId: tx.txHash, name: `Simulated Token ${number}`, symbol: `SIM${number}`, denomination: 6, type: "secp256k1" };
      this.assets.push(asset);
      tx.assetCreated = { ...asset, createdAtTimestamp: this.now, cap: nft ? "fixed" : "variable" };
      if (!nft) {
        for (const holder of [creator, ...this.wallets.slice(0, 3)]) {
          this.emit(tx, holder, BigInt(this.random.int(1_000, 1_000_000)) * 1_000_000n, { asset });
        }
      }
      this.fund(tx, creator, TX_FEE);
      return tx;
    };
  }

  /** Mints NFTs of a collection created earlier. */
  private planMint(): Plan<{ block?: SimBlock; vertex?: SimVertex }> | undefined {
    const collection = this.pick(this.assets.filter((asset) => asset.type === "nft"));
    const minter = this.payer("X", TX_FEE * 10n);
    if (!collection || !minter) return undefined;
    return (place) => {
      const tx = this.newXTx("OperationTx", place);
      const count = this.random.int(1, 2);
      for (let index = 0; index < count; index++) {
        const holder = this.pick(this.wallets)!;
        const payload = `0x${Buffer.from(`sim-nft:${tx.txHash}:${index}`).toString("hex")}`;
        this.emit(tx, holder, 1n, { asset: collection, nft: { groupId: index, payload } });
      }
      this.fund(tx, minter, TX_FEE);
      return tx;
    };
  }

  // ---- C-Chain --------------------------------------------------------------------------------

  private planC(kind: CTransaction["txType"]): Plan<number> | undefined {
    return kind === "ImportTx" ? this.planImport("C") : this.planExport("C");
  }

  // ---- shared kinds ---------------------------------------------------------------------------

  /** A transfer of AVAX (or, on the X-Chain, sometimes a token) from one wallet to another. */
  private planTransfer<Place>(chain: "P" | "X", kind: "BaseTx" | "UNKNOWN"): Plan<Place> | undefined {
    const sender = this.payer(chain, TX_FEE * 100n);
    if (!sender) return undefined;
    return (place) => {
      const tx = chain === "P" ? this.newPTx(kind, place as SimBlock) : this.newXTx("BaseTx", place as { block?: SimBlock });
      const recipient = this.pick(this.wallets.filter((wallet) => wallet !== sender))!;
      const token = chain === "X" ? this.tokenUtxo(sender) : undefined;
      if (token && this.random.chance(0.5)) {
        this.spend(tx, token);
        const part = token.amount / 3n;
        this.emit(tx, recipient, part, { asset: token.asset });
        this.emit(tx, sender, token.amount - part, { asset: token.asset });
        this.fund(tx, sender, TX_FEE);
      } else {
        const amount = this.spendable(sender, chain) / BigInt(this.random.int(4, 20));
        this.emit(tx, recipient, amount);
        this.fund(tx, sender, amount + TX_FEE);
      }
      if (tx.chain === "P") {
        tx.burned = TX_FEE;
        if (this.random.chance(0.3)) tx.fields.memo = kind === "UNKNOWN" ? "unclassified" : `payment ${this.sequence}`;
      } else if (tx.chain === "X" && this.random.chance(0.3)) {
        tx.memo = `payment ${this.sequence}`;
      }
      return tx;
    };
  }

  /** Moves AVAX into shared memory for another chain of the primary network. */
  private planExport<Place>(chain: ChainKey): Plan<Place> | undefined {
    const destinations = (["P", "X", "C"] as const).filter(
      (destination) => destination !== chain && (destination !== "X" || this.now >= this.xLinearFrom),
    );
    // Prefer a destination with nothing waiting to be imported.
    const empty = destinations.filter((destination) => this.pending(destination).length === 0);
    const destination = this.pick(empty.length > 0 ? empty : destinations);
    const sender = chain === "C" ? this.pick(this.wallets) : this.payer(chain, TX_FEE * 100n);
    if (!destination || !sender) return undefined;
    return (place) => {
      const recipient = this.random.chance(0.7) ? sender : this.pick(this.wallets)!;
      if (chain === "C") {
        const blockNumber = place as number;
        const tx = this.newCTx("ExportTx", blockNumber, destination);
        const amount = BigInt(this.random.int(1, 200)) * NANO_AVAX;
        this.emit(tx, recipient, amount, { consumedOn: destination });
        tx.evmInputs.push({
          fromAddress: sender.evmAddress,
          amount: amount + ATOMIC_FEE,
          credentials: [this.credential(sender, tx.txHash)],
        });
        tx.addresses.add(sender.evmAddress);
        this.supply -= ATOMIC_FEE;
        return tx;
      }
      const tx =
        chain === "P" ? this.newPTx("ExportTx", place as SimBlock) : this.newXTx("ExportTx", place as { block?: SimBlock });
      const amount = this.spendable(sender, chain) / BigInt(this.random.int(5, 30));
      this.emit(tx, recipient, amount, { consumedOn: destination });
      this.fund(tx, sender, amount + TX_FEE);
      if (tx.chain === "P") {
        tx.burned = TX_FEE;
        tx.fields = { destinationChain: this.input.chainIds[destination] };
      } else if (tx.chain === "X") {
        tx.destinationChain = this.input.chainIds[destination];
      }
      return tx;
    };
  }

  /** Takes a wallet's AVAX out of shared memory, from one source chain. */
  private planImport<Place>(chain: ChainKey): Plan<Place> | undefined {
    const waiting = this.pending(chain);
    const first = waiting[0];
    if (!first) return undefined;
    const owner = first.addresses[0]!;
    const taken = waiting.filter((utxo) => utxo.addresses[0] === owner && utxo.createdOn === first.createdOn).slice(0, 4);
    const wallet = this.wallets.find((candidate) => candidate.address === owner)!;
    const total = taken.reduce((sum, utxo) => sum + utxo.amount, 0n);
    if (total <= ATOMIC_FEE * 2n) return undefined;
    const source = this.input.chainIds[first.createdOn];
    return (place) => {
      if (chain === "C") {
        const tx = this.newCTx("ImportTx", place as number, "C", first.createdOn);
        for (const utxo of taken) this.spend(tx, utxo);
        tx.evmOutputs.push({ toAddress: wallet.evmAddress, amount: total - ATOMIC_FEE });
        tx.addresses.add(wallet.evmAddress);
        this.supply -= ATOMIC_FEE;
        return tx;
      }
      const tx =
        chain === "P" ? this.newPTx("ImportTx", place as SimBlock) : this.newXTx("ImportTx", place as { block?: SimBlock });
      for (const utxo of taken) this.spend(tx, utxo);
      this.emit(tx, wallet, total - TX_FEE);
      if (tx.chain === "P") {
        tx.burned = TX_FEE;
        tx.fields = { sourceChain: source };
      } else if (tx.chain === "X") {
        tx.sourceChain = source;
      }
      return tx;
    };
  }

  // ---- transactions, blocks and vertices ------------------------------------------------------

  private newPTx(txType: PChainTransactionType, block: SimBlock): PTransaction {
    return {
      chain: "P",
      txType,
      txHash: this.id(`tx:P:${this.sequence++}`),
      timestamp: this.now,
      block,
      consumed: [],
      emitted: [],
      addresses: new Set(),
      fields: {},
      burned: 0n,
      staked: 0n,
      l1BalanceBurned: 0n,
      l1Changes: [],
    };
  }

  private newXTx(txType: XChainTransactionType, place: { block?: SimBlock; vertex?: SimVertex }, txHash?: string): XTransaction {
    return {
      chain: "X",
      txType,
      txHash: txHash ?? this.id(`tx:X:${this.sequence++}`),
      timestamp: this.now,
      memo: "",
      ...place,
      consumed: [],
      emitted: [],
      addresses: new Set(),
    };
  }

  private newCTx(txType: CTransaction["txType"], blockNumber: number, other: ChainKey, source: ChainKey = "C"): CTransaction {
    const block = this.input.cBlocks.block(blockNumber)!;
    const { chainIds } = this.input;
    return {
      chain: "C",
      txType,
      txHash: this.id(`tx:C:${this.sequence++}`),
      timestamp: block.blockTimestamp,
      blockNumber,
      blockHash: block.blockHash,
      memo: "",
      sourceChain: txType === "ExportTx" ? chainIds.C : chainIds[source],
      destinationChain: txType === "ExportTx" ? chainIds[other] : chainIds.C,
      consumed: [],
      emitted: [],
      addresses: new Set(),
      evmInputs: [],
      evmOutputs: [],
    };
  }

  private finishP(tx: PTransaction): void {
    this.supply -= tx.burned;
    tx.block.record.transactions.push(tx.txHash);
    tx.block.record.txCount += 1;
    tx.block.record.blockSizeBytes += 220 + 90 * (tx.consumed.length + tx.emitted.length);
    tx.block.record.currentSupply = this.supply.toString();
    for (const address of tx.fields.rewardAddresses ?? []) tx.addresses.add(address);
    this.transactions.P.push(tx);
  }

  private finishX(tx: XTransaction, burned = TX_FEE): void {
    const container = tx.block?.record ?? tx.vertex!.record;
    container.transactions.push(tx.txHash);
    container.txCount += 1;
    const size = 200 + 90 * (tx.consumed.length + tx.emitted.length);
    if (tx.block) tx.block.record.blockSizeBytes += size;
    else tx.vertex!.record.vertexSizeBytes += size;
    this.supply -= burned;
    this.transactions.X.push(tx);
  }

  private newPBlock(blockType: string, proposed: boolean): SimBlock {
    const previous = this.blocks.P[this.blocks.P.length - 1];
    const height = this.blocks.P.length;
    const active = this.l1Validators.filter((validator) => validator.remainingBalance > 0).length;
    if (previous) this.accruedL1Fees += active * (this.now - previous.record.blockTimestamp) * L1_FEE_PER_SECOND;
    const block: SimBlock = {
      chain: "P",
      record: {
        blockNumber: String(height),
        blockHash: this.id(`block:P:${height}`),
        parentHash: previous?.record.blockHash ?? ZERO_ID,
        blockTimestamp: this.now,
        blockType,
        txCount: 0,
        transactions: [],
        blockSizeBytes: 150,
        l1ValidatorsAccruedFees: this.accruedL1Fees,
        activeL1Validators: active,
        currentSupply: this.supply.toString(),
        ...(proposed ? { proposerDetails: this.proposer(previous, height) } : {}),
      },
    };
    this.blocks.P.push(block);
    return block;
  }

  private newXBlock(): SimBlock {
    const previous = this.blocks.X[this.blocks.X.length - 1];
    const height = this.blocks.X.length;
    const block: SimBlock = {
      chain: "X",
      record: {
        blockNumber: String(height),
        blockHash: this.id(`block:X:${height}`),
        parentHash: previous?.record.blockHash ?? this.vertices[this.vertices.length - 1]!.record.vertexHash,
        blockTimestamp: this.now,
        blockType: "StandardBlock",
        txCount: 0,
        transactions: [],
        blockSizeBytes: 150,
        proposerDetails: this.proposer(previous, this.blocks.P.length),
      },
    };
    this.blocks.X.push(block);
    return block;
  }

  private proposer(previous: SimBlock | undefined, height: number) {
    const validators = [
      ...this.genesisNodeIds,
      ...this.stakers.filter((s) => !s.validator && s.end > this.now).map((s) => s.nodeId),
    ];
    return {
      proposerId: this.id(`proposer:${this.sequence}:${height}`),
      proposerParentId: previous?.record.proposerDetails?.proposerId ?? previous?.record.blockHash ?? ZERO_ID,
      proposerNodeId: validators[this.random.int(0, validators.length - 1)]!,
      proposerPChainHeight: Math.max(0, this.blocks.P.length - 1),
      proposerTimestamp: this.now,
    };
  }

  /** A vertex one level above the last, or beside it; its parents are every vertex one level down. */
  private newVertex(): SimVertex {
    const last = this.vertices[this.vertices.length - 1]?.record;
    const besideLast = last !== undefined && last.vertexHeight > 0 && this.random.chance(0.35);
    const height = last === undefined ? 0 : besideLast ? last.vertexHeight : last.vertexHeight + 1;
    const parents = this.vertices.filter((vertex) => vertex.record.vertexHeight === height - 1);
    const vertex: SimVertex = {
      record: {
        vertexHash: this.id(`vertex:${this.vertices.length}`),
        parentHashes: parents.map((parent) => parent.record.vertexHash),
        vertexHeight: height,
        vertexIndex: this.vertices.length,
        vertexTimestamp: this.now,
        txCount: 0,
        transactions: [],
        vertexSizeBytes: 120 + 32 * parents.length,
      },
    };
    this.vertices.push(vertex);
    return vertex;
  }

  // ---- UTXOs ----------------------------------------------------------------------------------

  private emit(
    tx: SimTransaction,
    owner: Wallet,
    amount: bigint,
    options: { asset?: Asset; consumedOn?: ChainKey; rewardType?: RewardType; nft?: { groupId: number; payload: string } } = {},
  ): SimUtxo {
    const outputIndex = tx.emitted.length;
    const asset = options.asset ?? this.avax;
    const idBytes = sha256(tx.txHash, String(outputIndex));
    const utxo: SimUtxo = {
      utxoId: encodeCb58(idBytes),
      txHash: tx.txHash,
      outputIndex,
      createdOn: tx.chain,
      consumedOn: options.consumedOn ?? tx.chain,
      addresses: [owner.address],
      threshold: 1,
      asset,
      amount,
      timestamp: tx.timestamp,
      blockNumber: this.blockNumberOf(tx),
      locktime: 0,
      bytes: utxoBytes(idBytes, asset.assetId, amount, owner.address),
      ...(options.rewardType ? { rewardType: options.rewardType } : {}),
      ...(options.nft ? { nft: options.nft } : {}),
    };
    tx.emitted.push(utxo);
    tx.addresses.add(owner.address);
    this.utxos.push(utxo);
    const owned = this.unspent[utxo.consumedOn].get(owner.address);
    if (owned) owned.add(utxo);
    else this.unspent[utxo.consumedOn].set(owner.address, new Set([utxo]));
    return utxo;
  }

  private stakeOutputs(tx: PTransaction, owner: Wallet, amount: bigint, start: number, end: number): void {
    const first = amount / 3n;
    for (const part of [first, amount - first]) {
      this.emit(tx, owner, part).stake = { start, end };
    }
  }

  private spend(tx: SimTransaction, utxo: SimUtxo): void {
    const owner = this.wallets.find((wallet) => wallet.address === utxo.addresses[0])!;
    utxo.spent = {
      txHash: tx.txHash,
      timestamp: tx.timestamp,
      blockNumber: this.blockNumberOf(tx),
      credentials: [this.credential(owner, `${tx.txHash}:${utxo.utxoId}`)],
    };
    tx.consumed.push(utxo);
    tx.addresses.add(utxo.addresses[0]!);
    this.unspent[utxo.consumedOn].get(utxo.addresses[0]!)!.delete(utxo);
  }

  /** Spends the wallet's largest AVAX UTXOs on the transaction's chain to cover `needed`; the rest comes back as change. */
  private fund(tx: SimTransaction, wallet: Wallet, needed: bigint): void {
    let total = 0n;
    for (const utxo of this.spendableUtxos(wallet, tx.chain)) {
      if (total >= needed) break;
      this.spend(tx, utxo);
      total += utxo.amount;
    }
    if (total < needed) throw new Error(`simulator: wallet ${wallet.address} cannot pay ${needed} on ${tx.chain}`);
    if (total > needed) this.emit(tx, wallet, total - needed);
  }

  /** AVAX a wallet can spend on a chain now, largest first, at most four UTXOs. */
  private spendableUtxos(wallet: Wallet, chain: ChainKey): SimUtxo[] {
    const found: SimUtxo[] = [];
    for (const utxo of this.unspent[chain].get(wallet.address) ?? []) {
      if (
        utxo.createdOn === chain &&
        utxo.asset === this.avax &&
        !utxo.stake &&
        (utxo.stakeableLocktime === undefined || utxo.stakeableLocktime <= this.now)
      ) {
        found.push(utxo);
      }
    }
    return found.sort((a, b) => (a.amount > b.amount ? -1 : a.amount < b.amount ? 1 : 0)).slice(0, 4);
  }

  private spendable(wallet: Wallet, chain: ChainKey): bigint {
    return this.spendableUtxos(wallet, chain).reduce((sum, utxo) => sum + utxo.amount, 0n);
  }

  /** A wallet (often the first, so that one address has a long history) that can spend `minimum`. */
  private payer(chain: ChainKey, minimum: bigint): Wallet | undefined {
    const preferred = this.random.chance(0.3) ? this.wallets[0]! : this.pick(this.wallets)!;
    if (this.spendable(preferred, chain) >= minimum) return preferred;
    return this.wallets.find((wallet) => this.spendable(wallet, chain) >= minimum);
  }

  private tokenUtxo(wallet: Wallet): SimUtxo | undefined {
    for (const utxo of this.unspent.X.get(wallet.address) ?? []) {
      if (utxo.asset !== this.avax && !utxo.nft && utxo.createdOn === "X") return utxo;
    }
    return undefined;
  }

  /** UTXOs exported to a chain and not imported yet, oldest first. */
  private pending(chain: ChainKey): SimUtxo[] {
    const found: SimUtxo[] = [];
    for (const owned of this.unspent[chain].values()) {
      for (const utxo of owned) if (utxo.createdOn !== chain) found.push(utxo);
    }
    return found.sort((a, b) => a.timestamp - b.timestamp);
  }

  private blockNumberOf(tx: SimTransaction): number | undefined {
    if (tx.chain === "C") return tx.blockNumber;
    return tx.block === undefined ? undefined : Number(tx.block.record.blockNumber);
  }

  // ---- values ---------------------------------------------------------------------------------

  private stakingPeriod(): { start: number; end: number } {
    const start = this.now + 60;
    const days = this.input.network === "mainnet" ? this.random.int(14, 21) : this.random.int(2, 6);
    return { start, end: start + days * DAY + this.random.int(0, DAY) };
  }

  /** About 8 % a year. */
  private reward(amount: bigint, seconds: number): bigint {
    return (amount * 8n * BigInt(seconds)) / (100n * 365n * BigInt(DAY));
  }

  private evmGenesis(subnet: Subnet) {
    const chainId = 10_000 + this.subnets.indexOf(subnet);
    return {
      config: {
        chainId,
        homesteadBlock: 0,
        eip150Block: 0,
        eip155Block: 0,
        eip158Block: 0,
        byzantiumBlock: 0,
        constantinopleBlock: 0,
        petersburgBlock: 0,
        istanbulBlock: 0,
        muirGlacierBlock: 0,
        subnetEVMTimestamp: 0,
        feeConfig: {
          gasLimit: 15_000_000,
          targetBlockRate: 2,
          minBaseFee: 25_000_000_000,
          targetGas: 20_000_000,
          baseFeeChangeDenominator: 36,
          minBlockGasCost: 0,
          maxBlockGasCost: 1_000_000,
          blockGasCostStep: 200_000,
        },
        warpConfig: { blockTimestamp: this.now, quorumNumerator: 67 },
      },
      alloc: { [subnet.owner.evmAddress.slice(2)]: { balance: "0x52B7D2DCC80CD2E4000000" } },
      nonce: "0x0",
      timestamp: `0x${this.now.toString(16)}`,
      extraData: "0x",
      gasLimit: "0xe4e1c0",
      difficulty: "0x0",
      mixHash: `0x${"0".repeat(64)}`,
      coinbase: `0x${"0".repeat(40)}`,
      number: "0x0",
      gasUsed: "0x0",
      parentHash: `0x${"0".repeat(64)}`,
    };
  }

  private credential(wallet: Wallet, label: string) {
    return {
      signature: `0x${this.digest(`signature:${label}`).toString("hex")}${this.digest(`signature2:${label}`).toString("hex")}00`,
      publicKey: wallet.publicKey,
    };
  }

  private nodeId(label: string): string {
    return `NodeID-${encodeCb58(this.digest(`node:${label}`).subarray(0, 20))}`;
  }

  private id(label: string): string {
    return encodeCb58(this.digest(label));
  }

  private digest(label: string): Buffer {
    return sha256(`${this.input.seed}\0${this.input.network}\0${label}`);
  }

  private pick<T>(items: readonly T[]): T | undefined {
    return items.length === 0 ? undefined : items[this.random.int(0, items.length - 1)];
  }
}

/** A compact stand-in for the UTXO's serialized form: codec, id, asset, amount and owner, as hex. */
function utxoBytes(id: Buffer, assetId: string, amount: bigint, address: string): string {
  const amountBytes = Buffer.alloc(8);
  amountBytes.writeBigUInt64BE(amount & 0xffff_ffff_ffff_ffffn);
  return `0x0000${id.toString("hex")}${sha256(assetId).toString("hex")}${amountBytes.toString("hex")}${sha256(address).subarray(0, 20).toString("hex")}`;
}
