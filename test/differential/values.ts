/**
 * Argument values for the differential test: ids, hashes and addresses read from the simulator's
 * own answers (its Data API routes, which the contract fixes), and a seeded random choice among
 * them per argument, with now and then a value the gateway must refuse.
 */
import {
  getNullableType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLInputType,
} from "graphql";

/** mulberry32: small, fast and the same on every platform. */
export class Random {
  private state: number;
  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(below: number): number {
    return Math.floor(this.next() * below);
  }
  chance(probability: number): boolean {
    return this.next() < probability;
  }
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("pick from an empty list");
    return items[this.int(items.length)]!;
  }
}

export interface ValuePool {
  evmChainIds: string[];
  /** Blocks of the main chain (MAIN_CHAIN), by number and by hash. */
  evmBlockIds: string[];
  evmBlockNumbers: string[];
  evmTransactionHashes: string[];
  evmAddresses: string[];
  pChainTransactionHashes: string[];
  pChainBlockIds: string[];
  xChainTransactionHashes: string[];
  cChainAtomicBlockIds: string[];
  bech32Addresses: string[];
  assetIds: string[];
  blockchainIds: string[];
  subnetIds: string[];
  nodeIds: string[];
  validationIds: string[];
  /** Unix seconds of the newest block of the main chain. */
  headTime: number;
  /** An export job that has reached its final status, and an id no job has. */
  completedExportId: string;
  /** Global ids the gateway handed out (refetchable with `node`). */
  globalIds: string[];
}

export const MAIN_CHAIN = "43114";
const FUJI = "fuji";

interface Upstream {
  get<T>(path: string): Promise<T>;
}

interface Block {
  chainId: string;
  blockNumber: string;
  blockHash: string;
  blockTimestamp: number;
}
interface Transaction {
  txHash: string;
  from: { address: string };
  to?: { address: string };
}
interface PrimaryTransaction {
  txHash: string;
  blockNumber?: string;
  blockHash?: string;
  blockHeight?: number;
  consumedUtxos?: { addresses: string[]; asset: { assetId: string } }[];
  emittedUtxos?: { addresses: string[]; asset: { assetId: string } }[];
}

const unique = <T>(items: T[]): T[] => [...new Set(items)];

export async function readPool(upstream: Upstream): Promise<Omit<ValuePool, "completedExportId" | "globalIds">> {
  const chains = await upstream.get<{ chains: { chainId: string }[] }>("/v1/chains");
  const blocks = await upstream.get<{ blocks: Block[] }>(`/v1/chains/${MAIN_CHAIN}/blocks?pageSize=8`);
  const withTransactions = blocks.blocks.slice(0, 4);
  const transactions = (
    await Promise.all(
      withTransactions.map((block) =>
        upstream.get<{ transactions: { nativeTransaction?: Transaction }[] | Transaction[] }>(
          `/v1/chains/${MAIN_CHAIN}/blocks/${block.blockNumber}/transactions?pageSize=3`,
        ),
      ),
    )
  ).flatMap((page) =>
    page.transactions.map((item) =>
      "nativeTransaction" in item && item.nativeTransaction ? item.nativeTransaction : (item as Transaction),
    ),
  );
  const primary = async (chain: string) =>
    (
      await upstream.get<{ transactions: PrimaryTransaction[] }>(
        `/v1/networks/${FUJI}/blockchains/${chain}/transactions?pageSize=5`,
      )
    ).transactions;
  const [pChain, xChain, cChain] = await Promise.all([primary("p-chain"), primary("x-chain"), primary("c-chain")]);
  const validators = await upstream.get<{ validators: { validationId: string; nodeId: string; subnetId: string }[] }>(
    `/v1/networks/${FUJI}/l1Validators?pageSize=5`,
  );
  const utxos = [...pChain, ...xChain].flatMap((tx) => [...(tx.consumedUtxos ?? []), ...(tx.emittedUtxos ?? [])]);
  return {
    evmChainIds: unique(chains.chains.map((chain) => chain.chainId)),
    evmBlockIds: blocks.blocks.flatMap((block) => [block.blockNumber, block.blockHash]),
    evmBlockNumbers: blocks.blocks.map((block) => block.blockNumber),
    evmTransactionHashes: unique(transactions.map((tx) => tx.txHash)),
    evmAddresses: unique(transactions.flatMap((tx) => [tx.from.address, ...(tx.to ? [tx.to.address] : [])])),
    pChainTransactionHashes: pChain.map((tx) => tx.txHash),
    pChainBlockIds: unique(pChain.flatMap((tx) => [tx.blockNumber, tx.blockHash].filter((id): id is string => Boolean(id)))),
    xChainTransactionHashes: xChain.map((tx) => tx.txHash),
    cChainAtomicBlockIds: unique(
      cChain.flatMap((tx) =>
        [tx.blockHeight === undefined ? undefined : String(tx.blockHeight), tx.blockHash].filter((id): id is string =>
          Boolean(id),
        ),
      ),
    ),
    bech32Addresses: unique(utxos.flatMap((utxo) => utxo.addresses)).slice(0, 6),
    assetIds: unique(utxos.map((utxo) => utxo.asset.assetId)),
    blockchainIds: ["p-chain", "x-chain", "c-chain"],
    subnetIds: unique(validators.validators.map((validator) => validator.subnetId)),
    nodeIds: validators.validators.map((validator) => validator.nodeId),
    validationIds: validators.validators.map((validator) => validator.validationId),
    headTime: blocks.blocks[0]!.blockTimestamp,
  };
}

