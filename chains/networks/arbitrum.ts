import type { NetworkEntry } from './entry.js';

export const arbitrum = {
  id: 'arbitrum',
  family: 'evm',
  label: { en: 'Arbitrum One', zh: 'Arbitrum One' },
  standard: 'ERC-20',
  hint: { en: 'Very low network fee · a few minutes', zh: '网络费用很低 · 几分钟' },
  badge: { color: '#28A0F0', mark: 'A' },
  nativeCoin: { symbol: 'ETH', decimals: 18 },
  lowNativeBalance: '0.0005',
  blockTimeMs: 250,
  watcher: {
    finality: { kind: 'tag', tag: 'safe' },
    pollIntervalMs: 1000,
    maxBlockRange: 2000,
    rpcMaxLagBlocks: 120,
    rpcTimeoutMs: 10_000,
  },
  finalityNote:
    'The `safe` block (its batch is posted to Ethereum in a block Ethereum calls safe): typically 5 to 15 minutes, as batches post every few minutes; the sequencer\'s soft confirmation is instant but not final, `finalized` adds Ethereum finality (docs.arbitrum.io, "Block numbers and time", "Finality").',
  fees: { l1: 'nitro', tips: 'ignored' },
  live: {
    name: 'Arbitrum One',
    chainId: '42161',
    explorerTxUrl: 'https://arbiscan.io/tx/{tx}',
    tokens: [
      {
        symbol: 'USDT',
        address: '0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9',
        decimals: 6,
        issuer: 'USDT0 (Tether)',
        source: 'https://docs.usdt0.to/technical-documentation/developer#deployments',
      },
      {
        symbol: 'USDC',
        address: '0xaf88d065e77c8cC2239327C5EDb3A432268e5831',
        decimals: 6,
        issuer: 'Circle',
        source: 'https://developers.circle.com/stablecoins/usdc-contract-addresses',
      },
    ],
    lookalikes: [
      {
        symbol: 'USDC.e',
        address: '0xFF970A61A04b1cA14834A43f5dE4533eBDDB5CC8',
        decimals: 6,
        note: "USDC bridged from Ethereum by the Arbitrum bridge, not Circle's",
        source: 'https://developers.circle.com/stablecoins/usdc-contract-addresses',
      },
    ],
  },
  test: {
    name: 'Arbitrum Sepolia',
    chainId: '421614',
    explorerTxUrl: 'https://sepolia.arbiscan.io/tx/{tx}',
    tokens: [
      {
        symbol: 'USDC',
        address: '0x75faf114eafb1BDbe2F0316DF893fd58CE46AA4d',
        decimals: 6,
        issuer: 'Circle',
        source: 'https://developers.circle.com/stablecoins/usdc-contract-addresses',
      },
    ],
    lookalikes: [],
    testnet: {
      profile: 'arbitrum-sepolia',
      publicRpcUrl: 'https://sepolia-rollup.arbitrum.io/rpc',
      nativeFaucet: 'https://faucet.quicknode.com/arbitrum/sepolia',
      tokenFaucet: 'https://faucet.circle.com',
      fundGas: '0.002',
      feeReserve: '0.002',
    },
  },
} as const satisfies NetworkEntry;
