import type { ChainSettings } from './config.js';
import { EvmChainAdapter } from '../../chains/evm/adapter.js';
import { createSolanaAdapter } from '../../chains/solana/adapter.js';
import type { ChainAdapter, ChainFamily } from '../../chains/types.js';
import { noopRpcObserver, silentRpcLogger, type RpcLogger, type RpcObserver } from '../../chains/rpc/observer.js';

// Builds the adapter of a configured chain. Families other than EVM register their constructor here
// (chains/tron, chains/solana) at start-up; the watcher itself never branches on the network.
export type AdapterConstructor = (settings: ChainSettings & RpcHooks) => ChainAdapter;

/** Where every adapter created from now on reports its RPC endpoints' calls, failovers and health (metrics, logs). */
export interface RpcHooks {
  rpcObserver: RpcObserver;
  rpcLog: RpcLogger;
}
let hooks: RpcHooks = { rpcObserver: noopRpcObserver, rpcLog: silentRpcLogger };

export function setRpcHooks(h: Partial<RpcHooks>): void {
  hooks = { ...hooks, ...h };
}

const constructors: Partial<Record<ChainFamily, AdapterConstructor>> = {
  evm: (s) =>
    new EvmChainAdapter({
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
    }),
  solana: (s) => createSolanaAdapter(s),
};

export function registerAdapterFamily(family: ChainFamily, make: AdapterConstructor): void {
  constructors[family] = make;
}

export function createChainAdapter(settings: ChainSettings): ChainAdapter {
  const make = constructors[settings.family];
  if (!make) throw new Error(`no adapter registered for the ${settings.family} family (${settings.network})`);
  return make({ ...settings, ...hooks });
}
