import type { Mode, NetworkId, TokenSymbol } from '../types.js';

// Token registry: which contract (or mint) is USDT / USDC on each network and mode, and its decimals.
// Live mode defaults to the mainnet contracts below; test mode (testnets, local devnets) comes only from configuration.
// Addresses here are in each network's display form; adapters normalise them. The watcher re-reads decimals() on chain
// at start and refuses to run on any difference (a wrong decimals value mis-credits by a factor of 10^12 on BSC).

export interface TokenSetting {
  symbol: TokenSymbol;
  address: string;
  decimals: number;
}

export const MAINNET_TOKENS: Readonly<Record<NetworkId, readonly TokenSetting[]>> = {
  ethereum: [
    { symbol: 'USDT', address: '0xdAC17F958D2ee523a2206206994597C13D831ec7', decimals: 6 },
    { symbol: 'USDC', address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', decimals: 6 },
  ],
  bsc: [
    { symbol: 'USDT', address: '0x55d398326f99059fF775485246999027B3197955', decimals: 18 },
    { symbol: 'USDC', address: '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d', decimals: 18 },
  ],
  // USDC on TRON is off by default (Circle ended it); CHAIN_TRON_<MODE>_USDC_CONTRACT may enable it (docs/tron.md).
  tron: [{ symbol: 'USDT', address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', decimals: 6 }],
  solana: [
    { symbol: 'USDC', address: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', decimals: 6 },
    { symbol: 'USDT', address: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB', decimals: 6 },
  ],
};

/**
 * Tokens for one network and mode. `configured` (from the environment) replaces the defaults symbol by symbol;
 * test mode has no defaults, so an unconfigured test network has no tokens.
 */
export function resolveTokens(network: NetworkId, mode: Mode, configured: readonly TokenSetting[]): TokenSetting[] {
  const out = new Map<TokenSymbol, TokenSetting>();
  if (mode === 'live') for (const t of MAINNET_TOKENS[network]) out.set(t.symbol, t);
  for (const t of configured) {
    if (!Number.isInteger(t.decimals) || t.decimals < 2 || t.decimals > 36) {
      throw new Error(`${network}/${mode} ${t.symbol}: decimals must be an integer in 2..36`);
    }
    out.set(t.symbol, t);
  }
  return [...out.values()];
}
