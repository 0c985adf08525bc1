import type { ChainSettings } from './config.js';
import { EvmChainAdapter } from '../../chains/evm/adapter.js';
import { createSolanaAdapterFactory } from '../../chains/solana/adapter.js';
import { createTronAdapterFactory } from '../../chains/tron/adapter.js';
import type { ChainAdapter } from '../../chains/types.js';
import { noopRpcObserver, silentRpcLogger, type RpcLogger, type RpcObserver } from '../../chains/rpc/observer.js';

/** Where an adapter reports its RPC endpoints' calls, failovers and health (metrics, logs); silent by default. */
export interface RpcHooks {
  rpcObserver: RpcObserver;
  rpcLog: RpcLogger;
}

// Builds the adapter of a configured chain, by its family; the watcher itself never branches on the network.
// TRON and Solana read their family-only settings (full host, fee payer, scanning limits) from `env`.
export function createChainAdapter(
  settings: ChainSettings,
  env: Record<string, string | undefined>,
  hooks: Partial<RpcHooks> = {},
): ChainAdapter {
  const s = { ...settings, rpcObserver: hooks.rpcObserver ?? noopRpcObserver, rpcLog: hooks.rpcLog ?? silentRpcLogger };
  switch (s.family) {
    case 'evm':
      return new EvmChainAdapter({
        network: s.network,
        mode: s.mode,
        rpcUrl: s.rpcUrl,
        rpcUrls: s.rpcUrls,
        finalityQuorum: s.rpcQuorum,
        maxLagBlocks: s.rpcMaxLagBlocks,
        rpcObserver: s.rpcObserver,
        rpcLog: s.rpcLog,
        rpcTimeoutMs: s.rpcTimeoutMs,
        chainId: s.chainId,
        tokens: s.tokens,
        confirmation: s.confirmation,
        maxBlockRange: s.maxBlockRange,
        ...(s.fees ? { fees: s.fees } : {}),
        lookalikes: s.lookalikes,
      });
    case 'tron':
      return createTronAdapterFactory(env)(s);
    case 'solana':
      return createSolanaAdapterFactory(env)(s);
    default: {
      const never: never = s.family;
      return never;
    }
  }
}
