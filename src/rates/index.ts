export { currencyExponent, isSupportedCurrency, isSettlementCurrency, SETTLEMENT_CURRENCIES } from './currencies.js';
export type { SettlementCurrency } from './currencies.js';
export { parseRate, formatRate, normalizeRate, rateEquals, RATE_ONE, InvalidRateError } from './rate.js';
export type { Rate } from './rate.js';
export { convertMinor } from './convert.js';
export type { RateSource } from './rate-source.js';
export { PegRateSource } from './peg-source.js';
export { CoinbaseRateSource, COINBASE_DEFAULT_BASE_URL } from './coinbase-source.js';
export { BinanceRateSource, BINANCE_DEFAULT_BASE_URL } from './binance-source.js';
export type { HttpRateSourceOptions } from './http-source-options.js';
export { RateService } from './rate-service.js';
export type { RateQuote, RateServiceOptions } from './rate-service.js';
export {
  RateUnavailableError,
  RateNotQuotableError,
  RateSourceError,
  UnsupportedCurrencyError,
} from './errors.js';
export type { RateAttempt } from './errors.js';
export { createRateService, rateConfigFromEnv, RATE_SOURCE_NAMES, RATE_ENV_DEFAULTS } from './create-rate-service.js';
export type { RateServiceConfig, RateSourceName } from './create-rate-service.js';
