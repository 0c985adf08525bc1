import type { NetworkEntry } from './entry.js';

export const tron = {
  id: 'tron',
  family: 'tron',
  label: { en: 'TRON', zh: '波场 TRON' },
  standard: 'TRC-20',
  hint: { en: 'Low network fee · about 1 minute', zh: '网络费用低 · 约 1 分钟' },
  badge: { color: '#EB0029', mark: 'T' },
  nativeCoin: { symbol: 'TRX', decimals: 6 },
  lowNativeBalance: '30',
  blockTimeMs: 3000,
  watcher: {
    finality: { kind: 'depth', confirmations: 19 },
    pollIntervalMs: 3000,
    maxBlockRange: 1000,
    rpcMaxLagBlocks: 10,
    rpcTimeoutMs: 10_000,
  },
  finalityNote: '19 blocks (about 57 seconds): solidified once 19 of the 27 super representatives built on it.',
  live: {
    name: 'TRON',
    explorerTxUrl: 'https://tronscan.org/#/transaction/{tx}',
    // USDC on TRON is off by default (Circle ended it); CHAIN_TRON_<MODE>_USDC_CONTRACT may enable it (docs/tron.md).
    tokens: [
      {
        symbol: 'USDT',
        address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
        decimals: 6,
        issuer: 'Tether',
        source: 'https://tether.to/en/supported-protocols',
      },
    ],
    lookalikes: [],
  },
  test: {
    name: 'TRON Nile',
    chainId: '3448148188',
    explorerTxUrl: 'https://nile.tronscan.org/#/transaction/{tx}',
    tokens: [
      {
        symbol: 'USDT',
        address: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf',
        decimals: 6,
        issuer: 'Nile faucet',
        source: 'https://nileex.io/join/getJoinPage',
      },
    ],
    lookalikes: [],
    testnet: {
      profile: 'nile',
      publicRpcUrl: 'https://nile.trongrid.io',
      nativeFaucet: 'https://nileex.io/join/getJoinPage',
      tokenFaucet: 'https://nileex.io/join/getJoinPage',
      fundGas: '100',
      feeReserve: '100',
    },
  },
} as const satisfies NetworkEntry;
