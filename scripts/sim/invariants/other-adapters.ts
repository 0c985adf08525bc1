import { evmHexToTron, tronBase58 } from '../../../chains/tron/address.js';
import type { ChainAdapter } from '../../../chains/types.js';
import { createChainAdapter } from '../../../src/watcher/adapter-factory.js';
import { loadChainSettings } from '../../../src/watcher/config.js';
import type { SimChains } from '../contract.js';
import { tokenDecimals } from './evm-chain.js';
import { solanaReader } from './solana-chain.js';
import { tronAsEvm } from './tron-chain.js';

// The service's own adapters for the simulator's Solana and TRON (test mode), on the chains' own URLs (never a fault
// proxy), configured as the service's env would configure them; the journal invariant reconciles through them. Token
// decimals are read on chain (the mint account; the contract's decimals()), not taken from the runner.

export async function otherChainAdapters(chains: SimChains): Promise<ChainAdapter[]> {
  const out: ChainAdapter[] = [];
  if (chains.solana) {
    const s = chains.solana;
    const reader = solanaReader(s);
    const env: Record<string, string> = { CHAIN_SOLANA_TEST_RPC_URL: s.rpcUrl, CHAIN_SOLANA_TEST_CONFIRMATIONS: s.confirmations };
    for (const [symbol, mint] of Object.entries(s.mints)) {
      env[`CHAIN_SOLANA_TEST_${symbol}_CONTRACT`] = mint;
      env[`CHAIN_SOLANA_TEST_${symbol}_DECIMALS`] = String(await reader.decimals(symbol));
    }
    out.push(createChainAdapter(loadChainSettings(env, 'solana', 'test')!, env));
  }
  const tron = tronAsEvm(chains);
  if (chains.tron && tron) {
    const t = chains.tron;
    const env: Record<string, string> = {
      CHAIN_TRON_TEST_RPC_URL: t.jsonRpcUrl,
      CHAIN_TRON_TEST_FULL_HOST: t.walletApiUrl,
      CHAIN_TRON_TEST_CONFIRMATIONS: String(t.confirmations),
    };
    // The runner may name a contract in any TRON form (base58, 41…, 0x); the service's settings take base58 or 41….
    for (const [symbol, hex] of Object.entries(tron.tokens)) {
      env[`CHAIN_TRON_TEST_${symbol}_CONTRACT`] = tronBase58(evmHexToTron(hex));
      env[`CHAIN_TRON_TEST_${symbol}_DECIMALS`] = String(await tokenDecimals(tron, symbol));
    }
    out.push(createChainAdapter(loadChainSettings(env, 'tron', 'test')!, env));
  }
  return out;
}
