import type { NetworkEntry } from './entry.js';

export const solana = {
  id: 'solana',
  family: 'solana',
  label: { en: 'Solana', zh: 'Solana' },
  standard: 'SPL',
  hint: { en: 'Lowest network fee · under 1 minute', zh: '网络费用最低 · 1 分钟以内' },
  badge: { color: '#9945FF', mark: 'S' },
  nativeCoin: { symbol: 'SOL', decimals: 9 },
  lowNativeBalance: '0.02',
  blockTimeMs: 400,
  watcher: {
    finality: { kind: 'depth', confirmations: 32 },
    pollIntervalMs: 2000,
    maxBlockRange: 1000,
    rpcMaxLagBlocks: 150,
    rpcTimeoutMs: 30_000,
  },
  finalityNote: '32 slots deep = the `finalized` commitment (about 13 seconds: 32 slots rooted by a supermajority).',
  live: {
    name: 'Solana',
    explorerTxUrl: 'https://explorer.solana.com/tx/{tx}',
    tokens: [
      {
        symbol: 'USDC',
        address: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
        decimals: 6,
        issuer: 'Circle',
        source: 'https://developers.circle.com/stablecoins/usdc-contract-addresses',
      },
      {
        symbol: 'USDT',
        address: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB',
        decimals: 6,
        issuer: 'Tether',
        source: 'https://tether.to/en/supported-protocols',
      },
    ],
    lookalikes: [],
  },
  test: {
    name: 'Solana Devnet',
    explorerTxUrl: 'https://explorer.solana.com/tx/{tx}?cluster=devnet',
    tokens: [
      {
        symbol: 'USDC',
        address: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
        decimals: 6,
        issuer: 'Circle',
        source: 'https://developers.circle.com/stablecoins/usdc-contract-addresses',
      },
    ],
    lookalikes: [],
    testnet: {
      profile: 'solana-devnet',
      publicRpcUrl: 'https://api.devnet.solana.com',
      nativeFaucet: 'https://faucet.solana.com',
      tokenFaucet: 'https://faucet.circle.com',
      fundGas: '0.02',
      feeReserve: '0.02',
      genesisHash: 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG',
    },
  },
} as const satisfies NetworkEntry;
