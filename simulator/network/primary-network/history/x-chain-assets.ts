/** X-Chain assets: fungible tokens and NFT collections created, and NFTs minted. */
import type { Asset } from "../model.ts";
import { TX_FEE } from "./parameters.ts";
import { newXTx } from "./transactions.ts";
import type { HistoryState, Plan, XPlace } from "./state.ts";
import { emit, fund, payer } from "./utxos.ts";

/** Creates a token handed out to a few wallets, or (every other asset) an NFT collection. */
export function planCreateAsset(state: HistoryState): Plan<XPlace> | undefined {
  const creator = payer(state, "X", TX_FEE * 10n);
  if (!creator) return undefined;
  return (place) => {
    const tx = newXTx(state, "CreateAssetTx", place);
    const nft = state.assets.length % 2 === 0;
    const number = state.assets.length;
    const asset: Asset = nft
      ? { assetId: tx.txHash, name: `Simulated Collectibles ${number}`, symbol: `SNFT${number}`, denomination: 0, type: "nft" }
      : { assetId: tx.txHash, name: `Simulated Token ${number}`, symbol: `SIM${number}`, denomination: 6, type: "secp256k1" };
    state.assets.push(asset);
    tx.assetCreated = { ...asset, createdAtTimestamp: state.now, cap: nft ? "fixed" : "variable" };
    if (!nft) {
      for (const holder of [creator, ...state.wallets.slice(0, 3)]) {
        emit(state, tx, holder, BigInt(state.random.int(1_000, 1_000_000)) * 1_000_000n, { asset });
      }
    }
    fund(state, tx, creator, TX_FEE);
    return tx;
  };
}

/** Mints NFTs of a collection created earlier. */
export function planMint(state: HistoryState): Plan<XPlace> | undefined {
  const collection = state.pick(state.assets.filter((asset) => asset.type === "nft"));
  const minter = payer(state, "X", TX_FEE * 10n);
  if (!collection || !minter) return undefined;
  return (place) => {
    const tx = newXTx(state, "OperationTx", place);
    const count = state.random.int(1, 2);
    for (let index = 0; index < count; index++) {
      const holder = state.pick(state.wallets)!;
      const payload = `0x${Buffer.from(`sim-nft:${tx.txHash}:${index}`).toString("hex")}`;
      emit(state, tx, holder, 1n, { asset: collection, nft: { groupId: index, payload } });
    }
    fund(state, tx, minter, TX_FEE);
    return tx;
  };
}
