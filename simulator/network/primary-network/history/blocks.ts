/**
 * The containers of the history: P-Chain blocks, linear X-Chain blocks and the X-Chain's DAG
 * vertices, with their heights, times and proposers.
 */
import type { SimBlock, SimVertex } from "../model.ts";
import { L1_FEE_PER_SECOND, ZERO_ID } from "./parameters.ts";
import type { HistoryState } from "./state.ts";

export function newPBlock(state: HistoryState, blockType: string, proposed: boolean): SimBlock {
  const previous = state.blocks.P[state.blocks.P.length - 1];
  const height = state.blocks.P.length;
  const active = state.l1Validators.filter((validator) => validator.remainingBalance > 0).length;
  if (previous) state.accruedL1Fees += active * (state.now - previous.record.blockTimestamp) * L1_FEE_PER_SECOND;
  const block: SimBlock = {
    chain: "P",
    record: {
      blockNumber: String(height),
      blockHash: state.id(`block:P:${height}`),
      parentHash: previous?.record.blockHash ?? ZERO_ID,
      blockTimestamp: state.now,
      blockType,
      txCount: 0,
      transactions: [],
      blockSizeBytes: 150,
      l1ValidatorsAccruedFees: state.accruedL1Fees,
      activeL1Validators: active,
      currentSupply: state.supply.toString(),
      ...(proposed ? { proposerDetails: proposer(state, previous, height) } : {}),
    },
  };
  state.blocks.P.push(block);
  return block;
}

export function newXBlock(state: HistoryState): SimBlock {
  const previous = state.blocks.X[state.blocks.X.length - 1];
  const height = state.blocks.X.length;
  const block: SimBlock = {
    chain: "X",
    record: {
      blockNumber: String(height),
      blockHash: state.id(`block:X:${height}`),
      parentHash: previous?.record.blockHash ?? state.vertices[state.vertices.length - 1]!.record.vertexHash,
      blockTimestamp: state.now,
      blockType: "StandardBlock",
      txCount: 0,
      transactions: [],
      blockSizeBytes: 150,
      proposerDetails: proposer(state, previous, state.blocks.P.length),
    },
  };
  state.blocks.X.push(block);
  return block;
}

/** A vertex one level above the last, or beside it; its parents are every vertex one level down. */
export function newVertex(state: HistoryState): SimVertex {
  const { vertices } = state;
  const last = vertices[vertices.length - 1]?.record;
  const besideLast = last !== undefined && last.vertexHeight > 0 && state.random.chance(0.35);
  const height = last === undefined ? 0 : besideLast ? last.vertexHeight : last.vertexHeight + 1;
  const parents = vertices.filter((vertex) => vertex.record.vertexHeight === height - 1);
  const vertex: SimVertex = {
    record: {
      vertexHash: state.id(`vertex:${vertices.length}`),
      parentHashes: parents.map((parent) => parent.record.vertexHash),
      vertexHeight: height,
      vertexIndex: vertices.length,
      vertexTimestamp: state.now,
      txCount: 0,
      transactions: [],
      vertexSizeBytes: 120 + 32 * parents.length,
    },
  };
  vertices.push(vertex);
  return vertex;
}

/** A block's proposer: a genesis node or a validator staking now. */
function proposer(state: HistoryState, previous: SimBlock | undefined, height: number) {
  const validators = [
    ...state.genesisNodeIds,
    ...state.stakers.filter((s) => !s.validator && s.end > state.now).map((s) => s.nodeId),
  ];
  return {
    proposerId: state.id(`proposer:${state.sequence}:${height}`),
    proposerParentId: previous?.record.proposerDetails?.proposerId ?? previous?.record.blockHash ?? ZERO_ID,
    proposerNodeId: validators[state.random.int(0, validators.length - 1)]!,
    proposerPChainHeight: Math.max(0, state.blocks.P.length - 1),
    proposerTimestamp: state.now,
  };
}
