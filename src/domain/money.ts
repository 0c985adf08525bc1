// Money as integers. Decimal strings exist only at the API edge: parse them here into minor units, format back here.
// bigint throughout; no function in this file ever produces or accepts a JS number amount.

import { STABLECOIN_EXPONENT } from '../../chains/vocabulary.js';

/** Largest value a Postgres bigint holds: minor-unit amounts above it are refused at the edge. */
export const MAX_MINOR = 9_223_372_036_854_775_807n;

export class InvalidAmountError extends Error {
  constructor(
    readonly input: unknown,
    readonly reason: string,
  ) {
    super(reason);
  }
}

const PLAIN_DECIMAL = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/;

/**
 * Parses a plain decimal string ("12", "12.5", "12.50") into minor units of a currency with the given exponent.
 * Refused: signs, exponents, spaces, leading zeros ("012"), a bare or trailing point, more fraction digits than
 * the exponent allows, and values above MAX_MINOR.
 */
export function parseDecimalToMinor(text: unknown, exponent: number): bigint {
  if (typeof text !== 'string') throw new InvalidAmountError(text, 'must be a decimal string such as "12.50"');
  const m = PLAIN_DECIMAL.exec(text);
  if (!m) throw new InvalidAmountError(text, 'must be a plain decimal string such as "12.50" (no sign, exponent or spaces)');
  const whole = m[1]!;
  const fraction = m[2] ?? '';
  if (fraction.length > exponent) {
    throw new InvalidAmountError(text, `has more than ${exponent} decimal place${exponent === 1 ? '' : 's'}`);
  }
  if (whole.length > 19) throw new InvalidAmountError(text, 'is too large');
  const minor = BigInt(whole) * 10n ** BigInt(exponent) + BigInt(fraction.padEnd(exponent, '0') || '0');
  if (minor > MAX_MINOR) throw new InvalidAmountError(text, 'is too large');
  return minor;
}

/** Formats minor units with exactly `exponent` decimals: formatMinor(1250n, 2) === "12.50". */
export function formatMinor(minor: bigint, exponent: number): string {
  const negative = minor < 0n;
  const abs = negative ? -minor : minor;
  const digits = abs.toString().padStart(exponent + 1, '0');
  const whole = digits.slice(0, digits.length - exponent);
  const fraction = digits.slice(digits.length - exponent);
  return `${negative ? '-' : ''}${whole}${exponent > 0 ? `.${fraction}` : ''}`;
}

/** Minor units at `fromExponent` expressed at a larger `toExponent` (exact; e.g. 2-decimal USDT to 6-decimal base units). */
export function scaleUp(amount: bigint, fromExponent: number, toExponent: number): bigint {
  if (toExponent < fromExponent) throw new RangeError('scaleUp needs toExponent >= fromExponent');
  return amount * 10n ** BigInt(toExponent - fromExponent);
}

/** Amount at `fromExponent` expressed at a smaller `toExponent`, rounding toward zero or up (away from zero). */
export function scaleDown(amount: bigint, fromExponent: number, toExponent: number, rounding: 'down' | 'up'): bigint {
  if (toExponent > fromExponent) throw new RangeError('scaleDown needs toExponent <= fromExponent');
  const divisor = 10n ** BigInt(fromExponent - toExponent);
  const q = amount / divisor;
  if (rounding === 'up' && amount % divisor !== 0n) return amount > 0n ? q + 1n : q - 1n;
  return q;
}

/** API minor units of a stablecoin (2 decimals) to token base units with the registry's decimals. Always exact. */
export function stablecoinMinorToBase(minor: bigint, tokenDecimals: number): bigint {
  return scaleUp(minor, STABLECOIN_EXPONENT, tokenDecimals);
}

/** Base units to the shortest exact decimal string: formatExact(100001n, 6) === "0.100001", formatExact(0n, 6) === "0". */
export function formatExact(base: bigint, decimals: number): string {
  const full = formatMinor(base, decimals);
  return full.includes('.') ? full.replace(/0+$/, '').replace(/\.$/, '') : full;
}

/** Token base units to a decimal string with the token's decimals, trailing zeros kept to at least 2 places. */
export function formatBaseUnits(base: bigint, tokenDecimals: number): string {
  const full = formatMinor(base, tokenDecimals);
  if (tokenDecimals <= STABLECOIN_EXPONENT) return full;
  const [whole, fraction = ''] = full.split('.');
  const trimmed = fraction.replace(/0+$/, '').padEnd(STABLECOIN_EXPONENT, '0');
  return `${whole}.${trimmed}`;
}
