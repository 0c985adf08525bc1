import type { SettlementCurrency } from './currencies.js';
import { RateNotQuotableError, RateSourceError } from './errors.js';
import { getJson, trimBaseUrl } from './http-json.js';
import type { HttpRateSourceOptions } from './http-source-options.js';
import { decimalText, isJsonObject, type JsonValue } from './lossless-json.js';
import { raceAbort } from './abort.js';
import { InvalidRateError, parseRate, type Rate } from './rate.js';
import type { RateSource } from './rate-source.js';
import { SingleFlightCache } from './single-flight-cache.js';

export const COINBASE_DEFAULT_BASE_URL = 'https://api.coinbase.com';

type RatesTable = { [code: string]: JsonValue };

/**
 * Coinbase's public, unauthenticated `GET /v2/exchange-rates?currency=<BASE>`:
 *   {"data":{"currency":"EUR","rates":{"USDT":"1.0841",...}}}
 * `data.rates[X]` is how many units of X one unit of BASE buys. We ask with BASE = the merchant currency, so the
 * USDT (or USDC) entry is exactly the rate we need, no inversion and no rounding. One response serves both targets;
 * it is cached per base currency.
 */
export class CoinbaseRateSource implements RateSource {
  readonly name = 'coinbase';
  private readonly baseUrl: string;
  private readonly cache: SingleFlightCache<RatesTable>;

  constructor(private readonly options: HttpRateSourceOptions) {
    this.baseUrl = trimBaseUrl(options.baseUrl ?? COINBASE_DEFAULT_BASE_URL);
    this.cache = new SingleFlightCache<RatesTable>(options.cacheTtlMs, options.now);
  }

  async quote(from: string, to: SettlementCurrency, signal: AbortSignal): Promise<Rate> {
    const table = await raceAbort(
      this.cache.get(from, () => this.fetchRates(from)),
      signal,
    );
    const text = decimalText(table[to]);
    if (text === undefined) throw new RateNotQuotableError(this.name, from, to, `no ${to} rate for ${from}`);
    try {
      return parseRate(text);
    } catch (e) {
      if (e instanceof InvalidRateError) throw new RateSourceError(this.name, `bad ${from}/${to} rate: ${e.message}`);
      throw e;
    }
  }

  private async fetchRates(base: string): Promise<RatesTable> {
    const url = `${this.baseUrl}/v2/exchange-rates?currency=${encodeURIComponent(base)}`;
    // The request is shared by every concurrent caller, so it carries its own timeout, not one caller's signal.
    const { status, body } = await getJson(this.name, url, AbortSignal.timeout(this.options.timeoutMs), this.options.fetch);
    if (status < 200 || status > 299) {
      throw new RateSourceError(this.name, `HTTP ${status}${errorText(body)}`);
    }
    const data = isJsonObject(body) ? body['data'] : undefined;
    const rates = isJsonObject(data) ? data['rates'] : undefined;
    if (!isJsonObject(data) || !isJsonObject(rates)) throw new RateSourceError(this.name, 'response has no data.rates object');
    const currency = data['currency'];
    if (typeof currency === 'string' && currency.toUpperCase() !== base) {
      throw new RateSourceError(this.name, `asked for ${base}, answer is for ${currency}`);
    }
    return rates;
  }
}

function errorText(body: JsonValue | undefined): string {
  // {"errors":[{"id":"invalid_request","message":"..."}]}
  const errors = isJsonObject(body) ? body['errors'] : undefined;
  const first = Array.isArray(errors) ? errors[0] : undefined;
  const message = isJsonObject(first) ? first['message'] : undefined;
  return typeof message === 'string' ? `: ${message.slice(0, 200)}` : '';
}
