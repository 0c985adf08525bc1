import type { NetworkEntry } from './entry.js';

export const base = {
  id: 'base',
  family: 'evm',
  label: { en: 'Base', zh: 'Base' },
  standard: 'ERC-20',
  hint: { en: 'Very low network fee · a few minutes', zh: '网络费用很低 · 几分钟' },
  badge: { color: '#0052FF', mark: 'Ba' },
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
    'The `safe` block (OP Stack: its batch is posted to Ethereum, so only an Ethereum reorg can undo it): typically 1 to 5 minutes after inclusion. The sequencer\'s unsafe head is faster but can be reorged if the batcher fails; `finalized` (Ethereum-final batch) takes 20 to 30 minutes (docs.optimism.io, "Transaction finality").',
  fees: { l1: 'op-stack' },
  live: {
    name: 'Base',
    chainId: '8453',
    explorerTxUrl: 'https://basescan.org/tx/{tx}',
    // Tether issues no USDT on Base (neither natively nor as USDT0): only Circle's USDC.
    tokens: [
      {
        symbol: 'USDC',
        address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
        decimals: 6,
        issuer: 'Circle',
        source: 'https://developers.circle.com/stablecoins/usdc-contract-addresses',
      },
    ],
    lookalikes: [
      {
        symbol: 'USDbC',
        address: '0xd9aAEc86B65D86f6A7B5B1b0c42FFA531710b6CA',
        decimals: 6,
        note: "USD Base Coin: USDC bridged from Ethereum by the Base standard bridge, not Circle's",
        source: 'https://developers.circle.com/stablecoins/usdc-contract-addresses',
      },
      {
        symbol: 'USDT (bridged)',
        address: '0xfde4C96c8593536E31F229EA8f37b2ADa2699bb2',
        decimals: 6,
        note: 'USDT bridged from Ethereum by the standard bridge; Tether does not issue it',
        source: 'https://tether.to/en/supported-protocols',
      },
    ],
  },
  test: {
    name: 'Base Sepolia',
    chainId: '84532',
    explorerTxUrl: 'https://sepolia.basescan.org/tx/{tx}',
    tokens: [
      {
        symbol: 'USDC',
        address: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
        decimals: 6,
        issuer: 'Circle',
        source: 'https://developers.circle.com/stablecoins/usdc-contract-addresses',
      },
    ],
    lookalikes: [],
    testnet: {
      profile: 'base-sepolia',
      publicRpcUrl: 'https://sepolia.base.org',
      nativeFaucet: 'https://docs.base.org/base-chain/tools/network-faucets',
      tokenFaucet: 'https://faucet.circle.com',
      fundGas: '0.002',
      feeReserve: '0.002',
    },
  },
} as const satisfies NetworkEntry;
