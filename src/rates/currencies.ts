// The currency table lives in the domain (src/domain/currency.ts); the rate code names its stablecoins
// "settlement currencies".
export {
  currencyExponent,
  isSupportedCurrency,
  isStablecoin as isSettlementCurrency,
  STABLECOINS as SETTLEMENT_CURRENCIES,
} from '../domain/currency.js';
export type { Stablecoin as SettlementCurrency } from '../domain/currency.js';
