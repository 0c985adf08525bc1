import type { NetworkEntry } from './entry.js';

export const bsc = {
  id: 'bsc',
  family: 'evm',
  label: { en: 'BNB Smart Chain', zh: 'BNB 智能链' },
  standard: 'BEP-20',
  hint: { en: 'Low network fee · about 1 minute', zh: '网络费用低 · 约 1 分钟' },
  badge: { color: '#F0B90B', mark: 'B' },
  nativeCoin: { symbol: 'BNB', decimals: 18 },
  lowNativeBalance: '0.005',
  blockTimeMs: 750,
  watcher: {
    finality: { kind: 'depth', confirmations: 15 },
    pollIntervalMs: 1500,
    maxBlockRange: 1000,
    rpcMaxLagBlocks: 10,
    rpcTimeoutMs: 10_000,
  },
  finalityNote:
    '15 blocks (about 11 seconds at 0.75 s blocks): past fast finality (two blocks of attestations) with a margin; `finalized` follows the fast-finality votes.',
  fees: { l1: 'none' },
  live: {
    name: 'BNB Smart Chain',
    chainId: '56',
    explorerTxUrl: 'https://bscscan.com/tx/{tx}',
    // Binance-Peg tokens: BSC's USDT and USDC, issued by Binance against Tether and Circle reserves; 18 decimals.
    tokens: [
      {
        symbol: 'USDT',
        address: '0x55d398326f99059fF775485246999027B3197955',
        decimals: 18,
        issuer: 'Binance (peg)',
        source: 'https://www.binance.com/en/support/faq/binance-peg-tokens',
      },
      {
        symbol: 'USDC',
        address: '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d',
        decimals: 18,
        issuer: 'Binance (peg)',
        source: 'https://www.binance.com/en/support/faq/binance-peg-tokens',
      },
    ],
    lookalikes: [],
  },
  test: {
    name: 'BNB Smart Chain testnet',
    chainId: '97',
    explorerTxUrl: 'https://testnet.bscscan.com/tx/{tx}',
    tokens: [
      {
        symbol: 'USDT',
        address: '0x337610d27c682E347C9cD60BD4b3b107C9d34dDd',
        decimals: 18,
        issuer: 'BNB Chain faucet',
        source: 'https://www.bnbchain.org/en/testnet-faucet',
      },
      {
        symbol: 'USDC',
        address: '0x64544969ed7EBf5f083679233325356EbE738930',
        decimals: 18,
        issuer: 'BNB Chain faucet',
        source: 'https://www.bnbchain.org/en/testnet-faucet',
      },
    ],
    lookalikes: [],
    testnet: {
      profile: 'bsc-testnet',
      publicRpcUrl: 'https://bsc-testnet-rpc.publicnode.com',
      nativeFaucet: 'https://www.bnbchain.org/en/testnet-faucet',
      tokenFaucet: 'https://www.bnbchain.org/en/testnet-faucet',
      nativeSymbol: 'tBNB',
      fundGas: '0.005',
      feeReserve: '0.005',
    },
  },
} as const satisfies NetworkEntry;
