import type { NetworkEntry } from './entry.js';

export const optimism = {
  id: 'optimism',
  family: 'evm',
  label: { en: 'OP Mainnet', zh: 'OP Mainnet' },
  standard: 'ERC-20',
  hint: { en: 'Very low network fee · a few minutes', zh: '网络费用很低 · 几分钟' },
  badge: { color: '#FF0420', mark: 'OP' },
  nativeCoin: { symbol: 'ETH', decimals: 18 },
  lowNativeBalance: '0.0005',
  blockTimeMs: 2000,
  watcher: {
    finality: { kind: 'tag', tag: 'safe' },
    pollIntervalMs: 2000,
    maxBlockRange: 1000,
    rpcMaxLagBlocks: 15,
    rpcTimeoutMs: 10_000,
  },
  finalityNote:
    'The `safe` block (its batch is posted to Ethereum): typically 1 to 5 minutes after inclusion; `finalized` takes 20 to 30 minutes (docs.optimism.io, "Transaction finality").',
  fees: { l1: 'op-stack' },
  live: {
    name: 'OP Mainnet',
    chainId: '10',
    explorerTxUrl: 'https://optimistic.etherscan.io/tx/{tx}',
    tokens: [
      {
        symbol: 'USDT',
        address: '0x01bFF41798a0BcF287b996046Ca68b395DbC1071',
        decimals: 6,
        issuer: 'USDT0 (Tether)',
        source: 'https://docs.usdt0.to/technical-documentation/developer#deployments',
      },
      {
        symbol: 'USDC',
        address: '0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85',
        decimals: 6,
        issuer: 'Circle',
        source: 'https://developers.circle.com/stablecoins/usdc-contract-addresses',
      },
    ],
    lookalikes: [
      {
        symbol: 'USDC.e',
        address: '0x7F5c764cBc14f9669B88837ca1490cCa17c31607',
        decimals: 6,
        note: "USDC bridged from Ethereum by the standard bridge, not Circle's",
        source: 'https://developers.circle.com/stablecoins/usdc-contract-addresses',
      },
      {
        symbol: 'USDT (bridged)',
        address: '0x94b008aA00579c1307B0EF2c499aD98a8ce58e58',
        decimals: 6,
        note: 'USDT bridged from Ethereum by the standard bridge, replaced by USDT0',
        source: 'https://docs.usdt0.to/technical-documentation/developer#deployments',
      },
    ],
  },
  test: {
    name: 'OP Sepolia',
    chainId: '11155420',
    explorerTxUrl: 'https://sepolia-optimism.etherscan.io/tx/{tx}',
    tokens: [
      {
        symbol: 'USDC',
        address: '0x5fd84259d66Cd46123540766Be93DFE6D43130D7',
        decimals: 6,
        issuer: 'Circle',
        source: 'https://developers.circle.com/stablecoins/usdc-contract-addresses',
      },
    ],
    lookalikes: [],
    testnet: {
      profile: 'op-sepolia',
      publicRpcUrl: 'https://sepolia.optimism.io',
      nativeFaucet: 'https://console.optimism.io/faucet',
      tokenFaucet: 'https://faucet.circle.com',
      fundGas: '0.002',
      feeReserve: '0.002',
    },
  },
} as const satisfies NetworkEntry;
