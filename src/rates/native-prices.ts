import { NETWORKS } from '../../chains/registry.js';
import type { NetworkId } from '../../chains/vocabulary.js';
import { BinanceRateSource } from './binance-source.js';
import { CoinbaseRateSource } from './coinbase-source.js';
import type { SettlementCurrency } from './currencies.js';
import { RateNotQuotableError, RateUnavailableError, type RateAttempt } from './errors.js';
import { raceAbort } from './abort.js';
import type { Rate } from './rate.js';
import type { RateSource } from './rate-source.js';

// Prices of the networks' native coins (ETH, BNB, TRX, SOL, POL) in a stablecoin, for pricing fees against the amounts a
// sweep moves (docs/treasury.md, Policy). The same public tickers as the stablecoin rates: Coinbase's
// `exchange-rates?currency=ETH` (its USDT/USDC entry) and Binance's `ticker/price?symbol=ETHUSDT`. There is no peg
// here and no hard-coded price: when no source answers, the caller does not sweep.

/** A network's fee coin, by its ticker (ETH, BNB, TRX, SOL, POL: chains/networks/<id>.ts). */
export type NativeCoin = (typeof NETWORKS)[number]['nativeCoin']['symbol'];

/** Each network's fee coin and its decimals (wei, sun, lamports), from the network registry. */
export const NATIVE_COINS: Record<NetworkId, { symbol: NativeCoin; decimals: number }> = Object.fromEntries(
  NETWORKS.map((n) => [n.id, { symbol: n.nativeCoin.symbol, decimals: n.nativeCoin.decimals }]),
) as Record<NetworkId, { symbol: NativeCoin; decimals: number }>;

export const NATIVE_PRICE_SOURCE_NAMES = ['coinbase', 'binance'] as const;

export interface NativePriceConfig {
  /** Fallback order, names from NATIVE_PRICE_SOURCE_NAMES. */
  sources: string[];
  coinbaseBaseUrl?: string;
  binanceBaseUrl?: string;
  timeoutMs: number;
  cacheTtlMs: number;
  fetch?: typeof fetch;
}

export interface NativePrice {
  coin: NativeCoin;
  to: SettlementCurrency;
  /** Units of `to` one unit of `coin` buys. */
  rate: Rate;
  source: string;
}

export class NativePriceService {
  constructor(
    readonly sources: readonly RateSource[],
    private readonly timeoutMs: number,
  ) {}

  /** The price of one `coin` in `to`; RateUnavailableError when no source answers. */
  async price(coin: NativeCoin, to: SettlementCurrency): Promise<NativePrice> {
    const attempts: RateAttempt[] = [];
    for (const source of this.sources) {
      const timeout = AbortSignal.timeout(this.timeoutMs);
      try {
        const rate = await raceAbort(source.quote(coin, to, timeout), timeout);
        return { coin, to, rate, source: source.name };
      } catch (e) {
        attempts.push({
          source: source.name,
          outcome: e instanceof RateNotQuotableError ? 'not_quotable' : timeout.aborted ? 'timeout' : 'failed',
          message: e instanceof Error ? e.message : String(e),
        });
      }
    }
    throw new RateUnavailableError(coin, to, attempts);
  }
}

export function createNativePriceService(config: NativePriceConfig): NativePriceService {
  const http = { timeoutMs: config.timeoutMs, cacheTtlMs: config.cacheTtlMs, fetch: config.fetch };
  const sources = config.sources.map((raw): RateSource => {
    const name = raw.trim().toLowerCase();
    if (name === 'coinbase') return new CoinbaseRateSource({ ...http, baseUrl: config.coinbaseBaseUrl });
    if (name === 'binance') return new BinanceRateSource({ ...http, baseUrl: config.binanceBaseUrl });
    throw new TypeError(`NATIVE_PRICE_SOURCES: unknown source ${JSON.stringify(raw)}; known: ${NATIVE_PRICE_SOURCE_NAMES.join(', ')}`);
  });
  if (sources.length === 0) throw new TypeError('NATIVE_PRICE_SOURCES: must name at least one source');
  return new NativePriceService(sources, config.timeoutMs);
}

/** NATIVE_PRICE_SOURCES with the RATE_* timeout, cache and base URLs (docs/rates.md), from the loaded configuration. */
export function nativePriceConfigFrom(c: {
  NATIVE_PRICE_SOURCES: string;
  RATE_TIMEOUT_MS: number;
  RATE_CACHE_TTL_MS: number;
  RATE_COINBASE_BASE_URL: string;
  RATE_BINANCE_BASE_URL: string;
}): NativePriceConfig {
  return {
    sources: c.NATIVE_PRICE_SOURCES.split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
    timeoutMs: c.RATE_TIMEOUT_MS,
    cacheTtlMs: c.RATE_CACHE_TTL_MS,
    coinbaseBaseUrl: c.RATE_COINBASE_BASE_URL,
    binanceBaseUrl: c.RATE_BINANCE_BASE_URL,
  };
}
