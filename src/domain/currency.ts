// Currencies the API accepts, with their minor-unit exponents (ISO 4217; stablecoins at the API's 2 decimals).
// Only currencies a rate source can quote make sense as merchant currencies; this table is the accepted set.
const EXPONENTS: Record<string, number> = {
  USDT: 2, USDC: 2,
  USD: 2, EUR: 2, GBP: 2, CHF: 2, CAD: 2, AUD: 2, NZD: 2, SGD: 2, HKD: 2, CNY: 2, TWD: 2, INR: 2, IDR: 2,
  MYR: 2, PHP: 2, THB: 2, VND: 0, KRW: 0, JPY: 0, CLP: 0, ISK: 0, HUF: 2, PLN: 2, CZK: 2, SEK: 2, NOK: 2,
  DKK: 2, RON: 2, BGN: 2, TRY: 2, ILS: 2, AED: 2, SAR: 2, QAR: 2, EGP: 2, NGN: 2, KES: 2, ZAR: 2, MXN: 2,
  BRL: 2, ARS: 2, COP: 2, PEN: 2, UAH: 2, KZT: 2, PKR: 2, BDT: 2, LKR: 2,
  KWD: 3, BHD: 3, OMR: 3, JOD: 3, TND: 3,
};

export type Stablecoin = 'USDT' | 'USDC';
export const STABLECOINS: readonly Stablecoin[] = ['USDT', 'USDC'];

export function isStablecoin(code: string): code is Stablecoin {
  return code === 'USDT' || code === 'USDC';
}

/** Minor-unit exponent of an accepted currency code (any case), or undefined when the code is not accepted. */
export function currencyExponent(code: string): number | undefined {
  return EXPONENTS[code.toUpperCase()];
}

export function isSupportedCurrency(code: string): boolean {
  return currencyExponent(code) !== undefined;
}
