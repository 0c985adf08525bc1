import type { SettlementCurrency } from './currencies.js';
import { RateNotQuotableError, RateSourceError } from './errors.js';
import { getJson, trimBaseUrl } from './http-json.js';
import type { HttpRateSourceOptions } from './http-source-options.js';
import { decimalText, isJsonObject } from './lossless-json.js';
import { raceAbort } from './abort.js';
import { InvalidRateError, parseRate, type Rate } from './rate.js';
import type { RateSource } from './rate-source.js';
import { SingleFlightCache } from './single-flight-cache.js';

export const BINANCE_DEFAULT_BASE_URL = 'https://api.binance.com';

/** Binance's answer to an unknown symbol: HTTP 400 {"code":-1121,"msg":"Invalid symbol."}. */
const INVALID_SYMBOL = '-1121';

/**
 * Binance spot `GET /api/v3/ticker/price?symbol=<FROM><TO>` → {"symbol":"EURUSDT","price":"1.08410000"}:
 * the last trade price, in TO, of one FROM. Only direct pairs are used (EURUSDT, EURUSDC, ...); pairs Binance lists
 * the other way round (USDTTRY) would need a division that is not exact, so they are "cannot quote".
 */
export class BinanceRateSource implements RateSource {
  readonly name = 'binance';
  private readonly baseUrl: string;
  private readonly cache: SingleFlightCache<Rate | 'invalid_symbol'>;

  constructor(private readonly options: HttpRateSourceOptions) {
    this.baseUrl = trimBaseUrl(options.baseUrl ?? BINANCE_DEFAULT_BASE_URL);
    this.cache = new SingleFlightCache(options.cacheTtlMs, options.now);
  }

  async quote(from: string, to: SettlementCurrency, signal: AbortSignal): Promise<Rate> {
    const symbol = `${from}${to}`;
    const answer = await raceAbort(
      this.cache.get(symbol, () => this.fetchPrice(symbol)),
      signal,
    );
    if (answer === 'invalid_symbol') throw new RateNotQuotableError(this.name, from, to, `no symbol ${symbol}`);
    return answer;
  }

  private async fetchPrice(symbol: string): Promise<Rate | 'invalid_symbol'> {
    const url = `${this.baseUrl}/api/v3/ticker/price?symbol=${encodeURIComponent(symbol)}`;
    const { status, body } = await getJson(this.name, url, AbortSignal.timeout(this.options.timeoutMs), this.options.fetch);
    if (status === 400 && isJsonObject(body) && decimalText(body['code']) === INVALID_SYMBOL) return 'invalid_symbol';
    if (status < 200 || status > 299) throw new RateSourceError(this.name, `HTTP ${status}`);
    if (!isJsonObject(body)) throw new RateSourceError(this.name, 'response is not an object');
    if (body['symbol'] !== symbol) throw new RateSourceError(this.name, `asked for ${symbol}, answer is for another symbol`);
    const text = decimalText(body['price']);
    if (text === undefined) throw new RateSourceError(this.name, 'response has no price');
    try {
      return parseRate(text);
    } catch (e) {
      if (e instanceof InvalidRateError) throw new RateSourceError(this.name, `bad price: ${e.message}`);
      throw e;
    }
  }
}
