import type { NetworkEntry } from './entry.js';

export const ethereum = {
  id: 'ethereum',
  family: 'evm',
  label: { en: 'Ethereum', zh: '以太坊' },
  standard: 'ERC-20',
  hint: { en: 'Higher network fee · about 3 minutes', zh: '网络费用较高 · 约 3 分钟' },
  badge: { color: '#627EEA', mark: 'E' },
  nativeCoin: { symbol: 'ETH', decimals: 18 },
  lowNativeBalance: '0.005',
  blockTimeMs: 12_000,
  watcher: {
    finality: { kind: 'depth', confirmations: 12 },
    pollIntervalMs: 4000,
    maxBlockRange: 1000,
    rpcMaxLagBlocks: 10,
    rpcTimeoutMs: 10_000,
  },
  finalityNote:
    '12 blocks (about 2.4 minutes): a reorg deeper than a few blocks has not happened since the Merge; set `finalized` (about 13 minutes, two epochs) for full economic finality.',
  fees: { l1: 'none' },
  live: {
    name: 'Ethereum',
    chainId: '1',
    explorerTxUrl: 'https://etherscan.io/tx/{tx}',
    tokens: [
      {
        symbol: 'USDT',
        address: '0xdAC17F958D2ee523a2206206994597C13D831ec7',
        decimals: 6,
        issuer: 'Tether',
        source: 'https://tether.to/en/supported-protocols',
      },
      {
        symbol: 'USDC',
        address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
        decimals: 6,
        issuer: 'Circle',
        source: 'https://developers.circle.com/stablecoins/usdc-contract-addresses',
      },
    ],
    lookalikes: [],
  },
  test: {
    name: 'Ethereum Sepolia',
    chainId: '11155111',
    explorerTxUrl: 'https://sepolia.etherscan.io/tx/{tx}',
    tokens: [
      {
        symbol: 'USDC',
        address: '0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238',
        decimals: 6,
        issuer: 'Circle',
        source: 'https://developers.circle.com/stablecoins/usdc-contract-addresses',
      },
    ],
    lookalikes: [],
    testnet: {
      profile: 'sepolia',
      publicRpcUrl: 'https://ethereum-sepolia-rpc.publicnode.com',
      nativeFaucet: 'https://cloud.google.com/application/web3/faucet/ethereum/sepolia',
      tokenFaucet: 'https://faucet.circle.com',
      fundGas: '0.01',
      feeReserve: '0.01',
    },
  },
} as const satisfies NetworkEntry;
