import type { NetworkEntry } from './entry.js';

export const polygon = {
  id: 'polygon',
  family: 'evm',
  label: { en: 'Polygon PoS', zh: 'Polygon PoS' },
  standard: 'ERC-20',
  hint: { en: 'Very low network fee · under 1 minute', zh: '网络费用很低 · 1 分钟以内' },
  badge: { color: '#7B3FE4', mark: 'P' },
  nativeCoin: { symbol: 'POL', decimals: 18 },
  lowNativeBalance: '1',
  blockTimeMs: 2000,
  watcher: {
    finality: { kind: 'tag', tag: 'finalized' },
    pollIntervalMs: 2000,
    maxBlockRange: 1000,
    rpcMaxLagBlocks: 15,
    rpcTimeoutMs: 10_000,
  },
  finalityNote:
    'The `finalized` block, which Polygon PoS nodes report from milestones (deterministic finality voted by the validators): a few seconds after inclusion since Heimdall v2, so about 10 seconds to `paid` with polling (docs.polygon.technology, "Finality").',
  // Validators refuse a priority fee under 25 gwei (PIP-35); eth_maxPriorityFeePerGas may suggest less.
  fees: { l1: 'none', minPriorityFeeWei: '25000000000' },
  live: {
    name: 'Polygon PoS',
    chainId: '137',
    explorerTxUrl: 'https://polygonscan.com/tx/{tx}',
    tokens: [
      {
        symbol: 'USDT',
        address: '0xc2132D05D31c914a87C6611C10748AEb04B58e8F',
        decimals: 6,
        issuer: 'USDT0 (Tether)',
        source: 'https://docs.usdt0.to/technical-documentation/developer#deployments',
      },
      {
        symbol: 'USDC',
        address: '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359',
        decimals: 6,
        issuer: 'Circle',
        source: 'https://developers.circle.com/stablecoins/usdc-contract-addresses',
      },
    ],
    lookalikes: [
      {
        symbol: 'USDC.e',
        address: '0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174',
        decimals: 6,
        note: "USDC bridged from Ethereum by the PoS bridge, not Circle's",
        source: 'https://developers.circle.com/stablecoins/usdc-contract-addresses',
      },
    ],
  },
  test: {
    name: 'Polygon Amoy',
    chainId: '80002',
    explorerTxUrl: 'https://amoy.polygonscan.com/tx/{tx}',
    tokens: [
      {
        symbol: 'USDC',
        address: '0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582',
        decimals: 6,
        issuer: 'Circle',
        source: 'https://developers.circle.com/stablecoins/usdc-contract-addresses',
      },
    ],
    lookalikes: [],
    testnet: {
      profile: 'polygon-amoy',
      publicRpcUrl: 'https://rpc-amoy.polygon.technology',
      nativeFaucet: 'https://faucet.polygon.technology',
      tokenFaucet: 'https://faucet.circle.com',
      fundGas: '0.5',
      feeReserve: '0.5',
    },
  },
} as const satisfies NetworkEntry;
