import type { OperationsContext } from './context.js';

// The networks this deployment is configured for (every chain adapter of this process), with their tokens: what the
// console offers in its network, mode and token choices, so that it never asks for a chain that is not here.

export interface ConfiguredNetwork {
  network: string;
  mode: 'test' | 'live';
  tokens: Array<{ symbol: string; decimals: number }>;
}

export function configuredNetworks(ops: Pick<OperationsContext, 'chains'>): ConfiguredNetwork[] {
  return [...ops.chains]
    .map((a) => ({ network: a.network, mode: a.mode, tokens: a.tokens.map((t) => ({ symbol: t.symbol, decimals: t.decimals })) }))
    .sort((x, y) => (x.mode === y.mode ? x.network.localeCompare(y.network) : x.mode === 'live' ? -1 : 1));
}
