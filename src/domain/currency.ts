import { isTokenSymbol, STABLECOIN_EXPONENT, TOKEN_SYMBOLS, type TokenSymbol } from '../../chains/vocabulary.js';

// Currencies the API accepts, with their minor-unit exponents: ISO 4217 (fund codes, metals and testing codes
// left out) plus the two settlement stablecoins at the API's precision (decisions.md: 1 USDT = 100 minor units).
// The single table of the service; src/rates re-exports it.
const EXPONENT_0 = 'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX VND VUV XAF XOF XPF';
const EXPONENT_3 = 'BHD IQD JOD KWD LYD OMR TND';
const EXPONENT_2 =
  'AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF CHF CNY ' +
  'COP CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS ' +
  'INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR ' +
  'MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD ' +
  'SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD UYU UZS VED VES WST XCD XCG YER ZAR ZMW ZWG';

/** The settlement stablecoins: the vocabulary's TokenSymbol under its currency name. */
export type Stablecoin = TokenSymbol;
export const STABLECOINS: readonly Stablecoin[] = TOKEN_SYMBOLS;

const TABLE: ReadonlyMap<string, number> = new Map<string, number>([
  ...EXPONENT_0.split(' ').map((c) => [c, 0] as const),
  ...EXPONENT_2.split(' ').map((c) => [c, 2] as const),
  ...EXPONENT_3.split(' ').map((c) => [c, 3] as const),
  ...STABLECOINS.map((c) => [c, STABLECOIN_EXPONENT] as const),
]);

export function isStablecoin(code: string): code is Stablecoin {
  return isTokenSymbol(code);
}

/** Minor-unit exponent of an accepted currency code (any case), or undefined when the code is not accepted. */
export function currencyExponent(code: string): number | undefined {
  return TABLE.get(code.toUpperCase());
}

export function isSupportedCurrency(code: string): boolean {
  return currencyExponent(code) !== undefined;
}
