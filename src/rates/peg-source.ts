import type { SettlementCurrency } from './currencies.js';
import { RateNotQuotableError } from './errors.js';
import { RATE_ONE, type Rate } from './rate.js';
import type { RateSource } from './rate-source.js';

const PEGGED = new Set(['USD', 'USDT', 'USDC']);

/** USD = USDT = USDC = 1. No network; every other currency is "cannot quote", so the next source is tried. */
export class PegRateSource implements RateSource {
  readonly name = 'peg';

  quote(from: string, to: SettlementCurrency, _signal: AbortSignal): Promise<Rate> {
    if (PEGGED.has(from) && PEGGED.has(to)) return Promise.resolve(RATE_ONE);
    return Promise.reject(new RateNotQuotableError(this.name, from, to, 'only USD, USDT and USDC are pegged'));
  }
}