/**
 * A value for one argument (or one variable bound to it), from what the field is and the pool.
 * `invalid` asks for a value the gateway must refuse or not find (errors must match too).
 */
export function argumentValue(
  pool: ValuePool,
  random: Random,
  where: { parent: string; field: string; argument: GraphQLArgument | { name: string; type: GraphQLInputType } },
  invalid: boolean,
): unknown {
  const { parent, field, argument } = where;
  const name = argument.name;
  const at = `${parent}.${field}.${name}`;
  const type = argument.type;
  const nullable = getNullableType(type);
  if (invalid) return invalidValue(random, name, nullable);
  const days = (count: number) => pool.headTime - count * 86_400;
  switch (name) {
    case "first":
      return random.chance(0.06) ? 0 : 1 + random.int(3);
    case "last":
      return 1 + random.int(2);
    case "after":
    case "before":
      return random.pick(["garbage", "eyJvZmZzZXQiOjEsInNjb3BlIjoieCJ9"]);
    case "from":
    case "startTimestamp":
      return days(2 + random.int(20));
    case "to":
    case "endTimestamp":
      return days(random.int(2));
    case "threshold":
      return random.pick(["0", "1000000", "1000000000000000000"]);
    case "startBlock":
    case "endBlock":
      return random.pick(pool.evmBlockNumbers);
    case "height":
      return random.int(40);
    case "quorumPercentage":
      return random.pick([0, 50, 67, 100]);
    case "includeChains":
      return [random.pick(pool.blockchainIds)];
  }
  if (at === "Query.chain.id") return random.chance(0.75) ? MAIN_CHAIN : random.pick(pool.evmChainIds);
  if (at === "Query.exportOperation.id" || at === "Subscription.exportOperation.id") return pool.completedExportId;
  if (at === "Query.node.id") return pool.globalIds.length > 0 && random.chance(0.9) ? random.pick(pool.globalIds) : "garbage";
  if (name === "id" && parent === "EvmChain") return random.pick(pool.evmBlockIds);
  if (name === "id" && parent === "PChain") return random.pick(pool.pChainBlockIds);
  if (name === "id" && parent === "CChain")
    return random.pick(pool.cChainAtomicBlockIds.length ? pool.cChainAtomicBlockIds : ["1"]);
  if (name === "id" && parent === "PrimaryNetwork") return random.pick(pool.blockchainIds);
  if (name === "hash" && parent === "EvmChain") return random.pick(pool.evmTransactionHashes);
  if (name === "hash" || name === "txHash") {
    if (parent === "XChain") return random.pick(pool.xChainTransactionHashes);
    return random.pick(pool.pChainTransactionHashes);
  }
  if (name === "address" || name === "contract") return random.pick(pool.evmAddresses);
  if (name === "addresses") return [random.pick(pool.bech32Addresses)];
  if (name === "assetId") return random.pick(pool.assetIds);
  if (name === "subnetId" || name === "signingSubnetId") return random.pick(pool.subnetIds);
  if (name === "nodeId") return random.pick(pool.nodeIds);
  if (name === "l1ValidationId") return random.pick(pool.validationIds);
  if (name === "id") return random.pick(pool.evmBlockIds);
  return valueOfType(pool, random, nullable as GraphQLInputType);
}

function valueOfType(pool: ValuePool, random: Random, type: GraphQLInputType): unknown {
  const nullable = getNullableType(type);
  if (isListType(nullable)) return [valueOfType(pool, random, nullable.ofType)];
  if (isEnumType(nullable)) return random.pick(nullable.getValues().map((value) => value.name));
  if (isInputObjectType(nullable)) {
    const value: Record<string, unknown> = {};
    for (const field of Object.values(nullable.getFields())) {
      if (isNonNullType(field.type) || random.chance(0.3))
        value[field.name] = argumentValue(pool, random, { parent: nullable.name, field: field.name, argument: field }, false);
    }
    return value;
  }
  if (isScalarType(nullable)) {
    switch (nullable.name) {
      case "Int":
      case "SafeInt":
        return 1 + random.int(3);
      case "Float":
        return 1.5;
      case "Boolean":
        return random.chance(0.5);
      case "BigInt":
        return "1000";
      case "EvmAddress":
        return random.pick(pool.evmAddresses);
      case "Hash":
        return random.pick(pool.evmTransactionHashes);
      default:
        return "1";
    }
  }
  return null;
}

function invalidValue(random: Random, name: string, type: GraphQLInputType): unknown {
  if (name === "first" || name === "last") return random.pick([-1, 100_000]);
  if (isListType(type)) return [];
  if (isEnumType(type)) return type.getValues()[0]!.name;
  if (isScalarType(type)) {
    switch (type.name) {
      case "Int":
      case "SafeInt":
        return -1;
      case "Boolean":
        return true;
      case "BigInt":
        return "-5";
      case "EvmAddress":
        return "0x1234";
      case "Hash":
        return "0xnothex";
      default:
        return random.pick(["garbage", "", "0x00"]);
    }
  }
  return null;
}
