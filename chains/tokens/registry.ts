import { NETWORKS } from '../registry.js';
import type { Mode, NetworkId, TokenSymbol } from '../types.js';

// Token registry: which contract (or mint) is USDT / USDC on each network and mode, and its decimals.
// Live mode defaults to the issuers' contracts of the network registry (chains/registry.ts); test mode (testnets, local devnets) comes only from configuration.
// Addresses here are in each network's display form; adapters normalise them. The watcher re-reads decimals() on chain
// at start and refuses to run on any difference (a wrong decimals value mis-credits by a factor of 10^12 on BSC).

export interface TokenSetting {
  symbol: TokenSymbol;
  address: string;
  decimals: number;
}

/** Each network's live tokens as their issuers publish them (chains/networks/<id>.ts, cited in docs/chains.md). */
export const MAINNET_TOKENS: Readonly<Record<NetworkId, readonly TokenSetting[]>> = byNetwork((n) =>
  n.live.tokens.map((t) => ({ symbol: t.symbol, address: t.address, decimals: t.decimals })),
);

function byNetwork<T>(f: (n: (typeof NETWORKS)[number]) => T): Record<NetworkId, T> {
  const out: Partial<Record<NetworkId, T>> = {};
  for (const n of NETWORKS) out[n.id] = f(n);
  return out as Record<NetworkId, T>;
}

/** A bridged copy of a settlement token on that network and mode: recorded when it reaches a deposit address, never credited. */
export interface LookalikeSetting {
  symbol: string;
  address: string;
  decimals: number;
  note: string;
}

export function lookalikeTokens(network: NetworkId, mode: Mode): LookalikeSetting[] {
  const entry = NETWORKS.find((n) => n.id === network);
  return (entry?.[mode].lookalikes ?? []).map((l) => ({ symbol: l.symbol, address: l.address, decimals: l.decimals, note: l.note }));
}

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
