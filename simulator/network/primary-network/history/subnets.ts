/**
 * Subnets before they become L1s: created, given chains (the first of every other one a Subnet-EVM
 * chain with its genesis), validators added and removed, transformed, and handed to a new owner.
 */
import type { SimBlock } from "../model.ts";
import { DAY, SUBNET_EVM_VM_ID, TX_FEE } from "./parameters.ts";
import { newPTx } from "./transactions.ts";
import type { HistoryState, Plan, Subnet } from "./state.ts";
import { fund, payer, spendable } from "./utxos.ts";

export function planCreateSubnet(state: HistoryState): Plan<SimBlock> | undefined {
  const owner = payer(state, "P", TX_FEE * 10n);
  if (!owner) return undefined;
  return (block) => {
    const tx = newPTx(state, "CreateSubnetTx", block);
    fund(state, tx, owner, TX_FEE);
    tx.burned = TX_FEE;
    tx.fields = { subnetOwnershipInfo: { locktime: 0, threshold: 1, addresses: [owner.address] } };
    tx.addresses.add(owner.address);
    state.subnets.push({ subnetId: tx.txHash, owner, chains: [], converted: false, transformed: false, validators: [] });
    return tx;
  };
}

export function planCreateChain(state: HistoryState): Plan<SimBlock> | undefined {
  const subnet =
    state.pick(state.subnets.filter((candidate) => candidate.chains.length === 0 && !candidate.converted)) ??
    state.pick(state.subnets.filter((candidate) => !candidate.converted));
  if (!subnet || spendable(state, subnet.owner, "P") < TX_FEE * 10n) return undefined;
  return (block) => {
    const tx = newPTx(state, "CreateChainTx", block);
    fund(state, tx, subnet.owner, TX_FEE);
    tx.burned = TX_FEE;
    const evm = subnet.chains.length === 0 && state.subnets.indexOf(subnet) % 2 === 0;
    const chainName = `sim-${state.network}-${state.subnets.indexOf(subnet)}-${subnet.chains.length}`;
    tx.fields = {
      subnetId: subnet.subnetId,
      blockchainInfo: evm
        ? { chainName, vmId: SUBNET_EVM_VM_ID, genesisData: evmGenesis(state, subnet) }
        : {
            chainName,
            vmId: state.id(`vm:${chainName}`),
            genesisData: `0x${state.digest(`genesis:${chainName}`).toString("hex")}`,
          },
    };
    subnet.chains.push(tx.txHash);
    return tx;
  };
}

export function planSubnetValidator(state: HistoryState): Plan<SimBlock> | undefined {
  const subnet = state.pick(state.subnets.filter((candidate) => !candidate.converted));
  const validator = state.pick(state.stakers.filter((staker) => !staker.validator && staker.end > state.now + DAY));
  if (!subnet || !validator || spendable(state, subnet.owner, "P") < TX_FEE * 10n) return undefined;
  return (block) => {
    const tx = newPTx(state, "AddSubnetValidatorTx", block);
    fund(state, tx, subnet.owner, TX_FEE);
    tx.burned = TX_FEE;
    const start = state.now + 60;
    const end = Math.min(validator.end, start + state.random.int(DAY, 7 * DAY));
    tx.fields = { nodeId: validator.nodeId, subnetId: subnet.subnetId, startTimestamp: start, endTimestamp: end };
    subnet.validators.push({ nodeId: validator.nodeId, end, removed: false });
    return tx;
  };
}

export function planRemoveSubnetValidator(state: HistoryState): Plan<SimBlock> | undefined {
  const subnet = state.pick(
    state.subnets.filter((candidate) => candidate.validators.some((v) => !v.removed && v.end > state.now)),
  );
  if (!subnet || spendable(state, subnet.owner, "P") < TX_FEE * 10n) return undefined;
  const validator = subnet.validators.find((candidate) => !candidate.removed && candidate.end > state.now)!;
  return (block) => {
    const tx = newPTx(state, "RemoveSubnetValidatorTx", block);
    fund(state, tx, subnet.owner, TX_FEE);
    tx.burned = TX_FEE;
    tx.fields = { nodeId: validator.nodeId, subnetId: subnet.subnetId };
    validator.removed = true;
    return tx;
  };
}

export function planTransformSubnet(state: HistoryState): Plan<SimBlock> | undefined {
  const subnet = state.pick(state.subnets.filter((candidate) => !candidate.converted && !candidate.transformed));
  if (!subnet || spendable(state, subnet.owner, "P") < TX_FEE * 20n) return undefined;
  return (block) => {
    const tx = newPTx(state, "TransformSubnetTx", block);
    fund(state, tx, subnet.owner, TX_FEE * 10n);
    tx.burned = TX_FEE * 10n;
    tx.fields = { subnetId: subnet.subnetId };
    subnet.transformed = true;
    return tx;
  };
}

export function planTransferOwnership(state: HistoryState): Plan<SimBlock> | undefined {
  const subnet = state.pick(state.subnets.filter((candidate) => !candidate.converted));
  if (!subnet || spendable(state, subnet.owner, "P") < TX_FEE * 10n) return undefined;
  return (block) => {
    const tx = newPTx(state, "TransferSubnetOwnershipTx", block);
    fund(state, tx, subnet.owner, TX_FEE);
    tx.burned = TX_FEE;
    const next = state.pick(state.wallets.filter((wallet) => wallet !== subnet.owner))!;
    tx.fields = {
      subnetId: subnet.subnetId,
      subnetOwnershipInfo: { locktime: 0, threshold: 1, addresses: [next.address] },
    };
    tx.addresses.add(next.address);
    subnet.owner = next;
    return tx;
  };
}

function evmGenesis(state: HistoryState, subnet: Subnet) {
  const chainId = 10_000 + state.subnets.indexOf(subnet);
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
      warpConfig: { blockTimestamp: state.now, quorumNumerator: 67 },
    },
    alloc: { [subnet.owner.evmAddress.slice(2)]: { balance: "0x52B7D2DCC80CD2E4000000" } },
    nonce: "0x0",
    timestamp: `0x${state.now.toString(16)}`,
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
