import type { ChainAdapter } from '../../chains/types.js';
import type { Mode } from '../db/schema.js';
import type { RefundRouteDeps } from '../api/routes/refunds.js';

/** What the refund API needs of the configured chains: address checks, token decimals, display forms. */
export function refundChainsFrom(adapters: ReadonlyMap<string, ChainAdapter>): RefundRouteDeps['chains'] {
  const of = (network: string, mode: Mode) => adapters.get(`${network}:${mode}`);
  return {
    normalizeAddress: (network, mode, text) => of(network, mode)?.normalizeAddress(text) ?? null,
    tokenDecimals: (network, mode, token) => of(network, mode)?.tokens.find((t) => t.symbol === token)?.decimals,
    displayAddress: (network, mode, canonical) => of(network, mode)?.displayAddress(canonical) ?? canonical,
  };
}
