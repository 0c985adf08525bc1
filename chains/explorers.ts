import { networkEntry } from './registry.js';
import type { Mode, NetworkId } from './types.js';

// Block explorer pages of transactions, shown to payers on the paid page (src/checkout/) next to what arrived.
// A template is an http(s) URL with `{tx}` where the transaction hash goes; CHAIN_<NET>_<MODE>_EXPLORER_TX_URL
// overrides the default (`off`: no link). Mainnets have a default; test mode has one only where the configured chain
// id names a public testnet, since a test chain may as well be a local node no explorer knows.

export function defaultExplorerTxUrl(network: NetworkId, mode: Mode, chainId?: bigint): string | null {
  const entry = networkEntry(network);
  if (!entry) return null;
  if (mode === 'live') return entry.live.explorerTxUrl;
  // A public testnet is known by its chain id (CHAIN_<NET>_TEST_CHAIN_ID); Solana's devnet has none and gets no default.
  const testChainId = entry.test.chainId;
  return chainId !== undefined && testChainId !== undefined && BigInt(testChainId) === chainId ? entry.test.explorerTxUrl : null;
}

/** The configured template (`off` = none), else the default; throws naming the variable on a malformed value. */
export function explorerTxUrlSetting(name: string, raw: string | undefined, fallback: string | null): string | null {
  const v = raw?.trim();
  if (!v) return fallback;
  if (v === 'off') return null;
  if (!/^https?:\/\/[^\s]+$/.test(v) || !v.includes('{tx}')) throw new Error(`${name} must be an http(s) URL containing {tx}, or off`);
  return v;
}

/** The explorer page of one transaction. TRON explorers take the hash without `0x`. */
export function explorerTxLink(template: string, network: NetworkId | string, hash: string): string {
  const tx = networkEntry(network)?.family === 'tron' ? hash.replace(/^0x/, '') : hash;
  return template.replace('{tx}', encodeURIComponent(tx));
}
