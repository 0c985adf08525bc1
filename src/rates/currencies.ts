/**
 * ISO 4217 minor-unit exponents of the currencies a merchant may price in, plus the two settlement stablecoins
 * at the API level (decisions.md: "same precision as USD", so 1 USDT = 100 minor units).
 * Fund codes (BOV, CLF, USN, ...), precious metals and testing codes (XAU, XTS, XXX) are deliberately absent.
 */
const EXPONENT_0 = 'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX VND VUV XAF XOF XPF';
const EXPONENT_3 = 'BHD IQD JOD KWD LYD OMR TND';
const EXPONENT_2 =
  'AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF CHF CNY ' +
  'COP CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS ' +
  'INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR ' +
  'MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD ' +
  'SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD UYU UZS VED VES WST XCD XCG YER ZAR ZMW ZWG';

export type SettlementCurrency = 'USDT' | 'USDC';
export const SETTLEMENT_CURRENCIES: readonly SettlementCurrency[] = ['USDT', 'USDC'];

const TABLE: ReadonlyMap<string, number> = new Map<string, number>([
  ...EXPONENT_0.split(' ').map((c) => [c, 0] as const),
  ...EXPONENT_2.split(' ').map((c) => [c, 2] as const),
  ...EXPONENT_3.split(' ').map((c) => [c, 3] as const),
  ['USDT', 2],
  ['USDC', 2],
]);

/** Minor-unit exponent of an uppercase currency code, or undefined when the code is not supported. */
export function currencyExponent(code: string): number | undefined {
  return TABLE.get(code);
}

/** True for uppercase codes in the table (callers normalise case first; the API shows codes lowercase). */
export function isSupportedCurrency(code: string): boolean {
  return TABLE.has(code);
}

export function isSettlementCurrency(code: string): code is SettlementCurrency {
  return code === 'USDT' || code === 'USDC';
}
