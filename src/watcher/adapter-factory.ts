import type { ChainSettings } from './config.js';
import { EvmChainAdapter } from '../../chains/evm/adapter.js';
import { createSolanaAdapterFactory } from '../../chains/solana/adapter.js';
import { createTronAdapterFactory } from '../../chains/tron/adapter.js';
import type { ChainAdapter } from '../../chains/types.js';

// Builds the adapter of a configured chain, by its family; the watcher itself never branches on the network.
// TRON and Solana read their family-only settings (full host, fee payer, scanning limits) from `env`.
export function createChainAdapter(settings: ChainSettings, env: Record<string, string | undefined>): ChainAdapter {
  switch (settings.family) {
    case 'evm':
      return new EvmChainAdapter({
        network: settings.network,
        mode: settings.mode,
        rpcUrl: settings.rpcUrl,
        rpcTimeoutMs: settings.rpcTimeoutMs,
        chainId: settings.chainId,
        tokens: settings.tokens,
        confirmation: settings.confirmation,
        maxBlockRange: settings.maxBlockRange,
      });
    case 'tron':
      return createTronAdapterFactory(env)(settings);
    case 'solana':
      return createSolanaAdapterFactory(env)(settings);
    default: {
      const never: never = settings.family;
      return never;
    }
  }
}
