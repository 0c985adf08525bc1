import type { SettlementCurrency } from './currencies.js';
import type { Rate } from './rate.js';

/**
 * One place a rate can come from. `quote` answers how many units of `to` one unit of `from` buys.
 * It rejects with RateNotQuotableError when it does not quote the pair, with RateSourceError (or any error) when it
 * failed; either way the service moves on to the next source. It should stop work when `signal` aborts.
 * Codes arrive uppercase and validated.
 */
export interface RateSource {
  readonly name: string;
  quote(from: string, to: SettlementCurrency, signal: AbortSignal): Promise<Rate>;
}
