import type { Mode } from '../../chains/vocabulary.js';

// What the ledger and the API may know of the configured chains, without importing chains/: chains/chain-registry.ts
// implements it, and callers pass it on as a dependency (nothing installs it in a module).

/**
 * Decimals of `token` on a network and mode as this deployment's chain registry configures them; undefined when that
 * network, mode or token is not configured. The one way token decimals reach the ledger and the API.
 */
export type TokenDecimals = (network: string, mode: Mode, token: string) => number | undefined;

export interface ChainLookup {
  tokenDecimals: TokenDecimals;
  /** Canonical form of an address on a network, or null when it is not one there (checksums checked) or the chain is not configured. */
  normalizeAddress(network: string, mode: Mode, text: string): string | null;
  /** The form shown to payers and merchants; the canonical text itself when the chain is not configured. */
  displayAddress(network: string, mode: Mode, canonical: string): string;
}

/** A deployment without chains: nothing can be refunded, and addresses show as stored. */
export const NO_CHAINS: ChainLookup = {
  tokenDecimals: () => undefined,
  normalizeAddress: () => null,
  displayAddress: (_network, _mode, canonical) => canonical,
};
