/**
 * The operations GraphiQL opens with: one tab per common explorer screen. Their ids are from the
 * embedded simulator's sample network (a test runs every tab against it); on the real services,
 * put ids of your own in the Variables tab.
 */

export interface GraphiQLExample {
  query: string;
  variables?: Record<string, unknown>;
}

const HEADER = `# Send your Data API key as the header x-glacier-api-key (Headers tab below);
# without one, the gateway uses its own key, if it has one.
`;

export const GRAPHIQL_EXAMPLES: GraphiQLExample[] = [
  {
    query: `${HEADER}
# Live: each new block of the C-Chain, pushed as it arrives (press Run and watch the result pane).
# A subscription: over Server-Sent Events here, or graphql-ws on the same path.
subscription NewBlocks {
  newBlocks(chainId: "43114") {
    blockNumber
    blockHash
    blockTime
    txCount
    chain { chainName }
  }
}
`,
  },
  {
    query: `# The latest blocks of every chain.
query LatestBlocks {
  latestBlocks(first: 5) {
    edges {
      cursor
      node {
        blockNumber
        blockHash
        blockTime
        txCount
        chain { chainName network }
        parent { blockHash }
      }
    }
    pageInfo { hasNextPage endCursor }
  }
}
`,
  },
  {
    query: `# A block page: the block, its parent and its transactions.
query Block($chainId: ID!, $blockId: String!) {
  chain(id: $chainId) {
    chainName
    block(id: $blockId) {
      blockNumber
      blockHash
      blockTime
      txCount
      gasUsed
      baseFee
      parent { blockNumber blockHash }
      transactions(first: 10) {
        nodes { txHash from { address } to { address } value txStatus method { methodName } }
        pageInfo { hasNextPage endCursor }
      }
    }
  }
}
`,
    variables: { chainId: "43114", blockId: "4998" },
  },
  {
    query: `# A transaction page: the complete view, with every transfer and internal call.
query Transaction($chainId: ID!, $hash: Hash!) {
  chain(id: $chainId) {
    transaction(hash: $hash) {
      txHash
      txStatus
      blockTime
      from { address name }
      to { address name }
      value
      gasUsed
      gasPrice
      method { callType methodName }
      erc20Transfers { from { address } to { address } value erc20Token { symbol decimals price { value currencyCode } } }
      erc721Transfers { from { address } to { address } erc721Token { name tokenId } }
      internalTransactions { from { address } to { address } value internalTxType isReverted }
      block { blockNumber txCount }
    }
  }
}
`,
    variables: { chainId: "43114", hash: "0x6aae3eb714421cd81d33e0a6215442b1fefc773dc6d61e18164eb3d3e5dc6224" },
  },
  {
    query: `# An address page: its transactions, each with the transfers it sent or received.
query Address($chainId: ID!, $address: EvmAddress!, $after: String) {
  chain(id: $chainId) {
    address(address: $address) {
      transactions(first: 10, after: $after, sortOrder: DESC) {
        nodes {
          transaction { txHash blockTime txStatus value method { methodName } }
          erc20Transfers { value from { address } to { address } erc20Token { symbol } }
          erc721Transfers { erc721Token { name tokenId } }
          internalTransactions { value isReverted }
        }
        pageInfo { hasNextPage endCursor }
      }
    }
  }
}
`,
    variables: { chainId: "43114", address: "0xcd12af610f1850d9f9b80048b8257587e61b6011" },
  },
  {
    query: `# The P-Chain: its latest transactions with their UTXOs.
query PChain {
  primaryNetwork(network: FUJI) {
    pChain {
      transactions(first: 10) {
        chainInfo { chainName network }
        nodes {
          txHash
          txType
          blockTimestamp
          block { blockNumber }
          ... on PChainTransaction {
            nodeId
            subnetId
            amountStaked { symbol amount }
            emittedUtxos { utxoId addresses asset { symbol amount } }
          }
        }
        pageInfo { hasNextPage endCursor }
      }
    }
  }
}
`,
  },
  {
    query: `# L1 validators, with their balances and owners.
query L1Validators {
  primaryNetwork(network: FUJI) {
    l1Validators(first: 10, includeInactive: true) {
      blockHeight
      nodes {
        validationId
        nodeId
        subnetId
        weight
        remainingBalance
        creationTimestamp
        remainingBalanceOwner { addresses threshold }
      }
      pageInfo { hasNextPage endCursor }
    }
  }
}
`,
  },
  {
    query: `# A primary-network transaction page: one transaction by hash on each chain, its block read from the transaction itself.
query PrimaryNetworkTransaction($pHash: String!, $xHash: String!, $cHash: String!) {
  primaryNetwork(network: FUJI) {
    pChain { transaction(hash: $pHash) { ...Common ... on PChainTransaction { nodeId amountBurned { symbol amount } } } }
    xChain { transaction(hash: $xHash) { ...Common ... on XChainTransaction { chainFormat amountCreated { symbol amount } } } }
    cChain { transaction(hash: $cHash) { ...Common ... on CChainAtomicTransaction { evmOutputs { toAddress asset { symbol amount } } } } }
  }
}

fragment Common on PrimaryNetworkTransaction {
  txHash
  txType
  blockTimestamp
  block { blockNumber blockHash }
  consumedUtxos { utxoId txHash outputIndex asset { symbol amount } }
}
`,
    variables: {
      pHash: "rKM44NamR6ykwRTLhTXEmD27cKhLXqCMPgwKmDL5qgFccPUBH",
      xHash: "2u4DRm4inuf5DEqxT3ru2cQy3DcrnDRKMJFutUj8d32bNbUZNA",
      cHash: "2Pt2LTQNgjFRNc43rx8XVedejo4jyd4ygv27PJP1ATPukyis9B",
    },
  },
  {
    query: `# One L1 validator by its validation id (or by node: l1Validator(nodeId: "NodeID-...")),
# with the other validators of its L1 and the P-Chain transactions of its validation.
query L1Validator($validationId: String!) {
  primaryNetwork(network: FUJI) {
    l1Validator(validationId: $validationId) {
      validationId
      nodeId
      subnetId
      weight
      remainingBalance
      subnetValidators(first: 10, includeInactive: true) {
        nodes { validationId nodeId weight remainingBalance }
        pageInfo { hasNextPage endCursor }
      }
      transactions(first: 10) {
        nodes { txHash txType blockTimestamp }
        pageInfo { hasNextPage endCursor }
      }
    }
  }
}
`,
    variables: { validationId: "BUs8XtbfCdieHEL2CiVopFJLuFHdn3fXd9u7ua7CA6BcECGDQ" },
  },
  {
    query: `# A chart: the C-Chain's transactions per day, with dates.
query ChainMetric {
  chain(id: "43114") {
    chainName
    metrics(metric: TX_COUNT, interval: DAY, first: 30) {
      nodes { time value valueExact }
      pageInfo { hasNextPage endCursor }
    }
  }
}
`,
  },
  {
    query: `# An export job: start one, then read it (or subscribe to it: subscription { exportOperation(id: ...) { ... } }).
mutation ExportTransactions($addresses: [String!]!) {
  exportTransactions(
    input: { evm: { addresses: $addresses, includeChains: ["43114"] }, firstDate: "2026-10-01", lastDate: "2026-10-31" }
  ) {
    id
    operationId
    operationType
    operationStatus
    createdAtTimestamp
  }
}
`,
    variables: { addresses: ["0xcd12af610f1850d9f9b80048b8257587e61b6011"] },
  },
  {
    query: `# A Warp message that a P-Chain transaction implies, signed by its L1's validators, decoded and verified.
query WarpSignature($txHash: String!) {
  warpSignature(network: FUJI, txHash: $txHash) {
    signedMessage
    decoded {
      networkId
      sourceChainId
      signers
      verification {
        valid
        problem
        signedWeightShare
        signers { nodeIds weightShare }
      }
    }
  }
}
`,
    variables: { txHash: "c4M3wtskLkEoByJDxKnkiWoaCbozhyLcMD8Cs3zVuYxTjQ4Tm" },
  },
];
